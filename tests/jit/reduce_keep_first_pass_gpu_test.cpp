// GPU test (label gpu) of ReduceConfig.keep_first_pass: a fused RMSNorm / softmax row
// whose first pass is kept in registers between the statistic and the elementwise
// pass gives exactly the bits of the same configuration without the knob (memcmp),
// and, for the pinned order, the CPU reference's bits; for the free order, the
// reference's bits under the config's free layout. Rows shorter than, equal to and
// longer than the pass (Q), 1-element rows, non-powers of two, plain and special
// values (NaN, inf, -0.0). Without a device every test prints [SKIP] <reason>.
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
using dsl::TreeOrder;
using testing::Mix;

class ReduceKeepFirstPassGpuTest : public testing::SeededGpuTest {
 protected:
  absl::StatusOr<std::vector<uint32_t>> run(const ReduceDesc& d, const ReduceConfig& cfg,
                                            const dsl::reference::ReduceProblem& p) {
    auto runner = jit::ReduceRunner::create(device_, d, cfg);
    if (!runner.ok()) return runner.status();
    if (auto s = runner->upload(p); !s.ok()) return s;
    if (auto s = runner->launch(); !s.ok()) return s;
    return runner->download();
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
          for (int64_t cols : {int64_t{1}, int64_t{33}, q - 1, q, q + 3, 3 * q + 5}) {
            const bool specials = cols % 2 == 1 && op == ReduceOp::kRmsNorm;
            dsl::reference::ReduceProblem p;
            p.rows = 5;
            p.cols = cols;
            p.x = testing::random_bits(in, static_cast<size_t>(p.rows * cols), rng_, Mix::kPlain, specials);
            if (op == ReduceOp::kRmsNorm) p.w = testing::random_bits(in, static_cast<size_t>(cols), rng_, Mix::kPositive);
            p.eps = 1e-5f;
            const std::string where = absl::StrFormat("%s warps=%d elems=%d cols=%d seed=%d", dsl::to_string(d),
                                                      c.warps, c.elems_per_thread, cols, seed_);
            auto plain = run(d, c, p);
            ASSERT_TRUE(plain.ok()) << where << ": " << plain.status();
            ReduceConfig k = c;
            k.keep_first_pass = true;
            auto kept = run(d, k, p);
            ASSERT_TRUE(kept.ok()) << where << " keep_first_pass: " << kept.status();
            auto ref = dsl::reference::reduce(d, p, dsl::free_layout(c));
            ASSERT_TRUE(ref.ok()) << ref.status();
            ASSERT_EQ(kept->size(), ref->size()) << where;
            EXPECT_EQ(std::memcmp(kept->data(), plain->data(), kept->size() * 4), 0) << where;
            EXPECT_EQ(std::memcmp(kept->data(), ref->data(), kept->size() * 4), 0) << where;
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 3 * 2 * 3 * 6);
}

}  // namespace
}  // namespace fixbits
