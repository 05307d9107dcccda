// runtime/CublasLt and profile/CublasBlackBox end to end on the CPU: the cuBLASLt
// loaded is tests/runtime/fake/FakeCublasLt.cpp (cuBLAS's documented column-major
// semantics, a sequential f32 fma chain), the device a host-memory Driver whose
// launch() performs PitchedCopy's copy and ByteScatter's scatter. So the dlopen
// table, the row-major to column-major call, the report's attribute reading, the
// black box's uploads (contiguous and pitched), its row/column passes, its sparse
// path (entries patched over a fill and restored, against the dense path, both by
// ByteScatter and by the per-entry copies it falls back to) and the probe on top all
// run here, and the GPU test repeats the same against the real library.
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "dsl/FloatFormat.h"
#include "dsl/probe/Experiments.h"
#include "dsl/probe/Probe.h"
#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"
#include "profile/CublasBlackBox.h"
#include "profile/CublasScan.h"
#include "runtime/CublasLt.h"
#include "runtime/Driver.h"

namespace fixbits::runtime {
namespace {

// Host memory as device memory; launch() runs fixbits_pitched_copy and (unless
// runs_scatter is cleared, so ByteScatter::load fails) fixbits_byte_scatter on the CPU.
class HostDriver final : public Driver {
 public:
  HostDriver() {
    info_.name = "host";
    info_.max_threads_per_block = 1024;
  }
  const DeviceInfo& info() const override { return info_; }
  absl::StatusOr<void*> module_load(std::string_view image) override {
    if (image.find(".entry fixbits_pitched_copy") != std::string_view::npos) {
      return reinterpret_cast<void*>(0x10);
    }
    if (runs_scatter && image.find(".entry fixbits_byte_scatter") != std::string_view::npos) {
      return reinterpret_cast<void*>(0x11);
    }
    return absl::InvalidArgumentError("host driver: only the pitched copy and the scatter run here");
  }
  absl::Status module_unload(void*) override { return absl::OkStatus(); }
  absl::StatusOr<void*> module_function(void* m, const std::string&) override {
    return reinterpret_cast<void*>(m == reinterpret_cast<void*>(0x10) ? kCopy : kScatter);
  }
  absl::StatusOr<uint64_t> mem_alloc(size_t bytes) override {
    return reinterpret_cast<uint64_t>(new uint8_t[bytes]);
  }
  absl::Status mem_free(uint64_t p) override {
    delete[] reinterpret_cast<uint8_t*>(p);
    return absl::OkStatus();
  }
  absl::Status copy_to_device(uint64_t d, const void* s, size_t n, void*) override {
    std::memcpy(reinterpret_cast<void*>(d), s, n);
    uploaded += n;
    ++uploads;
    return absl::OkStatus();
  }
  absl::Status copy_to_host(void* d, uint64_t s, size_t n, void*) override {
    std::memcpy(d, reinterpret_cast<const void*>(s), n);
    ++downloads;
    return absl::OkStatus();
  }
  absl::Status memset8(uint64_t d, uint8_t v, size_t n) override {
    std::memset(reinterpret_cast<void*>(d), v, n);
    return absl::OkStatus();
  }
  absl::StatusOr<void*> stream_create() override { return reinterpret_cast<void*>(1); }
  absl::Status stream_destroy(void*) override { return absl::OkStatus(); }
  absl::Status stream_synchronize(void*) override { return absl::OkStatus(); }
  absl::StatusOr<void*> event_create() override { return reinterpret_cast<void*>(1); }
  absl::Status event_destroy(void*) override { return absl::OkStatus(); }
  absl::Status event_record(void*, void*) override { return absl::OkStatus(); }
  absl::Status event_synchronize(void*) override { return absl::OkStatus(); }
  absl::StatusOr<float> event_elapsed_ms(void*, void*) override { return 0.0f; }
  absl::StatusOr<std::vector<size_t>> param_sizes(void* fn) override {
    return std::vector<size_t>(fn == reinterpret_cast<void*>(kCopy) ? 6 : 3, 8);
  }
  absl::StatusOr<uint32_t> static_shared_bytes(void*) override { return 0u; }
  absl::Status set_max_dynamic_shared(void*, uint32_t) override { return absl::OkStatus(); }
  absl::Status launch(void* fn, const uint32_t grid[3], const uint32_t block[3], uint32_t, void*,
                      void** args) override {
    if (fn == reinterpret_cast<void*>(kScatter)) return scatter(grid, block, args);
    uint64_t w[6];
    for (int i = 0; i < 6; ++i) std::memcpy(&w[i], args[i], 8);
    const uint64_t dst = w[0], src = w[1], rows = w[2], width = w[3], dp = w[4], sp = w[5];
    if (uint64_t{grid[0]} * block[0] < rows * width) {
      return absl::InternalError("host driver: the grid does not cover rows * width threads");
    }
    for (uint64_t i = 0; i < rows * width; ++i) {
      const uint64_t r = i / width, c = i % width;
      reinterpret_cast<uint8_t*>(dst)[r * dp + c] = reinterpret_cast<const uint8_t*>(src)[r * sp + c];
    }
    ++copies;
    return absl::OkStatus();
  }
  absl::Status synchronize() override { return absl::OkStatus(); }

