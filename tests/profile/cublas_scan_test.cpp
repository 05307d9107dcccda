// profile/CublasScan on the CPU against fake cost models and fake libraries. The main
// fake answers like the H200 did: one algorithm id (66) whose tile changes at M = 8 and
// whose stages change at K = 2048 (speed knobs: the descriptor ignores them), split-K for
// small outputs at K > 700 with reduction in compute type and a split count that
// grows with K (3, then 4 from K = 1500, 5 from K = 3000; spans rounded up to 64), and
// a refusal at N = 3; the fake library computes reference::gemm of the descriptor the
// answer stands for. The scan must find the K boundaries exactly, collapse the
// variants into two classes, probe each class a few times through the real
// dsl::probe, fit split/64, and give the fake's own descriptor at K values and split
// counts never probed. Other fakes make two probes of one class disagree (the class
// is split by the fields in which their variants differ) or make one variant's
// descriptor depend on K (the class keeps no descriptor). --resume: a table probed
// with no budget, or under the old key (id 23 without tile and stages), resumed from
// its text alone ends with the lookups of one long scan; a finished table probes nothing.
#include <cmath>
#include <functional>
#include <initializer_list>
#include <map>
#include <random>
#include <set>
#include <string>

#include "absl/strings/str_format.h"
#include "dsl/probe/Probe.h"
#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"
#include "tests/dsl/CublasDot.h"
#include "profile/CublasScan.h"
#include "profile/ScanSlices.h"

namespace fixbits::profile {
namespace {

// A ProbeFn's found_before.
using Descs = std::vector<dsl::GemmDesc>;

using runtime::AlgoConfig;
using runtime::GemmShape;

bool has(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}
bool has(const absl::Status& s, std::string_view part) { return has(std::string(s.message()), part); }

bool fake_splits(int64_t m, int64_t n, int64_t k) { return m * n <= 256 && k > 700; }
uint32_t fake_splitk(int64_t k) { return 3 + (k >= 1500) + (k >= 3000); }

absl::StatusOr<AlgoConfig> fake_heuristic(const GemmShape& s) {
  if (s.n == 3) return absl::UnimplementedError("the fake refuses N = 3");
  AlgoConfig a;
  a.id = 66;
  a.tile_id = s.m < 8 ? 10 : 15;
  a.stages_id = s.k < 2048 ? 13 : 12;
  const bool split = fake_splits(s.m, s.n, s.k);
  a.splitk_num = split ? fake_splitk(s.k) : 0;
  a.reduction_scheme = split ? 2 : 0;
  a.cta_swizzling = static_cast<uint32_t>(s.k % 2);  // not part of any key
  return a;
}

dsl::GemmDesc fake_truth(int64_t m, int64_t n, int64_t k) {
  dsl::GemmDesc d;  // f16 mma_sync, ik 16, fast accumulation
  if (fake_splits(m, n, k)) {
    d.family = dsl::GemmFamily::kSplitK;
    const int64_t p = fake_splitk(k);
    const int64_t part = (k + p - 1) / p;
    d.k_cuts = {{std::min<int64_t>(k, (part + 63) / 64 * 64), dsl::Fold::kChain}};
  }
  return d;
}

// The chain a sequential fma loop computes: what the fakes below give some variants.
dsl::GemmDesc fma_chain() {
  dsl::GemmDesc d;
  d.instruction = dsl::Instruction::kScalarFma;
  d.instruction_k = 1;
  d.use_fast_accum = true;
  return d;
}

ScanGrid small_grid() {
  return ScanGrid{.ms = {1, 4, 16, 64}, .ns = {1, 3, 16, 64}, .ks = {1, 2, 64, 512, 2048, 4096}};
}

// A heuristic that gives `a` for every shape: one variant, one class.
HeuristicFn always(AlgoConfig a) {
  return [a](const GemmShape&) -> absl::StatusOr<AlgoConfig> { return a; };
}

// A probe through a reference-backed black box of descriptor truth(s, K).
ProbeFn reference_probe(std::function<dsl::GemmDesc(const GemmShape&, int64_t)> truth,
                        int* calls) {
  return [truth, calls](const GemmShape& s, const CublasKey& key, const Descs& before) {
    ++*calls;
    const dsl::probe::GemmBlackBox box = [s, truth](const dsl::reference::GemmProblem& p) {
      return dsl::reference::gemm(truth(s, p.k), p);
    };
    return probe_key(box, s, key, dsl::Instruction::kMmaSync);
  };
}

// Scans `grid` with every shape answered `a` (one class; FailedPrecondition when the
// scan gives another count) and probes it through the reference of truth(s, K);
// *probes counts the probe calls.
absl::StatusOr<ProbeStats> scan_and_probe(
    CublasTable& t, ScanState& st, AlgoConfig a, const ScanGrid& grid,
    std::function<dsl::GemmDesc(const GemmShape&, int64_t)> truth, const ProbeOptions& options,
    int* probes) {
  if (absl::Status s = scan_heuristic(t, st, GemmShape{}, grid, always(a)); !s.ok()) return s;
  if (t.classes.size() != 1) {
    return absl::FailedPreconditionError(
        absl::StrFormat("the scan gave %d classes, not one", t.classes.size()));
  }
  return probe_classes(t, st, reference_probe(std::move(truth), probes), options);
}

// Each K of `ks`: the table's 1 x 1 x K lookup has truth(K)'s first span.
void expect_spans(const CublasTable& t,
                  const std::function<dsl::GemmDesc(const GemmShape&, int64_t)>& truth,
                  std::initializer_list<int64_t> ks) {
  for (int64_t k : ks) {
    absl::StatusOr<dsl::GemmDesc> d = lookup(t, GemmShape{.m = 1, .n = 1, .k = k});
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->k_cuts[0].span, truth(GemmShape{}, k).k_cuts[0].span) << "K = " << k;
  }
}

// Each K of `ks`: the table's 1 x 1 x K lookup gives `want`'s bits (dsl::probe::reproduces).
void expect_reproduces(const CublasTable& t, const dsl::GemmDesc& want,
                       std::initializer_list<int64_t> ks) {
  for (int64_t k : ks) {
    absl::StatusOr<dsl::GemmDesc> d = lookup(t, GemmShape{.m = 1, .n = 1, .k = k});
    ASSERT_TRUE(d.ok()) << d.status();
    dsl::probe::ProbeOptions o;
    o.k = k;
    std::string why;
    absl::StatusOr<bool> same = dsl::probe::reproduces(*d, want, o, &why);
    ASSERT_TRUE(same.ok()) << same.status();
    EXPECT_TRUE(*same) << "K = " << k << ": " << *d << " (" << why << ")";
  }
}

// A split of 3 whose span is ceil(K/3) rounded up to `granule`, with K-loop step `step`,
// as the truth of scan_and_probe, and the answer that names it.
std::function<dsl::GemmDesc(const GemmShape&, int64_t)> split3_truth(int64_t granule,
                                                                     dsl::KLoopStep step) {
  return [granule, step](const GemmShape&, int64_t k) {
    dsl::GemmDesc d;
    d.family = dsl::GemmFamily::kSplitK;
    d.k_loop_step = step;
    d.k_cuts = {{((k + 2) / 3 + granule - 1) / granule * granule, dsl::Fold::kChain}};
    return d;
  };
}
const AlgoConfig kSplit3{.id = 66, .splitk_num = 3, .reduction_scheme = 2};

// A 1 x 1 x k problem of random f16 inputs (seeded by k), a positive and b signed, so
// the grouping of the sum shows in the low bits.
dsl::reference::GemmProblem random_f16_problem(int64_t k) {
  dsl::reference::GemmProblem p;
  p.m = p.n = 1;
  p.k = k;
  std::mt19937_64 rng(k);
  for (int64_t i = 0; i < k; ++i) {
    p.a.push_back(to_bits(DType::kF16, std::ldexp(1.0f + (rng() % 64) / 64.0f, int(rng() % 12) - 6)));
    p.b.push_back(to_bits(DType::kF16, (rng() & 1 ? -1.0f : 1.0f) *
                                           std::ldexp(1.0f + (rng() % 64) / 64.0f, int(rng() % 12) - 6)));
  }
  return p;
}

TEST(CublasScan, LogGridHasPowersOddNeighboursAndEnds) {
  const std::vector<int64_t> g = log_grid(1, 20, 1);
  EXPECT_EQ(g, (std::vector<int64_t>{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 20}));
  const std::vector<int64_t> g16 = log_grid(16, 100, 2, 16);
  for (int64_t v : g16) EXPECT_EQ(v % 16, 0) << v;
  EXPECT_EQ(g16.front(), 16);
  EXPECT_EQ(g16.back(), 96);  // 100 rounds up past the range; 64 * sqrt(2) = 91 rounds to 96
  const ScanGrid d = default_grid(GemmShape{});
  EXPECT_EQ(d.ms.front(), 1);
  EXPECT_EQ(d.ks.back(), int64_t{1} << 19);
  EXPECT_TRUE(log_grid(0, 5, 1).empty());
}

TEST(CublasScan, MapFindsKBoundariesAndSplitCountsExactly) {
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  int64_t progress_calls = 0, last_total = 0;
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, small_grid(), fake_heuristic,
                             [&](std::string_view, int64_t, int64_t total) {
                               ++progress_calls;
                               last_total = total;
                             })
                  .ok());
  EXPECT_EQ(progress_calls, 16);
  EXPECT_EQ(last_total, 16);
  // Variants: with split (M*N <= 256: tile 10 at M = 1, 4 and tile 15 at M = 16, 64)
  // tile x stages = 4; without split 3 (every grid output with M < 8 splits from K = 701,
  // so tile 10 never meets stages 12 unsplit). Classes: the split and the unsplit one;
  // the split count is no part of either.
  EXPECT_EQ(t.variants.size(), 7u);
  ASSERT_EQ(t.classes.size(), 2u);
  EXPECT_EQ(to_string(t.classes[0].cls), "id=66 split=0 reduction=none custom=0 inner=0");
  EXPECT_EQ(to_string(t.classes[1].cls), "id=66 split=1 reduction=compute_type custom=0 inner=0");
  ASSERT_EQ(t.maps.size(), 1u);
  EXPECT_TRUE(has(t.maps[0].refusal, "N = 3")) << t.maps[0].refusal;
  const std::string text = write_table(t);
  absl::StatusOr<CublasTable> back = parse_table(text);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
  for (int64_t m : {1, 4, 16, 64}) {
    for (int64_t n : {1, 16, 64}) {
      for (int64_t k : {1, 2, 63, 699, 700, 701, 702, 1499, 1500, 2999, 3000, 4096}) {
        const GemmShape s{.m = m, .n = n, .k = k};
        absl::StatusOr<MapRun> run = lookup_run(*back, s);
        ASSERT_TRUE(run.ok()) << m << "x" << n << "x" << k << ": " << run.status();
        const CublasAnswer want = answer_of(*fake_heuristic(s));
        EXPECT_EQ(back->variants[run->variant].key, want.key) << m << "x" << n << "x" << k;
        EXPECT_EQ(run->splitk, want.splitk) << m << "x" << n << "x" << k;
      }
    }
    absl::Status refused = lookup_run(*back, GemmShape{.m = m, .n = 3, .k = 64}).status();
    EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  }
  // A second scan of one family is refused; bad grids name the field.
  EXPECT_FALSE(scan_heuristic(t, st, GemmShape{}, small_grid(), fake_heuristic).ok());
  CublasTable t2;
  ScanGrid bad = small_grid();
  bad.ks = {4, 2};
  EXPECT_TRUE(has(scan_heuristic(t2, st, GemmShape{}, bad, fake_heuristic), "ScanGrid.ks"));
  absl::Status all_refused = scan_heuristic(
      t2, st, GemmShape{}, small_grid(),
      [](const GemmShape&) -> absl::StatusOr<AlgoConfig> { return absl::InternalError("down"); });
  EXPECT_EQ(all_refused.code(), absl::StatusCode::kFailedPrecondition) << all_refused;
}

TEST(CublasScan, ClassesCollapseAndTheSplitRuleCarriesToUnprobedShapes) {
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, small_grid(), fake_heuristic).ok());
  int probes = 0;
  const ProbeFn probe = reference_probe(
      [](const GemmShape& s, int64_t k) { return fake_truth(s.m, s.n, k); }, &probes);
  absl::StatusOr<ProbeStats> stats =
      probe_classes(t, st, probe, ProbeOptions{.max_probe_k = 1100, .fit_probes = 2});
  ASSERT_TRUE(stats.ok()) << stats.status();
  // Two probes for the unsplit class, three for the split one: 5 for 7 variants.
  EXPECT_EQ(probes, 5);
  EXPECT_EQ(stats->probes, 5);
  EXPECT_EQ(stats->splits, 0);
  EXPECT_EQ(stats->validated, 2);
  ASSERT_EQ(t.classes.size(), 2u);
  for (const TableClass& c : t.classes) {
    ASSERT_TRUE(c.desc.has_value()) << to_string(c.cls) << ": " << c.note;
    // The validation probes ran at variants that differ from the first in a speed knob.
    std::set<int> variants;
    for (const ProbePoint& p : c.probes) variants.insert(p.variant);
    EXPECT_GE(variants.size(), 2u) << to_string(c.cls);
    if (c.cls.values.split) {
      ASSERT_EQ(c.rules.size(), 1u);
      EXPECT_EQ(to_string(c.rules[0]), "split/64") << write_table(t);
      EXPECT_EQ(c.probes.size(), 3u);
    } else {
      EXPECT_TRUE(c.rules.empty());
      EXPECT_EQ(c.probes.size(), 2u);
    }
  }
  absl::StatusOr<CublasTable> back = parse_table(write_table(t));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, t);
  // K up to 4096 and split counts 4 and 5 were never probed (max_probe_k = 1100).
  for (int64_t m : {1, 4, 16}) {
    for (int64_t n : {1, 16}) {
      for (int64_t k : {2, 5, 700, 701, 777, 1000, 1499, 1500, 1999, 2999, 3000, 3001, 4096}) {
        absl::StatusOr<dsl::GemmDesc> d = lookup(*back, GemmShape{.m = m, .n = n, .k = k});
        ASSERT_TRUE(d.ok()) << d.status();
        EXPECT_EQ(*d, fake_truth(m, n, k)) << m << "x" << n << "x" << k;
      }
    }
  }
}

// A class whose visit a time limit stops keeps the probes it finished (open probes, in
// the table's text); the next scan of that table starts from them: one probe fewer in
// all than a scan from nothing (5), and the same descriptors.
TEST(CublasScan, AClassStoppedEarlyKeepsItsProbesForTheNextScan) {
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, small_grid(), fake_heuristic).ok());
  const auto truth = [](const GemmShape& s, int64_t k) { return fake_truth(s.m, s.n, k); };
  int calls = 0;
  const ProbeFn reference = reference_probe(truth, &calls);
  // The first probe finds its descriptor; every later one passes its time limit.
  const ProbeFn one_then_late = [&](const GemmShape& s, const CublasKey& key,
                                    const Descs& before) -> absl::StatusOr<dsl::GemmDesc> {
    if (calls >= 1) {
      ++calls;
      return absl::DeadlineExceededError("the probe passed its time limit of 1 s");
    }
    return reference(s, key, before);
  };
  const ProbeOptions options{.max_probe_k = 1100, .fit_probes = 2};
  absl::StatusOr<ProbeStats> stats = probe_classes(t, st, one_then_late, options);
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_EQ(t.classes.size(), 2u);
  int open = -1;
  for (size_t c = 0; c < t.classes.size(); ++c) {
    EXPECT_FALSE(t.classes[c].desc.has_value());
    EXPECT_TRUE(has(t.classes[c].note, "passed its time limit")) << t.classes[c].note;
    if (!t.classes[c].open_probes.empty()) {
      EXPECT_EQ(open, -1) << "one class got the one probe";
      open = static_cast<int>(c);
    }
  }
  ASSERT_GE(open, 0) << write_table(t);
  ASSERT_EQ(t.classes[open].open_probes.size(), 1u);
  const OpenProbe kept = t.classes[open].open_probes[0];
  const TableVariant& v = t.variants[kept.at.variant];
  EXPECT_EQ(v.cls, open);
  EXPECT_EQ(kept.desc, fake_truth(kept.at.m, kept.at.n, kept.at.k)) << dsl::to_string(kept.desc);
  // What --resume reads: the table's text.
  absl::StatusOr<CublasTable> back = parse_table(write_table(t));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(*back, t);
  calls = 0;
  std::vector<ProbePoint> points;
  // The found_before of each probe, by class: the open class's probes start from the
  // kept probe's descriptor, the other class's first probe from none.
  std::map<int, std::vector<Descs>> handed;
  const ProbeFn recorded = [&](const GemmShape& s, const CublasKey& key, const Descs& before) {
    points.push_back({.m = s.m, .n = s.n, .k = s.k});
    absl::StatusOr<int> cls = class_of_answer(*back, s, key);
    handed[cls.ok() ? *cls : -1].push_back(before);
    return reference(s, key, before);
  };
  stats = probe_classes(*back, st, recorded, options);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(calls, 4) << "5 probes from nothing, one of them kept";
  ASSERT_EQ(handed.size(), 2u);
  ASSERT_FALSE(handed[open].empty());
  EXPECT_EQ(handed[open][0], Descs{kept.desc});
  for (const Descs& before : handed[open]) {
    ASSERT_FALSE(before.empty());
    EXPECT_EQ(before[0], kept.desc);
  }
  ASSERT_FALSE(handed[1 - open].empty());
  EXPECT_TRUE(handed[1 - open][0].empty());
  EXPECT_EQ(stats->open_resumed, 1);
  EXPECT_EQ(stats->validated, 2);
  for (const ProbePoint& p : points) {
    EXPECT_FALSE(p.m == kept.at.m && p.n == kept.at.n && p.k == kept.at.k) << "the kept point is not probed again";
  }
  const TableClass& c = back->classes[open];
  ASSERT_TRUE(c.desc.has_value()) << c.note;
  EXPECT_TRUE(c.open_probes.empty());
  ASSERT_FALSE(c.probes.empty());
  EXPECT_EQ(c.probes[0], kept.at) << "the kept probe is the class's first";
  for (int64_t k : {2, 5, 700, 701, 1499, 1500, 3001, 4096}) {
    absl::StatusOr<dsl::GemmDesc> d = lookup(*back, GemmShape{.m = 1, .n = 1, .k = k});
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(*d, fake_truth(1, 1, k)) << k;
  }
}

// Variants whose stages are 13 (K < 2048) run a sequential fma chain instead of the
// MMA: the first probe (the most-used variant) and the second (a variant differing in
// the most speed knobs) disagree, and the class is split by tile and stages.
absl::StatusOr<AlgoConfig> plain_heuristic(const GemmShape& s) {
  absl::StatusOr<AlgoConfig> r = fake_heuristic(s);
  if (!r.ok()) return r;
  AlgoConfig a = *r;
  a.splitk_num = 0;
  a.reduction_scheme = 0;
  return a;
}

dsl::GemmDesc stages_truth(const GemmShape&, int64_t k) {
  return k < 2048 ? fma_chain() : dsl::GemmDesc{};
}

TEST(CublasScan, ADisagreementSplitsTheClassByTheFinerFields) {
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, small_grid(), plain_heuristic).ok());
  ASSERT_EQ(t.classes.size(), 1u);
  ASSERT_EQ(t.variants.size(), 4u);
  int probes = 0;
  absl::StatusOr<ProbeStats> stats = probe_classes(
      t, st, reference_probe(stages_truth, &probes), ProbeOptions{.max_probe_k = 4096});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->splits, 1);
  EXPECT_EQ(stats->validated, 4);
  EXPECT_EQ(stats->failed, 0);
  // One class per (tile, stages); the two probes of the first class fall into two of
  // the parts and are reused there, so 2 before the split and 4 * 2 - 2 after it.
  ASSERT_EQ(t.classes.size(), 4u);
  EXPECT_EQ(probes, 8);
  for (size_t i = 0; i < t.classes.size(); ++i) {
    const TableClass& c = t.classes[i];
    EXPECT_EQ(c.cls.mask, kCoarseFields | field_bit(KeyField::kTile) | field_bit(KeyField::kStages))
        << to_string(c.cls);
    EXPECT_TRUE(has(c.note, "split from class {id=66 split=0 reduction=none custom=0 inner=0}"))
        << c.note;
    EXPECT_TRUE(c.desc.has_value()) << c.note;
  }
  absl::StatusOr<CublasTable> back = parse_table(write_table(t));
  ASSERT_TRUE(back.ok()) << back.status();
  for (int64_t m : {1, 5, 16, 64}) {
    for (int64_t n : {1, 16, 63, 64}) {
      for (int64_t k : {3, 700, 2047, 2048, 4095}) {
        const GemmShape s{.m = m, .n = n, .k = k};
        absl::StatusOr<dsl::GemmDesc> d = lookup(*back, s);
        ASSERT_TRUE(d.ok()) << d.status();
        EXPECT_EQ(*d, stages_truth(s, k)) << m << "x" << n << "x" << k;
      }
    }
  }
}

