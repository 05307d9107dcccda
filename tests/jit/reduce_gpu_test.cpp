// GPU tests of dsl::reduce on a real device (label gpu): every pinned configuration
// is bit-identical (memcmp) to the CPU reference and so to every other
// configuration; a row's result does not depend on how many rows share the launch;
// the free order follows its own layout-dependent reference and is shown to differ
// from the pinned tree; a row split over several blocks (ReduceConfig.blocks_per_row,
// strip partials then an in-order fold) gives the same bits as the reference for
// every blocks_per_row, and so does a pinned column sum/max/min split into P parts
// per strip (partials, then the per-column fold); split RMSNorm/softmax rows keep
// their bits in row groups and in alternating row order. Without a device every test
// prints [SKIP] <reason>.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"
#include "jit/ReduceRunner.h"
#include "runtime/Runtime.h"
#include "tests/jit/RandomInputs.h"
#include "tests/jit/SeededGpuTest.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::ReduceOp;
using dsl::TreeOrder;
using testing::Mix;

class ReduceGpuTest : public testing::SeededGpuTest {
 protected:

  dsl::reference::ReduceProblem problem(const ReduceDesc& d, int64_t rows, int64_t cols,
                                        Mix mix, bool specials) {
    dsl::reference::ReduceProblem p;
    p.rows = rows;
    p.cols = cols;
    p.x = testing::random_bits(d.in_dtype, static_cast<size_t>(rows * cols), rng_, mix, specials);
    if (d.op == ReduceOp::kRmsNorm) {
      p.w = testing::random_bits(d.in_dtype, static_cast<size_t>(cols), rng_, Mix::kPositive);
    }
    p.eps = 1e-5f;
    return p;
  }

  // Runs `d` under `cfg` on the device; ADD_FAILURE on any error.
  std::vector<uint32_t> run(const ReduceDesc& d, const ReduceConfig& cfg,
                            const dsl::reference::ReduceProblem& p) {
    auto runner = jit::ReduceRunner::create(device_, d, cfg);
    if (!runner.ok()) {
      ADD_FAILURE() << dsl::to_string(d) << ": " << runner.status();
      return {};
    }
    if (auto s = runner->upload(p); !s.ok()) {
      ADD_FAILURE() << s;
      return {};
    }
    if (auto s = runner->launch(); !s.ok()) {
      ADD_FAILURE() << s;
      return {};
    }
    auto out = runner->download();
    if (!out.ok()) {
      ADD_FAILURE() << out.status();
      return {};
    }
    return *out;
  }

  std::vector<uint32_t> reference(const ReduceDesc& d, const dsl::reference::ReduceProblem& p,
                                  const dsl::FreeLayout& layout = {}) {
    auto ref = dsl::reference::reduce(d, p, layout);
    EXPECT_TRUE(ref.ok()) << ref.status();
    return ref.ok() ? *ref : std::vector<uint32_t>{};
  }

  std::string where(const ReduceDesc& d, const ReduceConfig& c, int64_t rows, int64_t cols) {
    return absl::StrFormat("%s warps=%d elems=%d blocks_per_row=%d rows=%d cols=%d seed=%d",
                           dsl::to_string(d), c.warps, c.elems_per_thread, c.blocks_per_row, rows,
                           cols, seed_);
  }

  static bool same_bits(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * 4) == 0;
  }

  static int first_diff(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
      if (a[i] != b[i]) return static_cast<int>(i);
    return a.size() == b.size() ? -1 : static_cast<int>(std::min(a.size(), b.size()));
  }
};

const std::vector<ReduceConfig> kConfigs = {
    {.warps = 1, .elems_per_thread = 1}, {.warps = 1, .elems_per_thread = 8},
    {.warps = 2, .elems_per_thread = 4}, {.warps = 4, .elems_per_thread = 4},
    {.warps = 8, .elems_per_thread = 2}, {.warps = 16, .elems_per_thread = 1},
    {.warps = 32, .elems_per_thread = 1}, {.warps = 4, .elems_per_thread = 16},
};
const std::vector<int64_t> kCols = {1, 2, 3, 31, 32, 33, 127, 128, 129, 1000, 1024, 1025, 4099, 9000};
const std::vector<DType> kInTypes = {DType::kF32, DType::kF16, DType::kBF16};

