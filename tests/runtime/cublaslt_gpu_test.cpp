// cuBLASLt wrapper, its probe black box and PitchedCopy.
// CPU parts (always run): shape validation names the field, the row-major to
// column-major call mapping computes A B under cuBLAS's documented semantics, missing
// cuBLASLt / CUPTI libraries give the documented Unavailable messages, PitchedCopy's
// launch arithmetic on a fake driver.
// GPU parts (skip with "[SKIP] <reason>" without a device or without cuBLASLt):
//   * a small GEMM through cuBLASLt agrees with a double-precision CPU product within
//     a rounding bound, in all four operand layouts (f16 -> f32, f16 -> f16) and in
//     fp8 e4m3 TN: the wrapper's layout mapping is right (a sanity check, not bits);
//   * the heuristic's config attributes are readable and stable;
//   * CUPTI (when present) records the kernels one cublasLtMatmul launched;
//   * PitchedCopy moves exactly the bytes it should;
//   * the black box returns the same bits as a direct full-shape call;
//   * its sparse path, through ByteScatter, returns the same bits as a dense call of
//     the densified problem, call after call (fills switching, several launches);
//   * at 1 x 64 x 4096 f16 the probe recovers a descriptor whose reference::gemm
//     equals cuBLAS bit for bit on 3 fresh draws of the full shape.
#include <cmath>
#include <cstring>
#include <iostream>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "dsl/FloatFormat.h"
#include "dsl/probe/Probe.h"
#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"
#include "profile/CublasBlackBox.h"
#include "runtime/CublasLt.h"
#include "runtime/Cupti.h"
#include "runtime/PitchedCopy.h"
#include "tests/runtime/FakeDriver.h"
#include "tests/runtime/GpuTest.h"

namespace fixbits::runtime {
namespace {

// ---- CPU ---------------------------------------------------------------------

TEST(CublasLtShapeTest, ValidationNamesTheField) {
  GemmShape s{.m = 4, .n = 4, .k = 0};
  absl::Status st = validate_for_cublaslt(s);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("GemmShape.k"), std::string::npos) << st;

  s = {.m = 4, .n = 4, .k = 16, .a_dtype = DType::kF16, .b_dtype = DType::kBF16};
  st = validate_for_cublaslt(s);
  EXPECT_NE(st.message().find("a_dtype f16 and b_dtype bf16"), std::string::npos) << st;

  s = {.m = 4, .n = 4, .k = 16, .a_dtype = DType::kF8E4M3, .b_dtype = DType::kF8E4M3,
       .out_dtype = DType::kF16};
  st = validate_for_cublaslt(s);  // row-major B: not TN
  EXPECT_NE(st.message().find("TN layout"), std::string::npos) << st;
  s.b_row_major = false;
  EXPECT_TRUE(validate_for_cublaslt(s).ok());
  s.out_dtype = DType::kF8E4M3;
  EXPECT_NE(validate_for_cublaslt(s).message().find("GemmShape.out_dtype"), std::string::npos);

  s = {.m = 1, .n = 1, .k = 8, .a_dtype = DType::kF8E5M2, .b_dtype = DType::kF8E5M2,
       .out_dtype = DType::kF32, .b_row_major = false};
  EXPECT_NE(validate_for_cublaslt(s).message().find("both f8e5m2"), std::string::npos);