// One variant (no knob changes) whose descriptor changes with K: no field can split
// the class, so it keeps no descriptor, and the lookup says why.
TEST(CublasScan, AVariantThatDependsOnKBeyondAnyRuleKeepsNoDescriptor) {
  const HeuristicFn one = always(AlgoConfig{.id = 13});
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, small_grid(), one).ok());
  ASSERT_EQ(t.variants.size(), 1u);
  int probes = 0;
  const auto truth = [](const GemmShape&, int64_t k) {
    return k < 300 ? fma_chain() : dsl::GemmDesc{};
  };
  absl::StatusOr<ProbeStats> stats =
      probe_classes(t, st, reference_probe(truth, &probes),
                    ProbeOptions{.min_probe_k = 256, .max_probe_k = 1100});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->failed, 1);
  EXPECT_EQ(stats->splits, 0);
  ASSERT_EQ(t.classes.size(), 1u);
  EXPECT_FALSE(t.classes[0].desc.has_value());
  EXPECT_TRUE(has(t.classes[0].note, "variants are equal")) << t.classes[0].note;
  // The grid gives it K = 512 in range and K = 64 below: the two probes.
  EXPECT_EQ(probes, 2);
  absl::Status s = lookup(t, GemmShape{.m = 1, .n = 1, .k = 700}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(has(s, "class id=13 tile=0 split=0") && has(s, "variants are equal"))
      << s;
}

// One variant whose kernel computes one tree where both K vectors are contiguous (N = 1
// for nn) and another where B's are strided (class 114 of session 38: two contiguous
// halves at N = 1, strided lanes at M = 1): a probe at the other layout bounds the class
// to the layout of most of its scanned points (KLayout) instead of taking its
// descriptor away, whichever layout was probed first; the lookup serves that layout, and
// the other with the tree the probes there found (OtherLayout, session 42), while each
// given point there reproduces it.
TEST(CublasScan, AProbeAtTheOtherLayoutBoundsTheClassToItsMainLayout) {
  const HeuristicFn one = always(AlgoConfig{.id = 13, .custom_option = 56});
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  const ScanGrid grid{.ms = {1, 4, 16}, .ns = {1}, .ks = {64, 512, 2048}};
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, grid, one).ok());
  ASSERT_EQ(t.variants.size(), 1u);
  const auto truth = [](const GemmShape& s, int64_t) {
    return s.n == 1 || s.m > 1 ? fma_chain() : dsl::GemmDesc{};
  };
  int probes = 0;
  ASSERT_TRUE(probe_classes(t, st, reference_probe(truth, &probes),
                            ProbeOptions{.max_probe_k = 4096})
                  .ok());
  ASSERT_TRUE(t.classes[0].desc.has_value()) << t.classes[0].note;
  EXPECT_EQ(t.classes[0].layout, KLayout::kAny);
  const int before = probes;
  // The map's cells are all N = 1; a point at M = 1, N = 32 comes as a given point.
  absl::StatusOr<ProbeStats> again = probe_classes(
      t, st, reference_probe(truth, &probes),
      ProbeOptions{.max_probe_k = 4096,
                   .extra_points = {{0, {ProbePoint{.variant = 0, .m = 1, .n = 32, .k = 700}}}}});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->failed, 0);
  EXPECT_EQ(again->splits, 0);
  EXPECT_GT(probes, before);
  ASSERT_EQ(t.classes.size(), 1u);
  const TableClass& c = t.classes[0];
  ASSERT_TRUE(c.desc.has_value()) << c.note;
  EXPECT_EQ(c.layout, KLayout::kContiguous);
  EXPECT_TRUE(has(c.note, "holds only where the K vectors are contiguous") && has(c.note, "1x32x700"))
      << c.note;
  for (const ProbePoint& p : c.probes) EXPECT_EQ(p.n, 1) << p.m << "x" << p.n << "x" << p.k;
  absl::StatusOr<CublasTable> back = parse_table(write_table(t));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, t);
  EXPECT_TRUE(has(write_table(t), "layout@contiguous"));
  for (int64_t m : {1, 4, 16}) {
    absl::StatusOr<dsl::GemmDesc> d = lookup_answer(
        *back, GemmShape{.m = m, .n = 1, .k = 700}, CublasAnswer{t.variants[0].key, 1});
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(*d, *c.desc);  // the probe's form of fma_chain's tree
  }
  // The strided probe's tree is the class's there (it has no K cuts), at any K.
  ASSERT_TRUE(c.other.has_value()) << c.note;
  EXPECT_TRUE(c.other->desc.k_cuts.empty());
  EXPECT_EQ(c.other->probes.size(), 1u);
  EXPECT_TRUE(has(write_table(t), "\nother\t0\t0@1x32x700/1\t")) << write_table(t);
  for (int64_t k : {5, 700, 3000}) {
    absl::StatusOr<dsl::GemmDesc> d = lookup_answer(*back, GemmShape{.m = 1, .n = 32, .k = k},
                                                    CublasAnswer{t.variants[0].key, 1});
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(*d, c.other->desc) << k;
  }
  // Probed again with a strided point given: probed for the other layout's tree, which
  // reproduces it; the bound and the descriptor stand.
  const ProbeFn inner = reference_probe(truth, &probes);
  int strided = 0;
  const ProbeFn counting = [&](const GemmShape& s, const CublasKey& key, const Descs& before) {
    strided += s.n != 1;
    return inner(s, key, before);
  };
  ASSERT_TRUE(probe_classes(t, st, counting,
                            ProbeOptions{.max_probe_k = 4096, .revalidate = 4,
                                         .extra_points = {{0, {ProbePoint{.variant = 0, .m = 1,
                                                                          .n = 32, .k = 900}}}}})
                  .ok());
  EXPECT_EQ(t.classes[0].layout, KLayout::kContiguous);
  ASSERT_TRUE(t.classes[0].desc.has_value()) << t.classes[0].note;
  for (const ProbePoint& p : t.classes[0].probes) EXPECT_EQ(p.n, 1) << p.m << "x" << p.n << "x" << p.k;
  EXPECT_EQ(strided, 1);
  ASSERT_TRUE(t.classes[0].other.has_value()) << t.classes[0].note;
  EXPECT_EQ(t.classes[0].other->probes.size(), 2u);
  EXPECT_EQ(t.classes[0].other->probes[1].k, 900);
  // A strided point where the kernel computes yet another tree (fma_chain's at K = 1100):
  // the class keeps no tree there, says why, and the lookup refuses that layout again.
  const auto truth2 = [&](const GemmShape& s, int64_t k) {
    return s.n != 1 && s.m == 1 && k == 1100 ? fma_chain() : truth(s, k);
  };
  ASSERT_TRUE(probe_classes(t, st, reference_probe(truth2, &probes),
                            ProbeOptions{.max_probe_k = 4096, .revalidate = 5,
                                         .extra_points = {{0, {ProbePoint{.variant = 0, .m = 1,
                                                                          .n = 32, .k = 1100}}}}})
                  .ok());
  ASSERT_TRUE(t.classes[0].desc.has_value()) << t.classes[0].note;
  EXPECT_FALSE(t.classes[0].other.has_value());
  EXPECT_TRUE(has(t.classes[0].note, "no tree where the K vectors are not contiguous") &&
              has(t.classes[0].note, "1x32x1100"))
      << t.classes[0].note;
  absl::Status s = lookup_answer(t, GemmShape{.m = 1, .n = 32, .k = 700},
                                 CublasAnswer{t.variants[0].key, 1})
                       .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(has(s, "only where the K vectors are contiguous") && has(s, "they are strided")) << s;

  // A class probed first at the other layout (the strided point given, then the grid's
  // N = 1 points): bounded to N = 1 all the same, where all of its scanned points are.
  CublasTable fresh{.arch = "sm_90"};
  ScanState fst;
  ASSERT_TRUE(scan_heuristic(fresh, fst, GemmShape{}, grid, one).ok());
  absl::StatusOr<ProbeStats> first_strided = probe_classes(
      fresh, fst, reference_probe(truth, &probes),
      ProbeOptions{.max_probe_k = 4096,
                   .extra_points = {{0, {ProbePoint{.variant = 0, .m = 1, .n = 32, .k = 700}}}}});
  ASSERT_TRUE(first_strided.ok()) << first_strided.status();
  const TableClass& f = fresh.classes[0];
  ASSERT_TRUE(f.desc.has_value()) << f.note;
  EXPECT_EQ(f.layout, KLayout::kContiguous);
  EXPECT_TRUE(has(f.note, "at variant 0 at 1x32x700/1 they are not")) << f.note;
  EXPECT_GE(f.probes.size(), 2u);
  for (const ProbePoint& p : f.probes) EXPECT_EQ(p.n, 1) << p.m << "x" << p.n << "x" << p.k;
  EXPECT_TRUE(parse_table(write_table(fresh)).ok());
}

// Class 114's two trees as session 38's probes found them: a chain where the K vectors
// are contiguous (N = 1) and, at M = 1 with B strided, 2 strided lanes of 64 folded once.
// The strided probe that bounds the class gives it that tree (OtherLayout); the points
// session 42 gives there (K = 216, 95, 61: at 61 lane 1 has nothing) each reproduce it,
// and the lookup serves it at any K.
TEST(CublasScan, TwoStridedLanesOfSixtyFourAreTheOtherLayoutsTreeAtEveryK) {
  // capped: a kernel whose 2 lanes' tile would follow K up to 64 instead (ceil(K / 2)):
  // its probe at K = 478 looks the same, and the short-K points must drop the tree.
  for (const bool capped : {false, true}) {
    const HeuristicFn one = always(AlgoConfig{.id = 13, .custom_option = 56});
    CublasTable t{.arch = "sm_90"};
    ScanState st;
    ASSERT_TRUE(scan_heuristic(t, st, GemmShape{},
                               ScanGrid{.ms = {1, 4, 16}, .ns = {1}, .ks = {64, 512, 2048}}, one)
                    .ok());
    const auto truth = [capped](const GemmShape& s, int64_t k) {
      if (s.n == 1 || s.m > 1) return fma_chain();
      dsl::GemmDesc d = fma_chain();
      d.family = dsl::GemmFamily::kGemv;
      d.lane_layout = dsl::LaneLayout::kStrided;
      d.lanes = 2;
      d.lane_tile = static_cast<int>(capped ? std::min<int64_t>(64, (k + 1) / 2) : 64);
      d.lane_fold = {1};
      return d;
    };
    int probes = 0;
    auto at = [](int64_t k) { return ProbePoint{.variant = 0, .m = 1, .n = 32, .k = k}; };
    for (std::vector<ProbePoint> given : {std::vector<ProbePoint>{},
                                          std::vector<ProbePoint>{at(478)},
                                          std::vector<ProbePoint>{at(216), at(95), at(61)}}) {
      absl::StatusOr<ProbeStats> stats = probe_classes(
          t, st, reference_probe(truth, &probes),
          ProbeOptions{.max_probe_k = 4096, .revalidate = given.empty() ? 0 : 4,
                       .extra_points = {{0, given}}});
      ASSERT_TRUE(stats.ok()) << stats.status();
    }
    const TableClass& c = t.classes[0];
    ASSERT_TRUE(c.desc.has_value()) << c.note;
    EXPECT_EQ(c.layout, KLayout::kContiguous);
    if (capped) {
      EXPECT_FALSE(c.other.has_value()) << c.note;
      EXPECT_TRUE(has(c.note, "no tree where the K vectors are not contiguous")) << c.note;
      EXPECT_EQ(lookup_answer(t, GemmShape{.m = 1, .n = 700, .k = 61},
                              CublasAnswer{t.variants[0].key, 1})
                    .status()
                    .code(),
                absl::StatusCode::kFailedPrecondition);
      continue;
    }
    ASSERT_TRUE(c.other.has_value()) << c.note;
    ASSERT_EQ(c.other->probes.size(), 4u) << c.note;
    EXPECT_EQ(c.other->probes[0].k, 478);
    for (int64_t k : {1, 61, 64, 65, 95, 128, 478, 5000}) {
      const GemmShape s{.m = 1, .n = 700, .k = k};
      absl::StatusOr<dsl::GemmDesc> d = lookup_answer(t, s, CublasAnswer{t.variants[0].key, 1});
      ASSERT_TRUE(d.ok()) << k << ": " << d.status();
      EXPECT_EQ(*d, c.other->desc) << k;
    }
    absl::StatusOr<CublasTable> back = parse_table(write_table(t));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, t);
  }
}

// Revalidation with a short-K probe (ProbeOptions.revalidate, small_probe_k): a class
// validated by two probes at K >= 256 whose kernel takes another path at small K (the
// H200 match found such 1-ulp differences at K = 25 and 57) loses its descriptor when
// probed again at K = 64; the same revalidation of a class right at every K keeps it.
TEST(CublasScan, RevalidationAtShortKDropsADescriptorThatHeldOnlyAtLongK) {
  const HeuristicFn one = always(AlgoConfig{.id = 24});
  for (const bool short_path : {true, false}) {
    SCOPED_TRACE(short_path ? "short-K path differs" : "same at every K");
    CublasTable t{.arch = "sm_90"};
    ScanState st;
    ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, small_grid(), one).ok());
    ASSERT_EQ(t.classes.size(), 1u);
    const auto truth = [short_path](const GemmShape&, int64_t k) {
      return short_path && k < 100 ? fma_chain() : dsl::GemmDesc{};
    };
    int probes = 0;
    absl::StatusOr<ProbeStats> first =
        probe_classes(t, st, reference_probe(truth, &probes), ProbeOptions{.max_probe_k = 4096});
    ASSERT_TRUE(first.ok()) << first.status();
    ASSERT_TRUE(t.classes[0].desc.has_value()) << t.classes[0].note;  // 2 probes, K >= 512
    ASSERT_EQ(t.classes[0].probes.size(), 2u);
    for (const ProbePoint& p : t.classes[0].probes) EXPECT_GE(p.k, 256);
    EXPECT_EQ(probes, 2);
    // Without revalidation nothing is probed again.
    ASSERT_TRUE(probe_classes(t, st, reference_probe(truth, &probes), ProbeOptions{.max_probe_k = 4096}).ok());
    EXPECT_EQ(probes, 2);
    // A revalidation the budget cuts short keeps the descriptor it had.
    {
      CublasTable cut = t;
      absl::StatusOr<ProbeStats> spent = probe_classes(
          cut, st, reference_probe(truth, &probes),
          ProbeOptions{.max_probe_k = 4096, .budget_s = -1, .revalidate = 3, .small_probe_k = 16});
      ASSERT_TRUE(spent.ok()) << spent.status();
      EXPECT_EQ(probes, 2);
      ASSERT_TRUE(cut.classes[0].desc.has_value()) << cut.classes[0].note;
      EXPECT_EQ(*cut.classes[0].desc, *t.classes[0].desc);
      EXPECT_EQ(cut.classes[0].probes, t.classes[0].probes);
      EXPECT_TRUE(has(cut.classes[0].note, "revalidation not finished")) << cut.classes[0].note;
    }

    absl::StatusOr<ProbeStats> again = probe_classes(
        t, st, reference_probe(truth, &probes),
        ProbeOptions{.max_probe_k = 4096, .revalidate = 3, .small_probe_k = 16});
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->revalidated, 1);
    EXPECT_EQ(probes, 3);  // one new probe, at the grid's short K
    const TableClass& c = t.classes[0];
    if (short_path) {
      EXPECT_FALSE(c.desc.has_value());
      EXPECT_TRUE(has(c.note, "variants are equal") && has(c.note, "x64/1")) << c.note;
      EXPECT_EQ(lookup(t, GemmShape{.m = 1, .n = 1, .k = 700}).status().code(),
                absl::StatusCode::kFailedPrecondition);
    } else {
      ASSERT_TRUE(c.desc.has_value()) << c.note;
      ASSERT_EQ(c.probes.size(), 3u);
      EXPECT_EQ(c.probes[2].k, 64);
      EXPECT_TRUE(has(c.note, "revalidated; 3 probe(s) agree")) << c.note;
      absl::StatusOr<dsl::GemmDesc> d = lookup(t, GemmShape{.m = 1, .n = 1, .k = 70});
      ASSERT_TRUE(d.ok()) << d.status();
      EXPECT_EQ(*d, dsl::GemmDesc{});
    }
  }
}

// A class met only at K = 1 (session 13's class 66, id 12 custom 1) is probed there,
// where only the random draws can judge; a class with any point at K >= 3 never takes
// K = 1 or 2 (a walkless probe is no validation).
TEST(CublasScan, AClassMetOnlyAtKOneIsProbedThere) {
  const auto plain = [](const GemmShape&, int64_t) { return dsl::GemmDesc{}; };
  for (const bool only_short : {true, false}) {
    const ScanGrid grid{.ms = {1, 4}, .ns = {1, 3},
                        .ks = only_short ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 2, 300}};
    CublasTable t{.arch = "sm_90"};
    ScanState st;
    std::vector<int64_t> ks;
    ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, grid, always(AlgoConfig{.id = 12})).ok());
    const ProbeFn probe = [&](const GemmShape& s, const CublasKey& key, const Descs& before) {
      ks.push_back(s.k);
      return probe_key([](const dsl::reference::GemmProblem& p) {
        return dsl::reference::gemm(dsl::GemmDesc{}, p);
      }, s, key, dsl::Instruction::kMmaSync);
    };
    ASSERT_TRUE(probe_classes(t, st, probe, ProbeOptions{.class_probes = only_short ? 1 : 2}).ok());
    ASSERT_FALSE(ks.empty()) << "the class was not probed";
    if (only_short) {
      EXPECT_EQ(ks, std::vector<int64_t>{1});
      ASSERT_TRUE(t.classes[0].desc.has_value()) << t.classes[0].note;
      ASSERT_NO_FATAL_FAILURE(expect_reproduces(t, plain(GemmShape{}, 1), {1}));
    } else {
      for (int64_t k : ks) EXPECT_GE(k, 3);
    }
  }
}

// A point over max_probe_mnk loses to any other point of the class, whatever its K.
TEST(CublasScan, HugeProbeShapesAreTakenLast) {
  const HeuristicFn one = always(AlgoConfig{.id = 24});
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, small_grid(), one).ok());
  std::vector<int64_t> ks;
  const ProbeFn probe = [&](const GemmShape& s, const CublasKey&,
                            const Descs&) -> absl::StatusOr<dsl::GemmDesc> {
    ks.push_back(s.m * s.n * s.k);
    return dsl::GemmDesc{};
  };
  // Every point of the small grid has M = N = 64 (the cell with the most placements per
  // launch, better_probe_cell), so M*N*K = 4096 K. With the cap at 4096 * 600: K = 512
  // first (in range), then K = 64 (under the cap, though below min_probe_k), and only
  // then a point over the cap (2048 or 4096).
  ASSERT_TRUE(probe_classes(t, st, probe,
                            ProbeOptions{.max_probe_k = 4096, .class_probes = 3,
                                         .max_probe_mnk = 4096 * 600}).ok());
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_EQ(ks[0], 4096 * 512);
  EXPECT_EQ(ks[1], 4096 * 64);
  EXPECT_GT(ks[2], 4096 * 600);
  // Without the cap the chooser stays in range: 512, 2048, 4096 in some order.
  ks.clear();
  CublasTable t2{.arch = "sm_90"};
  ScanState st2;
  ASSERT_TRUE(scan_heuristic(t2, st2, GemmShape{}, small_grid(), one).ok());
  ASSERT_TRUE(probe_classes(t2, st2, probe, ProbeOptions{.max_probe_k = 4096, .class_probes = 3}).ok());
  ASSERT_EQ(ks.size(), 3u);
  for (int64_t k : ks) EXPECT_GE(k, 4096 * 512);
}