TEST_F(ReduceGpuTest, PinnedSumMaxMinBitIdenticalToReferenceEverywhere) {
  int checked = 0;
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
    for (DType in : kInTypes) {
      for (int64_t strip : {int64_t{1024}, int64_t{64}}) {
        ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = DType::kF32, .strip = strip};
        for (int64_t cols : kCols) {
          const int64_t rows = 5;
          auto p = problem(d, rows, cols, Mix::kAdversarial, /*specials=*/cols % 2 == 1);
          auto ref = reference(d, p);
          for (const ReduceConfig& c : kConfigs) {
            auto got = run(d, c, p);
            ASSERT_TRUE(same_bits(got, ref))
                << where(d, c, rows, cols) << " first differing row " << first_diff(got, ref);
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 500);
}

TEST_F(ReduceGpuTest, PinnedSumNarrowOutputs) {
  for (DType in : {DType::kF16, DType::kBF16}) {
    ReduceDesc d{.op = ReduceOp::kSum, .in_dtype = in, .out_dtype = in, .strip = 256};
    for (int64_t cols : {int64_t{1}, int64_t{200}, int64_t{3000}}) {
      auto p = problem(d, 7, cols, Mix::kAdversarial, false);
      auto ref = reference(d, p);
      for (const ReduceConfig& c : kConfigs) {
        ASSERT_TRUE(same_bits(run(d, c, p), ref)) << where(d, c, 7, cols);
      }
    }
  }
}

TEST_F(ReduceGpuTest, PinnedRmsNormAndSoftmaxBitIdenticalToReference) {
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (DType in : kInTypes) {
      ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .strip = 1024};
      for (int64_t cols : {int64_t{1}, int64_t{33}, int64_t{768}, int64_t{4096}, int64_t{5003}}) {
        auto p = problem(d, 4, cols, Mix::kPlain, false);
        auto ref = reference(d, p);
        for (const ReduceConfig& c : kConfigs) {
          ASSERT_TRUE(same_bits(run(d, c, p), ref)) << where(d, c, 4, cols);
        }
      }
    }
  }
}

TEST_F(ReduceGpuTest, PinnedColumnReductionsBitIdenticalToReference) {
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16}) {
      const bool fused = op == ReduceOp::kRmsNorm || op == ReduceOp::kSoftmax;
      ReduceDesc d{.op = op, .axis = dsl::ReduceAxis::kColumn, .in_dtype = in,
                   .out_dtype = fused ? in : DType::kF32, .strip = 256};
      for (int64_t rows : {int64_t{1}, int64_t{33}, int64_t{700}}) {
        const int64_t cols = 37;
        dsl::reference::ReduceProblem p;
        p.rows = rows;
        p.cols = cols;
        p.x = testing::random_bits(in, static_cast<size_t>(rows * cols), rng_,
                                   fused ? Mix::kPlain : Mix::kAdversarial);
        if (op == ReduceOp::kRmsNorm) p.w = testing::random_bits(in, static_cast<size_t>(rows), rng_, Mix::kPositive);
        auto ref = reference(d, p);
        for (const ReduceConfig& c : {ReduceConfig{.warps = 1, .elems_per_thread = 4},
                                      ReduceConfig{.warps = 4, .elems_per_thread = 2},
                                      ReduceConfig{.warps = 8, .elems_per_thread = 1}}) {
          ASSERT_TRUE(same_bits(run(d, c, p), ref)) << where(d, c, rows, cols);
        }
      }
    }
  }
}