  bool runs_scatter = true;  // cleared: ByteScatter does not load (the copy fallback)
  int copies = 0;            // pitched-copy launches
  int scatters = 0;          // byte-scatter launches
  uint64_t uploaded = 0;     // bytes copied host to device
  int uploads = 0;           // host-to-device copies
  int downloads = 0;         // device-to-host copies

 private:
  static constexpr uintptr_t kCopy = 0x20, kScatter = 0x30;

  // ByteScatter's kernel: base + offset[i] <- value[i], the list as ByteScatter.h lays it out.
  absl::Status scatter(const uint32_t grid[3], const uint32_t block[3], void** args) {
    uint64_t base, list, count;
    std::memcpy(&base, args[0], 8);
    std::memcpy(&list, args[1], 8);
    std::memcpy(&count, args[2], 8);
    if (uint64_t{grid[0]} * block[0] < count) {
      return absl::InternalError("host driver: the grid does not cover count threads");
    }
    if (list % 8 != 0) return absl::InternalError("host driver: a misaligned scatter list");
    const uint8_t* l = reinterpret_cast<const uint8_t*>(list);
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t offset;
      std::memcpy(&offset, l + 8 * i, 8);
      reinterpret_cast<uint8_t*>(base + offset)[0] = l[8 * count + i];
    }
    ++scatters;
    return absl::OkStatus();
  }

  DeviceInfo info_;
};

class CublasLtFakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef FIXBITS_FAKE_CUBLASLT_PATH
    GTEST_SKIP() << "[SKIP] the fake cuBLASLt was not built (FIXBITS_FAKE_CUBLASLT_PATH unset)";
#else
    driver_ = std::make_shared<HostDriver>();
    device_ = std::make_shared<Device>(driver_);
    CublasLtOptions o;
    o.library_paths = {FIXBITS_FAKE_CUBLASLT_PATH};
    o.workspace_bytes = 4096;
    absl::StatusOr<std::shared_ptr<CublasLt>> lt = CublasLt::open(device_, o);
    ASSERT_TRUE(lt.ok()) << lt.status();
    lt_ = *lt;
#endif
  }
  std::shared_ptr<HostDriver> driver_;
  std::shared_ptr<Device> device_;
  std::shared_ptr<CublasLt> lt_;
};

