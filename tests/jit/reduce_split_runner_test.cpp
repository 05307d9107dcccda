// ReduceRunner's split launch sequence on a FakeDriver (no GPU): the kernels of
// dsl::reduce_phases are launched in order, partials and normalize kernels on
// rows * blocks_per_row blocks and the fold on one block per row, with the
// workspace a partials kernel writes passed to the kernel that folds it; an
// unsplit runner launches one kernel on one block per row. A split pinned column sum
// launches its partials on ceil(cols/C) * P blocks and its fold on ceil(cols/C),
// over a workspace of strip_count(rows) * P * cols floats. A phase walking the rows
// backward (alternate_row_order) gets its launch's row count last. Argument counts and
// sizes are checked by Kernel::launch where the fake declares them. keep_in_shared keys a
// kernel of its own; so does whole_strips, whose runner refuses a row that is not whole
// strips (upload and share_inputs) and launches its one cluster kernel otherwise. A
// second create() of a split runner finds every phase the first loaded (the same
// kernels, no module loaded again), and a split config that is refused is refused on
// every call.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "jit/ReduceRunner.h"
#include "runtime/KernelCache.h"
#include "tests/runtime/FakeDriver.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::ReduceOp;
using runtime::testing::FakeDriver;

struct Rig {
  std::shared_ptr<FakeDriver> driver = std::make_shared<FakeDriver>();
  std::shared_ptr<runtime::Device> device = std::make_shared<runtime::Device>(driver);
  runtime::KernelCache no_cache{{.enabled = false, .dir = ""}};
};

// The device outlives the process-wide loaded-kernel table (Jit.h asks for it).
Rig& rig() {
  static Rig* r = new Rig();
  return *r;
}

dsl::reference::ReduceProblem problem(int64_t rows, int64_t cols) {
  dsl::reference::ReduceProblem p;
  p.rows = rows;
  p.cols = cols;
  p.x.assign(static_cast<size_t>(rows * cols), 0x3f80);  // bf16 1.0
  p.w.assign(static_cast<size_t>(cols), 0x3f80);
  return p;
}

TEST(ReduceSplitRunner, SumLaunchesPartialsThenFoldOverTheWorkspace) {
  Rig& r = rig();
  r.driver->launches.clear();
  r.driver->expected_args = 3;
  r.driver->declared_params_known = true;  // (ptr, ptr, i32) for both kernels
  r.driver->declared_params = {8, 8, 4};
  const ReduceDesc d{.op = ReduceOp::kSum, .in_dtype = DType::kBF16, .strip = 4096};
  auto runner = jit::ReduceRunner::create(r.device, d, {.warps = 8, .elems_per_thread = 8, .blocks_per_row = 3},
                                          &r.no_cache);
  ASSERT_TRUE(runner.ok()) << runner.status();
  ASSERT_EQ(runner->phases().size(), 2u);
  ASSERT_TRUE(runner->upload(problem(5, 3 * 4096 + 1)).ok());
  ASSERT_TRUE(runner->launch().ok());
  r.driver->declared_params_known = false;
  const auto& l = r.driver->launches;
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].kernel, "fixbits_sum_bf16_f32_pinned_s4096_w8_e8_p3_partials");
  EXPECT_EQ(l[0].grid[0], 15u);   // 5 rows x 3 blocks
  EXPECT_EQ(l[0].block[0], 256u);
  EXPECT_EQ(l[1].kernel, "fixbits_sum_bf16_f32_pinned_s4096_w8_e8_p3_fold");
  EXPECT_EQ(l[1].grid[0], 5u);    // one block per row
  EXPECT_EQ(l[1].block[0], 32u);
  EXPECT_EQ(l[0].first_words[1], l[1].first_words[0]) << "the fold reads the partials' workspace";
  EXPECT_NE(l[1].first_words[1], l[1].first_words[0]) << "y is not the workspace";
  EXPECT_EQ(l[0].first_words[2] & 0xffffffffu, 3u * 4096 + 1) << "cols";
}

