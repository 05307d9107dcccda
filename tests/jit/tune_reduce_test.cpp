// jit::tune_reduce on a FakeDriver (no GPU) whose events answer scripted batch times:
// every candidate is built (ahead, through a kernel cache in a temp dir), recorded in
// list order and reported to on_candidate; a candidate the shape refuses is recorded
// with its reason and uses no timing; the chosen one has the least median (ties: the
// earliest); the two phases' seconds are measured, and the timing loop finds what the
// build-ahead phase built (it takes less time than the builds). A budget spent stops the
// search after the first candidate that ran; the rest are DeadlineExceeded. Each built
// candidate carries the driver's occupancy answer, or none where the driver has none.
#include "jit/TuneReduce.h"

#include <stdlib.h>

#include <gtest/gtest.h>

#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "tests/runtime/FakeDriver.h"
#include "tests/runtime/TempDir.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using runtime::testing::FakeDriver;

// The process-wide kernel cache reads its directory once: set first here, so the
// build-ahead phase runs (it needs the cache) without touching the user's cache. The
// device outlives the process-wide loaded-kernel table (Jit.h asks for it).
struct Rig {
  runtime::testing::TempDir cache_dir;
  std::shared_ptr<FakeDriver> driver = std::make_shared<FakeDriver>();
  std::shared_ptr<runtime::Device> device = std::make_shared<runtime::Device>(driver);
  const ReduceDesc desc{.op = dsl::ReduceOp::kSoftmax, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16,
                        .strip = 1024};
  std::optional<jit::ReduceRunner> inputs;  // 8 x 2048 of bf16 1.0, uploaded
};
Rig& rig() {
  static Rig* r = [] {
    auto* made = new Rig();
    setenv("FIXBITS_CACHE_DIR", made->cache_dir.path().c_str(), 1);
    unsetenv("FIXBITS_CACHE");
    dsl::reference::ReduceProblem p;
    p.rows = 8;
    p.cols = 2048;
    p.x.assign(static_cast<size_t>(p.rows * p.cols), 0x3f80);  // bf16 1.0
    absl::StatusOr<jit::ReduceRunner> in =
        jit::ReduceRunner::create(made->device, made->desc, {.warps = 4, .elems_per_thread = 4});
    if (in.ok() && in->upload(p).ok()) made->inputs.emplace(*std::move(in));
    return made;
  }();
  return *r;
}

// Four candidates: three the shape takes and one it refuses (64 kept passes of 16
// values a thread, past the register bound).
std::vector<ReduceConfig> four_candidates() {
  return {{.warps = 4, .elems_per_thread = 8},
          {.warps = 8, .elems_per_thread = 4},
          {.warps = 8, .elems_per_thread = 8, .keep_passes = 64},
          {.warps = 2, .elems_per_thread = 8, .keep_passes = 1}};
}

// The four candidates, each that runs timed in 3 batches of 2 launches (3 scripted
// elapsed times).
jit::TuneReduceOptions three_batches_of_two() {
  jit::TuneReduceOptions o;
  o.candidates = four_candidates();
  o.timed = 3;
  o.batch = 2;
  return o;
}

TEST(TuneReduce, ChoosesTheLeastMedianRecordsEveryCandidateAndTimesItsPhases) {
  Rig& r = rig();
  ASSERT_TRUE(r.inputs.has_value()) << "the inputs did not build or upload";
  jit::TuneReduceOptions o = three_batches_of_two();
  o.build_threads = 2;
  // Three timed batches a candidate that runs, in list order (the refused one takes none):
  // medians 3, 1 and 1 ms a batch of 2 -> 1500, 500 and 500 us a launch.
  r.driver->elapsed_ms = {3, 3, 3, 1, 2, 1, 1, 1, 1};
  std::vector<std::string> seen;
  o.on_candidate = [&](const jit::TriedReduce& t) {
    seen.push_back(absl::StrFormat("%dx%d:%s", t.config.warps, t.config.elems_per_thread,
                                   t.us.ok() ? absl::StrFormat("%.0f", *t.us) : "refused"));
  };
  absl::StatusOr<jit::TunedReduce> t = jit::tune_reduce(r.device, r.desc, *r.inputs, o);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(r.driver->elapsed_ms.empty()) << "a candidate was timed more or less than 3 batches";
  EXPECT_EQ(seen, (std::vector<std::string>{"4x8:1500", "8x4:500", "8x8:refused", "2x8:500"}));
  ASSERT_EQ(t->tried.size(), 4u);
  EXPECT_EQ(t->config.warps, 8);  // the tie with 2 x 8 goes to the earlier
  EXPECT_EQ(t->config.elems_per_thread, 4);
  EXPECT_FLOAT_EQ(t->us, 500.0f);
  ASSERT_FALSE(t->tried[2].us.ok());
  EXPECT_TRUE(absl::StrContains(t->tried[2].us.status().message(), "keep_passes")) << t->tried[2].us.status();
  // The phases: building ahead compiled the three kernels the shape takes (real codegen
  // and verifier); the fake's launches take no time, so the timing phase is only the
  // runners' creation (cache hits) and the loop: shorter than the builds.
  EXPECT_LT(t->timing_seconds, t->build_seconds) << "the loop rebuilt what was built ahead";
}