TEST_F(CublasLtFakeTest, EveryLayoutComputesTheRowMajorProduct) {
  for (bool a_row : {true, false}) {
    for (bool b_row : {true, false}) {
      for (DType out : {DType::kF32, DType::kF16}) {
        const GemmShape s{.m = 3, .n = 5, .k = 7, .out_dtype = out, .a_row_major = a_row,
                          .b_row_major = b_row};
        std::vector<uint16_t> a(s.m * s.k), b(s.k * s.n);
        for (int64_t i = 0; i < s.m; ++i)
          for (int64_t l = 0; l < s.k; ++l)
            a[a_row ? i * s.k + l : l * s.m + i] = to_bits(DType::kF16, float(i * 10 + l));
        for (int64_t l = 0; l < s.k; ++l)
          for (int64_t j = 0; j < s.n; ++j)
            b[b_row ? l * s.n + j : j * s.k + l] = to_bits(DType::kF16, float(l * 3 + j));
        absl::StatusOr<Buffer> da = device_->alloc(a.size() * 2), db = device_->alloc(b.size() * 2),
                               dd = device_->alloc(s.m * s.n * 4);
        ASSERT_TRUE(da.ok() && db.ok() && dd.ok());
        ASSERT_TRUE(da->copy_from_host(a.data(), a.size() * 2).ok());
        ASSERT_TRUE(db->copy_from_host(b.data(), b.size() * 2).ok());
        absl::StatusOr<MatmulReport> r = lt_->matmul(s, *da, *db, *dd);
        ASSERT_TRUE(r.ok()) << to_string(s) << ": " << r.status();
        const size_t eo = cublaslt_element_bytes(out);
        std::vector<uint8_t> d(s.m * s.n * eo);
        ASSERT_TRUE(dd->copy_to_host(d.data(), d.size()).ok());
        for (int64_t i = 0; i < s.m; ++i) {
          for (int64_t j = 0; j < s.n; ++j) {
            float want = 0;
            for (int64_t l = 0; l < s.k; ++l) want += float(i * 10 + l) * float(l * 3 + j);
            uint32_t bits = 0;
            std::memcpy(&bits, d.data() + (i * s.n + j) * eo, eo);
            EXPECT_EQ(bits, to_bits(out, want)) << to_string(s) << " D[" << i << "][" << j << "]";
          }
        }
      }
    }
  }
}

TEST_F(CublasLtFakeTest, ReportCarriesTheHeuristicAndItsConfigAttributes) {
  EXPECT_EQ(lt_->version(), 424242u);
  absl::StatusOr<MatmulReport> r = lt_->heuristic(GemmShape{.m = 4, .n = 8, .k = 16});
  ASSERT_TRUE(r.ok()) << r.status();
  const AlgoConfig want{.id = 42, .tile_id = 101, .splitk_num = 1, .reduction_scheme = 103,
                        .cta_swizzling = 104, .custom_option = 105, .stages_id = 106,
                        .inner_shape_id = 107, .cluster_shape_id = 108, .unreadable = ""};
  EXPECT_EQ(r->algo, want) << to_string(r->algo);
  EXPECT_EQ(r->heuristic_answers, 1);
  EXPECT_EQ(r->waves_count, 1.5f);
  EXPECT_EQ(r->workspace_bytes, 0u);
  // The fake has no tf32 compute type: the library's refusal comes back as a Status
  // naming the call and the cublasStatus_t.
  absl::StatusOr<MatmulReport> tf32 = lt_->heuristic(
      GemmShape{.m = 4, .n = 8, .k = 16, .a_dtype = DType::kTF32, .b_dtype = DType::kTF32,
                .out_dtype = DType::kF32});
  ASSERT_FALSE(tf32.ok());
  EXPECT_NE(tf32.status().message().find("cublasLtMatmulDescCreate"), std::string::npos)
      << tf32.status();
  EXPECT_NE(tf32.status().message().find("CUBLAS_STATUS_NOT_SUPPORTED (15)"), std::string::npos)
      << tf32.status();
}

TEST_F(CublasLtFakeTest, UndersizedBuffersAreRejectedBeforeTheLibrary) {
  const GemmShape s{.m = 4, .n = 8, .k = 16};
  absl::StatusOr<Buffer> a = device_->alloc(4 * 16 * 2), b = device_->alloc(16 * 8 * 2 - 2),
                         d = device_->alloc(4 * 8 * 2);
  ASSERT_TRUE(a.ok() && b.ok() && d.ok());
  absl::StatusOr<MatmulReport> r = lt_->matmul(s, *a, *b, *d);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("buffer b holds 254 bytes"), std::string::npos) << r.status();
}