// Split columns (blocks_per_row = P parts per strip of a pinned column sum/max/min):
// every P -- 2, 16, the runner's suggestion for an H200-sized GPU and this device,
// and the largest (strip / Rq) -- gives the reference's bits, so the unsplit kernel's,
// for f32/f16/bf16, several strips, one row, rows and columns that are not multiples
// of the strip, Rq or C, and adversarial values with NaN and inf.
TEST_F(ReduceGpuTest, SplitColumnsBitIdenticalToReferenceForEveryParts) {
  struct Shape { int64_t rows, cols; };
  int checked = 0;
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
    for (DType in : kInTypes) {
      ReduceDesc d{.op = op, .axis = dsl::ReduceAxis::kColumn, .in_dtype = in,
                   .out_dtype = op == ReduceOp::kSum ? DType::kF32 : in, .strip = 1024};
      for (Shape s : {Shape{4096, 4096}, Shape{16384, 1024}, Shape{2049, 129}, Shape{1000, 37}, Shape{1, 300}}) {
        auto p = problem(d, s.rows, s.cols, Mix::kAdversarial, /*specials=*/s.cols % 2 == 1);
        auto ref = reference(d, p);
        for (ReduceConfig c : {ReduceConfig{.warps = 8, .elems_per_thread = 8},
                               ReduceConfig{.warps = 4, .elems_per_thread = 2}}) {
          const int most = static_cast<int>(dsl::max_column_parts(d, c));
          const int h200 = jit::ReduceRunner::suggest_blocks_per_row(d, c, s.rows, s.cols, 132);
          const int here = jit::ReduceRunner::suggest_blocks_per_row(d, c, s.rows, s.cols,
                                                                     device_->info().multiprocessor_count);
          for (int parts : {1, 2, 16, h200, here, most}) {
            c.blocks_per_row = parts;
            auto got = run(d, c, p);
            ASSERT_TRUE(same_bits(got, ref)) << where(d, c, s.rows, s.cols) << " first differing column "
                                             << first_diff(got, ref);
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 3 * 3 * 5 * 2 * 6);
}

TEST_F(ReduceGpuTest, RowResultDoesNotDependOnBatchSize) {
  ReduceDesc d{.op = ReduceOp::kSum, .in_dtype = DType::kBF16, .out_dtype = DType::kF32, .strip = 1024};
  const int64_t cols = 4096, rows = 64;
  auto batch = problem(d, rows, cols, Mix::kAdversarial, false);
  auto all = run(d, {.warps = 8, .elems_per_thread = 4}, batch);
  ASSERT_EQ(all.size(), static_cast<size_t>(rows));
  for (int64_t r : {int64_t{0}, int64_t{17}, int64_t{63}}) {
    dsl::reference::ReduceProblem one = batch;
    one.rows = 1;
    one.x.assign(batch.x.begin() + r * cols, batch.x.begin() + (r + 1) * cols);
    for (const ReduceConfig& c : {ReduceConfig{.warps = 1, .elems_per_thread = 2},
                                  ReduceConfig{.warps = 32, .elems_per_thread = 1}}) {
      auto alone = run(d, c, one);
      ASSERT_EQ(alone.size(), 1u);
      EXPECT_EQ(alone[0], all[r]) << "row " << r << " alone vs in a batch of " << rows;
    }
  }
}

TEST_F(ReduceGpuTest, FreeOrderFollowsItsLayoutAndDiffersFromPinned) {
  ReduceDesc pinned{.op = ReduceOp::kSum, .in_dtype = DType::kF32, .out_dtype = DType::kF32, .strip = 4096};
  ReduceDesc free = pinned;
  free.order = TreeOrder::kFree;
  const int64_t rows = 64, cols = 4096;
  auto p = problem(pinned, rows, cols, Mix::kPlain, false);
  auto pinned_ref = reference(pinned, p);
  int differing_configs = 0;
  for (const ReduceConfig& c : kConfigs) {
    auto got = run(free, c, p);
    auto free_ref = reference(free, p, dsl::free_layout(c));
    ASSERT_TRUE(same_bits(got, free_ref)) << where(free, c, rows, cols);
    if (!same_bits(got, pinned_ref)) ++differing_configs;
  }
  // The free order's bits move with the layout: on 64 random rows of 4096 floats the
  // sequential-then-count-down tree cannot match the balanced one everywhere.
  EXPECT_GE(differing_configs, static_cast<int>(kConfigs.size()) - 1);
}

// Split rows: every blocks_per_row gives the reference's bits (and so the unsplit
// kernel's), for few long rows (the case the split is for), an odd length, one row.
TEST_F(ReduceGpuTest, SplitRowsBitIdenticalToReferenceForEveryBlocksPerRow) {
  struct Shape { int64_t rows, cols; };
  int checked = 0;
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax}) {
    for (DType in : {DType::kF32, DType::kBF16}) {
      ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = DType::kF32, .strip = 4096};
      for (Shape s : {Shape{256, 131072}, Shape{3, 1000003}, Shape{1, 131072}, Shape{1, 1}, Shape{2, 4097}}) {
        auto p = problem(d, s.rows, s.cols, Mix::kAdversarial, /*specials=*/s.cols % 2 == 1);
        auto ref = reference(d, p);
        const int suggested = jit::ReduceRunner::suggest_blocks_per_row(
            d, {.warps = 8, .elems_per_thread = 8}, s.rows, s.cols, device_->info().multiprocessor_count);
        for (int bpr : {1, 2, 7, suggested}) {
          for (ReduceConfig c : {ReduceConfig{.warps = 8, .elems_per_thread = 8},
                                 ReduceConfig{.warps = 4, .elems_per_thread = 4}}) {
            c.blocks_per_row = bpr;
            auto got = run(d, c, p);
            ASSERT_TRUE(same_bits(got, ref)) << where(d, c, s.rows, s.cols) << " first differing row "
                                             << first_diff(got, ref);
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 2 * 2 * 5 * 4 * 2);
}

TEST_F(ReduceGpuTest, SplitRmsNormAndSoftmaxBitIdenticalToReference) {
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16}) {
      ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .strip = 4096};
      for (auto [rows, cols] : {std::pair<int64_t, int64_t>{256, 131072}, {3, 1000003}, {1, 9000}, {2, 1}}) {
        auto p = problem(d, rows, cols, Mix::kPlain, false);
        auto ref = reference(d, p);
        for (int bpr : {1, 3, 16}) {
          // Split rows also in groups of 100 and of 1 row per launch (the same kernels
          // over offset arguments), and with every later phase walking the rows the other
          // way (alternate_row_order: which block takes which row): the same bits.
          for (int64_t group : {0, 100, 1}) {
            for (bool alternate : {false, true}) {
              if (group > 0 && (bpr == 1 || group >= rows)) continue;
              if (alternate && bpr == 1) continue;
              ReduceConfig c{.warps = 8, .elems_per_thread = 4, .blocks_per_row = bpr, .rows_per_launch = group,
                             .alternate_row_order = alternate};
              auto got = run(d, c, p);
              ASSERT_TRUE(same_bits(got, ref)) << where(d, c, rows, cols) << " rows_per_launch=" << group
                                               << " alternate_row_order=" << alternate
                                               << " first differing element " << first_diff(got, ref);
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace fixbits