  s = {.m = 2, .n = 3, .k = 5, .a_dtype = DType::kBF16, .b_dtype = DType::kBF16,
       .out_dtype = DType::kF16};
  EXPECT_NE(validate_for_cublaslt(s).message().find("out_dtype is f16"), std::string::npos);
  s.out_dtype = DType::kF32;
  EXPECT_TRUE(validate_for_cublaslt(s).ok());
  EXPECT_EQ(to_string(s), "2x3x5 bf16*bf16->f32 NN");
  s.a_row_major = false;
  EXPECT_EQ(to_string(s), "2x3x5 bf16*bf16->f32 TN");
}

TEST(CublasLtShapeTest, ElementBytesAndSchemeNames) {
  EXPECT_EQ(cublaslt_element_bytes(DType::kF16), 2u);
  EXPECT_EQ(cublaslt_element_bytes(DType::kBF16), 2u);
  EXPECT_EQ(cublaslt_element_bytes(DType::kF8E4M3), 1u);
  EXPECT_EQ(cublaslt_element_bytes(DType::kTF32), 4u);
  EXPECT_EQ(reduction_scheme_name(0), "none");
  EXPECT_EQ(reduction_scheme_name(2), "compute_type");
  EXPECT_EQ(reduction_scheme_name(4), "output_type");
  EXPECT_EQ(reduction_scheme_name(3), "3");
}

// The documented cuBLAS semantics, column-major: D'(r, c) = sum_l op(A')(r, l) op(B')(l, c),
// op N: X(r, c) = x[r + c * ld], op T: X(r, c) = x[c + r * ld]. Feeding it our B as A'
// and our A as B' with cublas_call_for's layouts must give row-major D = A B.
TEST(CublasLtShapeTest, CallMappingGivesTheRowMajorProductUnderCublasSemantics) {
  const int64_t m = 3, n = 5, k = 4;
  for (bool a_row : {true, false}) {
    for (bool b_row : {true, false}) {
      const GemmShape s{.m = m, .n = n, .k = k, .a_row_major = a_row, .b_row_major = b_row};
      const CublasCall c = cublas_call_for(s);
      ASSERT_EQ(c.m, n);
      ASSERT_EQ(c.n, m);
      ASSERT_EQ(c.k, k);
      // Layout extents agree with the ops: op(A') is m' x k, op(B') is k x n', D' m' x n'.
      EXPECT_EQ(c.op_a == 0 ? c.a_rows : c.a_cols, static_cast<uint64_t>(c.m));
      EXPECT_EQ(c.op_a == 0 ? c.a_cols : c.a_rows, static_cast<uint64_t>(c.k));
      EXPECT_EQ(c.op_b == 0 ? c.b_rows : c.b_cols, static_cast<uint64_t>(c.k));
      EXPECT_EQ(c.op_b == 0 ? c.b_cols : c.b_rows, static_cast<uint64_t>(c.n));
      EXPECT_EQ(c.d_rows, static_cast<uint64_t>(c.m));
      EXPECT_EQ(c.d_cols, static_cast<uint64_t>(c.n));
      EXPECT_GE(c.a_ld, static_cast<int64_t>(c.a_rows));
      EXPECT_GE(c.b_ld, static_cast<int64_t>(c.b_rows));
      // Distinct integers: every mix-up of index or layout shows.
      std::vector<int64_t> a(m * k), b(k * n);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t l = 0; l < k; ++l) a[a_row ? i * k + l : l * m + i] = 1 + i * 10 + l;
      for (int64_t l = 0; l < k; ++l)
        for (int64_t j = 0; j < n; ++j) b[b_row ? l * n + j : j * k + l] = 100 + l * 7 + j * 3;
      auto op = [](const std::vector<int64_t>& x, int o, int64_t ld, int64_t r, int64_t col) {
        return o == 0 ? x[r + col * ld] : x[col + r * ld];
      };
      std::vector<int64_t> d(m * n, -1);
      for (int64_t r = 0; r < c.m; ++r) {
        for (int64_t col = 0; col < c.n; ++col) {
          int64_t acc = 0;
          for (int64_t l = 0; l < c.k; ++l)
            acc += op(b, c.op_a, c.a_ld, r, l) * op(a, c.op_b, c.b_ld, l, col);
          d[r + col * c.d_ld] = acc;
        }
      }
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          int64_t want = 0;
          for (int64_t l = 0; l < k; ++l) want += (1 + i * 10 + l) * (100 + l * 7 + j * 3);
          EXPECT_EQ(d[i * n + j], want) << to_string(s) << " D[" << i << "][" << j << "]";
        }
      }
    }
  }
  // fp8's TN layout is cuBLAS's op_a = T, op_b = N.
  const CublasCall tn = cublas_call_for(GemmShape{.m = 8, .n = 16, .k = 32, .b_row_major = false});
  EXPECT_EQ(tn.op_a, 1);
  EXPECT_EQ(tn.op_b, 0);
}