TEST(ReduceSplitRunner, RmsNormAndSoftmaxPhasesShareTheirWorkspaces) {
  Rig& r = rig();
  r.driver->expected_args = 3;
  r.driver->declared_params_known = false;
  {
    r.driver->launches.clear();
    const ReduceDesc d{.op = ReduceOp::kRmsNorm, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 1024};
    auto runner = jit::ReduceRunner::create(r.device, d, {.warps = 4, .elems_per_thread = 2, .blocks_per_row = 4},
                                            &r.no_cache);
    ASSERT_TRUE(runner.ok()) << runner.status();
    ASSERT_TRUE(runner->upload(problem(2, 5000)).ok());
    ASSERT_TRUE(runner->launch().ok());
    const auto& l = r.driver->launches;
    ASSERT_EQ(l.size(), 2u);
    EXPECT_EQ(l[0].kernel, "fixbits_rmsnorm_bf16_bf16_pinned_s1024_w4_e2_p4_partials");
    EXPECT_EQ(l[1].kernel, "fixbits_rmsnorm_bf16_bf16_pinned_s1024_w4_e2_p4_normalize");
    EXPECT_EQ(l[0].grid[0], 8u);
    EXPECT_EQ(l[1].grid[0], 8u);
    EXPECT_EQ(l[0].first_words[0], l[1].first_words[0]) << "both read x";
    EXPECT_EQ(l[0].first_words[1], l[1].first_words[2]) << "normalize folds the partials' workspace";
  }
  {
    r.driver->launches.clear();
    const ReduceDesc d{.op = ReduceOp::kSoftmax, .in_dtype = DType::kF32, .out_dtype = DType::kF32, .strip = 1024};
    auto runner = jit::ReduceRunner::create(r.device, d, {.warps = 4, .elems_per_thread = 2, .blocks_per_row = 2},
                                            &r.no_cache);
    ASSERT_TRUE(runner.ok()) << runner.status();
    ASSERT_TRUE(runner->upload(problem(3, 2049)).ok());
    ASSERT_TRUE(runner->launch().ok());
    const auto& l = r.driver->launches;
    ASSERT_EQ(l.size(), 3u);
    EXPECT_EQ(l[0].kernel, "fixbits_softmax_f32_f32_pinned_s1024_w4_e2_p2_maxpart");
    EXPECT_EQ(l[1].kernel, "fixbits_softmax_f32_f32_pinned_s1024_w4_e2_p2_exppart");
    EXPECT_EQ(l[2].kernel, "fixbits_softmax_f32_f32_pinned_s1024_w4_e2_p2_normalize");
    for (const auto& x : l) EXPECT_EQ(x.grid[0], 6u);
    EXPECT_EQ(l[0].first_words[1], l[1].first_words[1]) << "exppart folds the max workspace";
    EXPECT_EQ(l[1].first_words[1], l[2].first_words[1]);
    EXPECT_EQ(l[1].first_words[2], l[2].first_words[2]) << "normalize folds the sum workspace";
    EXPECT_NE(l[1].first_words[1], l[1].first_words[2]) << "max and sum workspaces differ";
  }
}