// The cell a (K, P) is probed at: the most placements per launch (min(M, 128) *
// min(N, 128)), then the smallest M*N. 97 x 3 answers 291 placements a launch, 128 x
// 128 answers 16384; 16384 x 16384 answers no more than 128 x 128 and costs more.
TEST(CublasScan, ProbesRunAtTheCellWithTheMostPlacementsPerLaunch) {
  const ScanGrid grid{.ms = {1, 97, 128, 16384}, .ns = {1, 3, 128, 16384}, .ks = {300}};
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, grid, always(AlgoConfig{.id = 24})).ok());
  ASSERT_EQ(st.shapes.size(), 1u);
  ASSERT_EQ(st.shapes[0].points.size(), 1u);
  const std::pair<int64_t, int64_t> mn = st.shapes[0].points.begin()->second;
  EXPECT_EQ(mn, (std::pair<int64_t, int64_t>{128, 128}));
  // rebuild_shapes (--resume) chooses the same cell from the map.
  ScanState again;
  ASSERT_TRUE(rebuild_shapes(t, again, 2, {}).ok());
  ASSERT_EQ(again.shapes.size(), 1u);
  bool found = false;
  for (const auto& [kp, cell] : again.shapes[0].points) {
    if (kp.first == 300) {
      found = true;
      EXPECT_EQ(cell, (std::pair<int64_t, int64_t>{128, 128}));
    }
  }
  EXPECT_TRUE(found);
}

TEST(CublasScan, RevalidationOptionsAreChecked) {
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  int probes = 0;
  const ProbeFn probe = reference_probe([](const GemmShape&, int64_t) { return dsl::GemmDesc{}; }, &probes);
  absl::StatusOr<ProbeStats> r = probe_classes(t, st, probe, ProbeOptions{.revalidate = -1});
  EXPECT_TRUE(!r.ok() && has(r.status(), "ProbeOptions.revalidate")) << r.status();
  r = probe_classes(t, st, probe, ProbeOptions{.min_probe_k = 256, .small_probe_k = 300});
  EXPECT_TRUE(!r.ok() && has(r.status(), "ProbeOptions.small_probe_k")) << r.status();
  r = probe_classes(t, st, probe, ProbeOptions{.small_probe_k = 2});
  EXPECT_TRUE(!r.ok() && has(r.status(), "ProbeOptions.small_probe_k")) << r.status();
}

// A K-loop step one probe cannot see: at K = 480 = 10 x 48 the step-48 loop has no short
// turn and recovers as the canonical step 0; at K = 1000 the short turn of 40 shows it.
// The class keeps the descriptor that explains both (the H200's id 23 classes split so).
TEST(CublasScan, AFieldOneKCannotSeeIsExplainedByTheProbeThatSawIt) {
  dsl::GemmDesc step48;  // mma_sync ik 16, fast accumulation
  step48.k_loop_step = {48, dsl::ShortTurn::kFirst};
  const ScanGrid grid{.ms = {1, 4}, .ns = {1, 3}, .ks = {1, 2, 64, 480, 1000}};
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  int probes = 0;
  absl::StatusOr<ProbeStats> stats = scan_and_probe(
      t, st, AlgoConfig{.id = 23}, grid,
      [&](const GemmShape&, int64_t) { return step48; },
      ProbeOptions{.max_probe_k = 4096}, &probes);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(probes, 2);
  const TableClass& c = t.classes[0];
  ASSERT_TRUE(c.desc.has_value()) << c.note;
  EXPECT_EQ(*c.desc, step48);
  ASSERT_EQ(c.probes.size(), 2u);
  EXPECT_EQ(c.probes[0].k, 1000);  // the probe that saw the step is the class's base
  // The step-0 descriptor does not explain K = 1000: the same pair the other way round
  // is a real disagreement.
  dsl::probe::ProbeOptions o;
  o.k = 1000;
  std::string why;
  absl::StatusOr<bool> r = dsl::probe::reproduces(dsl::GemmDesc{}, step48, o, &why);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(*r);
  o.k = 480;
  r = dsl::probe::reproduces(dsl::GemmDesc{}, step48, o, &why);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(*r) << why;
  // A lookup at a K with a short turn gives step 48.
  absl::StatusOr<dsl::GemmDesc> d = lookup(t, GemmShape{.m = 1, .n = 1, .k = 700});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->k_loop_step.step, 48);
}

// Steps the probes cannot tell apart: a kernel that walks K by 64 with the short turn
// first, probed at K = 257 and 25 (257 mod 64 = 257 mod 32, one short turn of 25 for
// both), is explained by step 32 as well, which base_of would take. The class gets one
// more probe at a K of its own where the two group the products differently (57), and
// keeps step 64 (device run 2 of session 7: the wmma 32x32_64x1 kernel).
TEST(CublasScan, StepsTheProbesCannotTellApartGetASeparatingProbe) {
  dsl::GemmDesc step64;
  step64.k_loop_step = {64, dsl::ShortTurn::kFirst};
  const ScanGrid grid{.ms = {1, 4}, .ns = {1, 3}, .ks = {1, 2, 25, 57, 257}};
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  int probes = 0;
  absl::StatusOr<ProbeStats> stats = scan_and_probe(
      t, st, AlgoConfig{.id = 24, .tile_id = 11}, grid,
      [&](const GemmShape&, int64_t) { return step64; },
      ProbeOptions{.max_probe_k = 4096, .small_probe_k = 16}, &probes);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(probes, 3);
  EXPECT_EQ(stats->separating, 1);
  const TableClass& c = t.classes[0];
  ASSERT_TRUE(c.desc.has_value()) << c.note;
  ASSERT_EQ(c.probes.size(), 3u);
  ASSERT_NO_FATAL_FAILURE(expect_reproduces(t, step64, {57, 100, 121}));
  // Without the separating point the class would keep step 32, which K = 57 tells apart.
  dsl::GemmDesc step32 = step64;
  step32.k_loop_step.step = 32;
  dsl::probe::ProbeOptions o;
  o.k = 57;
  std::string why;
  absl::StatusOr<bool> same = dsl::probe::reproduces(step32, step64, o, &why);
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(*same) << "K = 57 must tell step 32 from step 64, or the test proves nothing";
}

// The same class on a grid whose K values all have K mod 64 = K mod 32 (17, 257, 259:
// session 8's device run 1, where the wmma class kept step 32): no grid point separates
// step 32 from 64. With the heuristic to check points against (ProbeOptions::heuristic),
// the separating probe takes a K between grid points inside the class's map run and
// finds step 64; a heuristic that answers another algorithm there makes that point an
// instrument failure, and the class keeps what its probes give.
TEST(CublasScan, TheSeparatingProbeTakesAKBetweenGridPointsCheckedByTheHeuristic) {
  dsl::GemmDesc step64;
  step64.k_loop_step = {64, dsl::ShortTurn::kFirst};
  const ScanGrid grid{.ms = {1, 4}, .ns = {1, 3}, .ks = {1, 2, 17, 257, 259}};
  const AlgoConfig wmma{.id = 24, .tile_id = 11};
  auto truth = [&](const GemmShape&, int64_t) { return step64; };
  auto k_of_probe = [](const CublasTable& t) {
    std::set<int64_t> ks;
    for (const ProbePoint& p : t.classes[0].probes) ks.insert(p.k);
    return ks;
  };
  {  // grid points only: nothing separates, the class keeps a step that K = 57 refutes
    CublasTable t{.arch = "sm_90"};
    ScanState st;
    int probes = 0;
    absl::StatusOr<ProbeStats> stats = scan_and_probe(
        t, st, wmma, grid, truth, ProbeOptions{.max_probe_k = 4096, .small_probe_k = 16}, &probes);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->separating, 0);
    ASSERT_TRUE(t.classes[0].desc.has_value()) << t.classes[0].note;
    EXPECT_NE(t.classes[0].desc->k_loop_step.step, 64) << "the grid alone told the steps apart: "
                                                          "the test below proves nothing";
    // Probing the same table again with the heuristic (a --resume): the validated class
    // is revalidated for its separating point alone and ends with step 64 (not with
    // separate_validated off).
    ProbeOptions o{.max_probe_k = 4096, .small_probe_k = 16};
    o.heuristic = always(wmma);
    o.separate_validated = false;
    probes = 0;
    stats = probe_classes(t, st, reference_probe(truth, &probes), o);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->revalidated, 0);
    EXPECT_EQ(probes, 0);
    o.separate_validated = true;
    stats = probe_classes(t, st, reference_probe(truth, &probes), o);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->revalidated, 1);
    EXPECT_GE(stats->separating, 1);
    EXPECT_EQ(probes, stats->separating);
    ASSERT_TRUE(t.classes[0].desc.has_value()) << t.classes[0].note;
    EXPECT_EQ(t.classes[0].desc->k_loop_step.step, 64) << *t.classes[0].desc;
  }
  {  // with the heuristic: separating probes (at most 3) off the grid, and step 64
    CublasTable t{.arch = "sm_90"};
    ScanState st;
    int probes = 0, asked = 0;
    ProbeOptions o{.max_probe_k = 4096, .small_probe_k = 16};
    o.heuristic = [&](const GemmShape& s) -> absl::StatusOr<AlgoConfig> {
      ++asked;
      return always(wmma)(s);
    };
    absl::StatusOr<ProbeStats> stats = scan_and_probe(t, st, wmma, grid, truth, o, &probes);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_GE(stats->separating, 1);
    EXPECT_LE(stats->separating, 3);
    EXPECT_EQ(asked, probes);
    const TableClass& c = t.classes[0];
    ASSERT_TRUE(c.desc.has_value()) << c.note;
    const std::set<int64_t> ks = k_of_probe(t);
    // two grid points (class_probes) and the separating ones
    EXPECT_EQ(static_cast<int64_t>(ks.size()), 2 + stats->separating);
    int off_grid = 0, tells_32_from_64 = 0;
    for (int64_t k : ks) {
      if (k == 17 || k == 257 || k == 259) continue;
      ++off_grid;
      tells_32_from_64 += k % 64 != k % 32;
    }
    EXPECT_EQ(off_grid, stats->separating);
    EXPECT_GE(tells_32_from_64, 1);
    ASSERT_NO_FATAL_FAILURE(expect_reproduces(t, step64, {57, 100, 121}));
  }
  {  // the heuristic answers another algorithm off the grid: no evidence, no probe there
    CublasTable t{.arch = "sm_90"};
    ScanState st;
    int probes = 0;
    const std::set<int64_t> grid_ks(grid.ks.begin(), grid.ks.end());
    ProbeOptions o{.max_probe_k = 4096, .small_probe_k = 16};
    o.heuristic = [&](const GemmShape& s) -> absl::StatusOr<AlgoConfig> {
      if (grid_ks.count(s.k)) return wmma;
      return AlgoConfig{.id = 23, .tile_id = 11};
    };
    absl::StatusOr<ProbeStats> stats = scan_and_probe(t, st, wmma, grid, truth, o, &probes);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_GE(stats->separating, 1);
    EXPECT_EQ(stats->instrument_errors, stats->separating);
    const TableClass& c = t.classes[0];
    ASSERT_TRUE(c.desc.has_value()) << c.note;
    EXPECT_EQ(k_of_probe(t).size(), 2u);
    EXPECT_TRUE(has(c.note, "heuristic answers id=23")) << c.note;
  }
}

// A split class whose span is ceil(K/3) rounded up to 64 where K is a multiple of 64
// and to 8 elsewhere (split/8/64: session 8's replay of the id 23 tile 11 split
// classes), probed where both give the same span (K = 190, 382, 4096): the fit takes
// split/64, the separating probes (off the grid, checked by the heuristic; at most 3,
// each at the point that rules out the most fitting rules) find K where the aligned
// forms differ, and the class ends with split/8/64.
TEST(CublasScan, AnAlignedSplitGranuleGetsASeparatingProbe) {
  const SpanRule truth_rule{.kind = SpanRule::Kind::kSplit, .granule = 8, .aligned = 64};
  auto truth = [&](const GemmShape&, int64_t k) {
    dsl::GemmDesc d;
    d.family = dsl::GemmFamily::kSplitK;
    d.k_cuts = {{apply_span_rule(truth_rule, 0, k, 3), dsl::Fold::kChain}};
    return d;
  };
  const ScanGrid grid{.ms = {1, 4}, .ns = {1, 3}, .ks = {1, 2, 190, 382, 4096}};
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  int probes = 0;
  ProbeOptions o{.max_probe_k = 4096, .small_probe_k = 16};
  o.heuristic = always(kSplit3);
  absl::StatusOr<ProbeStats> stats = scan_and_probe(t, st, kSplit3, grid, truth, o, &probes);
  ASSERT_TRUE(stats.ok()) << stats.status();
  const TableClass& c = t.classes[0];
  ASSERT_TRUE(c.desc.has_value()) << c.note;
  std::string where;
  for (const ProbePoint& p : c.probes) where += absl::StrFormat(" %d/%d", p.k, p.splitk);
  EXPECT_GE(stats->separating, 1) << c.note << where;
  EXPECT_LE(stats->separating, 3) << c.note << where;
  ASSERT_EQ(c.rules.size(), 1u);
  EXPECT_EQ(to_string(c.rules[0]), "split/8/64") << where;
  ASSERT_NO_FATAL_FAILURE(expect_spans(t, truth, {100, 1000, 2000, 2048, 3001}));
  // split/64 alone gives another span at K = 1000, or the test proves nothing.
  EXPECT_NE(apply_span_rule(SpanRule{.kind = SpanRule::Kind::kSplit, .granule = 64}, 0, 1000, 3),
            truth(GemmShape{}, 1000).k_cuts[0].span);

  // The same truth probed where the fit takes split/8 (K = 70, 382, 1000: spans 24, 128,
  // 336, no K a multiple of 16): its alignment exceptions split/8/A are the alternatives
  // (session 8's replays: split/8 classes that round to 64 at K = 1664, 2560, 31744).
  const ScanGrid grid8{.ms = {1, 4}, .ns = {1, 3}, .ks = {1, 2, 70, 382, 1000}};
  CublasTable t8{.arch = "sm_90"};
  ScanState st8;
  probes = 0;
  stats = scan_and_probe(t8, st8, kSplit3, grid8, truth, o, &probes);
  ASSERT_TRUE(stats.ok()) << stats.status();
  const TableClass& c8 = t8.classes[0];
  ASSERT_TRUE(c8.desc.has_value()) << c8.note;
  EXPECT_GE(stats->separating, 1) << c8.note;
  ASSERT_EQ(c8.rules.size(), 1u);
  EXPECT_EQ(to_string(c8.rules[0]), "split/8/64");
  ASSERT_NO_FATAL_FAILURE(expect_spans(t8, truth, {128, 256, 448, 640, 1000}));  // the grid runs to K = 1000
}

// A class waiting for its revalidation keeps its descriptor, probes and note until its
// visit writes its outcome, so a table saved meanwhile (the sample saves every 30 s
// between probes; session 8's device run 3 was killed at its time limit) has them:
// while a class's probes run, that class and the other one still have their
// descriptors and notes.
// Two classes: id 66 at M >= 4, id 24 at M = 1 (grid K 1, 2, 17, 257, 259); two_ids is
// the heuristic that answers so.
const HeuristicFn two_ids = [](const GemmShape& s) -> absl::StatusOr<AlgoConfig> {
  return AlgoConfig{.id = s.m >= 4 ? 66 : 24};
};
void scan_two_ids(CublasTable& t, ScanState& st) {
  const ScanGrid grid{.ms = {1, 4, 16}, .ns = {1, 16}, .ks = {1, 2, 17, 257, 259}};
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, grid, two_ids).ok());
  ASSERT_EQ(t.classes.size(), 2u);
}

TEST(CublasScan, AClassWaitingForItsRevalidationKeepsItsDescriptor) {
  dsl::GemmDesc step64;
  step64.k_loop_step = {64, dsl::ShortTurn::kFirst};
  const HeuristicFn two = two_ids;
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  ASSERT_NO_FATAL_FAILURE(scan_two_ids(t, st));
  int probes = 0;
  const ProbeFn truth = reference_probe([&](const GemmShape&, int64_t) { return step64; }, &probes);
  ASSERT_TRUE(probe_classes(t, st, truth, ProbeOptions{.max_probe_k = 4096}).ok());
  for (const TableClass& c : t.classes) ASSERT_TRUE(c.desc.has_value()) << c.note;
  const std::vector<std::string> notes = {t.classes[0].note, t.classes[1].note};
  int checked = 0;
  int probing = 0;  // checks of the class whose visit is under way
  const ProbeFn watch = [&](const GemmShape& s, const CublasKey& key, const Descs& before) {
    for (size_t i = 0; i < t.classes.size(); ++i) {
      const TableClass& c = t.classes[i];
      if (c.note.find("revalidated;") != std::string::npos) continue;  // visited already
      EXPECT_TRUE(c.desc.has_value()) << "class " << i << " lost its descriptor before its outcome";
      EXPECT_EQ(c.note, notes[i]);
      ++checked;
      probing += c.cls.values.id == key.id;
    }
    return truth(s, key, before);
  };
  ProbeOptions o{.max_probe_k = 4096};
  o.heuristic = two;
  absl::StatusOr<ProbeStats> stats = probe_classes(t, st, watch, o);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->revalidated, 2);
  EXPECT_GT(checked, probing);
  EXPECT_GT(probing, 0);
  for (const TableClass& c : t.classes) {
    ASSERT_TRUE(c.desc.has_value()) << c.note;
    EXPECT_EQ(c.desc->k_loop_step.step, 64) << *c.desc;
  }
}

// A class without a descriptor keeps the note of the run before while its probes run,
// and gets its own when the visit ends (session 23's device run 6, stopped at its time
// limit inside six classes' visits, saved them with no note at all).
TEST(CublasScan, AClassBeingProbedKeepsItsEarlierNoteUntilItsOutcome) {
  dsl::GemmDesc step64;
  step64.k_loop_step = {64, dsl::ShortTurn::kFirst};
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  ASSERT_NO_FATAL_FAILURE(scan_two_ids(t, st));
  int probes = 0;
  const ProbeFn truth = reference_probe([&](const GemmShape&, int64_t) { return step64; }, &probes);
  // A spent budget: both classes keep no descriptor and say why.
  ASSERT_TRUE(probe_classes(t, st, truth, ProbeOptions{.max_probe_k = 4096, .budget_s = -1}).ok());
  std::vector<std::string> notes;
  for (const TableClass& c : t.classes) {
    ASSERT_FALSE(c.desc.has_value());
    ASSERT_TRUE(has(c.note, "probe budget")) << c.note;
    notes.push_back(c.note);
  }
  int checked = 0;
  const ProbeFn watch = [&](const GemmShape& s, const CublasKey& key, const Descs& before) {
    for (size_t i = 0; i < t.classes.size(); ++i) {
      const TableClass& c = t.classes[i];
      if (c.cls.values.id != key.id) continue;  // the class whose visit is under way
      EXPECT_EQ(c.note, notes[i]) << "class " << i << " lost its note before its outcome";
      ++checked;
    }
    return truth(s, key, before);
  };
  ASSERT_TRUE(probe_classes(t, st, watch, ProbeOptions{.max_probe_k = 4096}).ok());
  EXPECT_GT(checked, 0);
  for (const TableClass& c : t.classes) {
    ASSERT_TRUE(c.desc.has_value()) << c.note;
    EXPECT_FALSE(has(c.note, "probe budget")) << c.note;
    EXPECT_TRUE(has(c.note, "probe(s) agree")) << c.note;
  }
}

