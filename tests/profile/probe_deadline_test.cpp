// profile/ProbeDeadline on a fake clock: the wrapped black box answers until the limit,
// then returns DeadlineExceeded without calling the box; a probe through it reports the
// error as the instrument's (not NotFound), so the scan drops the point. deadline_check
// bounds the probe's CPU search the same way (the walks are all answered, the candidates
// are not all judged), and a class whose probe passes the limit ends at once and is
// ranked after every other class when the table is probed again.
#include "profile/ProbeDeadline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "dsl/probe/Probe.h"
#include "dsl/reference/Reference.h"
#include "profile/CublasScan.h"

namespace fixbits::profile {
namespace {

TEST(ProbeDeadline, AnswersUntilTheLimitThenStops) {
  double t = 100.0;
  int calls = 0;
  const dsl::probe::GemmBlackBox box = [&](const dsl::reference::GemmProblem&)
      -> absl::StatusOr<std::vector<uint32_t>> {
    ++calls;
    return std::vector<uint32_t>{7};
  };
  const dsl::probe::GemmBlackBox limited = with_deadline(box, 60, [&] { return t; });
  const dsl::reference::GemmProblem p{};
  t = 159.0;
  absl::StatusOr<std::vector<uint32_t>> r = limited(p);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, std::vector<uint32_t>{7});
  t = 160.5;
  r = limited(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(r.status().message().find("time limit of 60 s"), absl::string_view::npos) << r.status();
  EXPECT_EQ(calls, 1);
}

TEST(ProbeDeadline, NoLimitIsTheBoxItself) {
  int calls = 0;
  const dsl::probe::GemmBlackBox box = [&](const dsl::reference::GemmProblem&)
      -> absl::StatusOr<std::vector<uint32_t>> {
    ++calls;
    return std::vector<uint32_t>{};
  };
  double t = 0;
  const dsl::probe::GemmBlackBox same = with_deadline(box, 0, [&] { return t; });
  t = 1e9;
  EXPECT_TRUE(same(dsl::reference::GemmProblem{}).ok());
  EXPECT_EQ(calls, 1);
}

TEST(ProbeDeadline, AProbePastItsLimitIsAnInstrumentErrorNotNoDescriptor) {
  double t = 0;
  const dsl::probe::GemmBlackBox box = [&](const dsl::reference::GemmProblem& p)
      -> absl::StatusOr<std::vector<uint32_t>> {
    t += 1.0;  // every experiment takes a second
    return dsl::reference::gemm(dsl::GemmDesc{}, p);
  };
  const runtime::GemmShape s{.m = 1, .n = 1, .k = 300};
  absl::StatusOr<dsl::GemmDesc> d =
      probe_key(with_deadline(box, 3, [&] { return t; }), s, CublasKey{}, dsl::Instruction::kMmaSync);
  ASSERT_FALSE(d.ok());
  EXPECT_FALSE(absl::IsNotFound(d.status())) << d.status();
  // With room enough, the same probe recovers the descriptor.
  t = 0;
  d = probe_key(with_deadline(box, 1e9, [&] { return t; }), s, CublasKey{}, dsl::Instruction::kMmaSync);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, dsl::GemmDesc{});
}

// The CPU search: every launch answers at once, but judging candidates takes time.
// keep_going stops the search with DeadlineExceeded (not NotFound) once the limit
// passes; without it (or with room enough) the same search ends with NotFound.
TEST(ProbeDeadline, TheCpuSearchStopsAtTheLimit) {
  double t = 0;
  dsl::GemmDesc truth;  // ik 8, which no 16-product candidate reproduces
  truth.instruction_k = 8;
  const dsl::probe::GemmBlackBox box = [&](const dsl::reference::GemmProblem& p) {
    return dsl::reference::gemm(truth, p);
  };
  std::function<absl::Status()> check = deadline_check(0.305, [&] { return t; });
  int asked = 0;
  dsl::probe::ProbeOptions o;
  o.k = 257;
  o.keep_going = [&] {
    t += 0.01;  // each candidate takes 10 ms
    ++asked;
    return check();
  };
  absl::StatusOr<dsl::GemmDesc> d = dsl::probe::recover_gemm_desc(box, o);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kDeadlineExceeded) << d.status();
  EXPECT_NE(d.status().message().find("time limit of 0 s"), absl::string_view::npos);
  EXPECT_EQ(asked, 31);  // 30 candidates in 0.305 s, the 31st refused
  o.keep_going = {};
  d = dsl::probe::recover_gemm_desc(box, o);
  EXPECT_TRUE(absl::IsNotFound(d.status())) << d.status();
  EXPECT_TRUE(deadline_check(0, [&] { return 1e12; })().ok());
}