TEST_F(CublasLtFakeTest, ProbeThroughTheBlackBoxRecoversTheFakesChain) {
  dsl::GemmDesc chain;  // what the fake computes: one fma chain in k order
  chain.instruction = dsl::Instruction::kScalarFma;
  chain.instruction_k = 1;
  chain.use_fast_accum = true;
  chain.k_loop_step = {0, dsl::ShortTurn::kLast};
  for (bool b_row : {true, false}) {
    // M = 2 < the probe's 4 x 4 draws: row passes; N = 8.
    const GemmShape s{.m = 2, .n = 8, .k = 100, .b_row_major = b_row};
    absl::StatusOr<std::shared_ptr<profile::CublasBlackBox>> box = profile::CublasBlackBox::create(lt_, s);
    ASSERT_TRUE(box.ok()) << box.status();
    const int copies_before = driver_->copies;
    dsl::probe::ProbeOptions o;
    o.k = s.k;
    absl::StatusOr<dsl::GemmDesc> got = dsl::probe::recover_gemm_desc((*box)->as_black_box(), o);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, chain) << to_string(s);
    // Row-major B needs the pitched copy for its columns; column-major B does not.
    EXPECT_EQ(driver_->copies > copies_before, b_row) << to_string(s);
    // A problem taller and wider than the shape: 2 x 2 passes, against the reference.
    std::mt19937 rng(5);
    dsl::reference::GemmProblem p;
    p.m = 3;
    p.n = 11;
    p.k = s.k;
    p.b_row_major = false;  // the probe's problems may come in either layout
    for (int64_t i = 0; i < p.m * p.k; ++i)
      p.a.push_back(to_bits(DType::kF16, float(int(rng() % 200) - 100) / 64.0f));
    for (int64_t i = 0; i < p.k * p.n; ++i)
      p.b.push_back(to_bits(DType::kF16, float(int(rng() % 200) - 100) / 32.0f));
    const int64_t launches_before = (*box)->launches();
    absl::StatusOr<std::vector<uint32_t>> have = (*box)->run(p);
    absl::StatusOr<std::vector<uint32_t>> want = dsl::reference::gemm(chain, p);
    ASSERT_TRUE(have.ok()) << have.status();
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ((*box)->launches() - launches_before, 4);
    EXPECT_EQ(*have, *want) << to_string(s);
    // Bad problems name the field.
    p.bias = {0};
    EXPECT_NE((*box)->run(p).status().message().find("bias"), std::string::npos);
  }
}


// probe_key with batch limits inside the shape: the same descriptor as one launch per
// placement, in a fraction of the launches (each batch is one full-shape launch).
TEST_F(CublasLtFakeTest, BatchedProbeKeyRecoversTheSameDescriptorInFewerLaunches) {
  for (bool b_row : {true, false}) {
    const GemmShape s{.m = 6, .n = 40, .k = 150, .b_row_major = b_row};
    int64_t launches[2] = {0, 0};
    dsl::GemmDesc got[2];
    for (int batched = 0; batched < 2; ++batched) {
      absl::StatusOr<std::shared_ptr<profile::CublasBlackBox>> box =
          profile::CublasBlackBox::create(lt_, s);
      ASSERT_TRUE(box.ok()) << box.status();
      const dsl::probe::BatchLimits lim =
          batched ? dsl::probe::BatchLimits{.rows = s.m, .cols = s.n} : dsl::probe::BatchLimits{};
      absl::StatusOr<dsl::GemmDesc> d = profile::probe_key((*box)->as_black_box(), s,
                                                           profile::CublasKey{},
                                                           dsl::Instruction::kMmaSync, lim);
      ASSERT_TRUE(d.ok()) << d.status();
      got[batched] = *d;
      launches[batched] = (*box)->launches();
    }
    EXPECT_EQ(got[1], got[0]) << to_string(s);
    EXPECT_LT(launches[1] * 5, launches[0]) << launches[1] << " vs " << launches[0];
  }
}