// ProbeOptions::only_classes: only the listed class is visited, and, validated already,
// it is revalidated although it has all the probes `revalidate` asks for; an index
// outside the table is an error that names the field.
TEST(CublasScan, OnlyTheListedClassesAreVisitedAndRevalidated) {
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  ASSERT_NO_FATAL_FAILURE(scan_two_ids(t, st));
  int probes = 0;
  const ProbeFn truth =
      reference_probe([](const GemmShape&, int64_t) { return dsl::GemmDesc{}; }, &probes);
  ASSERT_TRUE(probe_classes(t, st, truth, ProbeOptions{.max_probe_k = 4096, .revalidate = 1}).ok());
  for (const TableClass& c : t.classes) ASSERT_TRUE(c.desc.has_value()) << c.note;
  const int listed = t.classes[0].cls.values.id == 24 ? 0 : 1;
  std::set<int32_t> visited;
  const ProbeFn watch = [&](const GemmShape& s, const CublasKey& key, const Descs& before) {
    visited.insert(key.id);
    return truth(s, key, before);
  };
  ProbeOptions o{.max_probe_k = 4096, .revalidate = 1};
  o.only_classes = {listed};
  absl::StatusOr<ProbeStats> stats = probe_classes(t, st, watch, o);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(visited, std::set<int32_t>{24});
  EXPECT_EQ(stats->revalidated, 1);
  for (const TableClass& c : t.classes) EXPECT_TRUE(c.desc.has_value()) << c.note;
  // Unlisted, the same table gets no probe at all (each class has its one probe).
  visited.clear();
  ASSERT_TRUE(probe_classes(t, st, watch, ProbeOptions{.max_probe_k = 4096, .revalidate = 1}).ok());
  EXPECT_TRUE(visited.empty());
  o.only_classes = {2};
  absl::StatusOr<ProbeStats> bad = probe_classes(t, st, watch, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("ProbeOptions.only_classes"), std::string_view::npos)
      << bad.status();
}

// A heuristic that gives variant X (id 13, custom 53: session 29's class 76) only at
// K = 128, inside a run of Y (id 66, tile 15, K in [100, 200)) between A (K < 100) and
// B (K >= 200). Between the grid's K = 1 and 256, scan_heuristic's first midpoint is
// 128 and meets X; the bisection then finds Y's start below it and B's above, and no
// later midpoint lands on 128, so no run of the map names X.
absl::StatusOr<AlgoConfig> hides_a_variant(const GemmShape& s) {
  if (s.k == 128) return AlgoConfig{.id = 13, .custom_option = 53};
  AlgoConfig a{.id = 66, .tile_id = 10};
  if (s.k >= 200) {
    a.stages_id = 12;
  } else if (s.k >= 100) {
    a.tile_id = 15;
  }
  return a;
}

TEST(CublasScan, AVariantABisectionHidKeepsItsShapeAndIsProbedThere) {
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  const ScanGrid grid{.ms = {1, 2}, .ns = {1}, .ks = {1, 256}};
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, grid, hides_a_variant).ok());
  int x = -1;
  for (size_t v = 0; v < t.variants.size(); ++v) {
    if (t.variants[v].key.id == 13) x = static_cast<int>(v);
  }
  ASSERT_GE(x, 0);
  for (const std::vector<MapRun>& runs : t.maps[0].runs) {
    for (const MapRun& r : runs) EXPECT_NE(r.variant, x) << "the fake no longer hides X";
  }
  // Its one shape (the best cell of K = 128: M = 2) is kept, and survives the text.
  const std::vector<ProbePoint> want = {{.variant = x, .m = 2, .n = 1, .k = 128}};
  EXPECT_EQ(t.variants[x].seen, want);
  absl::StatusOr<CublasTable> back = parse_table(write_table(t));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->variants[x].seen, want);
  const int cls = back->variants[x].cls;

  // A resumed table probes X's class at that shape.
  ScanState resumed;
  ASSERT_TRUE(rebuild_shapes(*back, resumed, 2).ok());
  std::vector<std::pair<int32_t, int64_t>> visited;  // (key id, K)
  int probes = 0;
  const ProbeFn truth = reference_probe([](const GemmShape&, int64_t) { return fma_chain(); }, &probes);
  const ProbeFn watch = [&](const GemmShape& s, const CublasKey& key, const Descs& before) {
    visited.emplace_back(key.id, s.k);
    return truth(s, key, before);
  };
  ProbeOptions o{.max_probe_k = 4096};
  o.only_classes = {cls};
  CublasTable probed = *back;
  absl::StatusOr<ProbeStats> stats = probe_classes(probed, resumed, watch, o);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(visited, (std::vector<std::pair<int32_t, int64_t>>{{13, 128}}));
  EXPECT_TRUE(stats->no_shape.empty());

  // Without the seen line (a table written before it), the listed class has no shape:
  // it is named, its note says so, and nothing is probed.
  CublasTable lost = *back;
  lost.variants[x].seen.clear();
  lost.classes[cls].note = "not validated: the probe budget of 240 s was spent after 0 of 2 probes";
  ScanState lost_state;
  ASSERT_TRUE(rebuild_shapes(lost, lost_state, 2).ok());
  visited.clear();
  stats = probe_classes(lost, lost_state, watch, o);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_TRUE(visited.empty());
  EXPECT_EQ(stats->no_shape, std::vector<int>{cls});
  EXPECT_TRUE(has(lost.classes[cls].note, "--find-points")) << lost.classes[cls].note;

  // find_points asks the heuristic over the map's grid again and gives it back.
  absl::StatusOr<FoundPoints> found = find_points(lost, lost_state, GemmShape{}, 2, hides_a_variant);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->without, 1);
  EXPECT_EQ(found->found, 1);
  EXPECT_EQ(found->unknown, 0);
  EXPECT_GT(found->heuristic_calls, 0);
  EXPECT_EQ(lost.variants[x].seen, want);
  visited.clear();
  stats = probe_classes(lost, lost_state, watch, o);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(visited, (std::vector<std::pair<int32_t, int64_t>>{{13, 128}}));

  // A variant that has its points is not asked for again; an answer the table never met
  // is counted and named; a family without a map is NotFound.
  found = find_points(lost, lost_state, GemmShape{}, 2,
                      [](const GemmShape& s) -> absl::StatusOr<AlgoConfig> {
                        if (s.k == 128) return AlgoConfig{.id = 14};
                        return hides_a_variant(s);
                      });
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->without, 0);
  EXPECT_EQ(found->unknown, 1);
  ASSERT_EQ(found->unknown_keys.size(), 1u);
  EXPECT_TRUE(has(found->unknown_keys[0], "id=14")) << found->unknown_keys[0];
  const GemmShape bf16{.a_dtype = DType::kBF16, .b_dtype = DType::kBF16, .out_dtype = DType::kBF16};
  EXPECT_EQ(find_points(lost, lost_state, bf16, 2, hides_a_variant).status().code(),
            absl::StatusCode::kNotFound);
}

// ProbeOptions::slice and merge_scan_slices (fixbits-cublas-scan --jobs): two slices of
// one run probe disjoint classes, and their merged tables equal the unsliced run's,
// a class split included (its new classes appended, its variants pointed at them).
TEST(CublasScan, SlicesProbeDisjointClassesAndMergeIntoTheUnslicedTable) {
  struct Case {
    HeuristicFn heuristic;
    ScanGrid grid;
    std::function<dsl::GemmDesc(const GemmShape&, int64_t)> truth;
    size_t classes_after;
  };
  const std::vector<Case> cases = {
      {two_ids, ScanGrid{.ms = {1, 4, 16}, .ns = {1, 16}, .ks = {1, 2, 17, 257, 259}},
       [](const GemmShape&, int64_t) { return dsl::GemmDesc{}; }, 2},
      {plain_heuristic, small_grid(), stages_truth, 4},  // one class that splits in four
  };
  for (const Case& c : cases) {
    CublasTable base{.arch = "sm_90"};
    ScanState st;
    ASSERT_TRUE(scan_heuristic(base, st, GemmShape{}, c.grid, c.heuristic).ok());
    int probes = 0;
    CublasTable full = base;
    ASSERT_TRUE(probe_classes(full, st, reference_probe(c.truth, &probes),
                              ProbeOptions{.max_probe_k = 4096}).ok());
    ASSERT_EQ(full.classes.size(), c.classes_after);
    std::vector<CublasTable> slices;
    std::set<int32_t> seen_ids;
    for (int j = 0; j < 2; ++j) {
      slices.push_back(base);
      std::set<int32_t> ids;
      const ProbeFn inner = reference_probe(c.truth, &probes);
      const ProbeFn watch = [&](const GemmShape& s, const CublasKey& key, const Descs& before) {
        ids.insert(key.id);
        return inner(s, key, before);
      };
      ProbeOptions o{.max_probe_k = 4096};
      o.slice = j;
      o.slices = 2;
      ASSERT_TRUE(probe_classes(slices.back(), st, watch, o).ok());
      for (int32_t id : ids) EXPECT_TRUE(seen_ids.insert(id).second) << "id " << id << " in two slices";
    }
    absl::StatusOr<CublasTable> merged = merge_scan_slices(base, slices);
    ASSERT_TRUE(merged.ok()) << merged.status();
    EXPECT_EQ(merged->classes, full.classes);
    EXPECT_EQ(merged->variants, full.variants);
    EXPECT_EQ(write_table(*merged), write_table(full));
  }
}

TEST(CublasScan, SlicesOfAnotherRunOrOptionsAreRefused) {
  CublasTable base{.arch = "sm_90"};
  ScanState st;
  ASSERT_NO_FATAL_FAILURE(scan_two_ids(base, st));
  int probes = 0;
  const ProbeFn truth =
      reference_probe([](const GemmShape&, int64_t) { return dsl::GemmDesc{}; }, &probes);
  CublasTable probed = base;
  ASSERT_TRUE(probe_classes(probed, st, truth, ProbeOptions{.max_probe_k = 4096}).ok());
  // The same class changed by two slices: not slices of one run.
  absl::StatusOr<CublasTable> twice = merge_scan_slices(base, {probed, probed});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("changed by slice 0 and by slice 1"), std::string::npos)
      << twice.status();
  CublasTable other = probed;
  other.maps[0].k_max += 1;
  absl::StatusOr<CublasTable> foreign = merge_scan_slices(base, {other});
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.status().message().find("its maps differ"), std::string::npos) << foreign.status();
  // Seen points that one run found (find_points) are kept; two that found others are
  // not runs of one base.
  CublasTable found_a = base, found_b = base;
  found_a.variants[0].seen = {{.variant = 0, .m = 1, .n = 1, .k = 5}};
  found_b.variants[0].seen = {{.variant = 0, .m = 1, .n = 1, .k = 6}};
  absl::StatusOr<CublasTable> kept = merge_scan_slices(base, {probed, found_a, found_a});
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->variants[0].seen, found_a.variants[0].seen);
  EXPECT_EQ(kept->classes, probed.classes);
  absl::StatusOr<CublasTable> clash = merge_scan_slices(base, {found_a, found_b});
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.status().message().find("seen points differ at variant 0"), std::string::npos)
      << clash.status();
  for (auto [slice, slices] : {std::pair{2, 2}, std::pair{-1, 2}, std::pair{0, 0}}) {
    ProbeOptions o{.max_probe_k = 4096};
    o.slice = slice;
    o.slices = slices;
    CublasTable t = base;
    absl::Status s = probe_classes(t, st, truth, o).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("ProbeOptions.slice"), std::string::npos) << s;
  }
}

// cuBLAS's dot path (id 14: dot_kernel + reduce_1Block_kernel) as the table holds it:
// at M = 1 or N = 1 every shape gets a split answer whose count is the dot kernel's
// grid; probe_key, told the count, recovers the dot family first; the class's probes
// at a contiguous point (1 x 1, 4 x 1: tiles of 2) and a strided one (1 x 3: single
// elements) agree; desc_for gives each shape its grid and tile.
TEST(CublasScan, TheDotPathGetsItsGridAndTileFromTheShape) {
  // The grid: 31 blocks where N > 1 (a strided B column), 17 where N = 1 (as cuBLASLt
  // answers 1xN and Mx1 shapes with different counts), so the two kinds of cell have
  // points of their own.
  auto grid_of = [](const GemmShape& s) -> uint32_t { return s.n > 1 ? 31 : 17; };
  const HeuristicFn dot_answers = [&](const GemmShape& s) -> absl::StatusOr<AlgoConfig> {
    if (s.m == 1 || s.n == 1) {
      return AlgoConfig{.id = 14, .splitk_num = grid_of(s), .reduction_scheme = 2};
    }
    return AlgoConfig{.id = 66};
  };
  auto truth_at = [&](const GemmShape& s, int64_t) {
    if (s.m > 1 && s.n > 1) return dsl::GemmDesc{};
    const dsl::GemmDesc d = dsl::testing::cublas_dot(DType::kF16, 1, 2);
    return dot_at_shape(d, s, grid_of(s));
  };
  const ProbeFn probe = [&](const GemmShape& s, const CublasKey& key, const Descs& before) {
    const dsl::probe::GemmBlackBox box = [&, s](const dsl::reference::GemmProblem& p) {
      return dsl::reference::gemm(truth_at(s, p.k), p);
    };
    return probe_key(box, s, key, dsl::Instruction::kMmaSync, {}, {}, key.split ? grid_of(s) : 1);
  };
  const GemmShape contiguous1{.m = 1, .n = 1, .k = 5000}, contiguous2{.m = 7, .n = 1, .k = 999},
      strided{.m = 1, .n = 9, .k = 999};
  // The probe chooser takes the cell with the most outputs first: 4 x 1 (contiguous,
  // tiles of 2) on the first grid; 1 x 5 (strided, single elements) on the second, then,
  // its tile unseen, 3 x 1; 1 x 4 alone on the third, whose class then knows no tile
  // for contiguous shapes and says so.
  for (const ScanGrid& g : {ScanGrid{.ms = {1, 4}, .ns = {1, 3}, .ks = {1, 2, 300, 700, 1000}},
                            ScanGrid{.ms = {1, 3}, .ns = {1, 5}, .ks = {1, 2, 300, 700, 1000}},
                            ScanGrid{.ms = {1}, .ns = {4}, .ks = {1, 2, 300, 700, 1000}}}) {
    CublasTable t{.arch = "sm_90"};
    ScanState st;
    ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, g, dot_answers).ok());
    absl::StatusOr<ProbeStats> stats = probe_classes(
        t, st, probe, ProbeOptions{.max_probe_k = 4096, .class_probes = 2, .fit_probes = 2});
    ASSERT_TRUE(stats.ok()) << stats.status();
    const TableClass* c = nullptr;
    for (const TableClass& x : t.classes) {
      if (x.cls.values.id == 14) c = &x;
    }
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(c->desc.has_value()) << c->note;
    EXPECT_EQ(c->desc->family, dsl::GemmFamily::kDot);
    bool any_contiguous = false, any_strided = false;
    for (const ProbePoint& p : c->probes) (p.m == 1 && p.n > 1 ? any_strided : any_contiguous) = true;
    absl::StatusOr<dsl::GemmDesc> d = desc_for(*c, strided, grid_of(strided));
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(*d, truth_at(strided, strided.k));
    for (const GemmShape& s : {contiguous1, contiguous2}) {
      d = desc_for(*c, s, grid_of(s));
      if (any_contiguous) {
        ASSERT_TRUE(d.ok()) << d.status();
        EXPECT_EQ(*d, truth_at(s, s.k)) << s.m << "x" << s.n;
      } else {
        EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition);
        EXPECT_NE(d.status().message().find("probed only where an operand is strided"),
                  std::string_view::npos) << d.status();
      }
    }
    // The second grid's class holds probes of both kinds that agree (tile 2 explains
    // the strided point); the third has strided points only.
    std::string points;
    for (const ProbePoint& p : c->probes) points += absl::StrFormat(" %dx%dx%d", p.m, p.n, p.k);
    if (g.ns.back() == 5) EXPECT_TRUE(any_contiguous && any_strided) << points << "; " << c->note;
    if (g.ms.size() == 1) EXPECT_FALSE(any_contiguous);
  }
}

// ProbeOptions::rank_shapes: the class the most of those shapes land in is probed
// first, even when another class has more scanned shapes; without them, scanned shapes
// decide. Two ids: 66 at M >= 4 (3 of 4 grid rows), 24 at M = 1.
TEST(CublasScan, ClassesAreProbedInTheOrderOfTheRankShapes) {
  const ScanGrid grid{.ms = {1, 4, 16, 64}, .ns = {1, 16}, .ks = {1, 2, 257, 300}};
  const HeuristicFn two = [](const GemmShape& s) -> absl::StatusOr<AlgoConfig> {
    return AlgoConfig{.id = s.m >= 4 ? 66 : 24};
  };
  for (bool ranked : {false, true}) {
    CublasTable t{.arch = "sm_90"};
    ScanState st;
    ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, grid, two).ok());
    ASSERT_EQ(t.classes.size(), 2u);
    std::vector<int32_t> order;
    int probes = 0;
    const ProbeFn inner = reference_probe([](const GemmShape&, int64_t) { return dsl::GemmDesc{}; },
                                          &probes);
    const ProbeFn probe = [&](const GemmShape& s, const CublasKey& key, const Descs& before) {
      if (order.empty() || order.back() != key.id) order.push_back(key.id);
      return inner(s, key, before);
    };
    ProbeOptions o{.max_probe_k = 4096};
    if (ranked) o.rank_shapes = {GemmShape{.m = 1, .n = 1, .k = 300}, GemmShape{.m = 1, .n = 16, .k = 257}};
    absl::StatusOr<ProbeStats> stats = probe_classes(t, st, probe, o);
    ASSERT_TRUE(stats.ok()) << stats.status();
    const std::vector<int32_t> want = ranked ? std::vector<int32_t>{24, 66} : std::vector<int32_t>{66, 24};
    EXPECT_EQ(order, want);
  }
}

// Split granules the probes cannot tell apart: a split of 3 whose span is ceil(K/3)
// rounded up to 4, probed at K = 257, 1000 and 760 (spans 88, 336, 256: granule 8 gives
// the same), would keep split/8, the coarsest rule that fits. The class gets one more
// probe at its cheapest point where the two differ (K = 31: 12 vs 16) and keeps split/4. Session 7's match:
// split-K classes at split counts 32-108 carried spans rounded to 32 or 64 where
// cuBLAS rounds to 8 (CPU replay of the differing elements).
TEST(CublasScan, SplitGranulesTheProbesCannotTellApartGetASeparatingProbe) {
  const auto truth = split3_truth(4, {0, dsl::ShortTurn::kLast});
  const ScanGrid grid{.ms = {1, 4}, .ns = {1, 3}, .ks = {1, 2, 31, 243, 257, 760, 1000}};
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  int probes = 0;
  absl::StatusOr<ProbeStats> stats = scan_and_probe(
      t, st, kSplit3, grid,
      truth, ProbeOptions{.max_probe_k = 4096}, &probes);
  ASSERT_TRUE(stats.ok()) << stats.status();
  const TableClass& c = t.classes[0];
  ASSERT_TRUE(c.desc.has_value()) << c.note;
  EXPECT_EQ(stats->separating, 1) << c.note;
  EXPECT_EQ(probes, 4) << c.note;
  ASSERT_EQ(c.rules.size(), 1u);
  EXPECT_EQ(to_string(c.rules[0]), "split/4");
  EXPECT_EQ(c.probes.back().k, 31);
  ASSERT_NO_FATAL_FAILURE(expect_spans(t, truth, {243, 500, 999}));
}

