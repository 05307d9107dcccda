// profile/CublasScan on the CPU against a fake cost model and a fake library: the
// fake heuristic answers split-K (3 parts, spans rounded up to 64) for small outputs
// at K > 700, a plain kernel otherwise, with a tile that changes at M = 8 (a speed
// knob) and a refusal at N = 3; the fake library computes reference::gemm of the
// descriptor that answer stands for. The scan must find the K boundary exactly by
// bisection, the probe must recover each key's descriptor through the real
// dsl::probe, the span rule must come out split3/64, and lookups at K values never
// scanned must give the fake's own descriptor.
#include <string>

#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"
#include "profile/CublasScan.h"

namespace fixbits::profile {
namespace {

using runtime::AlgoConfig;
using runtime::GemmShape;

bool fake_splits(int64_t m, int64_t n, int64_t k) { return m * n <= 256 && k > 700; }

absl::StatusOr<AlgoConfig> fake_heuristic(const GemmShape& s) {
  if (s.n == 3) return absl::UnimplementedError("the fake refuses N = 3");
  AlgoConfig a;
  a.id = 31;
  a.tile_id = s.m < 8 ? 11 : 12;
  a.splitk_num = fake_splits(s.m, s.n, s.k) ? 3 : 0;
  a.cta_swizzling = static_cast<uint32_t>(s.k % 2);  // not part of the key
  a.stages_id = 5;
  return a;
}

dsl::GemmDesc fake_truth(int64_t m, int64_t n, int64_t k) {
  dsl::GemmDesc d;  // f16 mma_sync, ik 16, fast accumulation
  if (fake_splits(m, n, k)) {
    d.family = dsl::GemmFamily::kSplitK;
    const int64_t part = (k + 2) / 3;
    d.k_cuts = {{std::min<int64_t>(k, (part + 63) / 64 * 64), dsl::Fold::kChain}};
  }
  return d;
}

ScanGrid small_grid() {
  return ScanGrid{.ms = {1, 4, 16, 64}, .ns = {1, 3, 16, 64}, .ks = {1, 2, 64, 512, 2048, 4096}};
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

TEST(CublasScan, HeuristicMapFindsTheKBoundaryExactly) {
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
  // Keys: tile 11 / 12 x split / no split = 4 (swizzle ignored).
  ASSERT_EQ(t.keys.size(), 4u);
  ASSERT_EQ(t.maps.size(), 1u);
  EXPECT_NE(t.maps[0].refusal.find("N = 3"), std::string::npos) << t.maps[0].refusal;
  const std::string text = write_table(t);
  absl::StatusOr<CublasTable> back = parse_table(text);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
  for (int64_t m : {1, 4, 16, 64}) {
    for (int64_t n : {1, 16, 64}) {
      for (int64_t k : {1, 2, 63, 699, 700, 701, 702, 1500, 4096}) {
        absl::StatusOr<int> key = lookup_key(*back, GemmShape{.m = m, .n = n, .k = k});
        ASSERT_TRUE(key.ok()) << m << "x" << n << "x" << k << ": " << key.status();
        EXPECT_EQ(back->keys[*key].key, key_of(*fake_heuristic(GemmShape{.m = m, .n = n, .k = k})))
            << m << "x" << n << "x" << k;
      }
    }
    absl::Status refused = lookup_key(*back, GemmShape{.m = m, .n = 3, .k = 64}).status();
    EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition) << refused;
  }
  // A second scan of one family is refused; bad grids name the field.
  EXPECT_FALSE(scan_heuristic(t, st, GemmShape{}, small_grid(), fake_heuristic).ok());
  CublasTable t2;
  ScanGrid bad = small_grid();
  bad.ks = {4, 2};
  EXPECT_NE(scan_heuristic(t2, st, GemmShape{}, bad, fake_heuristic).message().find("ScanGrid.ks"),
            std::string::npos);
  absl::Status all_refused = scan_heuristic(
      t2, st, GemmShape{}, small_grid(),
      [](const GemmShape&) -> absl::StatusOr<AlgoConfig> { return absl::InternalError("down"); });
  EXPECT_EQ(all_refused.code(), absl::StatusCode::kFailedPrecondition) << all_refused;
}

TEST(CublasScan, ProbeRecoversEveryKeyAndFitsTheSplitRule) {
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, small_grid(), fake_heuristic).ok());
  int probes = 0;
  const ProbeFn probe = [&](const GemmShape& s, const CublasKey& key) {
    ++probes;
    // The fake library at the full shape s: the bits of the fake's own descriptor.
    const dsl::probe::GemmBlackBox box = [s](const dsl::reference::GemmProblem& p) {
      return dsl::reference::gemm(fake_truth(s.m, s.n, p.k), p);
    };
    return probe_key(box, s, key, dsl::Instruction::kMmaSync);
  };
  ASSERT_TRUE(probe_keys(t, st, probe, ProbeOptions{.max_probe_k = 1100, .fit_probes = 2}).ok());
  EXPECT_EQ(probes, 2 + 2 * 3);  // two plain keys once, two split keys three times
  for (const TableKey& k : t.keys) {
    ASSERT_TRUE(k.desc.has_value()) << to_string(k.key) << ": " << k.note;
    if (k.key.splitk > 1) {
      ASSERT_EQ(k.rules.size(), 1u);
      EXPECT_EQ(to_string(k.rules[0]), "split3/64") << "probed at " << k.probed_k.size();
      EXPECT_EQ(k.k, 701);  // the smallest split K, found by the bisection
    } else {
      EXPECT_TRUE(k.rules.empty());
      EXPECT_EQ(k.k, 699);  // the odd K below the boundary the bisection visited
    }
  }
  absl::StatusOr<CublasTable> back = parse_table(write_table(t));
  ASSERT_TRUE(back.ok()) << back.status();
  for (int64_t m : {1, 4, 16}) {
    for (int64_t n : {1, 16}) {
      for (int64_t k : {2, 5, 700, 701, 777, 1000, 1999, 3001, 4096}) {
        absl::StatusOr<dsl::GemmDesc> d = lookup(*back, GemmShape{.m = m, .n = n, .k = k});
        ASSERT_TRUE(d.ok()) << d.status();
        EXPECT_EQ(*d, fake_truth(m, n, k)) << m << "x" << n << "x" << k;
      }
    }
  }
}