TEST(CublasLtOpenTest, MissingLibraryIsUnavailableWithTheDocumentedMessage) {
  auto device = std::make_shared<Device>(std::make_shared<testing::FakeDriver>());
  CublasLtOptions o;
  o.library_paths = {"/nonexistent/libcublasLt.so.13"};
  absl::StatusOr<std::shared_ptr<CublasLt>> lt = CublasLt::open(device, o);
  ASSERT_FALSE(lt.ok());
  EXPECT_EQ(lt.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(lt.status().message().rfind("no cuBLASLt found (/nonexistent/libcublasLt.so.13): ", 0),
            0u)
      << lt.status();
  EXPECT_EQ(CublasLt::open(nullptr).status().code(), absl::StatusCode::kInvalidArgument);
  o.workspace_bytes = 0;
  EXPECT_NE(CublasLt::open(device, o).status().message().find("workspace_bytes"),
            std::string::npos);
}

TEST(KernelRecorderTest, MissingLibraryIsUnavailableWithTheDocumentedMessage) {
  absl::StatusOr<std::unique_ptr<KernelRecorder>> r =
      KernelRecorder::start({"/nonexistent/libcupti.so.13"});
  if (r.ok()) GTEST_SKIP() << "[SKIP] CUPTI was already loaded by this process";
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message().rfind("no CUPTI found (/nonexistent/libcupti.so.13): ", 0), 0u)
      << r.status();
}

