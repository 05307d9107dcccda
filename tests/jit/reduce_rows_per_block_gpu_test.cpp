// GPU test (label gpu) of ReduceConfig.rows_per_block: a fused RMSNorm / softmax kernel
// whose blocks take R = 2, 3 or 8 rows in turn (the next row's kept x loaded while
// this row is reduced) gives exactly the bits of the same configuration with one row a
// block (memcmp), and, pinned, the CPU reference's; free, the reference's under the
// config's free layout. f32 / bf16 / f16; one row, rows that do not fill the last block
// and rows enough for two blocks an SM; rows shorter than, as long as and longer than the
// kept passes; one row per problem adversarial (+-L, tiny, subnormals, -0.0, NaN, +-inf).
// Softmax with whole_strips and divide_by_reciprocal (the bench's knobs) too, and a row's
// bits alone equal its bits among 263 rows. All of it again with the next row staged in
// shared memory (keep_in_shared: cp.async into a double buffer) instead of carried in
// registers. Without a device every test prints [SKIP] <reason>.
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"
#include "tests/jit/ReduceGpuRun.h"
#include "tests/jit/SeededGpuTest.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::ReduceOp;
using dsl::TreeOrder;

class ReduceRowsPerBlockGpuTest : public testing::SeededGpuTest {
 protected:
  absl::StatusOr<std::vector<uint32_t>> run(const ReduceDesc& d, const ReduceConfig& cfg,
                                            const dsl::reference::ReduceProblem& p) {
    return testing::run_reduce(device_, d, cfg, p);
  }
  std::string where(const ReduceDesc& d, const ReduceConfig& c, int64_t rows, int64_t cols) const {
    return absl::StrFormat(
        "%s warps=%d elems=%d keep=%d shared=%d ws=%d rd=%d mb=%d rows_per_block=%d rows=%d cols=%d seed=%d",
        dsl::to_string(d), c.warps, c.elems_per_thread, c.keep_passes, c.keep_in_shared ? 1 : 0,
        c.whole_strips ? 1 : 0, c.divide_by_reciprocal ? 1 : 0, c.min_blocks_per_sm, c.rows_per_block, rows, cols,
        seed_);
  }
  // Over f32/bf16/f16, pinned and free, two configs (`shared`: kept in shared memory, the
  // next row a double buffer) and rows of 1 to 263: each R of 2, 3, 8 gives R = 1's
  // bits, which are the reference's.
  void same_bits_as_one_row_a_block(bool shared) {
    int cases = 0;
    for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
      for (DType in : {DType::kF32, DType::kBF16, DType::kF16}) {
        for (TreeOrder order : {TreeOrder::kPinned, TreeOrder::kFree}) {
          const ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .order = order, .strip = 1024};
          for (ReduceConfig c : {ReduceConfig{.warps = 4, .elems_per_thread = 8, .keep_passes = 1},
                                 ReduceConfig{.warps = 16, .elems_per_thread = 4, .keep_passes = 2}}) {
            c.keep_in_shared = shared;
            const int64_t q = dsl::pass_extent(d, c);
            for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 33}, {7, q * c.keep_passes},
                                      {263, q * c.keep_passes + 5}, {9, 3 * q + 1}}) {
              const auto p = testing::fused_gpu_problem(d, rows, cols, rng_);
              auto one = run(d, c, p);
              ASSERT_TRUE(one.ok()) << where(d, c, rows, cols) << ": " << one.status();
              auto ref = dsl::reference::reduce(d, p, dsl::free_layout(c));
              ASSERT_TRUE(ref.ok()) << ref.status();
              ASSERT_EQ(testing::first_difference(*one, *ref), "") << where(d, c, rows, cols);
              expect_same_for_each(d, c, {2, 3, 8}, p, *ref, &cases);
            }
          }
        }
      }
    }
    EXPECT_EQ(cases, 2 * 3 * 2 * 2 * 4 * 3);
  }
  // For each rows_per_block in `rs`: c with it gives base's bits on p, which are `ref`.
  void expect_same_for_each(const ReduceDesc& d, ReduceConfig c, const std::vector<int>& rs,
                            const dsl::reference::ReduceProblem& p, const std::vector<uint32_t>& ref, int* cases) {
    for (int r : rs) {
      c.rows_per_block = r;
      auto got = run(d, c, p);
      ASSERT_TRUE(got.ok()) << where(d, c, p.rows, p.cols) << ": " << got.status();
      EXPECT_EQ(testing::first_difference(*got, ref), "") << where(d, c, p.rows, p.cols);
      ++*cases;
    }
  }
};

TEST_F(ReduceRowsPerBlockGpuTest, SameBitsAsOneRowABlockAndAsTheReference) {
  same_bits_as_one_row_a_block(/*shared=*/false);
}

TEST_F(ReduceRowsPerBlockGpuTest, StagedNextRowSameBitsAsOneRowABlockAndAsTheReference) {
  same_bits_as_one_row_a_block(/*shared=*/true);
}

TEST_F(ReduceRowsPerBlockGpuTest, SoftmaxWithTheBenchKnobsSameBitsAsTheReference) {
  int cases = 0;
  for (DType in : {DType::kBF16, DType::kF16}) {
    const ReduceDesc d{.op = ReduceOp::kSoftmax, .in_dtype = in, .out_dtype = in, .strip = 1024};
    // Registers; and staged, also asking for 4 blocks an SM (mb 4: 32 registers).
    for (ReduceConfig c : {ReduceConfig{.warps = 16, .elems_per_thread = 4, .keep_passes = 2,
                                        .whole_strips = true, .divide_by_reciprocal = true},
                           ReduceConfig{.warps = 16, .elems_per_thread = 4, .keep_passes = 2, .keep_in_shared = true,
                                        .min_blocks_per_sm = 4, .whole_strips = true,
                                        .divide_by_reciprocal = true}}) {
      for (int64_t rows : {1, 5, 263}) {
        const auto p = testing::fused_gpu_problem(d, rows, 4096, rng_);
        auto ref = dsl::reference::reduce(d, p);
        ASSERT_TRUE(ref.ok()) << ref.status();
        expect_same_for_each(d, c, {1, 2, 4}, p, *ref, &cases);
      }
    }
  }
  EXPECT_EQ(cases, 2 * 2 * 3 * 3);
}

TEST_F(ReduceRowsPerBlockGpuTest, RowBitsDoNotDependOnTheRowsBesideIt) {
  const ReduceDesc d{.op = ReduceOp::kSoftmax, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 1024};
  const int64_t rows = 263, cols = 4096;
  const auto batch = testing::fused_gpu_problem(d, rows, cols, rng_);
  for (bool shared : {false, true}) {
    const ReduceConfig c{.warps = 16, .elems_per_thread = 4, .keep_passes = 2, .keep_in_shared = shared,
                         .rows_per_block = 4};
    auto all = run(d, c, batch);
    ASSERT_TRUE(all.ok()) << all.status();
    for (int64_t r : {int64_t{0}, int64_t{2}, int64_t{130}, int64_t{262}}) {
      dsl::reference::ReduceProblem one = batch;
      one.rows = 1;
      one.x.assign(batch.x.begin() + r * cols, batch.x.begin() + (r + 1) * cols);
      auto alone = run(d, c, one);
      ASSERT_TRUE(alone.ok()) << alone.status();
      const std::vector<uint32_t> in_batch(all->begin() + r * cols, all->begin() + (r + 1) * cols);
      EXPECT_EQ(testing::first_difference(*alone, in_batch), "")
          << "row " << r << " shared " << shared << " seed " << seed_;
    }
  }
}

}  // namespace
}  // namespace fixbits