// rows_per_launch = G: every phase for rows [0, G), then for [G, 2G), ...; each
// group's arguments point at its first row of x, y and the workspace, and its grids
// count its own rows (the last group may be short).
TEST(ReduceSplitRunner, RowGroupsLaunchEveryPhasePerGroupAtTheGroupsRows) {
  Rig& r = rig();
  r.driver->launches.clear();
  r.driver->expected_args = 3;  // words recorded per launch: x, ws, cols / x, w, ws
  r.driver->declared_params_known = false;
  const ReduceDesc d{.op = ReduceOp::kRmsNorm, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 1024};
  auto runner = jit::ReduceRunner::create(
      r.device, d, {.warps = 4, .elems_per_thread = 2, .blocks_per_row = 4, .rows_per_launch = 2}, &r.no_cache);
  ASSERT_TRUE(runner.ok()) << runner.status();
  const int64_t cols = 5000;  // 5 strips of 1024
  ASSERT_TRUE(runner->upload(problem(5, cols)).ok());
  ASSERT_TRUE(runner->launch().ok());
  const auto& l = r.driver->launches;
  ASSERT_EQ(l.size(), 6u);  // groups of rows {0,1}, {2,3}, {4}; two phases each
  for (size_t g = 0; g < 3; ++g) {
    const uint64_t rows_before = 2 * g;
    EXPECT_EQ(l[2 * g].kernel, "fixbits_rmsnorm_bf16_bf16_pinned_s1024_w4_e2_p4_partials");
    EXPECT_EQ(l[2 * g + 1].kernel, "fixbits_rmsnorm_bf16_bf16_pinned_s1024_w4_e2_p4_normalize");
    EXPECT_EQ(l[2 * g].grid[0], g < 2 ? 8u : 4u) << "4 blocks per row of the group";
    EXPECT_EQ(l[2 * g + 1].grid[0], g < 2 ? 8u : 4u);
    // partials (x, ws, cols); normalize (x, w, ws, y, cols, eps).
    EXPECT_EQ(l[2 * g].first_words[0], l[0].first_words[0] + rows_before * cols * 2) << "x of the group";
    EXPECT_EQ(l[2 * g + 1].first_words[0], l[2 * g].first_words[0]);
    EXPECT_EQ(l[2 * g].first_words[1], l[0].first_words[1] + rows_before * 5 * 4) << "its strips' partials";
    EXPECT_EQ(l[2 * g + 1].first_words[2], l[2 * g].first_words[1]);
    EXPECT_EQ(l[2 * g + 1].first_words[1], l[1].first_words[1]) << "w is per column, shared";
  }
  // y (normalize's fourth argument) moves with the group too.
  r.driver->launches.clear();
  r.driver->args_of_kernel["fixbits_rmsnorm_bf16_bf16_pinned_s1024_w4_e2_p4_normalize"] = 4;
  ASSERT_TRUE(runner->launch().ok());
  r.driver->args_of_kernel.clear();
  ASSERT_EQ(l.size(), 6u);
  for (size_t g = 0; g < 3; ++g) {
    EXPECT_EQ(l[2 * g + 1].first_words[3], l[1].first_words[3] + 2 * g * cols * 2) << "y of group " << g;
  }
}

// alternate_row_order: the phase that walks the rows backward (RMSNorm's normalize_rev)
// gets the launch's row count as its seventh argument -- per group with rows_per_launch,
// so it walks its own group's rows -- and the partials kernel is the forward one.
TEST(ReduceSplitRunner, AlternateRowOrderPassesEachLaunchsRowsToTheBackwardPhase) {
  Rig& r = rig();
  r.driver->launches.clear();
  r.driver->expected_args = 3;
  r.driver->declared_params_known = false;
  const std::string rev = "fixbits_rmsnorm_bf16_bf16_pinned_s1024_w4_e2_p4_normalize_rev";
  r.driver->args_of_kernel[rev] = 7;  // x, w, ws, y, cols, eps, rows
  const ReduceDesc d{.op = ReduceOp::kRmsNorm, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 1024};
  for (int64_t group : {0, 2}) {
    r.driver->launches.clear();
    auto runner = jit::ReduceRunner::create(
        r.device, d,
        {.warps = 4, .elems_per_thread = 2, .blocks_per_row = 4, .rows_per_launch = group, .alternate_row_order = true},
        &r.no_cache);
    ASSERT_TRUE(runner.ok()) << runner.status();
    ASSERT_TRUE(runner->upload(problem(5, 5000)).ok());
    ASSERT_TRUE(runner->launch().ok());
    const auto& l = r.driver->launches;
    const std::vector<uint64_t> rows = group == 0 ? std::vector<uint64_t>{5} : std::vector<uint64_t>{2, 2, 1};
    ASSERT_EQ(l.size(), 2 * rows.size());
    for (size_t g = 0; g < rows.size(); ++g) {
      EXPECT_EQ(l[2 * g].kernel, "fixbits_rmsnorm_bf16_bf16_pinned_s1024_w4_e2_p4_partials");
      EXPECT_EQ(l[2 * g + 1].kernel, rev);
      EXPECT_EQ(l[2 * g + 1].grid[0], 4 * rows[g]);
      ASSERT_EQ(l[2 * g + 1].first_words.size(), 7u);
      EXPECT_EQ(l[2 * g + 1].first_words[6] & 0xffffffffu, rows[g]) << "rows of launch " << g;
      EXPECT_EQ(l[2 * g + 1].first_words[4] & 0xffffffffu, 5000u) << "cols";
    }
  }
  r.driver->args_of_kernel.clear();
}