// Each probe of a class is handed what the class's probes found before it (ProbeFn's
// found_before, in probe order: the first none), and a probe that passes it to probe_key
// searches first the way those were found. The split of SplitGranules... with mma.sync
// k8: the first probe finds it in its third search (16 products with the scheme's pair,
// with the other eight, then k8 with the pair), every later one, the separating probe
// too, in its first; the class gets the same rule from the same four probes.
TEST(CublasScan, EachProbeSearchesFirstAsTheClassesEarlierProbesFound) {
  const auto split4 = split3_truth(4, {0, dsl::ShortTurn::kLast});
  const auto truth = [&](const GemmShape& s, int64_t k) {
    dsl::GemmDesc d = split4(s, k);
    d.instruction_k = 8;
    return d;
  };
  const ScanGrid grid{.ms = {1, 4}, .ns = {1, 3}, .ks = {1, 2, 31, 243, 257, 760, 1000}};
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, grid, always(kSplit3)).ok());
  ASSERT_EQ(t.classes.size(), 1u);
  std::vector<Descs> handed;                       // each probe's found_before
  Descs returned;                                  // each probe's descriptor
  std::vector<std::vector<ProbeSearch>> searches;  // each probe's searches
  const ProbeFn probe = [&](const GemmShape& s, const CublasKey& key,
                            const Descs& before) -> absl::StatusOr<dsl::GemmDesc> {
    handed.push_back(before);
    searches.emplace_back();
    const dsl::probe::GemmBlackBox box = [&](const dsl::reference::GemmProblem& p) {
      return dsl::reference::gemm(truth(s, p.k), p);
    };
    absl::StatusOr<dsl::GemmDesc> d =
        probe_key(box, s, key, dsl::Instruction::kMmaSync, {}, {}, 0, {}, {}, {},
                  [&](const ProbeSearch& q) { searches.back().push_back(q); }, before);
    if (d.ok()) returned.push_back(*d);
    return d;
  };
  absl::StatusOr<ProbeStats> stats = probe_classes(t, st, probe, ProbeOptions{.max_probe_k = 4096});
  ASSERT_TRUE(stats.ok()) << stats.status();
  const TableClass& c = t.classes[0];
  ASSERT_TRUE(c.desc.has_value()) << c.note;
  EXPECT_EQ(c.desc->instruction_k, 8);
  EXPECT_EQ(stats->separating, 1) << c.note;
  ASSERT_EQ(handed.size(), 4u) << c.note;
  ASSERT_EQ(returned.size(), 4u);
  for (size_t i = 0; i < handed.size(); ++i) {
    EXPECT_EQ(handed[i], Descs(returned.begin(), returned.begin() + i)) << i;
    ASSERT_FALSE(searches[i].empty()) << i;
    const ProbeSearch& first = searches[i][0];
    EXPECT_EQ(first.as_before, i > 0) << i;
    EXPECT_EQ(first.instruction_k, i > 0 ? 8 : 0) << i;
    EXPECT_EQ(first.status.ok(), i > 0) << i << ": " << first.status;
    EXPECT_EQ(searches[i].size(), i > 0 ? 1u : 3u) << i;
  }
  ASSERT_EQ(c.rules.size(), 1u);
  EXPECT_EQ(to_string(c.rules[0]), "split/4");
  EXPECT_EQ(c.probes.back().k, 31);
}

// A split class's K-loop step the probes cannot tell apart: split 3, spans ceil(K/3)
// rounded up to 8, step 64 with the short turn first; at K = 265, 405 and 1000 every
// part is at most 32 past a multiple of 64, where step 32 groups the products alike
// (and K = 265 fixes the granule: ceil(265/3) = 89 is 92 at granule 4, 96 at 8).
// One more probe where a part separates them (K = 100: a part of 40) fixes the step,
// checked against the truth's bits at K where it matters (session 7's 22x11x25552).
TEST(CublasScan, ASplitClassStepTheProbesCannotTellApartGetsASeparatingProbe) {
  const auto truth = split3_truth(8, {64, dsl::ShortTurn::kFirst});
  const ScanGrid grid{.ms = {1, 4}, .ns = {1, 3}, .ks = {1, 2, 100, 265, 405, 1000}};
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  int probes = 0;
  absl::StatusOr<ProbeStats> stats = scan_and_probe(
      t, st, kSplit3, grid,
      truth, ProbeOptions{.max_probe_k = 4096}, &probes);
  ASSERT_TRUE(stats.ok()) << stats.status();
  const TableClass& c = t.classes[0];
  ASSERT_TRUE(c.desc.has_value()) << c.note;
  EXPECT_EQ(stats->separating, 1) << c.note;
  EXPECT_EQ(probes, 4) << c.note;
  for (int64_t k : {100, 700, 999}) {
    absl::StatusOr<dsl::GemmDesc> d = lookup(t, GemmShape{.m = 1, .n = 1, .k = k});
    ASSERT_TRUE(d.ok()) << d.status();
    const dsl::reference::GemmProblem p = random_f16_problem(k);
    absl::StatusOr<std::vector<uint32_t>> want = dsl::reference::gemm(truth(GemmShape{}, k), p);
    absl::StatusOr<std::vector<uint32_t>> have = dsl::reference::gemm(*d, p);
    ASSERT_TRUE(want.ok() && have.ok());
    EXPECT_EQ(*want, *have) << "K = " << k << ": " << *d;
  }
}

// ProbeOptions::extra_points (fixbits-cublas-scan --probe-at): a split class whose grid
// points all have spans and last parts that are multiples of 16 cannot tell the truth's
// K-loop step 64 with the short turn first from the plain step (session 12's device run
// 1: id 23 tile 11 bf16 classes, 128/first at 105x10x3362 where the table said 0/last).
// A point given at K = 200 (span 72, short turn 8) is probed first on the class's next
// visit, and the class's descriptor then gives the truth's bits there; without it, it
// does not (or the test proves nothing). point_of_shape finds the point's variant and
// class from cuBLASLt's answer, and names an answer the table never met.
TEST(CublasScan, AGivenPointIsProbedFirstAndRefitsTheClass) {
  const auto truth = split3_truth(8, {64, dsl::ShortTurn::kFirst});
  const ScanGrid grid{.ms = {1, 4}, .ns = {1, 3}, .ks = {1, 2, 96, 144, 480}};
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  int probes = 0;
  // No heuristic: the separating probe keeps to the grid's points, which cannot tell.
  ProbeOptions o{.max_probe_k = 4096};
  absl::StatusOr<ProbeStats> stats = scan_and_probe(t, st, kSplit3, grid, truth, o, &probes);
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_TRUE(t.classes[0].desc.has_value()) << t.classes[0].note;
  // Whether the table's descriptor at 1 x 1 x k gives the truth's bits on every
  // experiment the probe knows (dsl::probe::reproduces; an f16 output hides most
  // orders on random draws).
  auto same_at = [&](int64_t k) {
    absl::StatusOr<dsl::GemmDesc> d = lookup(t, GemmShape{.m = 1, .n = 1, .k = k});
    EXPECT_TRUE(d.ok()) << d.status();
    if (!d.ok()) return false;
    dsl::probe::ProbeOptions po;
    po.k = k;
    std::string why;
    absl::StatusOr<bool> same = dsl::probe::reproduces(*d, truth(GemmShape{}, k), po, &why);
    EXPECT_TRUE(same.ok()) << same.status();
    return same.ok() && *same;
  };
  ASSERT_FALSE(same_at(200)) << "the grid's probes already tell the steps apart: "
                             << *t.classes[0].desc;

  int cls = -1;
  absl::StatusOr<ProbePoint> pt =
      point_of_shape(t, GemmShape{.m = 1, .n = 1, .k = 200}, kSplit3, &cls);
  ASSERT_TRUE(pt.ok()) << pt.status();
  EXPECT_EQ(cls, 0);
  EXPECT_EQ(pt->splitk, 3u);
  EXPECT_EQ(pt->k, 200);
  std::set<int64_t> probed_k;
  const ProbeFn inner = reference_probe(truth, &probes);
  const ProbeFn watch = [&](const GemmShape& s, const CublasKey& key, const Descs& before) {
    probed_k.insert(s.k);
    return inner(s, key, before);
  };
  ProbeOptions again = o;
  again.heuristic = always(kSplit3);  // the given point is checked against cuBLASLt's answer
  again.extra_points[cls] = {*pt};
  stats = probe_classes(t, st, watch, again);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_TRUE(probed_k.count(200)) << "the given point was not probed";
  EXPECT_EQ(stats->revalidated, 1);
  ASSERT_TRUE(t.classes[0].desc.has_value()) << t.classes[0].note;
  for (int64_t k : {200, 250, 401, 470}) {  // the map's runs end at the grid's K = 480
    EXPECT_TRUE(same_at(k)) << "K = " << k << ": " << *t.classes[0].desc;
  }

  absl::StatusOr<ProbePoint> none = point_of_shape(
      t, GemmShape{.m = 1, .n = 1, .k = 200}, AlgoConfig{.id = 99}, &cls);
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(absl::IsNotFound(none.status())) << none.status();
  EXPECT_TRUE(has(none.status(), "id=99")) << none.status();
  again.extra_points[cls] = {ProbePoint{.variant = 7, .m = 1, .n = 1, .k = 200, .splitk = 3}};
  absl::StatusOr<ProbeStats> bad = probe_classes(t, st, watch, again);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(has(bad.status(), "ProbeOptions.extra_points")) << bad.status();
}

// A span a probe's experiments cannot tell from the rule's is no disagreement. Split in
// two by split/8, K = 17 is cut at 16, and the last part's one product is added by the
// merge as the chain would have added it: the probe there may return either span (the
// reference's probe returns 16; the H200's returned 17 for f16 class 173, which then
// had no rule for 128 of the match's draws, and the match found cuBLAS cutting at 16).
// A probe that answers 17 at K = 17 stands in for the H200's: the fit asks that
// probe's replay whether span 16 passes its experiments, and the class gets split/8;
// fitted on the spans alone, no rule fits.
TEST(CublasScan, ASpanTheProbeCannotTellFromTheRulesFitsThatProbe) {
  const AlgoConfig split2{.id = 66, .splitk_num = 2, .reduction_scheme = 2};
  auto truth = [](const GemmShape&, int64_t k) {
    dsl::GemmDesc d;
    d.family = dsl::GemmFamily::kSplitK;
    d.k_cuts = {{apply_span_rule(SpanRule{.kind = SpanRule::Kind::kSplit, .granule = 8}, 0, k, 2),
                 dsl::Fold::kChain}};
    return d;
  };
  const ScanGrid grid{.ms = {1, 4}, .ns = {1, 3}, .ks = {1, 2, 17, 391, 1000}};
  int probes = 0;
  const ProbeFn reference = reference_probe(truth, &probes);
  std::vector<dsl::GemmDesc> at17;
  const ProbeFn uncut_at_17 = [&](const GemmShape& s, const CublasKey& key, const Descs& before) {
    absl::StatusOr<dsl::GemmDesc> d = reference(s, key, before);
    if (d.ok() && s.k == 17 && d->k_cuts.size() == 1) {
      at17.push_back(*d);
      d->k_cuts[0].span = 17;  // the other answer the probe's experiments allow
    }
    return d;
  };
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, grid, always(split2)).ok());
  ProbeOptions o{.max_probe_k = 4096, .small_probe_k = 16};
  absl::StatusOr<ProbeStats> stats = probe_classes(t, st, uncut_at_17, o);
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_EQ(at17.size(), 1u) << "the class was not probed at K = 17";
  EXPECT_EQ(at17[0].k_cuts[0].span, 16) << at17[0];
  const TableClass& c = t.classes[0];
  ASSERT_TRUE(c.desc.has_value()) << c.note;
  ASSERT_EQ(c.rules.size(), 1u);
  EXPECT_EQ(to_string(c.rules[0]), "split/8");
  ASSERT_NO_FATAL_FAILURE(expect_spans(t, truth, {17, 100, 391, 999}));

  // On the spans alone (17 at K = 17, 200 at K = 391) no rule fits.
  dsl::GemmDesc uncut = at17[0], cut = truth(GemmShape{}, 391);
  uncut.k_cuts[0].span = 17;
  EXPECT_FALSE(fit_span_rules(true, {391, 17}, {2, 2}, {cut, uncut}).ok());
}

// A split class whose K all lie above min_probe_k, probed first at K = 433: its next
// probe wants a short K (small_probe_k) and the class has none, so it takes the nearest
// K above that range with a new K / P (1000), not the largest (8191 here; session 20's
// class 204 went to 801x33x131072 there and passed its 150 s).
TEST(CublasScan, AClassWithoutShortKTakesItsNextProbeAtTheSmallestKAbove) {
  auto truth = split3_truth(8, {});
  const ScanGrid grid{.ms = {1, 4}, .ns = {1, 3}, .ks = {433, 1000, 8191}};
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, grid, always(kSplit3)).ok());
  int probes = 0;
  const ProbeFn reference = reference_probe(truth, &probes);
  std::vector<int64_t> order;  // the K of each probe, in the order they ran
  const ProbeFn recorded = [&](const GemmShape& s, const CublasKey& key, const Descs& before) {
    order.push_back(s.k);
    return reference(s, key, before);
  };
  ProbeOptions o{.max_probe_k = 131072, .fit_probes = 1, .small_probe_k = 16};
  absl::StatusOr<ProbeStats> stats = probe_classes(t, st, recorded, o);
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_GE(order.size(), 2u);
  EXPECT_EQ(order[0], 433);
  EXPECT_EQ(order[1], 1000) << "the second probe went to the largest K, not the nearest";
  const TableClass& c = t.classes[0];
  ASSERT_TRUE(c.desc.has_value()) << c.note;
  ASSERT_NO_FATAL_FAILURE(expect_spans(t, truth, {433, 700, 1000, 5000}));
}

// Scans answer `a` over K = 1, 2, 391 (and 1000 when `two`) and probes its one class
// through the reference of truth: the table it leaves.
CublasTable probed_at_one_or_two_k(const AlgoConfig& a,
                                   const std::function<dsl::GemmDesc(const GemmShape&, int64_t)>& truth,
                                   bool two) {
  const ScanGrid grid{.ms = {1, 4}, .ns = {1, 3},
                      .ks = two ? std::vector<int64_t>{1, 2, 391, 1000}
                                : std::vector<int64_t>{1, 2, 391}};
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  int probes = 0;
  absl::StatusOr<ProbeStats> stats =
      scan_and_probe(t, st, a, grid, truth, ProbeOptions{.max_probe_k = 4096}, &probes);
  EXPECT_TRUE(stats.ok()) << stats.status();
  return t;
}

// A split class probed at one K / P only is not validated: its span fits every
// granule up to it (session 12's device run 6: class 177's only probe, K = 16384 and
// P = 64, gave split/256 where cuBLAS rounds to 8, and all 19 of the match's shapes of
// the class differed). A second K / P (here K = 1000 beside 391) validates it.
TEST(CublasScan, ASplitClassProbedAtOneKOverPIsNotValidated) {
  const auto truth = split3_truth(8, {});
  for (const bool two : {false, true}) {
    const CublasTable t = probed_at_one_or_two_k(kSplit3, truth, two);
    ASSERT_EQ(t.classes.size(), 1u);
    const TableClass& c = t.classes[0];
    if (!two) {
      EXPECT_FALSE(c.desc.has_value()) << *c.desc;
      EXPECT_TRUE(has(c.note, "one K / P")) << c.note;
      EXPECT_TRUE(c.probes.empty());
    } else {
      ASSERT_TRUE(c.desc.has_value()) << c.note;
      ASSERT_NO_FATAL_FAILURE(expect_spans(t, truth, {391, 700, 999}));
    }
  }
}

// cuBLASLt answers some split classes with SPLITK_NUM 4294967295 (-1 as int32: class
// 146, id 42, session 23's device run 5), and its kernel makes no split: one chain over
// the whole K. Then ceil(K / P) is 1 at every K, so the probes' split counts cannot pin
// the span rule; their K can: probes at two K validate the class (the rule is "whole"),
// one K does not.
TEST(CublasScan, ASplitCountOfMinusOneIsPinnedByTheProbesK) {
  const AlgoConfig unset{.id = 42, .splitk_num = 0xFFFFFFFFu, .reduction_scheme = 2};
  const auto truth = [](const GemmShape&, int64_t k) {
    dsl::GemmDesc d;
    d.family = dsl::GemmFamily::kSplitK;
    d.k_cuts = {{k, dsl::Fold::kChain}};
    return d;
  };
  for (const bool two : {false, true}) {
    const CublasTable t = probed_at_one_or_two_k(unset, truth, two);
    ASSERT_EQ(t.classes.size(), 1u);
    const TableClass& c = t.classes[0];
    ASSERT_TRUE(c.cls.values.split);
    if (!two) {
      EXPECT_FALSE(c.desc.has_value()) << *c.desc;
      EXPECT_TRUE(has(c.note, "a probe at another K is needed")) << c.note;
    } else {
      ASSERT_TRUE(c.desc.has_value()) << c.note;
      ASSERT_EQ(c.rules.size(), 1u);
      EXPECT_EQ(to_string(c.rules[0]), "whole");  // not split/1024, which fits K <= 1024
      ASSERT_NO_FATAL_FAILURE(expect_spans(t, truth, {391, 700, 999}));
    }
  }
}

// cuBLAS's segment-K kernel (class 54, id 41, SPLITK_NUM -1; docs/cublas.md session
// 35): two segments of whole 64-wide tiles, the longer last, at every K. The probe at
// K = 391 (7 tiles: 3 + 4) finds the segment split; the one at K = 1000 (16 tiles: 8 +
// 8) finds the equal split of 512, the same partition, which the class's segment split
// explains; the rule is "fixed" (the tile), and a lookup at other K gives the truth's
// bits (K = 700: 5 + 6 tiles, no equal split says it).
TEST(CublasScan, ASegmentSplitClassIsValidatedAcrossAnEqualPartition) {
  const AlgoConfig unset{.id = 41, .splitk_num = 0xFFFFFFFFu, .reduction_scheme = 2};
  dsl::GemmDesc seg;
  seg.family = dsl::GemmFamily::kSplitK;
  seg.k_loop_step = {64, dsl::ShortTurn::kFirst};
  seg.k_cuts = {{64, dsl::Fold::kChain, 2}};
  const auto truth = [seg](const GemmShape&, int64_t) { return seg; };
  const CublasTable t = probed_at_one_or_two_k(unset, truth, true);
  ASSERT_EQ(t.classes.size(), 1u);
  const TableClass& c = t.classes[0];
  ASSERT_TRUE(c.desc.has_value()) << c.note;
  ASSERT_EQ(c.desc->k_cuts.size(), 1u) << *c.desc;
  EXPECT_EQ(c.desc->k_cuts[0], seg.k_cuts[0]) << *c.desc;
  ASSERT_EQ(c.rules.size(), 1u);
  EXPECT_EQ(to_string(c.rules[0]), "fixed");
  std::vector<int64_t> probed;
  for (const ProbePoint& p : c.probes) probed.push_back(p.k);
  EXPECT_EQ(probed, (std::vector<int64_t>{391, 1000}));
  ASSERT_NO_FATAL_FAILURE(expect_reproduces(t, seg, {391, 700, 999, 1000}));
}

// A class whose kernel issues mma.sync m16n8k8 (cuBLAS's s1688 kernels, id 24 tiles
// 15/18/20/24 on the H200): no 16-product descriptor reproduces it, so probe_key
// searches again with instruction_k 8, and the class keeps that descriptor, which
// a lookup returns with the right bits.
TEST(CublasScan, AnEightProductInstructionIsRecovered) {
  dsl::GemmDesc k8;
  k8.instruction_k = 8;
  k8.k_loop_step = {32, dsl::ShortTurn::kFirst};
  const ScanGrid grid{.ms = {1, 4}, .ns = {1, 3}, .ks = {1, 2, 64, 257, 1000}};
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  int probes = 0;
  absl::StatusOr<ProbeStats> stats = scan_and_probe(
      t, st, AlgoConfig{.id = 24, .tile_id = 20}, grid,
      [&](const GemmShape&, int64_t) { return k8; },
      ProbeOptions{.max_probe_k = 4096}, &probes);
  ASSERT_TRUE(stats.ok()) << stats.status();
  const TableClass& c = t.classes[0];
  ASSERT_TRUE(c.desc.has_value()) << c.note;
  EXPECT_EQ(c.desc->instruction_k, 8);
  EXPECT_EQ(c.desc->instruction, dsl::Instruction::kMmaSync);
  for (int64_t k : {57, 700}) {
    absl::StatusOr<dsl::GemmDesc> d = lookup(t, GemmShape{.m = 1, .n = 1, .k = k});
    ASSERT_TRUE(d.ok()) << d.status();
    const dsl::reference::GemmProblem p = random_f16_problem(k);
    absl::StatusOr<std::vector<uint32_t>> want = dsl::reference::gemm(k8, p);
    absl::StatusOr<std::vector<uint32_t>> have = dsl::reference::gemm(*d, p);
    ASSERT_TRUE(want.ok() && have.ok());
    EXPECT_EQ(*want, *have) << "K = " << k << ": " << *d;
  }
}