// A class whose probe passes the limit ends after that one probe (its other points are
// not tried in this run), and when the table is probed again it goes after every other
// class, though it has the most shapes.
TEST(ProbeDeadline, ATimedOutClassEndsAndIsProbedLastNextTime) {
  using runtime::AlgoConfig;
  // Two classes: id 23 (M >= 16: most shapes) and id 24 (M < 16).
  const HeuristicFn two = [](const runtime::GemmShape& s) -> absl::StatusOr<AlgoConfig> {
    return AlgoConfig{.id = s.m >= 16 ? 23 : 24};
  };
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  const ScanGrid grid{.ms = {1, 4, 16, 32, 64}, .ns = {1, 3}, .ks = {64, 257, 1000}};
  ASSERT_TRUE(scan_heuristic(t, st, runtime::GemmShape{}, grid, two).ok());
  ASSERT_EQ(t.classes.size(), 2u);
  std::vector<int> order;  // the id of each probe's class, in probe order
  bool slow = true;        // id 23's probes pass the limit
  const ProbeFn probe = [&](const runtime::GemmShape& s, const CublasKey& key)
      -> absl::StatusOr<dsl::GemmDesc> {
    order.push_back(key.id);
    if (key.id == 23 && slow) {
      return absl::DeadlineExceededError("the probe passed its time limit of 20 s (--probe-timeout-s)");
    }
    const dsl::probe::GemmBlackBox box = [](const dsl::reference::GemmProblem& p) {
      return dsl::reference::gemm(dsl::GemmDesc{}, p);
    };
    return probe_key(box, s, key, dsl::Instruction::kMmaSync);
  };
  absl::StatusOr<ProbeStats> stats = probe_classes(t, st, probe, ProbeOptions{.max_probe_k = 4096});
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_FALSE(order.empty());
  EXPECT_EQ(order.front(), 23);  // most shapes first
  EXPECT_EQ(std::count(order.begin(), order.end(), 23), 1);  // ended after one probe
  const TableClass& c23 = t.classes[0].cls.values.id == 23 ? t.classes[0] : t.classes[1];
  EXPECT_FALSE(c23.desc.has_value());
  EXPECT_NE(c23.note.find("a probe passed its time limit"), std::string::npos) << c23.note;
  EXPECT_EQ(order, (std::vector<int>{23, 24, 24}));
  // Probed again (the same state, as --resume has it) with id 24's class open as well:
  // id 24 comes first now, though id 23 has more shapes.
  TableClass& c24 = t.classes[0].cls.values.id == 24 ? t.classes[0] : t.classes[1];
  ASSERT_TRUE(c24.desc.has_value()) << c24.note;
  c24.desc.reset();
  c24.rules.clear();
  c24.probes.clear();
  c24.note.clear();
  order.clear();
  slow = false;
  stats = probe_classes(t, st, probe, ProbeOptions{.max_probe_k = 4096, .revalidate = 0});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(order, (std::vector<int>{24, 24, 23, 23}));
  EXPECT_TRUE(c23.desc.has_value()) << c23.note;
}

}  // namespace
}  // namespace fixbits::profile