TEST(ReduceSplitRunner, RowGroupsNeedSplitRowsOfSeparateKernels) {
  Rig& r = rig();
  const ReduceDesc rms{.op = ReduceOp::kRmsNorm, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 1024};
  struct Bad {
    ReduceDesc d;
    ReduceConfig c;
    const char* says;
  };
  const ReduceDesc col{.op = ReduceOp::kSum, .axis = dsl::ReduceAxis::kColumn, .in_dtype = DType::kBF16,
                       .strip = 4096};
  for (const Bad& b : {Bad{rms, {.warps = 4, .elems_per_thread = 2, .rows_per_launch = -1}, "is negative"},
                       Bad{rms, {.warps = 4, .elems_per_thread = 2, .rows_per_launch = 8}, "blocks_per_row is 1"},
                       Bad{rms,
                           {.warps = 4, .elems_per_thread = 2, .blocks_per_row = 2, .cluster_rows = true,
                            .rows_per_launch = 8},
                           "with cluster_rows"},
                       Bad{col, {.warps = 8, .elems_per_thread = 8, .blocks_per_row = 16, .rows_per_launch = 8},
                           "reduces columns"}}) {
    auto runner = jit::ReduceRunner::create(r.device, b.d, b.c, &r.no_cache);
    ASSERT_FALSE(runner.ok()) << b.says;
    EXPECT_EQ(runner.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(runner.status().message().find("ReduceConfig.rows_per_launch"), std::string::npos)
        << runner.status();
    EXPECT_NE(runner.status().message().find(b.says), std::string::npos) << runner.status();
  }
}

// Split columns: partials on ceil(cols/C) * P blocks with (x, ws, rows, cols), then
// the fold on ceil(cols/C) blocks with (ws, y, rows, cols); the workspace holds
// strip_count(rows) * P * cols floats and starts as NaN (0xff bytes).
TEST(ReduceSplitRunner, ColumnSumLaunchesPartialsThenFoldOverTheWorkspace) {
  Rig& r = rig();
  r.driver->launches.clear();
  r.driver->expected_args = 4;
  r.driver->declared_params_known = true;  // (ptr, ptr, i32, i32) for both kernels
  r.driver->declared_params = {8, 8, 4, 4};
  const ReduceDesc d{.op = ReduceOp::kSum, .axis = dsl::ReduceAxis::kColumn, .in_dtype = DType::kBF16,
                     .strip = 4096};
  auto runner = jit::ReduceRunner::create(r.device, d, {.warps = 8, .elems_per_thread = 8, .blocks_per_row = 16},
                                          &r.no_cache);
  ASSERT_TRUE(runner.ok()) << runner.status();
  ASSERT_EQ(runner->phases().size(), 2u);
  const int64_t rows = 2 * 4096 + 5, cols = 1000;  // 3 strips; 4 column groups of 256
  ASSERT_TRUE(runner->upload(problem(rows, cols)).ok());
  EXPECT_EQ(runner->workspace_floats(), 3u * 16 * 1000);
  ASSERT_TRUE(runner->launch().ok());
  r.driver->declared_params_known = false;
  const auto& l = r.driver->launches;
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0].kernel, "fixbits_sum_col_bf16_f32_pinned_s4096_w8_e8_p16_partials");
  EXPECT_EQ(l[0].grid[0], 4u * 16);
  EXPECT_EQ(l[0].block[0], 256u);
  EXPECT_EQ(l[1].kernel, "fixbits_sum_col_bf16_f32_pinned_s4096_w8_e8_p16_fold");
  EXPECT_EQ(l[1].grid[0], 4u);    // one thread per column
  EXPECT_EQ(l[1].block[0], 256u);
  EXPECT_EQ(l[0].first_words[1], l[1].first_words[0]) << "the fold reads the partials' workspace";
  EXPECT_NE(l[1].first_words[1], l[1].first_words[0]) << "y is not the workspace";
  for (const auto& x : l) {
    EXPECT_EQ(x.first_words[2] & 0xffffffffu, static_cast<uint64_t>(rows)) << "rows";
    EXPECT_EQ(x.first_words[3] & 0xffffffffu, static_cast<uint64_t>(cols)) << "cols";
  }
  // The workspace is allocated whole (its last float is addressable) and starts as NaN.
  const auto* ws = reinterpret_cast<const uint32_t*>(l[0].first_words[1]);
  EXPECT_EQ(ws[0], 0xffffffffu);
  EXPECT_EQ(ws[runner->workspace_floats() - 1], 0xffffffffu);

  // Unsplit: one kernel on cols/C, no workspace.
  r.driver->launches.clear();
  auto one = jit::ReduceRunner::create(r.device, d, {.warps = 8, .elems_per_thread = 8}, &r.no_cache);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_TRUE(one->upload(problem(rows, cols)).ok());
  EXPECT_EQ(one->workspace_floats(), 0u);
  ASSERT_TRUE(one->launch().ok());
  ASSERT_EQ(r.driver->launches.size(), 1u);
  EXPECT_EQ(r.driver->launches[0].kernel, "fixbits_sum_col_bf16_f32_pinned_s4096_w8_e8");
  EXPECT_EQ(r.driver->launches[0].grid[0], 4u);

  // Knobs a column split rejects, by name.
  for (int bad_p : {3, 1024}) {  // not a power of two; above strip / Rq = 512
    auto bad = jit::ReduceRunner::create(r.device, d, {.warps = 8, .elems_per_thread = 8, .blocks_per_row = bad_p},
                                         &r.no_cache);
    ASSERT_FALSE(bad.ok()) << bad_p;
    EXPECT_NE(std::string(bad.status().message()).find("ReduceConfig.blocks_per_row"), std::string::npos)
        << bad.status();
  }
  ReduceDesc softmax = d;
  softmax.op = ReduceOp::kSoftmax;
  softmax.out_dtype = DType::kBF16;
  auto bad = jit::ReduceRunner::create(r.device, softmax, {.blocks_per_row = 2}, &r.no_cache);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("ReduceConfig.blocks_per_row 2 splits a pinned column"),
            std::string::npos);
}