// ---- run_sparse: the same bits as run(densify(p)) -------------------------------

using dsl::probe::SparseProblem;

// f16 bits of a small value; `fill` about a third of the time, so some entries hold
// the fill (the box skips writing those).
uint32_t draw_bits(std::mt19937& rng, uint32_t fill) {
  if (rng() % 3 == 0) return fill;
  return to_bits(DType::kF16, float(int(rng() % 64) - 32) / 8.0f);
}

// `na` entries of a and `nb` of b at distinct random positions.
SparseProblem draw_sparse(std::mt19937& rng, int64_t m, int64_t n, int64_t k, uint32_t a_fill,
                          uint32_t b_fill, int na, int nb) {
  SparseProblem p{.m = m, .n = n, .k = k, .a_fill = a_fill, .b_fill = b_fill};
  std::set<std::pair<int64_t, int64_t>> seen;
  while (int(p.a.size()) < na && int64_t(seen.size()) < m * k) {
    const int64_t i = rng() % m, kk = rng() % k;
    if (seen.insert({i, kk}).second) p.a.push_back({.row = i, .col = kk, .bits = draw_bits(rng, a_fill)});
  }
  seen.clear();
  while (int(p.b.size()) < nb && int64_t(seen.size()) < k * n) {
    const int64_t kk = rng() % k, j = rng() % n;
    if (seen.insert({kk, j}).second) p.b.push_back({.row = kk, .col = j, .bits = draw_bits(rng, b_fill)});
  }
  return p;
}

dsl::reference::GemmProblem draw_dense(std::mt19937& rng, int64_t m, int64_t n, int64_t k) {
  dsl::reference::GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  for (int64_t i = 0; i < m * k; ++i) p.a.push_back(draw_bits(rng, 0));
  for (int64_t i = 0; i < k * n; ++i) p.b.push_back(draw_bits(rng, 0));
  return p;
}

std::string describe(const SparseProblem& p) {
  return absl::StrFormat("sparse %dx%dx%d fills 0x%x/0x%x, %d + %d entries", p.m, p.n, p.k,
                         p.a_fill, p.b_fill, p.a.size(), p.b.size());
}

