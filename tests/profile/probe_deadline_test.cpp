// profile/ProbeDeadline on a fake clock: the wrapped black box answers until the limit,
// then returns DeadlineExceeded without calling the box; a probe through it reports the
// error as the instrument's (not NotFound), so the scan drops the point. deadline_check
// bounds the probe's CPU search the same way (the walks are all answered, the candidates
// are not all judged), and a class whose probe passes the limit ends at once and is
// ranked after every other class when the table is probed again. probe_key's on_search
// hears each search as it ends, the one a limit stopped too (the scan's log lines).
#include "profile/ProbeDeadline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <tuple>
#include <vector>

#include "dsl/probe/Probe.h"
#include "dsl/reference/Reference.h"
#include "profile/CublasScan.h"

namespace fixbits::profile {
namespace {

// A ProbeFn's found_before.
using Descs = std::vector<dsl::GemmDesc>;

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

// The scan's line for a search: every field as given, each outcome by its word, the
// optional parts only where they apply.
TEST(ProbeDeadline, TheSearchLineNamesEachField) {
  EXPECT_EQ(probe_search_line(ProbeSearch{dsl::GemmFamily::kSplitK, 8, 9, absl::NotFoundError("none"), 12.34},
                              40, 395, 151.26),
            "search split_k with mma.sync k8 (9 dtype pairs): nothing in 12.3 s, 40 candidates judged; 395 box "
            "calls (151.3 s) so far");
  EXPECT_EQ(probe_search_line(ProbeSearch{dsl::GemmFamily::kPlain, 0, 0, absl::OkStatus(), 0.04}, 3, 7, 0.5),
            "search plain: found in 0.0 s, 3 candidates judged; 7 box calls (0.5 s) so far");
  EXPECT_EQ(probe_search_line(ProbeSearch{dsl::GemmFamily::kGemv, 0, 1, absl::DeadlineExceededError("limit"), 380},
                              1234567, 0, 0),
            "search gemv (1 dtype pairs): stopped in 380.0 s, 1234567 candidates judged; 0 box calls (0.0 s) so "
            "far");
  EXPECT_EQ(probe_search_line(ProbeSearch{dsl::GemmFamily::kSplitK, 8, 1, absl::OkStatus(), 133.04, true}, 12,
                              34, 5.6),
            "search split_k with mma.sync k8 (1 dtype pairs) (as the class's earlier probes): found in 133.0 s, "
            "12 candidates judged; 34 box calls (5.6 s) so far");
}

// probe_key's on_search hears every search as it ends, in order, with its family,
// instruction_k, dtype pairs and outcome, also the one a time limit stopped.
TEST(ProbeDeadline, EachSearchIsHeardAsItEnds) {
  dsl::GemmDesc truth;  // plain, f16, 8 products an instruction
  truth.instruction_k = 8;
  const dsl::probe::GemmBlackBox box = [&](const dsl::reference::GemmProblem& p) {
    return dsl::reference::gemm(truth, p);
  };
  const runtime::GemmShape s{.m = 2, .n = 2, .k = 257};
  std::vector<ProbeSearch> heard;
  const ProbeSearchNote note = [&](const ProbeSearch& q) { heard.push_back(q); };
  // A split key (reduction 2, compute type: its one pair first, then the other eight):
  // split_k with 16 products finds nothing with either, then with 8 and the one pair it
  // finds the truth as one cut over all of K (the same bits).
  CublasKey split_key{.split = true, .reduction = 2};
  absl::StatusOr<dsl::GemmDesc> d =
      probe_key(box, s, split_key, dsl::Instruction::kMmaSync, {}, {}, 0, {}, {}, {}, note);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->family, dsl::GemmFamily::kSplitK);
  EXPECT_EQ(d->instruction_k, 8);
  ASSERT_EQ(heard.size(), 3u);
  const std::vector<std::tuple<dsl::GemmFamily, int, size_t>> want = {
      {dsl::GemmFamily::kSplitK, 0, 1}, {dsl::GemmFamily::kSplitK, 0, 8}, {dsl::GemmFamily::kSplitK, 8, 1}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(std::make_tuple(heard[i].family, heard[i].instruction_k, heard[i].split_pairs), want[i]) << i;
    EXPECT_EQ(heard[i].status.ok(), i == 2) << i << ": " << heard[i].status;
    EXPECT_TRUE(i == 2 || absl::IsNotFound(heard[i].status)) << i << ": " << heard[i].status;
    EXPECT_GE(heard[i].seconds, 0) << i;
  }
  // A plain key on the same box: plain with 16 products finds nothing, with 8 the truth.
  heard.clear();
  d = probe_key(box, s, CublasKey{}, dsl::Instruction::kMmaSync, {}, {}, 0, {}, {}, {}, note);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, truth);
  ASSERT_EQ(heard.size(), 2u);
  EXPECT_EQ(std::make_tuple(heard[0].family, heard[0].instruction_k, heard[0].split_pairs),
            std::make_tuple(dsl::GemmFamily::kPlain, 0, size_t{0}));
  EXPECT_EQ(std::make_tuple(heard[1].family, heard[1].instruction_k, heard[1].split_pairs),
            std::make_tuple(dsl::GemmFamily::kPlain, 8, size_t{0}));
  // Stopped by its time limit in the first search: that search is heard with the error.
  heard.clear();
  double t = 0;
  std::function<absl::Status()> check = deadline_check(0.05, [&] { return t; });
  d = probe_key(box, s, split_key, dsl::Instruction::kMmaSync, {}, [&] {
        t += 0.01;
        return check();
      }, 0, {}, {}, {}, note);
  ASSERT_FALSE(d.ok());
  ASSERT_EQ(heard.size(), 1u);
  EXPECT_EQ(heard[0].status.code(), absl::StatusCode::kDeadlineExceeded) << heard[0].status;
  EXPECT_EQ(d.status(), heard[0].status);
}