TEST(PitchedCopyTest, LaunchArithmeticOnAFakeDriver) {
  auto driver = std::make_shared<testing::FakeDriver>();
  driver->expected_args = 6;
  Device device(driver);
  absl::StatusOr<PitchedCopy> copy = PitchedCopy::load(device);
  ASSERT_TRUE(copy.ok()) << copy.status();
  // 1000 rows of 3 bytes = 3000 threads = 12 blocks of 256.
  ASSERT_TRUE(copy->run(0x2000, 64, 0x9000, 3, 3, 1000).ok());
  ASSERT_EQ(driver->launches.size(), 1u);
  const auto& l = driver->launches[0];
  EXPECT_EQ(l.kernel, "fixbits_pitched_copy");
  EXPECT_EQ(l.grid[0], 12u);
  EXPECT_EQ(l.block[0], 256u);
  EXPECT_EQ(l.first_words, (std::vector<uint64_t>{0x2000, 0x9000, 1000, 3, 64, 3}));
  EXPECT_EQ(copy->run(0x2000, 2, 0x9000, 3, 3, 10).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(copy->run(0, 8, 0x9000, 3, 3, 10).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(copy->run(0x2000, 8, 0x9000, 3, 0, 10).ok());  // nothing to copy
  EXPECT_EQ(driver->launches.size(), 1u);
}

// ---- GPU ---------------------------------------------------------------------

class CublasLtGpuTest : public testing::GpuTest {
 protected:
  void SetUp() override {
    testing::GpuTest::SetUp();
    if (IsSkipped()) return;
    absl::StatusOr<std::shared_ptr<Device>> dev = runtime::cuda(0);
    ASSERT_TRUE(dev.ok());
    absl::StatusOr<std::shared_ptr<CublasLt>> lt = CublasLt::open(*dev);
    if (!lt.ok()) GTEST_SKIP() << "[SKIP] no cuBLASLt: " << lt.status().message();
    lt_ = *lt;
    std::cout << "cuBLASLt " << lt_->version() << " from " << lt_->library_path() << "\n";
  }
  std::shared_ptr<CublasLt> lt_;
};

// Random inputs: +-(1 + f/64) * 2^e, e in [-3, 3], plus -0.0 and a subnormal now and then.
std::vector<uint32_t> draw(DType t, size_t count, std::mt19937_64& rng) {
  std::vector<uint32_t> v(count);
  for (uint32_t& x : v) {
    const uint64_t r = rng();
    if (r % 97 == 0) {
      x = to_bits(t, -0.0f);
    } else if (r % 89 == 0 && t == DType::kF16) {
      x = 0x0003;  // f16 subnormal 3 * 2^-24
    } else {
      const float f = std::ldexp(1.0f + static_cast<float>((r >> 8) % 64) / 64.0f,
                                 static_cast<int>((r >> 16) % 7) - 3) *
                      (((r >> 24) & 1) ? -1.0f : 1.0f);
      x = to_bits(t, f, Saturation::kSatFinite);
    }
  }
  return v;
}

std::vector<uint8_t> pack(const std::vector<uint32_t>& bits, DType t) {
  const size_t e = cublaslt_element_bytes(t);
  std::vector<uint8_t> out(bits.size() * e);
  for (size_t i = 0; i < bits.size(); ++i) std::memcpy(out.data() + i * e, &bits[i], e);
  return out;
}

std::vector<uint32_t> unpack(const std::vector<uint8_t>& bytes, DType t) {
  const size_t e = cublaslt_element_bytes(t);
  std::vector<uint32_t> out(bytes.size() / e, 0);
  for (size_t i = 0; i < out.size(); ++i) std::memcpy(&out[i], bytes.data() + i * e, e);
  return out;
}

// Element (i, kk) of an m x k operand stored row- or column-major.
size_t at(bool row_major, int64_t rows, int64_t cols, int64_t r, int64_t c) {
  return static_cast<size_t>(row_major ? r * cols + c : c * rows + r);
}

// Runs `s` through cuBLASLt on `a`, `b` (bits in the shape's storage order) and
// returns D (m x n row-major) as out_dtype bits.
absl::StatusOr<std::vector<uint32_t>> run_gemm(CublasLt& lt, const GemmShape& s,
                                               const std::vector<uint32_t>& a,
                                               const std::vector<uint32_t>& b,
                                               MatmulReport* report = nullptr) {
  const Device& dev = *lt.device();
  const auto a_bytes = pack(a, s.a_dtype), b_bytes = pack(b, s.b_dtype);
  absl::StatusOr<Buffer> da = dev.alloc(a_bytes.size()), db = dev.alloc(b_bytes.size()),
                         dd = dev.alloc(s.m * s.n * cublaslt_element_bytes(s.out_dtype));
  if (!da.ok()) return da.status();
  if (!db.ok()) return db.status();
  if (!dd.ok()) return dd.status();
  if (auto st = da->copy_from_host(a_bytes.data(), a_bytes.size()); !st.ok()) return st;
  if (auto st = db->copy_from_host(b_bytes.data(), b_bytes.size()); !st.ok()) return st;
  if (auto st = dd->fill_bytes(0xff); !st.ok()) return st;
  absl::StatusOr<MatmulReport> r = lt.matmul(s, *da, *db, *dd);
  if (!r.ok()) return r.status();
  if (report) *report = *r;
  std::vector<uint8_t> out(dd->size());
  if (auto st = dd->copy_to_host(out.data(), out.size()); !st.ok()) return st;
  return unpack(out, s.out_dtype);
}

// |cuBLAS - exact| <= bound: the accumulation error (a fraction of sum|ab|, loose
// against any summation order) plus the output rounding (half an ulp, relative, and
// f16's subnormal spacing).
void expect_close_to_double(CublasLt& lt, const GemmShape& s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto a = draw(s.a_dtype, s.m * s.k, rng);
  const auto b = draw(s.b_dtype, s.k * s.n, rng);
  absl::StatusOr<std::vector<uint32_t>> d = run_gemm(lt, s, a, b);
  ASSERT_TRUE(d.ok()) << d.status();
  const double out_rel = s.out_dtype == DType::kF32 ? std::ldexp(1.0, -24)
                         : s.out_dtype == DType::kF16 ? std::ldexp(1.0, -11)
                                                      : std::ldexp(1.0, -8);
  // f32 accumulation is far inside 2^-12 * sum|ab| at these K; fp8 tensor cores align
  // products to about 13 bits inside an instruction, so fp8 gets 2^-9. A wrong operand
  // layout misses by ~sum|ab| / sqrt(K), far outside either.
  const double accumulation = std::ldexp(1.0, dtype_is_fp8(s.a_dtype) ? -9 : -12);
  const double out_abs = s.out_dtype == DType::kF16 ? std::ldexp(1.0, -24) : 1e-38;
  int bad = 0;
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double exact = 0, mag = 0;
      for (int64_t kk = 0; kk < s.k; ++kk) {
        const double x = to_float(s.a_dtype, a[at(s.a_row_major, s.m, s.k, i, kk)]);
        const double y = to_float(s.b_dtype, b[at(s.b_row_major, s.k, s.n, kk, j)]);
        exact += x * y;
        mag += std::fabs(x * y);
      }
      const double got = to_float(s.out_dtype, (*d)[static_cast<size_t>(i * s.n + j)]);
      const double bound = accumulation * mag + out_rel * std::fabs(exact) + out_abs;
      if (!(std::fabs(got - exact) <= bound) && ++bad <= 5) {
        ADD_FAILURE() << to_string(s) << " D[" << i << "][" << j << "] = " << got
                      << ", exact " << exact << ", bound " << bound;
      }
    }
  }
  EXPECT_EQ(bad, 0) << to_string(s);
}