// Over gemv-like, N = 1 and general shapes in every operand layout: a sequence of sparse
// calls on one box (fills switching, problems inside and larger than the shape, dense
// calls in between) gives, call by call, what a second box gives for run(densify(p)).
// A stale entry or fill left on the device by an earlier call would show up in a later one.
// Both ways of writing the entries: ByteScatter, and the per-entry copies without it.
TEST_F(CublasLtFakeTest, SparseRunEqualsDenseRunOfItsDensifiedProblem) {
  const uint32_t one = to_bits(DType::kF16, 1.0f), half = to_bits(DType::kF16, 0.5f);
  struct Mn {
    int64_t m, n;
  };
  for (bool scatter : {true, false})
  for (Mn mn : {Mn{1, 8}, Mn{4, 1}, Mn{3, 5}}) {
    driver_->runs_scatter = scatter;
    for (bool a_row : {true, false}) {
      for (bool b_row : {true, false}) {
        const GemmShape s{.m = mn.m, .n = mn.n, .k = 37, .out_dtype = DType::kF32,
                          .a_row_major = a_row, .b_row_major = b_row};
        absl::StatusOr<std::shared_ptr<profile::CublasBlackBox>> sparse =
            profile::CublasBlackBox::create(lt_, s);
        absl::StatusOr<std::shared_ptr<profile::CublasBlackBox>> dense =
            profile::CublasBlackBox::create(lt_, s);
        ASSERT_TRUE(sparse.ok() && dense.ok());
        dsl::probe::SparseBlackBox box = (*sparse)->as_sparse_black_box();
        std::mt19937 rng(17);
        // (a_fill, b_fill) call by call; the probe's (0, one), then others, then back.
        const std::pair<uint32_t, uint32_t> fills[] = {
            {0, one}, {0, one}, {0, one}, {half, one}, {half, one}, {0, 0},
            {0, half}, {one, 0}, {0, one}, {0, one}, {0, one}, {0, one}};
        int step = 0;
        for (auto [a_fill, b_fill] : fills) {
          ++step;
          // Inside the shape, then taller and wider than it (several launches).
          const int64_t pm = step % 3 == 0 ? 2 * s.m + 1 : 1 + rng() % s.m;
          const int64_t pn = step % 4 == 0 ? 2 * s.n + 1 : 1 + rng() % s.n;
          const SparseProblem p = draw_sparse(rng, pm, pn, s.k, a_fill, b_fill,
                                              int(3 * pm), int(pn + 2));
          const int64_t launches_before = (*sparse)->launches();
          absl::StatusOr<std::vector<uint32_t>> have = box(p);
          absl::StatusOr<std::vector<uint32_t>> want = (*dense)->run(dsl::probe::densify(p));
          ASSERT_TRUE(have.ok()) << have.status();
          ASSERT_TRUE(want.ok()) << want.status();
          EXPECT_EQ(*have, *want) << to_string(s) << " step " << step << ": " << describe(p)
                                  << (scatter ? " (scatter)" : " (copies)");
          EXPECT_EQ((*sparse)->scatters_sparse_entries(), scatter);
          EXPECT_EQ((*sparse)->launches() - launches_before,
                    ((pm + s.m - 1) / s.m) * ((pn + s.n - 1) / s.n));
          if (step % 5 == 0) {  // a dense call on the sparse box, which the next call follows
            const dsl::reference::GemmProblem d = draw_dense(rng, 1 + rng() % s.m, 1 + rng() % s.n, s.k);
            absl::StatusOr<std::vector<uint32_t>> d_have = (*sparse)->run(d);
            absl::StatusOr<std::vector<uint32_t>> d_want = (*dense)->run(d);
            ASSERT_TRUE(d_have.ok() && d_want.ok());
            EXPECT_EQ(*d_have, *d_want) << to_string(s) << " dense after step " << step;
          }
        }
      }
    }
  }
}

// Once the fill is on the device a call uploads its entries, not its rows: far less
// than one K-long line, where run() uploads (rows + cols) x K elements. With
// ByteScatter that is one upload (both lists) and two scatters per launch.
TEST_F(CublasLtFakeTest, ASparseCallUploadsOnlyItsEntriesOnceTheFillIsThere) {
  const GemmShape s{.m = 4, .n = 8, .k = 4096};
  for (bool scatter : {true, false}) {
    driver_->runs_scatter = scatter;
    absl::StatusOr<std::shared_ptr<profile::CublasBlackBox>> box =
        profile::CublasBlackBox::create(lt_, s);
    ASSERT_TRUE(box.ok()) << box.status();
    const uint32_t one = to_bits(DType::kF16, 1.0f);
    std::mt19937 rng(3);
    ASSERT_TRUE((*box)->run_sparse(draw_sparse(rng, 4, 8, s.k, 0, one, 12, 8)).ok());
    EXPECT_EQ((*box)->scatters_sparse_entries(), scatter);
    for (int call = 0; call < 3; ++call) {
      const SparseProblem p = draw_sparse(rng, 4, 8, s.k, 0, one, 12, 8);
      const uint64_t before = driver_->uploaded;
      const int uploads_before = driver_->uploads, scatters_before = driver_->scatters;
      absl::StatusOr<std::vector<uint32_t>> have = (*box)->run_sparse(p);
      ASSERT_TRUE(have.ok()) << have.status();
      const std::string what = absl::StrFormat("%s call %d", scatter ? "scatter" : "copies", call);
      if (scatter) {
        // At most 20 entries of 2 bytes, 9 bytes a byte record, in a patch and a restore
        // list (the second aligned to 8).
        EXPECT_LE(driver_->uploaded - before, 2u * 20 * 2 * 9 + 7) << what;
        EXPECT_EQ(driver_->uploads - uploads_before, 1) << what;
        EXPECT_EQ(driver_->scatters - scatters_before, 2) << what;
      } else {
        // 20 entries written and restored, 2 bytes each (a merged gap adds at most 32 each).
        EXPECT_LE(driver_->uploaded - before, 2u * 20 * 33 * 2) << what;
        EXPECT_EQ(driver_->scatters, scatters_before) << what;
      }
      EXPECT_LT(driver_->uploaded - before, uint64_t(s.k) * 2) << what;
    }
  }
}