// found_before: the searches that found a class's earlier descriptors run first. The
// box is a split with mma.sync k8 whose merge runs at f16 (the reduction scheme names
// (f32, f32)): without a hint probe_key finds it in its fourth search (split_k with 16
// products and the scheme's pair, with the other eight, with k8 and the scheme's pair,
// with k8 and the other eight), as each probe of session 34's class 364 did. Told the
// descriptor an earlier probe found, its first search is that one (k8, the one pair),
// and it finds the same descriptor. A wrong hint (plain; another pair) costs one search
// that finds nothing, then the usual order, less that search, finds the same
// descriptor; duplicates are searched once, in the order given; a hinted search the
// time limit stops ends the probe.
TEST(ProbeDeadline, TheClassesEarlierDescriptorsAreSearchedFirst) {
  dsl::GemmDesc truth;
  truth.family = dsl::GemmFamily::kSplitK;
  truth.instruction_k = 8;
  truth.k_cuts = {{96, dsl::Fold::kChain}};
  truth.merge_dtype = DType::kF16;
  const dsl::probe::GemmBlackBox box = [&](const dsl::reference::GemmProblem& p) {
    return dsl::reference::gemm(truth, p);
  };
  const runtime::GemmShape s{.m = 2, .n = 2, .k = 257};
  const CublasKey split_key{.split = true, .reduction = 2};
  std::vector<ProbeSearch> heard;
  const ProbeSearchNote note = [&](const ProbeSearch& q) { heard.push_back(q); };
  auto probe = [&](std::vector<dsl::GemmDesc> found_before) {
    heard.clear();
    return probe_key(box, s, split_key, dsl::Instruction::kMmaSync, {}, {}, 3, {}, {}, {}, note,
                     std::move(found_before));
  };
  auto what = [](const ProbeSearch& q) {
    return std::make_tuple(q.family, q.instruction_k, q.split_pairs, q.as_before);
  };
  using What = std::tuple<dsl::GemmFamily, int, size_t, bool>;
  // No hint: the usual order, nothing marked.
  const absl::StatusOr<dsl::GemmDesc> plain_run = probe({});
  ASSERT_TRUE(plain_run.ok()) << plain_run.status();
  const dsl::GemmDesc found = *plain_run;
  EXPECT_EQ(found.family, dsl::GemmFamily::kSplitK) << found;
  EXPECT_EQ(found.instruction_k, 8) << found;
  EXPECT_EQ(found.instruction, dsl::Instruction::kMmaSync) << found;
  EXPECT_EQ(std::make_pair(found.partial_dtype, found.merge_dtype), std::make_pair(DType::kF32, DType::kF16));
  ASSERT_EQ(heard.size(), 4u);
  EXPECT_EQ(what(heard[0]), What(dsl::GemmFamily::kSplitK, 0, 1, false));
  EXPECT_EQ(what(heard[3]), What(dsl::GemmFamily::kSplitK, 8, 8, false));
  for (const ProbeSearch& q : heard) EXPECT_FALSE(q.as_before);
  // The descriptor an earlier probe found: its search first, and it finds the same.
  absl::StatusOr<dsl::GemmDesc> d = probe({found});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(dsl::to_string(*d), dsl::to_string(found));
  ASSERT_EQ(heard.size(), 1u);
  EXPECT_EQ(what(heard[0]), What(dsl::GemmFamily::kSplitK, 8, 1, true));
  EXPECT_TRUE(heard[0].status.ok()) << heard[0].status;
  // Wrong hints: the hinted search finds nothing, then the usual order as without one,
  // less that same search: a plain hint's search is not among the four the usual order
  // makes here (5 in all); the scheme's pair with k8 is its third (4 in all).
  dsl::GemmDesc plain;  // plain, 16 products
  dsl::GemmDesc other_pair = found;
  other_pair.merge_dtype = DType::kF32;
  struct Wrong {
    dsl::GemmDesc hint;
    What first;
    size_t searches;
  };
  for (const Wrong& w : {Wrong{plain, What(dsl::GemmFamily::kPlain, 0, 0, true), 5},
                         Wrong{other_pair, What(dsl::GemmFamily::kSplitK, 8, 1, true), 4}}) {
    d = probe({w.hint});
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(dsl::to_string(*d), dsl::to_string(found)) << w.hint;
    ASSERT_EQ(heard.size(), w.searches) << w.hint;
    EXPECT_EQ(what(heard[0]), w.first) << w.hint;
    EXPECT_TRUE(absl::IsNotFound(heard[0].status)) << heard[0].status;
    EXPECT_EQ(what(heard[1]), What(dsl::GemmFamily::kSplitK, 0, 1, false)) << w.hint;
    for (size_t i = 1; i < heard.size(); ++i) {
      EXPECT_FALSE(what(heard[i]) == w.first && !heard[i].as_before) << "searched again: " << w.hint;
    }
    EXPECT_TRUE(heard.back().status.ok()) << heard.back().status;
  }
  // In the order given, each search once: the wrong pair, then the right one.
  d = probe({other_pair, found, other_pair, found});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(dsl::to_string(*d), dsl::to_string(found));
  ASSERT_EQ(heard.size(), 2u);
  EXPECT_EQ(what(heard[0]), What(dsl::GemmFamily::kSplitK, 8, 1, true));
  EXPECT_TRUE(absl::IsNotFound(heard[0].status)) << heard[0].status;
  EXPECT_TRUE(heard[1].status.ok()) << heard[1].status;
  // A hinted search stopped by the time limit ends the probe with that error.
  heard.clear();
  const auto late = [] { return absl::DeadlineExceededError("the probe passed its time limit"); };
  d = probe_key(box, s, split_key, dsl::Instruction::kMmaSync, {}, late, 3, {}, {}, {}, note, {found});
  ASSERT_EQ(d.status().code(), absl::StatusCode::kDeadlineExceeded) << d.status();
  ASSERT_EQ(heard.size(), 1u);
  EXPECT_TRUE(heard[0].as_before);
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
  const ProbeFn probe = [&](const runtime::GemmShape& s, const CublasKey& key, const Descs& before)
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