TEST(ReduceSplitRunner, UnsplitRunnerLaunchesOneKernelPerRowAndBadKnobsFail) {
  Rig& r = rig();
  r.driver->launches.clear();
  r.driver->expected_args = 3;
  const ReduceDesc d{.op = ReduceOp::kSum, .in_dtype = DType::kBF16, .strip = 4096};
  auto runner = jit::ReduceRunner::create(r.device, d, {.warps = 8, .elems_per_thread = 8}, &r.no_cache);
  ASSERT_TRUE(runner.ok()) << runner.status();
  ASSERT_TRUE(runner->upload(problem(7, 10000)).ok());
  ASSERT_TRUE(runner->launch().ok());
  ASSERT_EQ(r.driver->launches.size(), 1u);
  EXPECT_EQ(r.driver->launches[0].grid[0], 7u);
  EXPECT_EQ(r.driver->launches[0].kernel, "fixbits_sum_bf16_f32_pinned_s4096_w8_e8");

  auto bad = jit::ReduceRunner::create(r.device, d, {.warps = 32, .elems_per_thread = 8, .blocks_per_row = 2},
                                       &r.no_cache);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("ReduceConfig.blocks_per_row 2 needs"), std::string::npos)
      << bad.status();
  ReduceDesc free = d;
  free.order = dsl::TreeOrder::kFree;
  auto bad_free = jit::ReduceRunner::create(r.device, free, {.blocks_per_row = 2}, &r.no_cache);
  ASSERT_FALSE(bad_free.ok());
  EXPECT_NE(std::string(bad_free.status().message()).find("needs order=pinned"), std::string::npos);
}