TEST_F(CublasLtGpuTest, SmallGemmsMatchTheExactProductInEveryLayout) {
  for (bool a_row : {true, false}) {
    for (bool b_row : {true, false}) {
      for (DType out : {DType::kF32, DType::kF16}) {
        GemmShape s{.m = 24, .n = 40, .k = 72, .out_dtype = out, .a_row_major = a_row,
                    .b_row_major = b_row};
        expect_close_to_double(*lt_, s, 17 + a_row * 2 + b_row);
      }
    }
  }
  expect_close_to_double(*lt_,
                         GemmShape{.m = 16, .n = 32, .k = 64, .a_dtype = DType::kBF16,
                                   .b_dtype = DType::kBF16, .out_dtype = DType::kBF16},
                         5);
}

TEST_F(CublasLtGpuTest, Fp8E4M3TnMatchesTheExactProduct) {
  GemmShape s{.m = 32, .n = 48, .k = 96, .a_dtype = DType::kF8E4M3, .b_dtype = DType::kF8E4M3,
              .out_dtype = DType::kF16, .a_row_major = true, .b_row_major = false};
  expect_close_to_double(*lt_, s, 99);
}

TEST_F(CublasLtGpuTest, HeuristicAttributesAreReadableAndStable) {
  for (int64_t m : {int64_t{1}, int64_t{128}}) {
    GemmShape s{.m = m, .n = 4096, .k = 4096};
    absl::StatusOr<MatmulReport> h = lt_->heuristic(s);
    ASSERT_TRUE(h.ok()) << h.status();
    std::cout << to_string(s) << ": " << to_string(h->algo) << " workspace "
              << h->workspace_bytes << " waves " << h->waves_count << "\n";
    EXPECT_GE(h->heuristic_answers, 1);
    EXPECT_EQ(h->algo.unreadable, "") << "cuBLASLt refused these config attributes";
    EXPECT_LE(h->workspace_bytes, CublasLtOptions{}.workspace_bytes);
    const uint32_t scheme = h->algo.reduction_scheme;
    EXPECT_TRUE(scheme == 0 || scheme == 1 || scheme == 2 || scheme == 4) << scheme;
    absl::StatusOr<MatmulReport> again = lt_->heuristic(s);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->algo, h->algo);
  }
  // A shape cuBLASLt cannot take comes back as a Status, not a crash.
  GemmShape bad{.m = 1, .n = 1, .k = 16, .a_dtype = DType::kF8E4M3, .b_dtype = DType::kF8E4M3};
  EXPECT_EQ(lt_->heuristic(bad).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(CublasLtGpuTest, CuptiRecordsTheKernelsOfOneCall) {
  absl::StatusOr<std::unique_ptr<KernelRecorder>> rec = KernelRecorder::start();
  if (!rec.ok()) GTEST_SKIP() << "[SKIP] no CUPTI: " << rec.status().message();
  EXPECT_EQ(KernelRecorder::start().status().code(), absl::StatusCode::kFailedPrecondition);
  const GemmShape s{.m = 1, .n = 4096, .k = 4096};
  std::vector<uint32_t> a(s.m * s.k, 0x3c00), b(s.k * s.n, 0x3c00);  // ones
  absl::StatusOr<std::vector<uint32_t>> d = run_gemm(*lt_, s, a, b);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_TRUE(device().synchronize().ok());
  absl::StatusOr<LaunchProfile> prof = (*rec)->stop();
  ASSERT_TRUE(prof.ok()) << prof.status();
  std::cout << to_string(s) << " launched:\n" << to_string(*prof) << "\n";
  EXPECT_EQ((*d)[0], to_bits(DType::kF16, 4096.0f));  // sum of 4096 ones
  ASSERT_GE(prof->kernels.size(), 1u);
  EXPECT_EQ(prof->unparsed, 0);
  for (const KernelRecord& k : prof->kernels) {
    EXPECT_FALSE(k.name.empty());
    EXPECT_GE(k.grid[0] * k.grid[1] * k.grid[2], 1);
  }
  // After stop() a new recorder may start, and sees nothing it did not run.
  absl::StatusOr<std::unique_ptr<KernelRecorder>> again = KernelRecorder::start();
  ASSERT_TRUE(again.ok()) << again.status();
  absl::StatusOr<LaunchProfile> empty = (*again)->stop();
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->kernels.empty());
}

