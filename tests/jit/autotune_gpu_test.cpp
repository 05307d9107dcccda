// autotune_gpu_test (label gpu): the autotuner (runtime/Autotuner.h) end to end on a
// device -- candidates are our codegen's pinned and free row sums under every
// ReduceConfig, the reference is the first pinned one, and the timer measures launches
// with CUDA events (median of 9 after a warm-up). The search must time only kernels
// equivalent to the reference, pick a pinned one, and that kernel's device bits must
// equal the CPU reference's (memcmp). Without a device: [SKIP] <reason>.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/Compile.h"
#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"
#include "jit/ReduceRunner.h"
#include "runtime/Autotuner.h"
#include "runtime/Runtime.h"
#include "tests/jit/ReduceSweep.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::TreeOrder;

TEST(AutotuneGpu, TimesOnlyTheReferenceClassAndPicksAPinnedKernel) {
  auto dev = runtime::cuda(0);
  if (!dev.ok()) GTEST_SKIP() << "[SKIP] no CUDA device: " << dev.status().message();
  const testing::SweepFamily family{dsl::ReduceOp::kSum, DType::kF32};
  dsl::reference::ReduceProblem problem = testing::sweep_problem(testing::sweep_desc(family, TreeOrder::kPinned), 0);
  problem.rows = 512;  // enough blocks to make timing meaningful
  std::mt19937_64 rng(7);
  problem.x = testing::random_bits(DType::kF32, static_cast<size_t>(problem.rows * problem.cols), rng,
                                   testing::Mix::kPlain);

  std::map<std::string, std::pair<ReduceDesc, ReduceConfig>> by_name;
  std::vector<runtime::TuneCandidate> candidates;
  for (TreeOrder order : {TreeOrder::kPinned, TreeOrder::kFree}) {
    const ReduceDesc d = testing::sweep_desc(family, order);
    for (const ReduceConfig& c : testing::sweep_configs()) {
      const std::string name = testing::sweep_key(d, c);
      by_name[name] = {d, c};
      candidates.push_back({name, [d, c]() -> absl::StatusOr<std::string> {
                              absl::StatusOr<tile::Program> p = dsl::reduce(d, c);
                              if (!p.ok()) return p.status();
                              absl::StatusOr<codegen::CompiledKernel> k =
                                  codegen::compile(*p, codegen::Target::kNvptxSm90a);
                              if (!k.ok()) return k.status();
                              return k->text;
                            }});
    }
  }

  std::set<std::string> timed;
  runtime::CandidateTimer timer = [&](const runtime::CompiledCandidate& c) -> absl::StatusOr<double> {
    timed.insert(c.name);
    const auto& [d, cfg] = by_name.at(c.name);
    absl::StatusOr<jit::ReduceRunner> r = jit::ReduceRunner::create(*dev, d, cfg);
    if (!r.ok()) return r.status();
    if (absl::Status s = r->upload(problem); !s.ok()) return s;
    if (absl::Status s = r->launch(); !s.ok()) return s;  // warm-up
    absl::StatusOr<runtime::Event> start = (*dev)->create_event();
    absl::StatusOr<runtime::Event> stop = (*dev)->create_event();
    if (!start.ok()) return start.status();
    if (!stop.ok()) return stop.status();
    std::vector<double> ms;
    for (int i = 0; i < 9; ++i) {
      if (absl::Status s = start->record(); !s.ok()) return s;
      if (absl::Status s = r->launch(); !s.ok()) return s;
      if (absl::Status s = stop->record(); !s.ok()) return s;
      if (absl::Status s = stop->synchronize(); !s.ok()) return s;
      absl::StatusOr<float> t = stop->elapsed_ms_since(*start);
      if (!t.ok()) return t.status();
      ms.push_back(*t);
    }
    std::nth_element(ms.begin(), ms.begin() + 4, ms.end());
    return ms[4];
  };

  absl::StatusOr<runtime::TuneResult> r = runtime::autotune(candidates, timer);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->partition.compiled.size(), 60u);
  EXPECT_EQ(std::set<std::string>(r->kept.begin(), r->kept.end()), timed);
  for (const std::string& k : r->kept) EXPECT_NE(k.find("order=pinned"), std::string::npos) << k;
  for (const runtime::PrunedCandidate& p : r->pruned) EXPECT_NE(p.reason, runtime::PruneReason::kTimingFailed) << p.why;
  ASSERT_NE(r->chosen.find("order=pinned"), std::string::npos) << r->chosen;
  EXPECT_GT(r->chosen_time, 0.0);
  std::printf("[autotune] chose %s at %.4f ms among %zu kept of %zu candidates (%zu classes)\n",
              r->chosen.c_str(), r->chosen_time, r->kept.size(), candidates.size(),
              r->partition.classes.size());

  // The winner's bits are the descriptor's.
  const auto& [d, cfg] = by_name.at(r->chosen);
  absl::StatusOr<jit::ReduceRunner> run = jit::ReduceRunner::create(*dev, d, cfg);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_TRUE(run->upload(problem).ok());
  ASSERT_TRUE(run->launch().ok());
  absl::StatusOr<std::vector<uint32_t>> got = run->download();
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<std::vector<uint32_t>> want = dsl::reference::reduce(d, problem);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_EQ(got->size(), want->size());
  EXPECT_EQ(std::memcmp(got->data(), want->data(), got->size() * 4), 0);
}

}  // namespace
}  // namespace fixbits