// The kernel's key names divide_by_reciprocal: a softmax runner with the knob never gets
// the kernel of one without it (loaded first, under the same descriptor and knobs
// otherwise), nor the other way round.
TEST(ReduceSplitRunner, DivideByReciprocalIsAKernelOfItsOwn) {
  Rig& r = rig();
  const ReduceDesc d{.op = ReduceOp::kSoftmax, .in_dtype = DType::kF32, .out_dtype = DType::kF32, .strip = 1024};
  runtime::KernelCache memory{{.enabled = true, .dir = ""}};  // keyed, in memory only
  std::vector<std::string> names;
  for (bool knob : {false, true, false}) {
    r.driver->launches.clear();
    r.driver->expected_args = 3;
    auto runner = jit::ReduceRunner::create(
        r.device, d, {.warps = 4, .elems_per_thread = 4, .divide_by_reciprocal = knob}, &memory);
    ASSERT_TRUE(runner.ok()) << runner.status();
    ASSERT_TRUE(runner->upload(problem(3, 1024)).ok());
    ASSERT_TRUE(runner->launch().ok());
    ASSERT_EQ(r.driver->launches.size(), 1u);
    names.push_back(r.driver->launches[0].kernel);
  }
  EXPECT_EQ(names[0], "fixbits_softmax_f32_f32_pinned_s1024_w4_e4");
  EXPECT_EQ(names[1], "fixbits_softmax_f32_f32_pinned_s1024_w4_e4_rd");
  EXPECT_EQ(names[2], names[0]);
}

// The kernel's key names keep_in_shared and min_blocks_per_sm: the staged form and the
// register form of the same keep_passes are different kernels, and a runner of one never
// gets the other's.
TEST(ReduceSplitRunner, KeepInSharedIsAKernelOfItsOwn) {
  Rig& r = rig();
  const ReduceDesc d{.op = ReduceOp::kRmsNorm, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16,
                     .strip = 4096};
  runtime::KernelCache memory{{.enabled = true, .dir = ""}};  // keyed, in memory only
  std::vector<std::string> names;
  std::vector<uint32_t> dynamic;
  for (bool shared : {false, true, false}) {
    r.driver->launches.clear();
    r.driver->expected_args = 5;  // x, w, y, cols, eps
    auto runner = jit::ReduceRunner::create(
        r.device, d, {.warps = 8, .elems_per_thread = 8, .keep_passes = 2, .keep_in_shared = shared}, &memory);
    ASSERT_TRUE(runner.ok()) << runner.status();
    ASSERT_TRUE(runner->upload(problem(3, 8192)).ok());
    ASSERT_TRUE(runner->launch().ok());
    ASSERT_EQ(r.driver->launches.size(), 1u);
    names.push_back(r.driver->launches[0].kernel);
    dynamic.push_back(r.driver->launches[0].shared);
  }
  // The staged passes' dynamic shared memory goes with the launch: 2 passes of 4096 bf16.
  EXPECT_EQ(dynamic, (std::vector<uint32_t>{0, 2 * 8192, 0}));
  EXPECT_EQ(names[0], "fixbits_rmsnorm_bf16_bf16_pinned_s4096_w8_e8_k2");
  EXPECT_EQ(names[1], "fixbits_rmsnorm_bf16_bf16_pinned_s4096_w8_e8_k2s");
  EXPECT_EQ(names[2], names[0]);
  // And so does min_blocks_per_sm.
  r.driver->launches.clear();
  auto asked = jit::ReduceRunner::create(
      r.device, d, {.warps = 8, .elems_per_thread = 8, .keep_passes = 2, .keep_in_shared = true, .min_blocks_per_sm = 3},
      &memory);
  ASSERT_TRUE(asked.ok()) << asked.status();
  ASSERT_TRUE(asked->upload(problem(3, 8192)).ok());
  ASSERT_TRUE(asked->launch().ok());
  ASSERT_EQ(r.driver->launches.size(), 1u);
  EXPECT_EQ(r.driver->launches[0].kernel, "fixbits_rmsnorm_bf16_bf16_pinned_s4096_w8_e8_k2s_mb3");
  // Past the 48 KiB a block gets without opting in, the launch raises the kernel's limit
  // first (cuFuncSetAttribute): 8 passes of 4096 bf16 are 64 KiB.
  r.driver->launches.clear();
  r.driver->raised_shared = 0;
  auto big = jit::ReduceRunner::create(
      r.device, d, {.warps = 8, .elems_per_thread = 8, .keep_passes = 8, .keep_in_shared = true}, &memory);
  ASSERT_TRUE(big.ok()) << big.status();
  ASSERT_TRUE(big->upload(problem(3, 8 * 4096)).ok());
  ASSERT_TRUE(big->launch().ok());
  ASSERT_EQ(r.driver->launches.size(), 1u);
  EXPECT_EQ(r.driver->launches[0].shared, 65536u);
  EXPECT_EQ(r.driver->raised_shared, 65536u);
}