TEST_F(CublasLtGpuTest, PitchedCopyMovesExactlyTheSlice) {
  absl::StatusOr<PitchedCopy> copy = PitchedCopy::load(device());
  ASSERT_TRUE(copy.ok()) << copy.status();
  const uint64_t rows = 37, width = 6, src_pitch = 6, dst_pitch = 20, dst_offset = 4;
  std::vector<uint8_t> src(rows * src_pitch), dst(rows * dst_pitch + 16, 0xee);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 1);
  absl::StatusOr<Buffer> ds = device().alloc(src.size()), dd = device().alloc(dst.size());
  ASSERT_TRUE(ds.ok() && dd.ok());
  ASSERT_TRUE(ds->copy_from_host(src.data(), src.size()).ok());
  ASSERT_TRUE(dd->copy_from_host(dst.data(), dst.size()).ok());
  ASSERT_TRUE(copy->run(dd->address() + dst_offset, dst_pitch, ds->address(), src_pitch, width,
                        rows)
                  .ok());
  std::vector<uint8_t> got(dst.size());
  ASSERT_TRUE(dd->copy_to_host(got.data(), got.size()).ok());
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < width; ++c) dst[dst_offset + r * dst_pitch + c] = src[r * src_pitch + c];
  EXPECT_EQ(std::memcmp(got.data(), dst.data(), dst.size()), 0);
}

TEST_F(CublasLtGpuTest, BlackBoxGivesTheBitsOfADirectFullShapeCall) {
  // M = 2 < p.m = 3 (two launches), row-major B (strided columns: PitchedCopy).
  const GemmShape s{.m = 2, .n = 16, .k = 300};
  absl::StatusOr<std::shared_ptr<profile::CublasBlackBox>> box = profile::CublasBlackBox::create(lt_, s);
  ASSERT_TRUE(box.ok()) << box.status();
  std::mt19937_64 rng(7);
  dsl::reference::GemmProblem p;
  p.m = 3;
  p.n = 2;
  p.k = s.k;
  p.a = draw(DType::kF16, p.m * p.k, rng);
  p.b = draw(DType::kF16, p.k * p.n, rng);
  absl::StatusOr<std::vector<uint32_t>> got = (*box)->run(p);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*box)->launches(), 2);
  // The same rows/columns placed by hand into full matrices, zeros elsewhere.
  for (int64_t i0 : {int64_t{0}, int64_t{2}}) {
    std::vector<uint32_t> a(s.m * s.k, 0), b(s.k * s.n, 0);
    for (int64_t r = 0; r < s.m && i0 + r < p.m; ++r)
      for (int64_t kk = 0; kk < s.k; ++kk) a[r * s.k + kk] = p.a[(i0 + r) * p.k + kk];
    for (int64_t kk = 0; kk < s.k; ++kk)
      for (int64_t j = 0; j < p.n; ++j) b[kk * s.n + j] = p.b[kk * p.n + j];
    absl::StatusOr<std::vector<uint32_t>> d = run_gemm(*lt_, s, a, b);
    ASSERT_TRUE(d.ok()) << d.status();
    for (int64_t r = 0; r < s.m && i0 + r < p.m; ++r)
      for (int64_t j = 0; j < p.n; ++j)
        EXPECT_EQ((*got)[(i0 + r) * p.n + j], (*d)[r * s.n + j]) << "row " << i0 + r << " col " << j;
  }
  // Errors name the field.
  p.k = 299;
  EXPECT_NE((*box)->run(p).status().message().find("GemmProblem.k"), std::string::npos);
  p.k = s.k;
  p.a[0] = 0x12345;
  EXPECT_NE((*box)->run(p).status().message().find("GemmProblem.a[0]"), std::string::npos);
}

// `na` entries of a and `nb` of b at distinct random positions, a third of them
// holding the fill (the box writes none of those).
dsl::probe::SparseProblem draw_sparse(std::mt19937_64& rng, DType t, int64_t m, int64_t n,
                                      int64_t k, uint32_t a_fill, uint32_t b_fill, int na,
                                      int nb) {
  dsl::probe::SparseProblem p{.m = m, .n = n, .k = k, .a_fill = a_fill, .b_fill = b_fill,
                              .a = {}, .b = {}, .reads = {}};
  auto bits = [&](uint32_t fill) { return rng() % 3 == 0 ? fill : draw(t, 1, rng)[0]; };
  std::set<std::pair<int64_t, int64_t>> seen;
  while (int(p.a.size()) < na && int64_t(seen.size()) < m * k) {
    const int64_t i = rng() % m, kk = rng() % k;
    if (seen.insert({i, kk}).second) p.a.push_back({.row = i, .col = kk, .bits = bits(a_fill)});
  }
  seen.clear();
  while (int(p.b.size()) < nb && int64_t(seen.size()) < k * n) {
    const int64_t kk = rng() % k, j = rng() % n;
    if (seen.insert({kk, j}).second) p.b.push_back({.row = kk, .col = j, .bits = bits(b_fill)});
  }
  return p;
}

