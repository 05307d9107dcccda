// jit::tune_reduce on a FakeDriver (no GPU) whose events answer scripted batch times:
// every candidate is built (ahead, through a kernel cache in a temp dir), recorded in
// list order and reported to on_candidate; a candidate the shape refuses is recorded
// with its reason and uses no timing; the chosen one has the least median (ties: the
// earliest); the two phases' seconds are measured, and the timing loop finds what the
// build-ahead phase built (it takes less time than the builds).
#include "jit/TuneReduce.h"

#include <stdlib.h>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "tests/runtime/FakeDriver.h"
#include "tests/runtime/TempDir.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using runtime::testing::FakeDriver;

TEST(TuneReduce, ChoosesTheLeastMedianRecordsEveryCandidateAndTimesItsPhases) {
  // The process-wide kernel cache reads its directory once; this binary's one test sets
  // it first, so the build-ahead phase runs (it needs the cache) without touching the
  // user's cache.
  static runtime::testing::TempDir* cache_dir = new runtime::testing::TempDir();
  ASSERT_EQ(setenv("FIXBITS_CACHE_DIR", cache_dir->path().c_str(), 1), 0);
  ASSERT_EQ(unsetenv("FIXBITS_CACHE"), 0);
  // The device outlives the process-wide loaded-kernel table (Jit.h asks for it).
  static auto* driver = new std::shared_ptr<FakeDriver>(std::make_shared<FakeDriver>());
  static auto* device = new std::shared_ptr<runtime::Device>(std::make_shared<runtime::Device>(*driver));

  const ReduceDesc d{.op = dsl::ReduceOp::kSoftmax, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16,
                     .strip = 1024};
  dsl::reference::ReduceProblem p;
  p.rows = 8;
  p.cols = 2048;
  p.x.assign(static_cast<size_t>(p.rows * p.cols), 0x3f80);  // bf16 1.0
  absl::StatusOr<jit::ReduceRunner> in = jit::ReduceRunner::create(*device, d, {.warps = 4, .elems_per_thread = 4});
  ASSERT_TRUE(in.ok()) << in.status();
  ASSERT_TRUE(in->upload(p).ok());

  jit::TuneReduceOptions o;
  o.candidates = std::vector<ReduceConfig>{
      {.warps = 4, .elems_per_thread = 8},
      {.warps = 8, .elems_per_thread = 4},
      {.warps = 8, .elems_per_thread = 8, .keep_passes = 64},  // past the register bound: refused
      {.warps = 2, .elems_per_thread = 8, .keep_passes = 1},
  };
  o.timed = 3;
  o.batch = 2;
  o.build_threads = 2;
  // Three timed batches a candidate that runs, in list order (the refused one takes none):
  // medians 3, 1 and 1 ms a batch of 2 -> 1500, 500 and 500 us a launch.
  (*driver)->elapsed_ms = {3, 3, 3, 1, 2, 1, 1, 1, 1};
  std::vector<std::string> seen;
  o.on_candidate = [&](const ReduceConfig& c, const absl::StatusOr<float>& us) {
    seen.push_back(absl::StrFormat("%dx%d:%s", c.warps, c.elems_per_thread,
                                   us.ok() ? absl::StrFormat("%.0f", *us) : "refused"));
  };
  absl::StatusOr<jit::TunedReduce> t = jit::tune_reduce(*device, d, *in, o);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE((*driver)->elapsed_ms.empty()) << "a candidate was timed more or less than 3 batches";
  EXPECT_EQ(seen, (std::vector<std::string>{"4x8:1500", "8x4:500", "8x8:refused", "2x8:500"}));
  ASSERT_EQ(t->tried.size(), 4u);
  EXPECT_EQ(t->config.warps, 8);  // the tie with 2 x 8 goes to the earlier
  EXPECT_EQ(t->config.elems_per_thread, 4);
  EXPECT_FLOAT_EQ(t->us, 500.0f);
  ASSERT_FALSE(t->tried[2].us.ok());
  EXPECT_TRUE(absl::StrContains(t->tried[2].us.status().message(), "keep_passes")) << t->tried[2].us.status();
  // The phases: building ahead compiled the three kernels the shape takes (real codegen
  // and verifier); the fake's launches take no time, so the timing phase is the runners'
  // creation (cache hits) and the loop, never negative.
  EXPECT_GT(t->build_seconds, 0.0);
  EXPECT_GE(t->timing_seconds, 0.0);
  EXPECT_LT(t->timing_seconds, t->build_seconds) << "the loop rebuilt what was built ahead";
}

}  // namespace
}  // namespace fixbits