TEST(ReduceSplitRunner, WholeStripsIsAKernelOfItsOwnForRowsOfWholePasses) {
  Rig& r = rig();
  const ReduceDesc d{.op = ReduceOp::kRmsNorm, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16,
                     .strip = 4096};
  runtime::KernelCache memory{{.enabled = true, .dir = ""}};
  std::vector<std::string> names;
  for (bool whole : {false, true}) {
    r.driver->launches.clear();
    r.driver->expected_args = 6;  // x, w, ws, y, cols, eps
    auto runner = jit::ReduceRunner::create(r.device, d,
                                            {.warps = 8, .elems_per_thread = 8, .blocks_per_row = 4,
                                             .keep_passes = 2, .cluster_rows = true, .whole_strips = whole},
                                            &memory);
    ASSERT_TRUE(runner.ok()) << runner.status();
    ASSERT_TRUE(runner->upload(problem(3, 8 * 4096)).ok());
    ASSERT_TRUE(runner->launch().ok());
    ASSERT_EQ(r.driver->launches.size(), 1u);
    EXPECT_EQ(r.driver->launches[0].grid[0], 3u * 4u);
    names.push_back(r.driver->launches[0].kernel);
    // A row of 8 strips and one element: the masked kernel takes it, the whole one says
    // which field refuses it.
    absl::Status odd = runner->upload(problem(3, 8 * 4096 + 1));
    if (!whole) {
      EXPECT_TRUE(odd.ok()) << odd;
      continue;
    }
    ASSERT_FALSE(odd.ok());
    EXPECT_NE(std::string(odd.message()).find("ReduceConfig.whole_strips"), std::string::npos) << odd;
    EXPECT_NE(std::string(odd.message()).find("ReduceProblem.cols 32769"), std::string::npos) << odd;
    // Sharing another runner's inputs checks the same.
    auto owner = jit::ReduceRunner::create(r.device, d, {.warps = 8, .elems_per_thread = 8}, &memory);
    ASSERT_TRUE(owner.ok()) << owner.status();
    ASSERT_TRUE(owner->upload(problem(2, 4096 + 5)).ok());
    absl::Status shared = runner->share_inputs(*owner);
    ASSERT_FALSE(shared.ok());
    EXPECT_NE(std::string(shared.message()).find("ReduceConfig.whole_strips"), std::string::npos) << shared;
    ASSERT_TRUE(owner->upload(problem(2, 2 * 4096)).ok());
    EXPECT_TRUE(runner->share_inputs(*owner).ok());
  }
  EXPECT_EQ(names[0], "fixbits_rmsnorm_bf16_bf16_pinned_s4096_w8_e8_k2_p4_cluster");
  EXPECT_EQ(names[1], "fixbits_rmsnorm_bf16_bf16_pinned_s4096_w8_e8_k2_p4_cluster_ws");
  // One block a row: rows of whole passes (Q = 32 warps x 32 x 8 = 8192 > the strip).
  r.driver->launches.clear();
  r.driver->expected_args = 5;  // x, w, y, cols, eps
  auto one = jit::ReduceRunner::create(r.device, d, {.warps = 32, .elems_per_thread = 8, .whole_strips = true},
                                       &memory);
  ASSERT_TRUE(one.ok()) << one.status();
  absl::Status strips_only = one->upload(problem(2, 3 * 4096));  // whole strips, not whole passes
  ASSERT_FALSE(strips_only.ok());
  EXPECT_NE(std::string(strips_only.message()).find("multiple of its pass extent (8192"), std::string::npos)
      << strips_only;
  ASSERT_TRUE(one->upload(problem(2, 2 * 8192)).ok());
  ASSERT_TRUE(one->launch().ok());
  ASSERT_EQ(r.driver->launches.size(), 1u);
  EXPECT_EQ(r.driver->launches[0].kernel, "fixbits_rmsnorm_bf16_bf16_pinned_s4096_w32_e8_ws");
}

