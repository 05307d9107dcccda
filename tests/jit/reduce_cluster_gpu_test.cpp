// GPU test (label gpu) of ReduceConfig.cluster_rows: a split RMSNorm / softmax row run
// as ONE kernel whose P blocks of a row form a thread-block cluster (sm_90) gives
// exactly the bits (memcmp) of the same split run as separate kernels and of the CPU
// reference, for f32/bf16/f16, P = 2, 3, 4, 8, kept strips K = 0, 1, the whole
// block's share when the registers allow it, and the register bound; shapes of 1 and
// 256 rows, 131072 and 1000003 columns (bf16, strip 4096: the bench's case), 1-element
// rows, an odd 4099 (every dtype and strip); one row of NaN /
// inf / subnormals / -0.0 / +-L where there are 3 or more rows. The runner launches it
// once (rows * P blocks, plain launch: the kernel declares its cluster shape). Every
// run has fresh workspaces filled with NaN bytes (ReduceRunner::upload), so a block
// that folded before another's strip results were visible would show NaN.
// Without a device every test prints [SKIP] <reason>.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"
#include "jit/ReduceRunner.h"
#include "tests/jit/RandomInputs.h"
#include "tests/jit/SeededGpuTest.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::ReduceOp;
using testing::Mix;

class ReduceClusterGpuTest : public testing::SeededGpuTest {
 protected:
  absl::StatusOr<std::vector<uint32_t>> run(const ReduceDesc& d, const ReduceConfig& cfg,
                                            const dsl::reference::ReduceProblem& p, size_t* launches) {
    auto runner = jit::ReduceRunner::create(device_, d, cfg);
    if (!runner.ok()) return runner.status();
    if (launches != nullptr) *launches = runner->phases().size();
    if (auto s = runner->upload(p); !s.ok()) return s;
    if (auto s = runner->launch(); !s.ok()) return s;
    return runner->download();
  }

  // Rows of plain values (softmax) or adversarial ones without NaN/inf (RMSNorm); row 2,
  // where there is one, adversarial with NaN and +-inf.
  dsl::reference::ReduceProblem problem(const ReduceDesc& d, int64_t rows, int64_t cols) {
    dsl::reference::ReduceProblem p;
    p.rows = rows;
    p.cols = cols;
    p.x.reserve(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) {
      const Mix mix = (r == 2 || d.op == ReduceOp::kRmsNorm) ? Mix::kAdversarial : Mix::kPlain;
      std::vector<uint32_t> row = testing::random_bits(d.in_dtype, static_cast<size_t>(cols), rng_, mix, r == 2);
      p.x.insert(p.x.end(), row.begin(), row.end());
    }
    if (d.op == ReduceOp::kRmsNorm) p.w = testing::random_bits(d.in_dtype, static_cast<size_t>(cols), rng_, Mix::kPositive);
    p.eps = 1e-5f;
    return p;
  }
};

size_t first_diff(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return i;
  }
  return n;
}

TEST_F(ReduceClusterGpuTest, SameBitsAsTheSplitKernelsAndTheReference) {
  struct Shape { int64_t rows, cols; };
  int cases = 0;
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16, DType::kF16}) {
      for (int64_t strip : {int64_t{4096}, int64_t{1024}}) {
        const ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .strip = strip};
        // strip 4096: the bench's warps 8 x 8 (16 values a strip per thread, K <= 4);
        // strip 1024: 4 x 8 (8 values, K <= 8).
        const ReduceConfig base = strip == 4096 ? ReduceConfig{.warps = 8, .elems_per_thread = 8}
                                                : ReduceConfig{.warps = 4, .elems_per_thread = 8};
        const int64_t most = dsl::max_keep_passes(d, base);
        // The bench's case (bf16, strip 4096) over every shape; the other dtypes and the
        // 1024 strip over the small ones (session 8's device run 3 cut the full matrix,
        // 576 runners, at 150 s).
        const bool full = in == DType::kBF16 && strip == 4096;
        std::vector<Shape> shapes = {Shape{3, 4099}, Shape{1, 1}, Shape{4, 1000}};
        if (full) {
          for (Shape big : {Shape{256, 131072}, Shape{1, 131072}, Shape{1, 1000003}}) shapes.push_back(big);
        }
        for (Shape s : shapes) {
          const dsl::reference::ReduceProblem p = problem(d, s.rows, s.cols);
          auto ref = dsl::reference::reduce(d, p);
          ASSERT_TRUE(ref.ok()) << ref.status();
          const int64_t strips = dsl::strip_count(d, s.cols);
          for (int parts : {2, 3, 4, 8}) {
            ReduceConfig split = base;
            split.blocks_per_row = parts;
            const std::string where = absl::StrFormat("%s warps=%d elems=%d P=%d rows=%d cols=%d seed=%d",
                                                      dsl::to_string(d), base.warps, base.elems_per_thread,
                                                      parts, s.rows, s.cols, seed_);
            auto want = run(d, split, p, nullptr);
            ASSERT_TRUE(want.ok()) << where << " (split kernels): " << want.status();
            ASSERT_EQ(want->size(), ref->size()) << where;
            ASSERT_EQ(std::memcmp(want->data(), ref->data(), ref->size() * 4), 0)
                << where << " split kernels vs reference, first differing element " << first_diff(*want, *ref);
            const int64_t share = (strips - 1) / parts + 1;  // the most strips one block holds
            std::vector<int64_t> keeps = {0, 1, most};
            if (share <= most) keeps.push_back(share);        // the whole row from registers
            std::sort(keeps.begin(), keeps.end());
            keeps.erase(std::unique(keeps.begin(), keeps.end()), keeps.end());
            for (int64_t keep : keeps) {
              ReduceConfig c = split;
              c.cluster_rows = true;
              c.keep_passes = static_cast<int>(keep);
              size_t launches = 0;
              auto got = run(d, c, p, &launches);
              ASSERT_TRUE(got.ok()) << where << " cluster keep=" << keep << ": " << got.status();
              EXPECT_EQ(launches, 1u) << where;
              ASSERT_EQ(got->size(), ref->size()) << where;
              EXPECT_EQ(std::memcmp(got->data(), want->data(), got->size() * 4), 0)
                  << where << " cluster keep=" << keep << " vs split kernels, first differing element "
                  << first_diff(*got, *want);
              EXPECT_EQ(std::memcmp(got->data(), ref->data(), got->size() * 4), 0)
                  << where << " cluster keep=" << keep << " vs reference, first differing element "
                  << first_diff(*got, *ref);
              ++cases;
            }
          }
        }
      }
    }
  }
  EXPECT_GE(cases, 2 * (6 + 5 * 3) * 4 * 2);  // at least K = 0 and one more per (shape, P)
}

}  // namespace
}  // namespace fixbits