// A step neither probe returned: step 32 with the short turn first recovers as 16/first
// at K = 257 (257 mod 32 = 1, as mod 16) and as 16/last at K = 25 (one short turn of
// 25 = 16 + 9); neither canonical descriptor explains the other point, step 32/first
// explains both, and it gives the right bits at a K where the three differ (57).
TEST(CublasScan, AStepNeitherProbeReturnedIsFoundWhenItExplainsBoth) {
  dsl::GemmDesc step32;
  step32.k_loop_step = {32, dsl::ShortTurn::kFirst};
  const ScanGrid grid{.ms = {1, 4}, .ns = {1, 3}, .ks = {1, 2, 25, 257}};
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  int probes = 0;
  absl::StatusOr<ProbeStats> stats = scan_and_probe(
      t, st, AlgoConfig{.id = 24}, grid,
      [&](const GemmShape&, int64_t) { return step32; },
      ProbeOptions{.max_probe_k = 4096, .small_probe_k = 16}, &probes);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(probes, 2);
  const TableClass& c = t.classes[0];
  ASSERT_TRUE(c.desc.has_value()) << c.note;
  EXPECT_EQ(c.desc->k_loop_step, step32.k_loop_step);
  absl::StatusOr<dsl::GemmDesc> d = lookup(t, GemmShape{.m = 1, .n = 1, .k = 57});
  ASSERT_TRUE(d.ok()) << d.status();
  dsl::probe::ProbeOptions o;
  o.k = 57;
  std::string why;
  absl::StatusOr<bool> same = dsl::probe::reproduces(*d, step32, o, &why);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(*same) << why;
  dsl::GemmDesc first16;
  first16.k_loop_step = {0, dsl::ShortTurn::kFirst};
  same = dsl::probe::reproduces(first16, step32, o, &why);
  ASSERT_TRUE(same.ok());
  EXPECT_FALSE(*same) << "K = 57 must tell step 32 from step 16, or the test proves nothing";
}

// An inner cut one probe cannot see: the kernel halves K (parts/2) and cuts each half
// into chunks of 256 (cuBLAS's id 11 kernel, session 11's device run 4: cuts=[129] at
// K = 257, cuts=[321, 256] at K = 641). The probe at 257 returns one level; the one at
// 641 two. The deeper descriptor explains both (its inner cut, clamped to the 129 of a
// half, cuts nothing at 257), so the class keeps it with the rules parts/2 and fixed.
TEST(CublasScan, AnInnerCutOneProbeCannotSeeIsExplainedByTheProbeThatSawIt) {
  auto truth = [](const GemmShape&, int64_t k) {
    dsl::GemmDesc d = fma_chain();
    d.family = dsl::GemmFamily::kSplitK;
    const int64_t half = (k + 1) / 2;
    d.k_cuts = {{half, dsl::Fold::kChain}, {std::min<int64_t>(256, half), dsl::Fold::kChain}};
    return d;
  };
  // The probes at 257 and 641; then the device's pair (run 5): 641 and a short-K probe
  // at 17 (halves of 9).
  struct Run {
    ScanGrid grid;
    ProbeOptions options;
    int64_t shallow_k;
  };
  const Run runs[] = {
      {ScanGrid{.ms = {1, 4}, .ns = {1, 3}, .ks = {1, 2, 257, 641, 3000}},
       ProbeOptions{.max_probe_k = 4096}, 257},
      {ScanGrid{.ms = {1, 4}, .ns = {1, 3}, .ks = {1, 2, 17, 641, 3000}},
       ProbeOptions{.max_probe_k = 4096, .small_probe_k = 16}, 17}};
  for (const Run& run : runs) {
    CublasTable t{.arch = "sm_90"};
    ScanState st;
    int probes = 0;
    absl::StatusOr<ProbeStats> stats =
        scan_and_probe(t, st, AlgoConfig{.id = 11}, run.grid, truth, run.options, &probes);
    ASSERT_TRUE(stats.ok()) << stats.status();
    const TableClass& c = t.classes[0];
    ASSERT_TRUE(c.desc.has_value()) << c.note;
    ASSERT_EQ(c.desc->k_cuts.size(), 2u) << *c.desc;
    std::set<int64_t> probed;
    for (const ProbePoint& p : c.probes) probed.insert(p.k);
    EXPECT_TRUE(probed.count(run.shallow_k) && probed.count(641)) << c.note;
    ASSERT_EQ(c.rules.size(), 2u);
    EXPECT_EQ(to_string(c.rules[0]), "parts/2");
    EXPECT_EQ(to_string(c.rules[1]), "fixed");
    for (int64_t k : {17, 257, 500, 641, 1500, 3000}) {
      absl::StatusOr<dsl::GemmDesc> d = lookup(t, GemmShape{.m = 1, .n = 1, .k = k});
      ASSERT_TRUE(d.ok()) << d.status();
      EXPECT_TRUE(dsl::validate(*d).ok()) << *d;
      dsl::probe::ProbeOptions o;
      o.family = dsl::GemmFamily::kSplitK;
      o.k = k;
      std::string why;
      absl::StatusOr<bool> same = dsl::probe::reproduces(*d, truth(GemmShape{}, k), o, &why);
      ASSERT_TRUE(same.ok()) << same.status();
      EXPECT_TRUE(*same) << "K = " << k << ": " << *d << " (" << why << ")";
    }
  }
  // The one-level descriptor of K = 257 does not explain K = 641, or the test proves
  // nothing.
  dsl::probe::ProbeOptions o;
  o.family = dsl::GemmFamily::kSplitK;
  o.k = 641;
  dsl::GemmDesc shallow = truth(GemmShape{}, 641);
  shallow.k_cuts.pop_back();
  std::string why;
  absl::StatusOr<bool> same = dsl::probe::reproduces(shallow, truth(GemmShape{}, 641), o, &why);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_FALSE(*same);
}

// Extra inner levels explain only a probe that has a level of its own: a probe that
// came back uncut (here a plain chain at K = 17, found as one gemv lane) is not a split
// whose cut it failed to see, so the class's probes disagree and it keeps no
// descriptor (explains() once read the level above level 0 here, and took the
// class's two-level split, wrong at K = 17, as validated).
TEST(CublasScan, AnUncutProbeIsNoShallowSplit) {
  auto truth = [](const GemmShape&, int64_t k) {
    dsl::GemmDesc d = fma_chain();
    if (k < 300) return d;
    d.family = dsl::GemmFamily::kSplitK;
    d.k_cuts = {{(k + 1) / 2, dsl::Fold::kChain}, {256, dsl::Fold::kChain}};
    return d;
  };
  const ScanGrid grid{.ms = {1, 4}, .ns = {1, 3}, .ks = {1, 2, 17, 641, 3000}};
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  int probes = 0;
  absl::StatusOr<ProbeStats> stats =
      scan_and_probe(t, st, AlgoConfig{.id = 11}, grid, truth,
                     ProbeOptions{.max_probe_k = 4096, .small_probe_k = 16}, &probes);
  ASSERT_TRUE(stats.ok()) << stats.status();
  const TableClass& c = t.classes[0];
  EXPECT_FALSE(c.desc.has_value()) << *c.desc;
  EXPECT_TRUE(has(c.note, "disagree")) << c.note;
}

// A vector shape is searched as gemv first (session 11: the id 13 gemv classes passed
// every probe time limit at K = 4096 in the plain and split-K searches before gemv).
// The gemv box comes back as its own descriptor; a box that runs a plain fma chain
// still comes back with its bits, as one gemv lane (with the old order: plain).
TEST(CublasScan, AVectorShapeIsProbedAsGemvFirst) {
  dsl::GemmDesc gemv = fma_chain();
  gemv.family = dsl::GemmFamily::kGemv;
  gemv.lanes = 32;
  gemv.lane_tile = 1;
  gemv.lane_layout = dsl::LaneLayout::kStrided;
  gemv.lane_fold = {16, 8, 4, 2, 1};
  for (const dsl::GemmDesc& truth : {gemv, fma_chain()}) {
    for (GemmShape s :
         {GemmShape{.m = 1, .n = 129, .k = 2048}, GemmShape{.m = 121, .n = 1, .k = 2048}}) {
      const dsl::probe::GemmBlackBox box = [&](const dsl::reference::GemmProblem& p) {
        return dsl::reference::gemm(truth, p);
      };
      absl::StatusOr<dsl::GemmDesc> d =
          probe_key(box, s, CublasKey{.id = 13}, dsl::Instruction::kMmaSync,
                    dsl::probe::BatchLimits{.rows = 1, .cols = 128});
      ASSERT_TRUE(d.ok()) << d.status();
      EXPECT_EQ(d->family, dsl::GemmFamily::kGemv) << *d;
      // The chain comes back as gemv too: the gemv search ran first.
      if (truth.family == dsl::GemmFamily::kGemv) EXPECT_EQ(*d, truth);
      dsl::probe::ProbeOptions o;
      o.k = s.k;
      std::string why;
      absl::StatusOr<bool> same = dsl::probe::reproduces(*d, truth, o, &why);
      ASSERT_TRUE(same.ok()) << same.status();
      EXPECT_TRUE(*same) << *d << " " << why;
    }
  }
}

// cuBLAS's gemv2T (id 13 custom 11): 16 strided lanes of one element, chained, in turns
// of 512 with two roundings per turn. Up to K = 528 that groups the products as 16
// contiguous lanes in turns of 16 do (each lane chains l, l + 16, ...), so probes at
// K = 257 and 181 (session 18's classes 69 and 143) return that canonical form. With
// K = 2048 in the class the separating probe goes there, where the turns show, and the
// class keeps the truth, which the lookup reproduces at K = 748 (a K of the draws the
// H200's match found differing). A class whose K stop at 300 gets its separating probe
// there (turns of 256 would show) and keeps the canonical form, right for all its K.
TEST(CublasScan, GemvTurnsTheProbesAreTooShortToSeeGetASeparatingProbe) {
  const AlgoConfig gemv2t{.id = 13, .custom_option = 11};
  dsl::GemmDesc truth = fma_chain();
  truth.family = dsl::GemmFamily::kGemv;
  truth.use_fast_accum = false;
  truth.k_loop_step = {512, dsl::ShortTurn::kLast};
  truth.lane_layout = dsl::LaneLayout::kStrided;
  truth.lanes = 16;
  truth.lane_tile = 1;
  truth.lane_fold = {};
  ASSERT_TRUE(dsl::validate(truth).ok()) << dsl::validate(truth);
  dsl::GemmDesc short_form = truth;
  short_form.lane_layout = dsl::LaneLayout::kContiguous;
  short_form.k_loop_step = {16, dsl::ShortTurn::kLast};
  // The premise: K = 257 cannot tell the two apart, K = 748 can.
  for (auto [k, same_bits] : {std::pair{257, true}, std::pair{748, false}}) {
    dsl::probe::ProbeOptions o{.family = dsl::GemmFamily::kGemv, .k = k};
    std::string why;
    absl::StatusOr<bool> same = dsl::probe::reproduces(short_form, truth, o, &why);
    ASSERT_TRUE(same.ok()) << same.status();
    ASSERT_EQ(*same, same_bits) << "K = " << k << " " << why;
  }
  for (int64_t top : {2048, 300}) {
    SCOPED_TRACE(absl::StrFormat("the class's K up to %d", top));
    const ScanGrid grid{.ms = {64}, .ns = {1}, .ks = {1, 2, 181, 257, top}};
    CublasTable t{.arch = "sm_90"};
    ScanState st;
    ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, grid, always(gemv2t)).ok());
    ASSERT_EQ(t.classes.size(), 1u);
    int probes = 0;
    absl::StatusOr<ProbeStats> stats = probe_classes(
        t, st, reference_probe([&](const GemmShape&, int64_t) { return truth; }, &probes),
        ProbeOptions{.max_probe_k = 4096, .small_probe_k = 16});
    ASSERT_TRUE(stats.ok()) << stats.status();
    const TableClass& c = t.classes[0];
    ASSERT_TRUE(c.desc.has_value()) << c.note;
    std::set<int64_t> ks;
    for (const ProbePoint& p : c.probes) ks.insert(p.k);
    EXPECT_EQ(stats->separating, 1);
    EXPECT_EQ(ks, (std::set<int64_t>{181, 257, top}));
    if (top == 2048) {
      EXPECT_EQ(*c.desc, truth);
      absl::StatusOr<dsl::GemmDesc> at748 = lookup(t, GemmShape{.m = 64, .n = 1, .k = 748});
      ASSERT_TRUE(at748.ok()) << at748.status();
      EXPECT_EQ(*at748, truth);
    } else {
      // K = 300 tells turns of 256 from the canonical form and sees no 512-turn.
      EXPECT_EQ(*c.desc, short_form);
    }
  }
}

// cuBLAS's gemvNSP kernel deals K to a lane count that follows N (32 up to N = 8448 on
// the H200, then 26, 24, 20, ...; fixbits-cublas-lanes reads it from the launches). A
// class with that lane rule is probed at each point with the rule's count (as the scan
// sample passes it to probe_key), and its probes at two counts agree: the class's
// descriptor explains each point with the count the rule gives there. Without the rule,
// the 20-lane point disagrees with the 32-lane one.
TEST(CublasScan, ALaneRuleClassIsProbedAndExplainedAtEachNsCount) {
  const AlgoConfig gemv_algo{.id = 13, .custom_option = 10};
  const std::vector<LaneStep> rule = {{1, 32}, {8449, 20}};
  auto truth = [&](const GemmShape& s, int64_t) {
    dsl::GemmDesc d = fma_chain();
    d.family = dsl::GemmFamily::kGemv;
    d.lane_layout = dsl::LaneLayout::kStrided;
    d.lane_tile = 4;
    d.lanes = 32;
    d.lane_fold = {16, 8, 4, 2, 1};
    return with_lanes(d, lanes_at(rule, s.n));
  };
  for (const bool with_rule : {true, false}) {
    const ScanGrid grid{.ms = {1}, .ns = {64, 9000}, .ks = {64, 212}};
    CublasTable t{.arch = "sm_90"};
    ScanState st;
    ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, grid, always(gemv_algo)).ok());
    ASSERT_EQ(t.classes.size(), 1u);
    if (with_rule) t.classes[0].lanes_by_n = rule;
    const ProbeFn probe = [&](const GemmShape& s, const CublasKey& key, const Descs& before) {
      const dsl::probe::GemmBlackBox box = [&, s](const dsl::reference::GemmProblem& p) {
        return dsl::reference::gemm(truth(s, p.k), p);
      };
      std::vector<int> lanes;
      if (!t.classes[0].lanes_by_n.empty()) lanes = {lanes_at(t.classes[0].lanes_by_n, s.n)};
      return probe_key(box, s, key, dsl::Instruction::kMmaSync,
                       dsl::probe::BatchLimits{.rows = 1, .cols = 128}, {}, 0, lanes);
    };
    ProbeOptions o{.max_probe_k = 4096};
    o.heuristic = always(gemv_algo);
    int cls = -1;
    for (int64_t n : {64, 9000}) {
      absl::StatusOr<ProbePoint> pt = point_of_shape(t, GemmShape{.m = 1, .n = n, .k = 212},
                                                     gemv_algo, &cls);
      ASSERT_TRUE(pt.ok()) << pt.status();
      o.extra_points[cls].push_back(*pt);
    }
    absl::StatusOr<ProbeStats> stats = probe_classes(t, st, probe, o);
    ASSERT_TRUE(stats.ok()) << stats.status();
    if (!with_rule) {
      EXPECT_FALSE(t.classes[0].desc.has_value()) << *t.classes[0].desc;
      continue;
    }
    ASSERT_TRUE(t.classes[0].desc.has_value()) << t.classes[0].note;
    EXPECT_GE(t.classes[0].probes.size(), 2u);
    for (int64_t n : {64, 8448, 8449, 9000}) {
      const GemmShape s{.m = 1, .n = n, .k = 212};
      absl::StatusOr<dsl::GemmDesc> d = lookup_answer(t, s, answer_of(gemv_algo));
      ASSERT_TRUE(d.ok()) << n << ": " << d.status();
      EXPECT_EQ(*d, truth(s, 212)) << n;
    }
  }
}

// A gemv of 32 strided lanes (folded 16, 8, 4, 2, 1) in tiles of `tile`.
dsl::GemmDesc strided_gemv32(int64_t tile) {
  dsl::GemmDesc d = fma_chain();
  d.family = dsl::GemmFamily::kGemv;
  d.lane_layout = dsl::LaneLayout::kStrided;
  d.lanes = 32;
  d.lane_fold = {16, 8, 4, 2, 1};
  d.lane_tile = static_cast<int>(tile);
  return d;
}

// One gemv class (cuBLASLt's answer `algo` everywhere, 1 x 64 x K on `grid`) scanned
// into t, then probed through the reference of truth(s, K) with the points at `ks`
// given first (ProbeOptions::extra_points) and the heuristic to check others against.
absl::StatusOr<ProbeStats> scan_gemv_class(
    CublasTable& t, ScanState& st, const AlgoConfig& algo, const ScanGrid& grid,
    std::function<dsl::GemmDesc(const GemmShape&, int64_t)> truth, std::vector<int64_t> ks,
    int* probes) {
  if (absl::Status s = scan_heuristic(t, st, GemmShape{}, grid, always(algo)); !s.ok()) return s;
  if (t.classes.size() != 1) return absl::FailedPreconditionError("the scan gave several classes");
  ProbeOptions o{.max_probe_k = 8192};
  o.heuristic = always(algo);
  int cls = -1;
  for (int64_t k : ks) {
    absl::StatusOr<ProbePoint> pt = point_of_shape(t, GemmShape{.m = 1, .n = 64, .k = k}, algo, &cls);
    if (!pt.ok()) return pt.status();
    o.extra_points[cls].push_back(*pt);
  }
  return probe_classes(t, st, reference_probe(std::move(truth), probes), o);
}

// cuBLAS's gemv custom 92 kernels (H200 classes 27 and 103) deal K to 32 lanes in one
// run each at small K (the probes at K = 341 / 359 returned contiguous lanes of tile 1)
// and in strided tiles of 64 at large K (K = 4097 / 4230); session 11's tree at K = 1430
// showed runs of 45. One model gives all of them: strided tiles of min(64, ceil(K / 32)).
// The scan fits that cap from the probes (fit_tile_cap) and explains each probe with its
// tile; without the cap the probes disagree.
TEST(CublasScan, AGemvTileThatFollowsKUpToACapIsFitted) {
  const AlgoConfig gemv_algo{.id = 13, .custom_option = 92};
  auto truth = [](const GemmShape&, int64_t k) {
    return strided_gemv32(std::min<int64_t>(64, (k + 31) / 32));
  };
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  int probes = 0;
  absl::StatusOr<ProbeStats> stats =
      scan_gemv_class(t, st, gemv_algo, ScanGrid{.ms = {1}, .ns = {64}, .ks = {64, 359, 4097}},
                      truth, {359, 4097}, &probes);
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_TRUE(t.classes[0].desc.has_value()) << t.classes[0].note;
  EXPECT_EQ(t.classes[0].lane_tile_cap, 64);
  for (int64_t k : {341, 359, 1430, 2048, 2049, 4097, 4230}) {
    const GemmShape s{.m = 1, .n = 64, .k = k};
    absl::StatusOr<dsl::GemmDesc> d = lookup_answer(t, s, answer_of(gemv_algo));
    ASSERT_TRUE(d.ok()) << k << ": " << d.status();
    EXPECT_EQ(*d, truth(s, k)) << k;
  }
  // The text form carries the cap.
  absl::StatusOr<CublasTable> back = parse_table(write_table(t));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->classes[0].lane_tile_cap, 64);
  EXPECT_EQ(*back, t);
  // Revalidated, the class's earlier probes are checked with its descriptor carried to
  // each one's K under the cap, and it keeps both.
  ProbeOptions again{.max_probe_k = 8192, .revalidate = 3};
  again.heuristic = always(gemv_algo);
  stats = probe_classes(t, st, reference_probe(truth, &probes), again);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->revalidated, 1);
  ASSERT_TRUE(t.classes[0].desc.has_value()) << t.classes[0].note;
  EXPECT_EQ(t.classes[0].lane_tile_cap, 64);
  for (int64_t k : {359, 1430, 4097}) {
    const GemmShape s{.m = 1, .n = 64, .k = k};
    EXPECT_EQ(*lookup_answer(t, s, answer_of(gemv_algo)), truth(s, k)) << k;
  }
}