TEST(ReduceSplitRunner, ASecondCreateFindsEveryLoadedPhase) {
  Rig& r = rig();
  // The loaded-kernel table fronts the process's cache (a null cache argument), here in
  // a directory of the test's own (ctest runs each test in its own process, so this
  // is the global cache's first use). Keys no other test loads (strip 2048, warps 4).
  char dir[] = "/tmp/fixbits-split-runner-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  ASSERT_EQ(setenv("FIXBITS_CACHE_DIR", dir, 1), 0);
  ASSERT_EQ(unsetenv("FIXBITS_CACHE"), 0);
  const ReduceDesc d{.op = ReduceOp::kSoftmax, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 2048};
  for (const ReduceConfig c : {ReduceConfig{.warps = 4, .elems_per_thread = 8, .blocks_per_row = 3},
                               ReduceConfig{.warps = 4, .elems_per_thread = 8, .blocks_per_row = 2, .keep_passes = 1,
                                            .cluster_rows = true}}) {
    auto first = jit::ReduceRunner::create(r.device, d, c, nullptr);
    ASSERT_TRUE(first.ok()) << first.status();
    const size_t loads = r.driver->loaded_images.size();
    auto again = jit::ReduceRunner::create(r.device, d, c, nullptr);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(r.driver->loaded_images.size(), loads) << "no module is loaded again";
    ASSERT_EQ(again->phases().size(), first->phases().size());
    ASSERT_EQ(first->phases().size(), c.cluster_rows ? 1u : 3u);  // maxpart, exppart, normalize
    for (size_t i = 0; i < first->phases().size(); ++i) {
      EXPECT_EQ(again->phases()[i].get(), first->phases()[i].get()) << "phase " << i;
    }
  }
  // A config reduce_phases refuses (blocks_per_row needs order=pinned) is refused each time.
  const ReduceDesc free_order{.op = ReduceOp::kSum, .in_dtype = DType::kBF16, .order = dsl::TreeOrder::kFree,
                              .strip = 4096};
  for (int call = 0; call < 2; ++call) {
    auto refused = jit::ReduceRunner::create(r.device, free_order, {.warps = 8, .elems_per_thread = 8,
                                                                    .blocks_per_row = 2}, nullptr);
    ASSERT_FALSE(refused.ok()) << "call " << call;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fixbits
