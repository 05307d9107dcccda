// GPU test (label gpu) of jit::tune_reduce: on the device it times every candidate it is
// given (or reduce_candidates' list) and records each one in list order; the chosen config
// has the least median of those that ran, and a runner built from it gives the CPU
// reference's bits (memcmp) on a fresh draw with adversarial rows. A candidate the shape
// refuses is recorded with its reason, never fatal; bad arguments are InvalidArgument
// naming the field; nothing that ran is NotFound. The timing phase's seconds cover the
// batches it timed. Without a device: [SKIP] <reason>.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"
#include "jit/ReduceCandidates.h"
#include "jit/TuneReduce.h"
#include "tests/jit/ReduceGpuRun.h"
#include "tests/jit/SeededGpuTest.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;

class TuneReduceGpuTest : public testing::SeededGpuTest {
 protected:
  // A runner of `d` holding `p` on the device (the inputs tune_reduce times on).
  absl::StatusOr<jit::ReduceRunner> inputs(const ReduceDesc& d, const dsl::reference::ReduceProblem& p) {
    absl::StatusOr<jit::ReduceRunner> r = jit::ReduceRunner::create(device_, d, {.warps = 4, .elems_per_thread = 4});
    if (!r.ok()) return r.status();
    if (absl::Status s = r->upload(p); !s.ok()) return s;
    return r;
  }
};

TEST_F(TuneReduceGpuTest, TheChosenSoftmaxGivesTheReferenceBitsAndEveryCandidateIsRecorded) {
  const ReduceDesc d{.op = dsl::ReduceOp::kSoftmax, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16,
                     .strip = 4096};
  const auto p = testing::fused_gpu_problem(d, 64, 8192, rng_);
  auto ref = dsl::reference::reduce(d, p);
  ASSERT_TRUE(ref.ok()) << ref.status();
  auto in = inputs(d, p);
  ASSERT_TRUE(in.ok()) << in.status();
  jit::CandidateOptions co;
  co.multiprocessors = device_->info().multiprocessor_count;
  co.configs = {{.warps = 8, .elems_per_thread = 8}, {.warps = 16, .elems_per_thread = 4}};
  co.cluster_parts = {2};  // fewer slow-to-build cluster kernels: the test times, it does not sweep
  jit::TuneReduceOptions o;
  o.candidates = jit::reduce_candidates(d, p.rows, p.cols, co);
  // One this kernel refuses (64 kept passes of 16 values a thread, past the register
  // bound): recorded with its reason, not fatal. (Session 25's first device run used
  // 1 warp here, which dsl::reduce refuses earlier, for its 128 elements a thread.)
  o.candidates->push_back({.warps = 8, .elems_per_thread = 8, .keep_passes = 64});
  o.timed = 3;
  o.batch = 2;
  int seen = 0;
  o.on_candidate = [&](const jit::TriedReduce&) { ++seen; };
  auto t = jit::tune_reduce(device_, d, *in, o);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->tried.size(), o.candidates->size());
  EXPECT_EQ(seen, static_cast<int>(o.candidates->size()));
  int ran = 0;
  double timed_floor_s = 0;  // at least half of a candidate's batches took its median or more
  for (const jit::TunedReduce::Tried& x : t->tried) {
    if (!x.us.ok()) continue;
    ++ran;
    EXPECT_GT(*x.us, 0.0f);
    EXPECT_LE(t->us, *x.us);
    timed_floor_s += *x.us * 1e-6 * o.batch * ((o.timed + 1) / 2);
  }
  EXPECT_GT(ran, 4);
  EXPECT_GE(t->timing_seconds, timed_floor_s);
  EXPECT_FALSE(t->tried.back().us.ok());
  EXPECT_TRUE(absl::StrContains(t->tried.back().us.status().message(), "keep_passes"))
      << t->tried.back().us.status();
  auto got = testing::run_reduce(device_, d, t->config, p);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(testing::first_difference(*got, *ref), "") << "seed " << seed_;
}

TEST_F(TuneReduceGpuTest, TheDefaultCandidatesTuneAnRmsNorm) {
  const ReduceDesc d{.op = dsl::ReduceOp::kRmsNorm, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16,
                     .strip = 1024};
  const auto p = testing::fused_gpu_problem(d, 16, 1024, rng_);
  auto ref = dsl::reference::reduce(d, p);
  ASSERT_TRUE(ref.ok()) << ref.status();
  auto in = inputs(d, p);
  ASSERT_TRUE(in.ok()) << in.status();
  auto t = jit::tune_reduce(device_, d, *in, {.timed = 3, .batch = 2});
  ASSERT_TRUE(t.ok()) << t.status();
  jit::CandidateOptions co;  // what tune_reduce lists for this device
  co.multiprocessors = device_->info().multiprocessor_count;
  co.lanes = device_->info().warp_size;
  EXPECT_EQ(t->tried.size(), jit::reduce_candidates(d, p.rows, p.cols, co).size());
  EXPECT_GT(t->tried.size(), 1u);
  auto got = testing::run_reduce(device_, d, t->config, p);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(testing::first_difference(*got, *ref), "") << "seed " << seed_;
}

TEST_F(TuneReduceGpuTest, BadArgumentsNameTheirFieldAndNothingRunIsNotFound) {
  const ReduceDesc d{.op = dsl::ReduceOp::kSum, .in_dtype = DType::kF32, .out_dtype = DType::kF32, .strip = 256};
  auto empty = jit::ReduceRunner::create(device_, d, {.warps = 4, .elems_per_thread = 4});
  ASSERT_TRUE(empty.ok()) << empty.status();
  auto not_uploaded = jit::tune_reduce(device_, d, *empty);
  EXPECT_EQ(not_uploaded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(not_uploaded.status().message(), "upload")) << not_uploaded.status();

  const auto p = testing::fused_gpu_problem(d, 8, 512, rng_);
  auto in = inputs(d, p);
  ASSERT_TRUE(in.ok()) << in.status();
  for (auto [o, field] : {std::pair{jit::TuneReduceOptions{.timed = 0}, "timed"},
                          std::pair{jit::TuneReduceOptions{.batch = 0}, "batch"},
                          std::pair{jit::TuneReduceOptions{.build_threads = -1}, "build_threads"},
                          std::pair{jit::TuneReduceOptions{.candidates = std::vector<ReduceConfig>{}}, "candidates"}}) {
    auto t = jit::tune_reduce(device_, d, *in, o);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << field;
    EXPECT_TRUE(absl::StrContains(t.status().message(), field)) << t.status();
  }
  EXPECT_EQ(jit::tune_reduce(nullptr, d, *in).status().code(), absl::StatusCode::kInvalidArgument);
  // Every candidate refused: keep_passes applies to RMSNorm and softmax only.
  jit::TuneReduceOptions o;
  o.candidates = std::vector<ReduceConfig>{{.warps = 4, .elems_per_thread = 4, .keep_passes = 1}};
  auto none = jit::tune_reduce(device_, d, *in, o);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound) << none.status();
  EXPECT_TRUE(absl::StrContains(none.status().message(), "keep_passes")) << none.status();
}

}  // namespace
}  // namespace fixbits