TEST(TuneReduce, ABudgetStopsTheSearchAfterTheFirstCandidateThatRan) {
  Rig& r = rig();
  ASSERT_TRUE(r.inputs.has_value()) << "the inputs did not build or upload";
  jit::TuneReduceOptions o = three_batches_of_two();
  o.budget_seconds = 1e-9;  // spent before anything: only the first candidate that runs is timed
  r.driver->elapsed_ms = {3, 3, 3};
  absl::StatusOr<jit::TunedReduce> t = jit::tune_reduce(r.device, r.desc, *r.inputs, o);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(r.driver->elapsed_ms.empty());
  ASSERT_EQ(t->tried.size(), 4u);
  ASSERT_TRUE(t->tried[0].us.ok()) << t->tried[0].us.status();
  EXPECT_FLOAT_EQ(*t->tried[0].us, 1500.0f);
  EXPECT_EQ(t->config.warps, 4);
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(t->tried[i].us.status().code(), absl::StatusCode::kDeadlineExceeded) << i;
    EXPECT_TRUE(absl::StrContains(t->tried[i].us.status().message(), "budget_seconds")) << t->tried[i].us.status();
  }
  // A first candidate the shape refuses does not count as the one that ran.
  o.candidates = std::vector<ReduceConfig>{four_candidates()[2], four_candidates()[1], four_candidates()[0]};
  r.driver->elapsed_ms = {1, 1, 1};
  t = jit::tune_reduce(r.device, r.desc, *r.inputs, o);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(absl::StrContains(t->tried[0].us.status().message(), "keep_passes")) << t->tried[0].us.status();
  EXPECT_TRUE(t->tried[1].us.ok()) << t->tried[1].us.status();
  EXPECT_EQ(t->tried[2].us.status().code(), absl::StatusCode::kDeadlineExceeded);
  o.budget_seconds = -1;
  EXPECT_TRUE(absl::StrContains(jit::tune_reduce(r.device, r.desc, *r.inputs, o).status().message(),
                                "budget_seconds"));
}

// Each candidate that built carries the driver's occupancy answer for each of its
// phases' launches (what the bench's trace prints); one the shape refuses, or a driver
// without a calculator, leaves it empty and still times the candidate.
TEST(TuneReduce, RecordsTheOccupancyOfEachBuiltCandidate) {
  Rig& r = rig();
  ASSERT_TRUE(r.inputs.has_value()) << "the inputs did not build or upload";
  jit::TuneReduceOptions o = three_batches_of_two();
  std::vector<size_t> reported;
  o.on_candidate = [&](const jit::TriedReduce& t) { reported.push_back(t.occupancy.size()); };
  r.driver->answers_occupancy = true;
  r.driver->occupancy_answer = {.blocks_per_multiprocessor = 3, .registers_per_thread = 56};
  r.driver->occupancy_queries.clear();
  absl::StatusOr<jit::TunedReduce> t = jit::tune_reduce(r.device, r.desc, *r.inputs, o);
  r.driver->answers_occupancy = false;
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->tried.size(), 4u);
  for (size_t i : {0u, 1u, 3u}) {
    ASSERT_EQ(t->tried[i].occupancy.size(), 1u) << i;  // one phase: a row a block
    EXPECT_EQ(t->tried[i].occupancy[0].blocks_per_multiprocessor, 3) << i;
    EXPECT_EQ(t->tried[i].occupancy[0].registers_per_thread, 56) << i;
  }
  EXPECT_TRUE(t->tried[2].occupancy.empty()) << "the refused candidate has no kernel to ask of";
  EXPECT_EQ(reported, (std::vector<size_t>{1, 1, 0, 1}));
  // The question is asked of the launch each candidate makes: 8 rows a block each, so a
  // grid of 8, and the candidate's own block (4 x 8 first: 128 threads).
  ASSERT_EQ(r.driver->occupancy_queries.size(), 3u);
  EXPECT_EQ(r.driver->occupancy_queries[0].grid[0], 8u);
  EXPECT_EQ(r.driver->occupancy_queries[0].block[0], 128u);
  EXPECT_EQ(r.driver->occupancy_queries[1].block[0], 256u);

  t = jit::tune_reduce(r.device, r.desc, *r.inputs, three_batches_of_two());
  ASSERT_TRUE(t.ok()) << t.status();
  for (const jit::TriedReduce& tried : t->tried) EXPECT_TRUE(tried.occupancy.empty());
  EXPECT_TRUE(t->tried[0].us.ok()) << "a driver without a calculator still times the candidate";
}

}  // namespace
}  // namespace fixbits