TEST(CublasScan, KeysOutsideTheProbeRangeOrBudgetKeepANote) {
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, small_grid(), fake_heuristic).ok());
  const ProbeFn fails = [](const GemmShape& s, const CublasKey&) -> absl::StatusOr<dsl::GemmDesc> {
    return absl::NotFoundError("no candidate survived");
  };
  ASSERT_TRUE(probe_keys(t, st, fails, ProbeOptions{.max_probe_k = 600}).ok());
  for (const TableKey& k : t.keys) {
    EXPECT_FALSE(k.desc.has_value());
    if (k.key.splitk > 1) {
      EXPECT_NE(k.note.find("outside [3, 600]"), std::string::npos) << k.note;
    } else {
      EXPECT_NE(k.note.find("no candidate survived"), std::string::npos) << k.note;
    }
  }
  absl::Status s = lookup(t, GemmShape{.m = 1, .n = 1, .k = 5}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("no candidate survived"), std::string::npos) << s;
  EXPECT_FALSE(probe_keys(t, ScanState{}, fails, ProbeOptions{}).ok());
  EXPECT_FALSE(probe_keys(t, st, fails, ProbeOptions{.max_probe_k = 2}).ok());
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
  // With the new lines, every grid-line shape looks up its own key.
  CublasTable t{.arch = "sm_90"};
  ScanState st;
  ASSERT_TRUE(scan_heuristic(t, st, GemmShape{}, *g, fake_heuristic).ok());
  for (int64_t m : g->ms) {
    for (int64_t n : {1, 4, 16, 17, 64}) {
      for (int64_t k : {5, 701, 4096}) {
        absl::StatusOr<int> key = lookup_key(t, GemmShape{.m = m, .n = n, .k = k});
        ASSERT_TRUE(key.ok()) << key.status();
        EXPECT_EQ(t.keys[*key].key, key_of(*fake_heuristic(GemmShape{.m = m, .n = n, .k = k})))
            << m << "x" << n << "x" << k;
      }
    }
  }
  EXPECT_FALSE(refine_grid(GemmShape{}, small_grid(), fake_heuristic, 0, &calls).ok());
}

TEST(CublasScan, SpanRuleFitPrefersTheLargestGranuleAndRejectsConflicts) {
  const CublasKey split3{.splitk = 3};
  auto split_desc = [](int64_t span) {
    dsl::GemmDesc d;
    d.family = dsl::GemmFamily::kSplitK;
    d.k_cuts = {{span, dsl::Fold::kChain}};
    return d;
  };
  absl::StatusOr<std::vector<SpanRule>> r =
      fit_span_rules(split3, {576, 1000}, {split_desc(192), split_desc(384)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(to_string((*r)[0]), "split3/64");
  r = fit_span_rules(CublasKey{}, {576, 1000}, {split_desc(128), split_desc(128)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(to_string((*r)[0]), "fixed");
  r = fit_span_rules(CublasKey{}, {576, 1000}, {split_desc(576), split_desc(1000)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(to_string((*r)[0]), "whole");
  r = fit_span_rules(CublasKey{}, {576, 1000}, {split_desc(100), split_desc(200)});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("level 0"), std::string::npos) << r.status();
  dsl::GemmDesc plain;
  r = fit_span_rules(split3, {576, 1000}, {split_desc(192), plain});
  EXPECT_NE(r.status().message().find("cut levels"), std::string::npos) << r.status();
}

}  // namespace
}  // namespace fixbits::profile
