// GPU test (label gpu) of ReduceConfig.keep_passes: a fused RMSNorm / softmax row
// whose first N passes (N = 1, 2, 4, 8, up to the register bound max_keep_passes) are
// kept in registers between the statistic and the elementwise pass gives exactly the
// bits of the same configuration without the knob (memcmp), and, for the pinned
// order, the CPU reference's bits; for the free order, the reference's bits under the
// config's free layout. Rows shorter than, equal to, between and longer than one pass
// (Q) and N passes, 1-element rows, non-powers of two; rows of plain values and one
// row per problem of adversarial values (+-L, tiny, subnormals, -0.0, NaN, +-inf).
// Without a device every test prints [SKIP] <reason>. (The file keeps the name of the
// knob's first form, keep_first_pass = keep_passes 1.)
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"
#include "tests/jit/RandomInputs.h"
#include "tests/jit/ReduceGpuRun.h"
#include "tests/jit/SeededGpuTest.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::ReduceOp;
using dsl::TreeOrder;
using testing::Mix;

class ReduceKeepFirstPassGpuTest : public testing::SeededGpuTest {
 protected:
  absl::StatusOr<std::vector<uint32_t>> run(const ReduceDesc& d, const ReduceConfig& cfg,
                                            const dsl::reference::ReduceProblem& p) {
    return testing::run_reduce(device_, d, cfg, p);
  }
};

TEST_F(ReduceKeepFirstPassGpuTest, SameBitsAsWithoutTheKnobAndAsTheReference) {
  int cases = 0;
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16, DType::kF16}) {
      for (TreeOrder order : {TreeOrder::kPinned, TreeOrder::kFree}) {
        const ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .order = order, .strip = 1024};
        for (ReduceConfig c : {ReduceConfig{.warps = 1, .elems_per_thread = 8},
                               ReduceConfig{.warps = 4, .elems_per_thread = 8},
                               ReduceConfig{.warps = 8, .elems_per_thread = 4}}) {
          const int64_t q = dsl::pass_extent(d, c);
          const int64_t most = dsl::max_keep_passes(d, c);
          for (int64_t cols : {int64_t{1}, int64_t{33}, q - 1, q, q + 3, 2 * q, 3 * q + 5, 4 * q - 1,
                               4 * q + 3, 8 * q, 8 * q + 3}) {
            dsl::reference::ReduceProblem p;
            p.rows = 5;
            p.cols = cols;
            // Row 2: adversarial with NaN and inf. Others: adversarial for RMSNorm,
            // plain for softmax (a +-L would leave every other exp 0).
            for (int64_t r = 0; r < p.rows; ++r) {
              const Mix mix = (r == 2 || op == ReduceOp::kRmsNorm) ? Mix::kAdversarial : Mix::kPlain;
              std::vector<uint32_t> row = testing::random_bits(in, static_cast<size_t>(cols), rng_, mix, r == 2);
              p.x.insert(p.x.end(), row.begin(), row.end());
            }
            if (op == ReduceOp::kRmsNorm) p.w = testing::random_bits(in, static_cast<size_t>(cols), rng_, Mix::kPositive);
            p.eps = 1e-5f;
            const std::string where = absl::StrFormat("%s warps=%d elems=%d cols=%d seed=%d", dsl::to_string(d),
                                                      c.warps, c.elems_per_thread, cols, seed_);
            auto plain = run(d, c, p);
            ASSERT_TRUE(plain.ok()) << where << ": " << plain.status();
            auto ref = dsl::reference::reduce(d, p, dsl::free_layout(c));
            ASSERT_TRUE(ref.ok()) << ref.status();
            ASSERT_EQ(plain->size(), ref->size()) << where;
            EXPECT_EQ(std::memcmp(plain->data(), ref->data(), plain->size() * 4), 0) << where << " keep_passes 0";
            for (int keep : {1, 2, 4, 8}) {
              if (keep > most) continue;
              ReduceConfig k = c;
              k.keep_passes = keep;
              auto kept = run(d, k, p);
              ASSERT_TRUE(kept.ok()) << where << " keep_passes " << keep << ": " << kept.status();
              ASSERT_EQ(kept->size(), ref->size()) << where;
              EXPECT_EQ(std::memcmp(kept->data(), plain->data(), kept->size() * 4), 0) << where << " keep_passes " << keep;
              EXPECT_EQ(std::memcmp(kept->data(), ref->data(), kept->size() * 4), 0) << where << " keep_passes " << keep;
              ++cases;
            }
          }
        }
      }
    }
  }
  // Per (op, dtype), 11 shapes each: pinned (Q = 1024; 32, 8, 4 values per thread)
  // keeps {1, 2} + {1, 2, 4, 8} x 2; free (Q = 256, 1024, 1024; 8, 8, 4 per thread)
  // all four keeps x 3.
  EXPECT_EQ(cases, 2 * 3 * 11 * ((2 + 4 + 4) + (4 + 4 + 4)));
}

}  // namespace
}  // namespace fixbits