// A queued batch answers each problem as run_sparse does, one launch each; with
// ByteScatter it makes one upload (every list) and one download (every D) for the
// batch. Problems that differ in fill or need several launches, and a box without the
// scatter, are run one by one, with the same answers.
TEST_F(CublasLtFakeTest, AQueuedBatchAnswersAsOneByOneWithOneUploadAndOneDownload) {
  const uint32_t one = to_bits(DType::kF16, 1.0f), half = to_bits(DType::kF16, 0.5f);
  for (bool scatter : {true, false}) {
    driver_->runs_scatter = scatter;
    for (const GemmShape s : {GemmShape{.m = 4, .n = 8, .k = 61}, GemmShape{.m = 1, .n = 17, .k = 300},
                              GemmShape{.m = 6, .n = 3, .k = 40, .a_row_major = false}}) {
      absl::StatusOr<std::shared_ptr<profile::CublasBlackBox>> seq = profile::CublasBlackBox::create(lt_, s);
      absl::StatusOr<std::shared_ptr<profile::CublasBlackBox>> queued = profile::CublasBlackBox::create(lt_, s);
      ASSERT_TRUE(seq.ok() && queued.ok());
      std::mt19937 rng(29);
      auto draw = [&](int count, uint32_t a_fill, uint32_t b_fill, bool taller) {
        std::vector<SparseProblem> ps;
        for (int i = 0; i < count; ++i) {
          const int64_t pm = taller && i == 1 ? 2 * s.m + 1 : 1 + rng() % s.m;
          ps.push_back(draw_sparse(rng, pm, 1 + rng() % s.n, s.k, a_fill, b_fill, int(2 * pm), 3));
        }
        return ps;
      };
      const std::string where = absl::StrFormat("%s (%s)", to_string(s), scatter ? "scatter" : "copies");
      // The fill goes up on the first call; the second batch shows the queued cost.
      for (int round = 0; round < 4; ++round) {
        const bool mixed = round == 2, taller = round == 3;
        std::vector<SparseProblem> ps = draw(9, 0, one, taller);
        if (mixed) ps[4].a_fill = half;
        std::vector<std::vector<uint32_t>> want;
        for (const SparseProblem& p : ps) {
          absl::StatusOr<std::vector<uint32_t>> r = (*seq)->run_sparse(p);
          ASSERT_TRUE(r.ok()) << r.status();
          want.push_back(*r);
        }
        const int uploads = driver_->uploads, downloads = driver_->downloads;
        const int64_t launches = (*queued)->launches(), calls = (*queued)->calls();
        absl::StatusOr<std::vector<std::vector<uint32_t>>> have = (*queued)->run_sparse_batch(ps);
        ASSERT_TRUE(have.ok()) << have.status();
        EXPECT_EQ(*have, want) << where << " round " << round;
        EXPECT_EQ((*queued)->calls() - calls, 9) << where;
        if (scatter && round == 1) {
          EXPECT_EQ(driver_->uploads - uploads, 1) << where << ": every list in one upload";
          EXPECT_EQ(driver_->downloads - downloads, 1) << where << ": every D in one download";
          EXPECT_EQ((*queued)->launches() - launches, 9) << where;
        }
        if (!scatter || mixed || taller) {
          EXPECT_GE(driver_->downloads - downloads, 9) << where << " round " << round << ": one by one";
        }
      }
      // A bad problem anywhere in the batch is refused before any launch.
      std::vector<SparseProblem> bad = draw(3, 0, one, false);
      bad[2].k = s.k + 1;
      const int64_t launches = (*queued)->launches();
      absl::Status st = (*queued)->run_sparse_batch(bad).status();
      EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
      EXPECT_NE(std::string(st.message()).find("SparseProblem.k"), std::string::npos) << st;
      EXPECT_EQ((*queued)->launches(), launches);
      absl::StatusOr<std::vector<std::vector<uint32_t>>> none = (*queued)->run_sparse_batch({});
      ASSERT_TRUE(none.ok());
      EXPECT_TRUE(none->empty());
    }
  }
}