// One box's run_sparse against a second box's run(densify(p)), on the real library:
// the scatter (patch before the matmul, restore after the read, on cuBLASLt's stream)
// leaves exactly the densified operands in place for each launch and the fill after.
TEST_F(CublasLtGpuTest, SparseRunThroughByteScatterEqualsDenseRunOfItsDensifiedProblem) {
  struct Case {
    GemmShape s;
    DType t;
  };
  const Case cases[] = {
      {GemmShape{.m = 1, .n = 64, .k = 4096}, DType::kF16},
      {GemmShape{.m = 3, .n = 38, .k = 2000, .out_dtype = DType::kF32, .b_row_major = false},
       DType::kF16},
      {GemmShape{.m = 2, .n = 16, .k = 300, .a_row_major = false}, DType::kF16},
      {GemmShape{.m = 4, .n = 16, .k = 512, .a_dtype = DType::kBF16, .b_dtype = DType::kBF16,
                 .out_dtype = DType::kF32},
       DType::kBF16},
      {GemmShape{.m = 16, .n = 32, .k = 256, .a_dtype = DType::kF8E4M3,
                 .b_dtype = DType::kF8E4M3, .out_dtype = DType::kF16, .b_row_major = false},
       DType::kF8E4M3},
  };
  for (const Case& c : cases) {
    const GemmShape& s = c.s;
    absl::StatusOr<std::shared_ptr<profile::CublasBlackBox>> sparse =
        profile::CublasBlackBox::create(lt_, s);
    absl::StatusOr<std::shared_ptr<profile::CublasBlackBox>> dense =
        profile::CublasBlackBox::create(lt_, s);
    ASSERT_TRUE(sparse.ok()) << to_string(s) << ": " << sparse.status();
    ASSERT_TRUE(dense.ok()) << dense.status();
    const uint32_t one = to_bits(c.t, 1.0f), half = to_bits(c.t, 0.5f);
    const std::pair<uint32_t, uint32_t> fills[] = {
        {0, one}, {0, one}, {0, one}, {half, one}, {0, 0}, {one, 0}, {0, one}, {0, one}};
    std::mt19937_64 rng(31);
    int step = 0;
    for (auto [a_fill, b_fill] : fills) {
      ++step;
      // Inside the shape, then taller and/or wider than it (several launches).
      const int64_t pm = step % 3 == 0 ? 2 * s.m + 1 : 1 + int64_t(rng() % s.m);
      const int64_t pn = step % 4 == 0 ? s.n + 3 : 1 + int64_t(rng() % s.n);
      const dsl::probe::SparseProblem p =
          draw_sparse(rng, c.t, pm, pn, s.k, a_fill, b_fill, int(40 * pm), int(3 * pn + 5));
      absl::StatusOr<std::vector<uint32_t>> have = (*sparse)->run_sparse(p);
      absl::StatusOr<std::vector<uint32_t>> want = (*dense)->run(dsl::probe::densify(p));
      ASSERT_TRUE(have.ok()) << to_string(s) << ": " << have.status();
      ASSERT_TRUE(want.ok()) << to_string(s) << ": " << want.status();
      ASSERT_EQ(have->size(), want->size());
      int diff = 0;
      for (size_t i = 0; i < want->size(); ++i) diff += (*want)[i] != (*have)[i];
      EXPECT_EQ(diff, 0) << to_string(s) << " step " << step << ": " << diff << " of "
                         << want->size() << " outputs differ (" << pm << "x" << pn << ", "
                         << p.a.size() << " + " << p.b.size() << " entries)";
      EXPECT_TRUE((*sparse)->scatters_sparse_entries()) << "the CUDA device fell back to copies";
    }
  }
}