// cuBLAS's gemv custom 10 (f16 class 3) deals K to 32 strided lanes in tiles of 4 at
// every K. Probes whose runs are all longer than 4 (K = 222, 342) fit a cap of 4 as well
// as the fixed tile; session 42's revalidation took the cap, and at 1x1450x64 (runs of
// 2) cuBLAS kept tiles of 4. The scan keeps the fixed tile until a probe shows a cap, and
// spends a separating probe where a lane's run is shorter than 4: it tells a fixed tile
// from a kernel whose tiles do follow K below the cap.
TEST(CublasScan, AGemvTileCapNoProbeShowsIsProbedNotFitted) {
  const AlgoConfig gemv_algo{.id = 13, .custom_option = 10};
  for (const bool capped : {false, true}) {
    auto truth = [capped](const GemmShape&, int64_t k) {
      return strided_gemv32(capped ? std::min<int64_t>(4, (k + 31) / 32) : 4);
    };
    CublasTable t{.arch = "sm_90"};
    ScanState st;
    int probes = 0;
    absl::StatusOr<ProbeStats> stats =
        scan_gemv_class(t, st, gemv_algo, ScanGrid{.ms = {1}, .ns = {64}, .ks = {64, 222, 342}},
                        truth, {222, 342}, &probes);
    ASSERT_TRUE(stats.ok()) << stats.status();
    ASSERT_TRUE(t.classes[0].desc.has_value()) << t.classes[0].note;
    EXPECT_GE(stats->separating, 1) << capped;
    bool short_run = false;  // a probe where a lane's run is shorter than 4
    for (const ProbePoint& p : t.classes[0].probes) short_run = short_run || (p.k + 31) / 32 < 4;
    EXPECT_TRUE(short_run) << capped << ": " << write_table(t);
    EXPECT_EQ(t.classes[0].lane_tile_cap, capped ? 4 : 0);
    for (int64_t k : {17, 64, 100, 222, 1450}) {
      const GemmShape s{.m = 1, .n = 64, .k = k};
      absl::StatusOr<dsl::GemmDesc> d = lookup_answer(t, s, answer_of(gemv_algo));
      ASSERT_TRUE(d.ok()) << k << ": " << d.status();
      EXPECT_EQ(*d, truth(s, k)) << capped << " " << k;
    }
    // A table that holds the cap no probe shows (as session 42's did) loses it when the
    // class is revalidated with its separating probe, or keeps it when that probe shows it.
    CublasTable had = t;
    had.classes[0].lane_tile_cap = 4;
    had.classes[0].probes.resize(2);  // the two long-run probes only
    ProbeOptions again{.max_probe_k = 8192};
    again.heuristic = always(gemv_algo);
    ScanState st2 = st;
    stats = probe_classes(had, st2, reference_probe(truth, &probes), again);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->revalidated, 1) << capped;
    ASSERT_TRUE(had.classes[0].desc.has_value()) << had.classes[0].note;
    EXPECT_EQ(had.classes[0].lane_tile_cap, capped ? 4 : 0) << write_table(had);
    const GemmShape s{.m = 1, .n = 64, .k = 64};
    EXPECT_EQ(*lookup_answer(had, s, answer_of(gemv_algo)), truth(s, 64)) << capped;
  }
}

// A split gemv in 4 parts whose `lanes` strided lanes take tiles of ceil(span / lanes)
// up to 64 (cuBLAS's custom 100 and 92 kernels on gridDim.z parts), as a truth(s, K).
std::function<dsl::GemmDesc(const GemmShape&, int64_t)> capped_split_gemv(int lanes,
                                                                         std::vector<int> fold) {
  return [lanes, fold](const GemmShape&, int64_t k) {
    dsl::GemmDesc d = fma_chain();
    d.family = dsl::GemmFamily::kGemv;
    d.lane_layout = dsl::LaneLayout::kStrided;
    d.lanes = lanes;
    d.lane_fold = fold;
    const int64_t span = (k + 3) / 4;
    d.k_cuts = {{span, dsl::Fold::kChain}};
    d.lane_tile = static_cast<int>(std::min<int64_t>(64, (span + lanes - 1) / lanes));
    return d;
  };
}

// A split gemv class (cuBLASLt's answer `algo` everywhere, 1 x 64 x K on `grid`) probed
// through the reference of truth(s, K) as the scan's probe does it (the box's split count
// makes probe_key try the split gemv right after the dot family), with the points at
// `ks` given first (ProbeOptions::extra_points) and `o`'s other options.
absl::StatusOr<ProbeStats> scan_split_gemv(
    CublasTable& t, const AlgoConfig& algo, const ScanGrid& grid,
    std::function<dsl::GemmDesc(const GemmShape&, int64_t)> truth, std::vector<int64_t> ks,
    ProbeOptions o) {
  ScanState st;
  if (absl::Status s = scan_heuristic(t, st, GemmShape{}, grid, always(algo)); !s.ok()) return s;
  if (t.classes.size() != 1) return absl::FailedPreconditionError("the scan gave several classes");
  o.heuristic = always(algo);
  int cls = -1;
  for (int64_t k : ks) {
    absl::StatusOr<ProbePoint> pt = point_of_shape(t, GemmShape{.m = 1, .n = 64, .k = k}, algo, &cls);
    if (!pt.ok()) return pt.status();
    o.extra_points[cls].push_back(*pt);
  }
  const ProbeFn probe = [&](const GemmShape& s, const CublasKey& key, const Descs& before) {
    const dsl::probe::GemmBlackBox box = [s, truth](const dsl::reference::GemmProblem& p) {
      return dsl::reference::gemm(truth(s, p.k), p);
    };
    return probe_key(box, s, key, dsl::Instruction::kMmaSync, {}, {}, algo.splitk_num);
  };
  return probe_classes(t, st, probe, o);
}

// A split gemv (the gemv kernel on gridDim.z parts) whose tile follows the range it
// deals up to a cap, as custom 100's does (16 lanes, tiles of 64 at large K): the range
// is each part's span, the K its kernel runs with, not the whole K. At K = 359 in 4
// parts (spans of 90) the tile is 6 where ceil(K / 16) would give 23; fitted on K, the
// class's probes disagreed (the H200's classes 88 and 14, session 15).
TEST(CublasScan, ASplitGemvTileFollowsThePartSpanUpToACap) {
  const AlgoConfig split_gemv{.id = 13, .splitk_num = 4, .reduction_scheme = 2, .custom_option = 100};
  auto truth = capped_split_gemv(16, {8, 4, 2, 1});
  CublasTable t{.arch = "sm_90"};
  absl::StatusOr<ProbeStats> stats =
      scan_split_gemv(t, split_gemv, ScanGrid{.ms = {1}, .ns = {64}, .ks = {64, 359, 4097}}, truth,
                      {359, 4097, 6000}, ProbeOptions{.max_probe_k = 8192});
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_TRUE(t.classes[0].desc.has_value()) << t.classes[0].note;
  EXPECT_EQ(t.classes[0].lane_tile_cap, 64);
  for (int64_t k : {341, 359, 1430, 2049, 4097, 6000}) {
    const GemmShape s{.m = 1, .n = 64, .k = k};
    absl::StatusOr<dsl::GemmDesc> d = lookup_answer(t, s, answer_of(split_gemv));
    ASSERT_TRUE(d.ok()) << k << ": " << d.status();
    EXPECT_EQ(*d, truth(s, k)) << k;
  }
}

// A split gemv whose kernel deals every part, the last and shorter one too, in one tile
// of ceil(span / lanes) per lane up to a cap of 64 (the H200's class 89, split custom 92):
// at K = 2600 in 4 parts (spans of 650, runs of 21 everywhere) the probe's canonical
// contiguous lanes of tile 1 give the same bits, at K = 4097 (spans of 1025, a last part
// of 1022) they do not, and the two probes disagreed. No probe so far sees the cap (runs
// of 21, 24 and 33), so the class takes the run rule (tile@run: each part in runs of its
// span's tile), and its separating probe goes to the longest run it has (K = 8301, runs
// of 65), where the cap shows and replaces the run rule. (No probe K is a multiple of 8,
// so no aligned split rule asks for separating probes at small K, where the dot family
// reproduces a split gemv: a probe there would be a disagreement of its own.)
TEST(CublasScan, ASplitGemvWhoseLastPartTakesTheSpansTileGetsTheRunRule) {
  const AlgoConfig split_gemv{.id = 13, .splitk_num = 4, .reduction_scheme = 2, .custom_option = 92};
  auto truth = capped_split_gemv(32, {16, 8, 4, 2, 1});
  // The premise: contiguous lanes of tile 1 are the truth at 2600, not at 4097.
  for (auto [k, same_bits] : {std::pair{2600, true}, std::pair{4097, false}}) {
    dsl::GemmDesc runs = truth(GemmShape{}, k);
    runs.lane_layout = dsl::LaneLayout::kContiguous;
    runs.lane_tile = 1;
    dsl::probe::ProbeOptions po{.family = dsl::GemmFamily::kGemv, .k = k};
    po.gemv_split = true;
    std::string why;
    absl::StatusOr<bool> same = dsl::probe::reproduces(runs, truth(GemmShape{}, k), po, &why);
    ASSERT_TRUE(same.ok()) << same.status();
    ASSERT_EQ(*same, same_bits) << "K = " << k << " " << why;
  }
  CublasTable t{.arch = "sm_90"};
  absl::StatusOr<ProbeStats> stats = scan_split_gemv(
      t, split_gemv, ScanGrid{.ms = {1}, .ns = {64}, .ks = {64, 2600, 4097, 8301}}, truth,
      {2600, 3001, 4097}, ProbeOptions{.max_probe_k = 9000});
  ASSERT_TRUE(stats.ok()) << stats.status();
  const TableClass& c = t.classes[0];
  ASSERT_TRUE(c.desc.has_value()) << c.note;
  EXPECT_GE(stats->separating, 1);
  bool longest = false;
  for (const ProbePoint& p : c.probes) longest |= p.k == 8301;
  EXPECT_TRUE(longest) << "no probe where the cap shows";
  EXPECT_EQ(c.lane_tile_cap, 64);
  for (int64_t k : {1000, 2600, 3001, 4097, 4100, 8301, 9000}) {
    const GemmShape s{.m = 1, .n = 64, .k = k};
    absl::StatusOr<dsl::GemmDesc> d = lookup_answer(t, s, answer_of(split_gemv));
    ASSERT_TRUE(d.ok()) << k << ": " << d.status();
    EXPECT_EQ(*d, truth(s, k)) << k;
  }
  // The run rule's text form.
  CublasTable run = t;
  run.classes[0].lane_tile_cap = kUncappedTile;
  EXPECT_NE(write_table(run).find("tile@run"), std::string::npos);
  absl::StatusOr<CublasTable> back = parse_table(write_table(run));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, run);
}

// An intra-kernel cut into c parts (span ceil(K / c)) fits parts/c, not fixed, once two
// probes at different K see different spans.
TEST(CublasScan, PartsRuleFitsSpansThatFollowK) {
  dsl::GemmDesc d;
  d.family = dsl::GemmFamily::kChainedChunks;
  auto at = [&](int64_t span) {
    dsl::GemmDesc x = d;
    x.k_cuts = {{span, dsl::Fold::kChain}};
    return x;
  };
  absl::StatusOr<std::vector<SpanRule>> r =
      fit_span_rules(false, {257, 259, 17}, {1, 1, 1}, {at(65), at(65), at(5)});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(to_string((*r)[0]), "parts/4");
  EXPECT_EQ(apply_span_rule((*r)[0], 65, 25, 1), 7);
  // Probes that all saw one span keep the fixed rule.
  r = fit_span_rules(false, {257, 259}, {1, 1}, {at(65), at(65)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(to_string((*r)[0]), "fixed");
  // Text round trip and errors.
  EXPECT_EQ(*parse_span_rule("parts/4"), (SpanRule{.kind = SpanRule::Kind::kParts, .granule = 4}));
  EXPECT_FALSE(parse_span_rule("parts/1").ok());
  EXPECT_FALSE(parse_span_rule("parts/x").ok());
}

TEST(CublasScan, ClassesOutsideTheProbeRangeBudgetOrProbeKeepANote) {
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, small_grid(), fake_heuristic).ok());
  int fail_calls = 0;
  const ProbeFn fails = [&](const GemmShape&, const CublasKey&,
                            const Descs&) -> absl::StatusOr<dsl::GemmDesc> {
    ++fail_calls;
    return absl::NotFoundError("no candidate survived");
  };
  absl::StatusOr<ProbeStats> stats = probe_classes(t, st, fails, ProbeOptions{.max_probe_k = 600});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->failed, 2);
  // A point no descriptor reproduces ends its class: one probe, not class_probes.
  EXPECT_EQ(fail_calls, 1);
  EXPECT_EQ(stats->probes, 1);
  // Probing the table again (as --resume does) skips the concluded class, unless asked.
  stats = probe_classes(t, st, fails, ProbeOptions{.max_probe_k = 600});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(fail_calls, 1);
  EXPECT_EQ(stats->concluded, 1);
  stats = probe_classes(t, st, fails, ProbeOptions{.max_probe_k = 600, .retry_failed = true});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(fail_calls, 2);
  EXPECT_EQ(stats->concluded, 0);
  for (const TableClass& c : t.classes) {
    EXPECT_FALSE(c.desc.has_value());
    if (c.cls.values.split) {
      EXPECT_TRUE(has(c.note, "outside [3, 600]")) << c.note;
    } else {
      EXPECT_TRUE(has(c.note, "no candidate survived")) << c.note;
    }
  }
  absl::Status s = lookup(t, GemmShape{.m = 1, .n = 1, .k = 5}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(has(s, "no candidate survived")) << s;
  // A spent budget leaves every class unvalidated, with a note.
  CublasTable t2{.arch = "sm_90"};
  ScanState st2;
  ASSERT_TRUE(scan_heuristic(t2, st2, GemmShape{}, small_grid(), fake_heuristic).ok());
  int probes = 0;
  stats = probe_classes(t2, st2, reference_probe(
      [](const GemmShape& s, int64_t k) { return fake_truth(s.m, s.n, k); }, &probes),
      ProbeOptions{.budget_s = -1});
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(probes, 0);
  for (const TableClass& c : t2.classes) {
    EXPECT_TRUE(has(c.note, "probe budget")) << c.note;
  }
  // Bad options and a foreign state name the field.
  EXPECT_TRUE(has(probe_classes(t, ScanState{}, fails, ProbeOptions{}).status(),
                  "ScanState"));
  EXPECT_TRUE(has(probe_classes(t, st, fails, ProbeOptions{.max_probe_k = 2}).status(),
                  "ProbeOptions.max_probe_k"));
  EXPECT_TRUE(has(probe_classes(t, st, fails, ProbeOptions{.class_probes = 0}).status(),
                  "ProbeOptions.class_probes"));
}

// A black box that fails (not NotFound: the instrument, not the class) drops that
// point; the class is validated at others and says so. Classes of an earlier family
// (no shapes in this scan's state) keep what they have.
TEST(CublasScan, InstrumentFailuresAreNoDisagreementAndEarlierFamiliesAreKept) {
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, small_grid(), plain_heuristic).ok());
  int probes = 0;
  const ProbeFn good = reference_probe(
      [](const GemmShape&, int64_t) { return dsl::GemmDesc{}; }, &probes);
  int box_failures = 0;
  const ProbeFn flaky = [&](const GemmShape& s, const CublasKey& key,
                            const Descs& before) -> absl::StatusOr<dsl::GemmDesc> {
    if (box_failures == 0) {  // the very first probe
      ++box_failures;
      return absl::UnavailableError("the fake device is busy");
    }
    return good(s, key, before);
  };
  absl::StatusOr<ProbeStats> stats = probe_classes(t, st, flaky, ProbeOptions{.max_probe_k = 4096});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(box_failures, 1);
  EXPECT_EQ(stats->instrument_errors, 1);
  EXPECT_EQ(stats->probes, 3);
  EXPECT_EQ(stats->splits, 0);
  ASSERT_EQ(t.classes.size(), 1u);
  ASSERT_TRUE(t.classes[0].desc.has_value()) << t.classes[0].note;
  EXPECT_EQ(t.classes[0].probes.size(), 2u);
  EXPECT_TRUE(has(t.classes[0].note, "failed in the instrument") &&
              has(t.classes[0].note, "the fake device is busy"))
      << t.classes[0].note;
  // A second family scanned into the same table: only its classes are probed.
  ScanState st2;
  const GemmShape bf16{.a_dtype = DType::kBF16, .b_dtype = DType::kBF16, .out_dtype = DType::kBF16};
  ASSERT_TRUE(scan_heuristic(t, st2, bf16, small_grid(), plain_heuristic).ok());
  ASSERT_EQ(t.classes.size(), 2u);
  const TableClass before = t.classes[0];
  const ProbeFn fails = [](const GemmShape& s, const CublasKey&,
                           const Descs&) -> absl::StatusOr<dsl::GemmDesc> {
    EXPECT_EQ(s.a_dtype, DType::kBF16);
    return absl::NotFoundError("no candidate survived");
  };
  stats = probe_classes(t, st2, fails, ProbeOptions{.max_probe_k = 4096});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(t.classes[0], before);
  EXPECT_FALSE(t.classes[1].desc.has_value());
  EXPECT_TRUE(has(t.classes[1].note, "no candidate survived")) << t.classes[1].note;
  // Three instrument failures in a row leave the class unvalidated, saying why.
  CublasTable t3{.arch = "sm_90"};
  ScanState st3;
  ASSERT_TRUE(scan_heuristic(t3, st3, GemmShape{}, small_grid(), plain_heuristic).ok());
  const ProbeFn down = [](const GemmShape&, const CublasKey&, const Descs&) -> absl::StatusOr<dsl::GemmDesc> {
    return absl::InternalError("CUDA_ERROR_LAUNCH_FAILED");
  };
  stats = probe_classes(t3, st3, down, ProbeOptions{.max_probe_k = 4096});
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->instrument_errors, 3);
  EXPECT_FALSE(t3.classes[0].desc.has_value());
  EXPECT_TRUE(has(t3.classes[0].note, "3 probes failed in the instrument") &&
              has(t3.classes[0].note, "CUDA_ERROR_LAUNCH_FAILED"))
      << t3.classes[0].note;
}

// --resume. The fake of the H200's id 23: unsplit outputs with M >= 16 run id 23 (tile
// 11 for N < 16, else 24; stages 15 for K < 512, else 20), the rest nvjet as
// fake_heuristic; id 23's stages-15 kernels run an fma chain, so tile and stages move
// its bits. The truth of a full shape is that of the variant the fake answers there.
// (Stages change at K = 512, so the slow fma chain is probed at small K only.)
absl::StatusOr<AlgoConfig> id23_heuristic(const GemmShape& s) {
  absl::StatusOr<AlgoConfig> r = fake_heuristic(s);
  if (!r.ok() || s.m < 16 || r->splitk_num > 1) return r;
  r->id = 23;
  r->tile_id = s.n < 16 ? 11 : 24;
  r->stages_id = s.k < 512 ? 15 : 20;
  return r;
}

dsl::GemmDesc id23_truth(const GemmShape& s, int64_t k) {
  GemmShape at = s;
  at.k = k;
  const AlgoConfig a = *id23_heuristic(at);
  if (a.id == 23 && a.stages_id == 15) return fma_chain();
  return fake_truth(s.m, s.n, k);
}

// The class key before tile and stages joined it for ids 13, 23 and 24: what run 7's
// table was written with. Regroups a freshly scanned table's classes that way.
void coarsen(CublasTable& t) {
  std::vector<TableClass> classes;
  std::map<std::pair<std::string, CublasKey>, int> index;
  for (TableVariant& v : t.variants) {
    const CublasClass c = class_of(v.key, kCoarseFields);
    auto [it, fresh] = index.emplace(std::make_pair(v.family, c.values),
                                     static_cast<int>(classes.size()));
    if (fresh) classes.push_back(TableClass{.family = v.family, .cls = c});
    v.cls = it->second;
  }
  t.classes = std::move(classes);
}

// A log grid like the scan's (per_octave 1), so rebuild_shapes finds its Ks.
ScanGrid resume_grid() { return default_grid(GemmShape{}, 1, 64, 4096); }