TEST_F(CublasLtFakeTest, BadSparseProblemsAreInvalidArgumentsNamingTheField) {
  const GemmShape s{.m = 2, .n = 3, .k = 16};
  absl::StatusOr<std::shared_ptr<profile::CublasBlackBox>> box = profile::CublasBlackBox::create(lt_, s);
  ASSERT_TRUE(box.ok()) << box.status();
  const SparseProblem good{.m = 2, .n = 3, .k = 16, .a_fill = 0, .b_fill = 0x3c00,
                           .a = {{.row = 1, .col = 15, .bits = 0x4000}},
                           .b = {{.row = 0, .col = 2, .bits = 0x3800}}};
  ASSERT_TRUE((*box)->run_sparse(good).ok());
  struct Case {
    const char* what;
    SparseProblem p;
    const char* message;
  };
  std::vector<Case> cases;
  auto with = [&](const char* what, const char* message, auto change) {
    SparseProblem p = good;
    change(p);
    cases.push_back({what, p, message});
  };
  with("wrong k", "SparseProblem.k is 15", [](SparseProblem& p) { p.k = 15; });
  with("m = 0", "m = 0, n = 3", [](SparseProblem& p) { p.m = 0; });
  with("a row out of range", "SparseProblem.a[0] is at (row 2, col 15), outside the m x k",
       [](SparseProblem& p) { p.a[0].row = 2; });
  with("a col out of range", "SparseProblem.a[0] is at (row 1, col 16)",
       [](SparseProblem& p) { p.a[0].col = 16; });
  with("b col negative", "SparseProblem.b[0] is at (row 0, col -1), outside the k x n",
       [](SparseProblem& p) { p.b[0].col = -1; });
  with("b row out of range", "SparseProblem.b[1] is at (row 16, col 0)",
       [](SparseProblem& p) { p.b.push_back({.row = 16, .col = 0, .bits = 1}); });
  with("duplicate a", "SparseProblem.a[0] and a[1] are both at (row 1, col 15)",
       [](SparseProblem& p) { p.a.push_back(p.a[0]); });
  with("duplicate b", "SparseProblem.b[0] and b[2] are both at (row 0, col 2)",
       [](SparseProblem& p) {
         p.b.push_back({.row = 1, .col = 2, .bits = 1});
         p.b.push_back({.row = 0, .col = 2, .bits = 0});
       });
  with("wide a bits", "SparseProblem.a[0].bits is 0x10000, wider than its 2-byte dtype",
       [](SparseProblem& p) { p.a[0].bits = 0x10000; });
  with("wide b fill", "SparseProblem.b_fill is 0x13c00", [](SparseProblem& p) { p.b_fill = 0x13c00; });
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<uint32_t>> r = (*box)->run_sparse(c.p);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << c.what << ": " << r.status();
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << c.what << ": " << r.status();
  }
  // Refused calls leave the box as it was.
  absl::StatusOr<std::vector<uint32_t>> again = (*box)->run_sparse(good);
  absl::StatusOr<std::vector<uint32_t>> want = (*box)->run(dsl::probe::densify(good));
  ASSERT_TRUE(again.ok() && want.ok());
  EXPECT_EQ(*again, *want);
}

}  // namespace
}  // namespace fixbits::runtime