// run_sparse_batch on the real library: every launch queued (patch, matmul into its
// own D, restore) before one read of all the Ds gives each problem the bits run_sparse
// gives it, at a gemv shape of class 10's kind (1 x 17) and a split one.
TEST_F(CublasLtGpuTest, AQueuedSparseBatchGivesEachProblemItsOwnRunsBits) {
  struct Case {
    GemmShape s;
    DType t;
  };
  const Case cases[] = {
      {GemmShape{.m = 1, .n = 17, .k = 20011}, DType::kF16},
      {GemmShape{.m = 4, .n = 16, .k = 4096, .a_dtype = DType::kBF16, .b_dtype = DType::kBF16,
                 .out_dtype = DType::kBF16},
       DType::kBF16},
  };
  for (const Case& c : cases) {
    const GemmShape& s = c.s;
    absl::StatusOr<std::shared_ptr<profile::CublasBlackBox>> queued = profile::CublasBlackBox::create(lt_, s);
    absl::StatusOr<std::shared_ptr<profile::CublasBlackBox>> one = profile::CublasBlackBox::create(lt_, s);
    ASSERT_TRUE(queued.ok()) << to_string(s) << ": " << queued.status();
    ASSERT_TRUE(one.ok()) << one.status();
    const uint32_t fill_b = to_bits(c.t, 1.0f);
    std::mt19937_64 rng(37);
    for (int round = 0; round < 3; ++round) {
      std::vector<dsl::probe::SparseProblem> ps;
      for (int i = 0; i < 50; ++i) {
        const int64_t pm = 1 + int64_t(rng() % s.m), pn = 1 + int64_t(rng() % s.n);
        ps.push_back(draw_sparse(rng, c.t, pm, pn, s.k, 0, fill_b, int(3 * pm), 2));
      }
      absl::StatusOr<std::vector<std::vector<uint32_t>>> have = (*queued)->run_sparse_batch(ps);
      ASSERT_TRUE(have.ok()) << to_string(s) << ": " << have.status();
      ASSERT_EQ(have->size(), ps.size());
      int differ = 0;
      for (size_t i = 0; i < ps.size(); ++i) {
        absl::StatusOr<std::vector<uint32_t>> want = (*one)->run_sparse(ps[i]);
        ASSERT_TRUE(want.ok()) << want.status();
        differ += (*have)[i] != *want;
      }
      EXPECT_EQ(differ, 0) << to_string(s) << " round " << round << ": " << differ << " of 50 problems differ";
      EXPECT_TRUE((*queued)->scatters_sparse_entries());
    }
  }
}

TEST_F(CublasLtGpuTest, ProbeRecoversABitExactDescriptorAt1x64x4096) {
  const GemmShape s{.m = 1, .n = 64, .k = 4096};
  absl::StatusOr<std::shared_ptr<profile::CublasBlackBox>> box = profile::CublasBlackBox::create(lt_, s);
  ASSERT_TRUE(box.ok()) << box.status();
  const MatmulReport& h = (*box)->report();
  std::cout << to_string(s) << ": " << to_string(h.algo) << "\n";
  std::vector<dsl::GemmFamily> families = {dsl::GemmFamily::kPlain, dsl::GemmFamily::kSplitK};
  if (h.algo.splitk_num > 1) std::swap(families[0], families[1]);
  absl::StatusOr<dsl::GemmDesc> desc = absl::NotFoundError("no family tried");
  for (dsl::GemmFamily f : families) {
    dsl::probe::ProbeOptions o;
    o.family = f;
    o.matrix_instruction = dsl::Instruction::kWgmma;
    o.k = s.k;
    desc = dsl::probe::recover_gemm_desc((*box)->as_black_box(), o);
    if (desc.ok()) break;
    std::cout << "family " << static_cast<int>(f) << ": " << desc.status() << "\n";
  }
  ASSERT_TRUE(desc.ok()) << desc.status();
  std::cout << "recovered " << *desc << " in " << (*box)->calls() << " calls\n";
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    std::mt19937_64 rng(seed * 1000003);
    dsl::reference::GemmProblem p;
    p.m = s.m;
    p.n = s.n;
    p.k = s.k;
    p.a = draw(DType::kF16, p.m * p.k, rng);
    p.b = draw(DType::kF16, p.k * p.n, rng);
    absl::StatusOr<std::vector<uint32_t>> want = run_gemm(*lt_, s, p.a, p.b);
    absl::StatusOr<std::vector<uint32_t>> have = dsl::reference::gemm(*desc, p);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(have.ok()) << have.status();
    ASSERT_EQ(want->size(), have->size());
    int diff = 0;
    for (size_t i = 0; i < want->size(); ++i) diff += (*want)[i] != (*have)[i];
    EXPECT_EQ(diff, 0) << "draw " << seed << ": " << diff << " of " << want->size()
                       << " outputs differ from " << *desc;
  }
}

}  // namespace
}  // namespace fixbits::runtime