// Every shape's lookup (status text or descriptor text) over the grid and between it.
std::map<std::string, std::string> lookups(const CublasTable& t) {
  std::map<std::string, std::string> out;
  for (int64_t m : {1, 2, 5, 16, 20, 33, 64}) {
    for (int64_t n : {1, 4, 15, 16, 40, 64}) {
      for (int64_t k : {1, 3, 100, 511, 512, 700, 701, 1499, 1500, 2047, 2048, 3000, 4096}) {
        const GemmShape s{.m = m, .n = n, .k = k};
        absl::StatusOr<dsl::GemmDesc> d = lookup(t, s);
        out[runtime::to_string(s)] = d.ok() ? dsl::to_string(*d) : std::string(d.status().message());
      }
    }
  }
  return out;
}

ProbeOptions resume_options() {
  return ProbeOptions{.max_probe_k = 4096, .budget_s = 1e9, .fit_probes = 3};
}

// A table's text resumed (re-key, shapes rebuilt, probes) with the options above.
struct Resumed {
  CublasTable table;
  RekeyStats rekey;
  ProbeStats stats;
  int probes = 0;
};
Resumed resume(const std::string& text, const std::vector<std::string>& families = {}) {
  Resumed r;
  absl::StatusOr<CublasTable> t = parse_table(text);
  EXPECT_TRUE(t.ok()) << t.status();
  r.table = *std::move(t);
  ScanState st;
  absl::StatusOr<RekeyStats> rk = rekey_table(r.table, st);
  EXPECT_TRUE(rk.ok()) << rk.status();
  r.rekey = *rk;
  EXPECT_TRUE(rebuild_shapes(r.table, st, 1, families).ok());
  EXPECT_EQ(st.heuristic_calls, 0);
  absl::StatusOr<ProbeStats> ps =
      probe_classes(r.table, st, reference_probe(id23_truth, &r.probes), resume_options());
  EXPECT_TRUE(ps.ok()) << ps.status();
  r.stats = *ps;
  return r;
}

TEST(CublasScan, ResumeEndsWithTheLookupsOfOneLongScan) {
  // One scan with a budget large enough for every class.
  CublasTable full{.arch = "sm_90"};
  ScanState st;
  ASSERT_TRUE(scan_heuristic(full, st, GemmShape{}, resume_grid(), id23_heuristic).ok());
  int probes = 0;
  ASSERT_TRUE(probe_classes(full, st, reference_probe(id23_truth, &probes), resume_options()).ok());
  const std::map<std::string, std::string> want = lookups(full);
  int64_t with_desc = 0;
  for (const TableClass& c : full.classes) with_desc += c.desc.has_value();
  EXPECT_EQ(with_desc, static_cast<int64_t>(full.classes.size())) << write_table(full);
  // Under today's key id 23 starts split by tile and stages; nvjet (66) does not.
  for (const TableClass& c : full.classes) {
    EXPECT_EQ(c.cls.mask, key_mask(c.cls.values)) << to_string(c.cls);
    EXPECT_EQ(c.cls.mask != kCoarseFields, c.cls.values.id == 23) << to_string(c.cls);
  }
  // Every shape's bits are the fake's own (the class key is fine enough).
  for (int64_t m : {1, 16, 33}) {
    for (int64_t n : {1, 16, 64}) {
      for (int64_t k : {3, 511, 512, 700, 701, 1500, 2048, 4096}) {
        const GemmShape s{.m = m, .n = n, .k = k};
        absl::StatusOr<dsl::GemmDesc> d = lookup(full, s);
        ASSERT_TRUE(d.ok()) << d.status();
        EXPECT_EQ(*d, id23_truth(s, k)) << m << "x" << n << "x" << k;
      }
    }
  }

  // The same scan with no probe budget, resumed from its text: only probes.
  CublasTable cut{.arch = "sm_90"};
  ScanState cut_st;
  ASSERT_TRUE(scan_heuristic(cut, cut_st, GemmShape{}, resume_grid(), id23_heuristic).ok());
  int none = 0;
  ASSERT_TRUE(probe_classes(cut, cut_st, reference_probe(id23_truth, &none),
                            ProbeOptions{.budget_s = -1}).ok());
  EXPECT_EQ(none, 0);
  Resumed r = resume(write_table(cut));
  EXPECT_EQ(r.rekey.changed, 0);
  EXPECT_EQ(r.rekey.unchanged, static_cast<int64_t>(cut.classes.size()));
  EXPECT_GT(r.probes, 0);
  EXPECT_EQ(r.stats.validated, static_cast<int64_t>(full.classes.size()));
  EXPECT_EQ(r.stats.failed, 0);
  for (const TableClass& c : r.table.classes) {
    // The note of the first run (budget spent) gives way to this run's.
    EXPECT_FALSE(has(c.note, "budget")) << c.note;
  }
  EXPECT_EQ(lookups(r.table), want);

  // Written under the old key (id 23 coarse) and probed there with no budget: the
  // re-key splits id 23 by tile and stages before any probe, so no probe disagrees.
  CublasTable old{.arch = "sm_90"};
  ScanState old_st;
  ASSERT_TRUE(scan_heuristic(old, old_st, GemmShape{}, resume_grid(), id23_heuristic).ok());
  coarsen(old);
  ASSERT_LT(old.classes.size(), full.classes.size());
  ASSERT_TRUE(probe_classes(old, old_st, reference_probe(id23_truth, &none),
                            ProbeOptions{.budget_s = -1}).ok());
  r = resume(write_table(old));
  EXPECT_GT(r.rekey.changed, 0);
  EXPECT_EQ(r.rekey.classes_after, static_cast<int64_t>(full.classes.size()));
  EXPECT_EQ(r.stats.splits, 0);
  EXPECT_EQ(r.stats.validated, static_cast<int64_t>(full.classes.size()));
  EXPECT_EQ(lookups(r.table), want);

  // Nothing left to probe: a finished table resumes to itself, probing nothing.
  const std::string text = write_table(full);
  r = resume(text);
  EXPECT_EQ(r.probes, 0);
  EXPECT_EQ(r.stats.probes, 0);
  EXPECT_EQ(r.rekey.changed, 0);
  EXPECT_EQ(write_table(r.table), text);
}

// Under the old key one id 23 class was validated by two probes at different tiles.
// Re-keyed, it is two classes, each with the probe at its tile: each is validated
// again with one new probe, while the nvjet classes keep descriptor and probes.
TEST(CublasScan, RekeyKeepsTheProbesOfAChangedClassAndValidatesItAgain) {
  const HeuristicFn h = [](const GemmShape& s) -> absl::StatusOr<AlgoConfig> {
    AlgoConfig a{.id = s.n >= 16 ? 66 : 23, .tile_id = s.m < 8 ? 10u : 15u, .stages_id = 13};
    return a;
  };
  const auto plain = [](const GemmShape&, int64_t) { return dsl::GemmDesc{}; };
  CublasTable old{.arch = "sm_90"};
  ScanState st;
  ASSERT_TRUE(scan_heuristic(old, st, GemmShape{}, resume_grid(), h).ok());
  coarsen(old);
  ASSERT_EQ(old.classes.size(), 2u);
  int probes = 0;
  ASSERT_TRUE(probe_classes(old, st, reference_probe(plain, &probes), resume_options()).ok());
  EXPECT_EQ(probes, 4);
  int c23 = -1;
  for (size_t c = 0; c < old.classes.size(); ++c) {
    ASSERT_TRUE(old.classes[c].desc.has_value()) << old.classes[c].note;
    if (old.classes[c].cls.values.id == 23) c23 = static_cast<int>(c);
  }
  ASSERT_GE(c23, 0);
  ASSERT_EQ(old.classes[c23].probes.size(), 2u);
  const ProbePoint first = old.classes[c23].probes[0];
  const ProbePoint second = old.classes[c23].probes[1];
  ASSERT_NE(old.variants[first.variant].key.tile, old.variants[second.variant].key.tile);
  const TableClass nvjet = old.classes[1 - c23];

  absl::StatusOr<CublasTable> t = parse_table(write_table(old));
  ASSERT_TRUE(t.ok()) << t.status();
  ScanState rst;
  absl::StatusOr<RekeyStats> rk = rekey_table(*t, rst);
  ASSERT_TRUE(rk.ok()) << rk.status();
  EXPECT_EQ(rk->classes_before, 2);
  EXPECT_EQ(rk->classes_after, 3);
  EXPECT_EQ(rk->unchanged, 1);
  EXPECT_EQ(rk->changed, 2);
  EXPECT_EQ(rk->descs_dropped, 1);
  EXPECT_EQ(rk->probes_kept, 2);
  ASSERT_EQ(t->classes.size(), 3u);
  EXPECT_EQ(t->classes[1 - c23], nvjet);
  // The part holding the first probe keeps the index; the other is appended.
  EXPECT_TRUE(contains(t->classes[c23].cls, t->variants[first.variant].key));
  EXPECT_TRUE(contains(t->classes[2].cls, t->variants[second.variant].key));
  for (int c : {c23, 2}) {
    EXPECT_FALSE(t->classes[c].desc.has_value());
    EXPECT_TRUE(has(t->classes[c].note, "re-keyed from class {id=23 split=0 reduction=none "
                                        "custom=0 inner=0}"))
        << t->classes[c].note;
    ASSERT_EQ(rst.kept[c].size(), 1u);
    EXPECT_EQ(rst.kept[c][0].desc, dsl::GemmDesc{});
  }
  EXPECT_EQ(rst.kept[c23][0].at, first);
  EXPECT_EQ(rst.kept[2][0].at, second);
  for (const TableVariant& v : t->variants) EXPECT_TRUE(contains(t->classes[v.cls].cls, v.key));
  // --dtypes without f16: no shapes, nothing probed, the re-keyed classes stay open.
  CublasTable only_bf16 = *t;
  ScanState bst = rst;
  ASSERT_TRUE(rebuild_shapes(only_bf16, bst, 1, {"bf16:bf16:nn"}).ok());
  int bprobes = 0;
  absl::StatusOr<ProbeStats> bs =
      probe_classes(only_bf16, bst, reference_probe(plain, &bprobes), resume_options());
  ASSERT_TRUE(bs.ok()) << bs.status();
  EXPECT_EQ(bprobes, 0);
  EXPECT_FALSE(only_bf16.classes[c23].desc.has_value());
  // With f16: one new probe per changed class, the kept one first in its list.
  ASSERT_TRUE(rebuild_shapes(*t, rst, 1).ok());
  probes = 0;
  absl::StatusOr<ProbeStats> ps = probe_classes(*t, rst, reference_probe(plain, &probes),
                                                resume_options());
  ASSERT_TRUE(ps.ok()) << ps.status();
  EXPECT_EQ(probes, 2);
  EXPECT_EQ(ps->validated, 2);
  for (int c : {c23, 2}) {
    ASSERT_TRUE(t->classes[c].desc.has_value()) << t->classes[c].note;
    ASSERT_EQ(t->classes[c].probes.size(), 2u);
    EXPECT_EQ(t->classes[c].probes[0], c == c23 ? first : second);
    EXPECT_TRUE(has(t->classes[c].note, "re-keyed from") &&
                has(t->classes[c].note, "2 probe(s) agree"))
        << t->classes[c].note;
  }
  EXPECT_EQ(t->classes[1 - c23], nvjet);
  // A kept probe that is not its class's variant is refused, naming the field.
  ScanState wrong = rst;
  wrong.kept[1 - c23].push_back(KeptProbe{first, dsl::GemmDesc{}});
  EXPECT_TRUE(has(probe_classes(*t, wrong, reference_probe(plain, &probes), resume_options())
                      .status(),
                  "ScanState.kept"));
  EXPECT_TRUE(has(rebuild_shapes(*t, rst, 0), "per_octave"));
  // The same class left open by a stopped visit: its open probes are kept as its
  // validated ones were, each with the part that holds its variant.
  CublasTable open = old;
  TableClass& oc = open.classes[c23];
  oc.desc.reset();
  oc.rules.clear();
  oc.probes.clear();
  oc.note = "not validated: the probe budget of 1 s was spent after 2 of 3 probes";
  oc.open_probes = {{first, dsl::GemmDesc{}}, {second, dsl::GemmDesc{}}};
  absl::StatusOr<CublasTable> ot = parse_table(write_table(open));
  ASSERT_TRUE(ot.ok()) << ot.status();
  ScanState ost;
  absl::StatusOr<RekeyStats> ork = rekey_table(*ot, ost);
  ASSERT_TRUE(ork.ok()) << ork.status();
  EXPECT_EQ(ork->probes_kept, 2);
  ASSERT_EQ(ot->classes.size(), 3u);
  std::set<int> kept_variants;
  for (int c : {c23, 2}) {
    EXPECT_TRUE(ot->classes[c].open_probes.empty()) << "carried as kept probes, not twice";
    ASSERT_EQ(ost.kept[c].size(), 1u);
    EXPECT_EQ(ot->variants[ost.kept[c][0].at.variant].cls, c) << "kept by the part of its variant";
    kept_variants.insert(ost.kept[c][0].at.variant);
    EXPECT_TRUE(has(ot->classes[c].note, "1 of its 2 probes")) << ot->classes[c].note;
  }
  EXPECT_EQ(kept_variants, (std::set<int>{first.variant, second.variant}));
}

TEST(CublasScan, RefineGridAddsTheMAndNBoundaries) {
  int64_t calls = 0;
  absl::StatusOr<ScanGrid> g = refine_grid(GemmShape{}, small_grid(), fake_heuristic, 4, &calls);
  ASSERT_TRUE(g.ok()) << g.status();
  // M: the tile changes at 8 (between 4 and 16); the split (m * n <= 256) ends at
  // m = 17 for n = 16 and at m = 5 for n = 64. N: between 3 (refused) and 16 every
  // bisection finds the end of the refusal, 4, first (one change per bisection: the
  // split's end at n = 5 for m = 64 stays hidden behind it); the split ends at n = 17
  // for m = 16; between 1 and 3 the change is the refusal itself, at 3.
  EXPECT_EQ(g->ms, (std::vector<int64_t>{1, 4, 5, 8, 16, 17, 64}));
  EXPECT_EQ(g->ns, (std::vector<int64_t>{1, 3, 4, 16, 17, 64}));
  EXPECT_EQ(g->ks, small_grid().ks);
  EXPECT_GT(calls, 4 * 4 * 6);
  // With the new lines, every grid-line shape looks up its own answer.
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, *g, fake_heuristic).ok());
  for (int64_t m : g->ms) {
    for (int64_t n : {1, 4, 16, 17, 64}) {
      for (int64_t k : {5, 701, 1600, 4096}) {
        const GemmShape s{.m = m, .n = n, .k = k};
        absl::StatusOr<MapRun> run = lookup_run(t, s);
        ASSERT_TRUE(run.ok()) << run.status();
        const CublasAnswer want = answer_of(*fake_heuristic(s));
        EXPECT_EQ(t.variants[run->variant].key, want.key) << m << "x" << n << "x" << k;
        EXPECT_EQ(run->splitk, want.splitk) << m << "x" << n << "x" << k;
      }
    }
  }
  EXPECT_FALSE(refine_grid(GemmShape{}, small_grid(), fake_heuristic, 0, &calls).ok());
}

TEST(CublasScan, SpanRuleFitUsesEachProbesSplitCount) {
  auto split_desc = [](int64_t span) {
    dsl::GemmDesc d;
    d.family = dsl::GemmFamily::kSplitK;
    d.k_cuts = {{span, dsl::Fold::kChain}};
    return d;
  };
  // (577, 3) and (1000, 4) both give 256: split/256 fits them; (500, 3) -> 192 needs 64.
  absl::StatusOr<std::vector<SpanRule>> r =
      fit_span_rules(true, {577, 1000}, {3, 4}, {split_desc(256), split_desc(256)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(to_string((*r)[0]), "split/256");
  r = fit_span_rules(true, {577, 1000, 500}, {3, 4, 3},
                     {split_desc(256), split_desc(256), split_desc(192)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(to_string((*r)[0]), "split/64");
  // The H200 point alone: 1408 at (4096, 3) is round_up(1366, 128) too.
  r = fit_span_rules(true, {4096}, {3}, {split_desc(1408)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(to_string((*r)[0]), "split/128");
  // No plain granule fits 80 at (289, 4) and 128 at (2240, 33) (session 8, device run 2:
  // "No span rule fits"); the granule 64 at K multiples of 64 does, with 16 elsewhere
  // (the coarsest; 8 fits too, for a separating probe to tell).
  r = fit_span_rules(true, {289, 293, 297, 2240}, {4, 4, 4, 33},
                     {split_desc(80), split_desc(80), split_desc(80), split_desc(128)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(to_string((*r)[0]), "split/16/64");
  r = fit_span_rules(false, {576, 1000}, {1, 1}, {split_desc(128), split_desc(128)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(to_string((*r)[0]), "fixed");
  r = fit_span_rules(false, {576, 1000}, {1, 1}, {split_desc(576), split_desc(1000)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(to_string((*r)[0]), "whole");
  r = fit_span_rules(false, {576, 1000}, {1, 1}, {split_desc(100), split_desc(200)});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(has(r.status(), "cut level 0")) << r.status();
  // A later probe may lack levels (an inner cut its K did not show): the rule of a level
  // comes from the probes that saw it. It may not have more than the first.
  dsl::GemmDesc two = split_desc(256);
  two.k_cuts.push_back({64, dsl::Fold::kChain});
  r = fit_span_rules(true, {577, 1000}, {3, 4}, {two, split_desc(256)});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ(to_string((*r)[1]), "fixed");
  r = fit_span_rules(true, {576, 1000}, {3, 3}, {split_desc(192), two});
  EXPECT_TRUE(has(r.status(), "cut levels")) << r.status();
  EXPECT_FALSE(fit_span_rules(true, {576}, {3, 4}, {split_desc(192)}).ok());
}

}  // namespace
}  // namespace fixbits::profile

namespace fixbits::profile {
namespace {

// The split dtypes the reduction scheme names (every validated split class of session
// 15's table: compute_type (f32, f32), output_type (out, f32), in place (f32, out)) are
// what probe_key tries first; a split the scheme does not describe is still found by
// the search over all nine pairs that follows.
TEST(CublasScan, TheReductionSchemeNamesTheSplitDtypesFirst) {
  using P = std::vector<std::pair<DType, DType>>;
  EXPECT_EQ(reduction_dtypes(2, DType::kBF16), (P{{DType::kF32, DType::kF32}}));
  EXPECT_EQ(reduction_dtypes(4, DType::kBF16), (P{{DType::kBF16, DType::kF32}}));
  EXPECT_EQ(reduction_dtypes(1, DType::kF16), (P{{DType::kF32, DType::kF16}}));
  EXPECT_TRUE(reduction_dtypes(0, DType::kF16).empty());
  // The search after a narrowed one tries the other eight pairs, not the one again.
  const P rest = dsl::probe::split_dtypes_without({{DType::kF32, DType::kF32}});
  EXPECT_EQ(rest.size(), 8u);
  EXPECT_EQ(std::count(rest.begin(), rest.end(), std::make_pair(DType::kF32, DType::kF32)), 0);
  EXPECT_EQ(dsl::probe::split_dtypes_without({}).size(), 9u);
  EXPECT_EQ(dsl::probe::split_dtypes_without({}).front(), std::make_pair(DType::kF32, DType::kF32));
  const AlgoConfig compute_type{.id = 66, .splitk_num = 3, .reduction_scheme = 2};
  for (DType partial : {DType::kF32, DType::kF16}) {
    dsl::GemmDesc truth;
    truth.family = dsl::GemmFamily::kSplitK;
    truth.k_cuts = {{100, dsl::Fold::kChain}};
    truth.partial_dtype = partial;  // f16: not what compute_type names
    const dsl::probe::GemmBlackBox box = [truth](const dsl::reference::GemmProblem& p) {
      return dsl::reference::gemm(truth, p);
    };
    absl::StatusOr<dsl::GemmDesc> d =
        probe_key(box, GemmShape{.m = 4, .n = 4, .k = 300}, answer_of(compute_type).key,
                  dsl::Instruction::kMmaSync, {}, {}, 3);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->partial_dtype, partial) << dsl::to_string(*d);
  }
}

}  // namespace
}  // namespace fixbits::profile

