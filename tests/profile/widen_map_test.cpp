// profile/WidenMap on the CPU against fake cost models: a map scanned to M, N <= 64 and
// then widened to 256 equals, cell by cell and key by key, one scanned to 256 at once,
// without asking the heuristic at any old cell; new keys join the class that contains
// them (a new tile of nvjet) or make a new class (a new inner shape) that fixes the
// fields an earlier split forced; refinement adds the boundary lines above the old map
// only; errors name the field and leave the table as it was.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "dsl/probe/Probe.h"
#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"
#include "profile/CublasScan.h"
#include "profile/CublasTable.h"
#include "profile/WidenMap.h"

namespace fixbits::profile {
namespace {

using runtime::AlgoConfig;
using runtime::GemmShape;

bool has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// nvjet (66) whose tile follows M below N = 100 and is 20 from N = 100 on (a speed knob:
// the same class), whose inner shape is 3 from M = 150 on (a coarse field: a class no
// narrower shape had), split-K for small outputs at K > 700, and a refusal at N = 3.
absl::StatusOr<AlgoConfig> wide_fake(const GemmShape& s) {
  if (s.n == 3) return absl::UnimplementedError("the fake refuses N = 3");
  AlgoConfig a;
  a.id = 66;
  a.tile_id = s.n >= 100 ? 20 : (s.m < 8 ? 10 : 15);
  a.stages_id = s.k < 2048 ? 13 : 12;
  a.inner_shape_id = s.m >= 150 ? 3 : 0;
  const bool split = s.m * s.n <= 256 && s.k > 700;
  a.splitk_num = split ? 3 + (s.k >= 1500) : 0;
  a.reduction_scheme = split ? 2 : 0;
  return a;
}

constexpr int64_t kMaxK = 4096;

CublasTable scanned(int64_t max_mn, const HeuristicFn& h, ScanState* state) {
  CublasTable t;
  t.arch = "sm_90";
  t.library = "130100";
  EXPECT_TRUE(scan_heuristic(t, *state, GemmShape{}, default_grid(GemmShape{}, 2, max_mn, kMaxK), h).ok());
  return t;
}

// A cell's runs as (k0, key text, split count): comparable across tables.
std::vector<std::tuple<int64_t, std::string, uint32_t>> keyed(const CublasTable& t,
                                                              const std::vector<MapRun>& runs) {
  std::vector<std::tuple<int64_t, std::string, uint32_t>> out;
  for (const MapRun& r : runs) {
    out.emplace_back(r.k0, r.variant < 0 ? "refused" : to_string(t.variants[r.variant].key),
                     r.splitk);
  }
  return out;
}

TEST(WidenMap, WidenedCellsEqualOneWideScanAndNoOldCellIsAskedAgain) {
  ScanState state;
  CublasTable t = scanned(64, wide_fake, &state);
  ASSERT_EQ(t.maps.size(), 1u);
  const FamilyMap before = t.maps[0];
  const std::vector<TableVariant> variants = t.variants;
  const size_t variants_before = t.variants.size(), classes_before = t.classes.size();
  ASSERT_EQ(classes_before, 2u);  // plain and split nvjet
  // A descriptor the widening must keep.
  t.classes[0].desc = dsl::GemmDesc{};
  t.classes[0].note = "validated";
  for (size_t v = 0; v < t.variants.size() && t.classes[0].probes.empty(); ++v) {
    if (t.variants[v].cls == 0) {
      t.classes[0].probes.push_back(ProbePoint{.variant = static_cast<int>(v), .m = 1, .n = 1, .k = 64});
    }
  }

  int64_t old_asks = 0, asks = 0;
  const HeuristicFn counting = [&](const GemmShape& s) {
    ++asks;
    if (s.m <= 64 && s.n <= 64) ++old_asks;
    return wide_fake(s);
  };
  absl::StatusOr<WidenStats> stats =
      widen_map(t, state, GemmShape{}, WidenOptions{.per_octave = 2, .max_mn = 256, .refine = 0},
                counting);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(old_asks, 0);
  EXPECT_EQ(stats->heuristic_calls, asks);

  ScanState fresh_state;
  const CublasTable fresh = scanned(256, wide_fake, &fresh_state);
  const FamilyMap& g = t.maps[0];
  ASSERT_EQ(g.ms, fresh.maps[0].ms);
  ASSERT_EQ(g.ns, fresh.maps[0].ns);
  EXPECT_EQ(g.k_max, before.k_max);
  EXPECT_EQ(stats->new_m_lines, static_cast<int64_t>(g.ms.size() - before.ms.size()));
  EXPECT_EQ(stats->new_n_lines, static_cast<int64_t>(g.ns.size() - before.ns.size()));
  EXPECT_EQ(stats->new_cells,
            static_cast<int64_t>(g.ms.size() * g.ns.size() - before.ms.size() * before.ns.size()));
  for (size_t mi = 0; mi < g.ms.size(); ++mi) {
    for (size_t ni = 0; ni < g.ns.size(); ++ni) {
      const std::vector<MapRun>& runs = g.runs[mi * g.ns.size() + ni];
      EXPECT_EQ(keyed(t, runs), keyed(fresh, fresh.maps[0].runs[mi * g.ns.size() + ni]))
          << "cell " << g.ms[mi] << " x " << g.ns[ni];
      if (mi < before.ms.size() && ni < before.ns.size()) {
        EXPECT_EQ(runs, before.runs[mi * before.ns.size() + ni]) << "an old cell changed";
      }
    }
  }
  // Old variants and classes keep their indices; the descriptor stays.
  for (size_t v = 0; v < variants_before; ++v) {
    EXPECT_EQ(t.variants[v].key, variants[v].key);
    EXPECT_EQ(t.variants[v].cls, variants[v].cls);
  }
  ASSERT_TRUE(t.classes[0].desc.has_value());
  EXPECT_EQ(t.classes[0].note, "validated");

  // Tile 20 is a new variant of each nvjet class (gained); inner 3 makes new classes.
  EXPECT_EQ(stats->new_variants.size(), t.variants.size() - variants_before);
  EXPECT_EQ(t.variants.size(), fresh.variants.size());
  EXPECT_EQ(stats->new_classes.size(), t.classes.size() - classes_before);
  ASSERT_FALSE(stats->new_classes.empty());
  for (int c : stats->new_classes) {
    const TableClass& tc = t.classes[c];
    EXPECT_FALSE(tc.desc.has_value());
    EXPECT_EQ(tc.cls.values.inner, 3u);
    EXPECT_TRUE(has(tc.note, "M, N <= 256")) << tc.note;
  }
  ASSERT_TRUE(stats->gained.count(0));
  for (const auto& [c, vs] : stats->gained) {
    EXPECT_LT(c, static_cast<int>(classes_before));
    for (int v : vs) {
      EXPECT_EQ(t.variants[v].cls, c);
      EXPECT_EQ(t.variants[v].key.tile, 20u);
    }
  }
  for (int v : stats->new_variants) {
    EXPECT_FALSE(state.shapes[v].points.empty()) << "variant " << v << " has nowhere to be probed";
  }
  ASSERT_EQ(state.shapes.size(), t.variants.size());
  // Every variant's class contains it, and counts add up to the wide scan's.
  int64_t shapes = 0, fresh_shapes = 0;
  for (const TableVariant& v : t.variants) {
    EXPECT_TRUE(contains(t.classes[v.cls].cls, v.key)) << to_string(v.key);
    shapes += v.shapes;
  }
  for (const TableVariant& v : fresh.variants) fresh_shapes += v.shapes;
  EXPECT_EQ(shapes, fresh_shapes);

  // The grown map looks up past the old range, and the table round-trips.
  absl::StatusOr<MapRun> run = lookup_run(t, GemmShape{.m = 200, .n = 200, .k = 1000});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(t.variants[run->variant].key.inner, 3u);
  EXPECT_EQ(t.variants[run->variant].key.tile, 20u);
  absl::StatusOr<CublasTable> back = parse_table(write_table(t));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, t);
}

// The descriptor wide_fake's answers stand for: f16 mma.sync with fast accumulation,
// split-K spans ceil(K / P) rounded up to 64 (inner shape and tile move no bits).
dsl::GemmDesc wide_truth(const GemmShape& s, int64_t k) {
  dsl::GemmDesc d;
  absl::StatusOr<AlgoConfig> a = wide_fake(GemmShape{.m = s.m, .n = s.n, .k = s.k});
  if (a.ok() && a->splitk_num > 1) {
    d.family = dsl::GemmFamily::kSplitK;
    const int64_t part = (k + a->splitk_num - 1) / a->splitk_num;
    d.k_cuts = {{std::min<int64_t>(k, (part + 63) / 64 * 64), dsl::Fold::kChain}};
  }
  return d;
}

TEST(WidenMap, TheWidenedTableProbesItsNewClassesAndTheGainedVariantsFirst) {
  // Where the probes went: (variant, M, N, K, split count).
  std::vector<ProbePoint> probed;
  CublasTable* current = nullptr;
  const ProbeFn probe = [&](const GemmShape& s, const CublasKey& key,
                            const std::vector<dsl::GemmDesc>&) -> absl::StatusOr<dsl::GemmDesc> {
    probed.push_back(ProbePoint{.variant = find_variant(*current, family_of(s), key),
                                .m = s.m, .n = s.n, .k = s.k});
    const dsl::probe::GemmBlackBox box = [s](const dsl::reference::GemmProblem& p) {
      return dsl::reference::gemm(wide_truth(s, p.k), p);
    };
    absl::StatusOr<AlgoConfig> a = wide_fake(s);
    return probe_key(box, s, key, dsl::Instruction::kMmaSync, {}, {},
                     a.ok() ? std::max<uint32_t>(1, a->splitk_num) : 1);
  };
  ScanState state;
  CublasTable t = scanned(64, wide_fake, &state);
  current = &t;
  ProbeOptions first{.min_probe_k = 256, .max_probe_k = 1024, .budget_s = 600};
  absl::StatusOr<ProbeStats> stats = probe_classes(t, state, probe, first);
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_EQ(t.classes.size(), 2u);
  ASSERT_TRUE(t.classes[0].desc && t.classes[1].desc) << t.classes[0].note << " / " << t.classes[1].note;

  absl::StatusOr<WidenStats> w = widen_map(
      t, state, GemmShape{}, WidenOptions{.per_octave = 2, .max_mn = 256, .refine = 0}, wide_fake);
  ASSERT_TRUE(w.ok()) << w.status();
  ProbeOptions again{.min_probe_k = 256, .max_probe_k = 1024, .budget_s = 600};
  EXPECT_EQ(plan_widen_probes(t, state, *w, 1, &again), static_cast<int64_t>(w->gained.size()));
  EXPECT_EQ(again.only_classes, std::set<int>(w->new_classes.begin(), w->new_classes.end()));
  ASSERT_FALSE(again.only_classes.empty());
  ASSERT_FALSE(again.extra_points.empty());
  for (const auto& [c, pts] : again.extra_points) {
    ASSERT_EQ(pts.size(), 1u);
    const std::vector<int>& gained = w->gained.at(c);
    EXPECT_NE(std::find(gained.begin(), gained.end(), pts[0].variant), gained.end());
    EXPECT_GE(pts[0].k, 256);
    EXPECT_LE(pts[0].k, 1024);
  }
  probed.clear();
  stats = probe_classes(t, state, probe, again);
  ASSERT_TRUE(stats.ok()) << stats.status();
  // Each gained class was probed at its point (the first probe of its visit), and no
  // class outside the plan was visited.
  for (const auto& [c, pts] : again.extra_points) {
    const auto it = std::find_if(probed.begin(), probed.end(), [&](const ProbePoint& p) {
      return p.variant >= 0 && t.variants[p.variant].cls == c;
    });
    ASSERT_NE(it, probed.end()) << "class " << c << " was not probed";
    EXPECT_EQ(it->variant, pts[0].variant);
    EXPECT_EQ(std::tie(it->m, it->n, it->k), std::tie(pts[0].m, pts[0].n, pts[0].k));
  }
  for (const ProbePoint& p : probed) {
    ASSERT_GE(p.variant, 0);
    const int c = t.variants[p.variant].cls;
    EXPECT_TRUE(again.only_classes.count(c) || again.extra_points.count(c)) << "class " << c;
  }
  // Every class has a descriptor that gives the truth at shapes of the new cells (split
  // shapes where ceil(K / P) rounded to 64 and to 128 agree: probes up to K = 1024 need
  // not tell split/64 from split/128, and that is the probe's budget, not the widening).
  for (const TableClass& c : t.classes) EXPECT_TRUE(c.desc.has_value()) << c.note;
  for (const GemmShape s : {GemmShape{.m = 200, .n = 200, .k = 1000}, GemmShape{.m = 181, .n = 1, .k = 3000},
                            GemmShape{.m = 2, .n = 128, .k = 1152}, GemmShape{.m = 1, .n = 255, .k = 4000}}) {
    absl::StatusOr<dsl::GemmDesc> d = lookup(t, s);
    ASSERT_TRUE(d.ok()) << runtime::to_string(s) << ": " << d.status();
    EXPECT_EQ(dsl::to_string(*d), dsl::to_string(wide_truth(s, s.k))) << runtime::to_string(s);
  }
}

TEST(WidenMap, RefinementAddsBoundaryLinesAboveTheOldMapOnly) {
  // The tile changes at N = 100 and the inner shape at M = 150, between default lines
  // (91 and 127, 128 and 181); the cluster shape changes at M = 40, between the old
  // map's lines 33 and 45, where the N pass's refinement also looks: that line is not
  // kept (the old cells are not rescanned).
  const HeuristicFn h = [](const GemmShape& s) -> absl::StatusOr<AlgoConfig> {
    absl::StatusOr<AlgoConfig> a = wide_fake(s);
    if (a.ok() && s.m >= 40) a->cluster_shape_id = 2;
    return a;
  };
  ScanState state;
  CublasTable t = scanned(64, h, &state);
  const std::vector<int64_t> ms0 = t.maps[0].ms, ns0 = t.maps[0].ns;
  absl::StatusOr<WidenStats> stats = widen_map(
      t, state, GemmShape{}, WidenOptions{.per_octave = 2, .max_mn = 256, .refine = 3}, h);
  ASSERT_TRUE(stats.ok()) << stats.status();
  const FamilyMap& g = t.maps[0];
  EXPECT_TRUE(std::equal(ms0.begin(), ms0.end(), g.ms.begin())) << "old M lines changed";
  EXPECT_TRUE(std::equal(ns0.begin(), ns0.end(), g.ns.begin())) << "old N lines changed";
  EXPECT_NE(std::find(g.ns.begin(), g.ns.end(), 100), g.ns.end());
  EXPECT_NE(std::find(g.ms.begin(), g.ms.end(), 150), g.ms.end());
  EXPECT_EQ(std::find(g.ms.begin(), g.ms.end(), 40), g.ms.end());
  EXPECT_TRUE(std::is_sorted(g.ms.begin(), g.ms.end()));
  EXPECT_TRUE(std::is_sorted(g.ns.begin(), g.ns.end()));
  // Exactly at the boundaries the map now answers like the heuristic.
  for (const GemmShape s : {GemmShape{.m = 150, .n = 16, .k = 64}, GemmShape{.m = 149, .n = 16, .k = 64},
                            GemmShape{.m = 16, .n = 100, .k = 64}, GemmShape{.m = 16, .n = 99, .k = 64}}) {
    absl::StatusOr<MapRun> run = lookup_run(t, s);
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_EQ(t.variants[run->variant].key, answer_of(*h(s)).key) << runtime::to_string(s);
  }
}

TEST(WidenMap, ANewKeyFixesTheFieldsAnEarlierSplitForced) {
  // One nvjet class that earlier probes split by stages (its mask holds stages = 13);
  // the wider cells answer stages 11, which that class does not contain.
  const HeuristicFn h = [](const GemmShape& s) -> absl::StatusOr<AlgoConfig> {
    AlgoConfig a;
    a.id = 66;
    a.tile_id = 15;
    a.stages_id = s.n > 64 ? 11 : 13;
    return a;
  };
  ScanState state;
  CublasTable t = scanned(64, h, &state);
  ASSERT_EQ(t.classes.size(), 1u);
  const uint32_t stages = field_bit(KeyField::kStages);
  t.classes[0].cls = class_of(t.variants[0].key, t.classes[0].cls.mask | stages);
  absl::StatusOr<WidenStats> stats = widen_map(
      t, state, GemmShape{}, WidenOptions{.per_octave = 2, .max_mn = 128, .refine = 0}, h);
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_EQ(stats->new_classes.size(), 1u);
  EXPECT_TRUE(stats->gained.empty());
  const TableClass& made = t.classes[stats->new_classes[0]];
  EXPECT_NE(made.cls.mask & stages, 0u) << to_string(made.cls);
  EXPECT_EQ(made.cls.values.stages, 11u);
  EXPECT_FALSE(contains(made.cls, t.variants[0].key));
  absl::StatusOr<int> c = class_of_answer(t, GemmShape{.m = 4, .n = 100, .k = 64},
                                          answer_of(*h(GemmShape{.m = 4, .n = 100})).key);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*c, stats->new_classes[0]);
}

TEST(WidenMap, ErrorsNameTheFieldAndLeaveTheTableAsItWas) {
  ScanState state;
  CublasTable t = scanned(64, wide_fake, &state);
  const CublasTable before = t;
  const size_t shapes_before = state.shapes.size();
  const GemmShape bf16{.a_dtype = DType::kBF16, .b_dtype = DType::kBF16, .out_dtype = DType::kBF16};
  EXPECT_EQ(widen_map(t, state, bf16, {}, wide_fake).status().code(), absl::StatusCode::kNotFound);
  absl::Status s = widen_map(t, state, GemmShape{}, WidenOptions{.max_mn = 64}, wide_fake).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(has(std::string(s.message()), "max_mn")) << s;
  s = widen_map(t, state, GemmShape{}, WidenOptions{.per_octave = 0, .max_mn = 128}, wide_fake).status();
  EXPECT_TRUE(has(std::string(s.message()), "per_octave")) << s;
  s = widen_map(t, state, GemmShape{}, WidenOptions{.max_mn = 128, .refine = -1}, wide_fake).status();
  EXPECT_TRUE(has(std::string(s.message()), "refine")) << s;
  EXPECT_FALSE(widen_map(t, state, GemmShape{}, WidenOptions{.max_mn = 128}, {}).ok());
  // A heuristic that refuses every new shape: the scan's FailedPrecondition, nothing kept.
  const HeuristicFn narrow_only = [](const GemmShape& sh) -> absl::StatusOr<AlgoConfig> {
    if (sh.m > 64 || sh.n > 64) return absl::UnimplementedError("too large for the fake");
    return wide_fake(sh);
  };
  s = widen_map(t, state, GemmShape{}, WidenOptions{.max_mn = 128, .refine = 0}, narrow_only).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_EQ(t, before);
  EXPECT_EQ(state.shapes.size(), shapes_before);
}

TEST(WidenMap, TheProbePointPrefersTheProbeRangeAndShortTurns) {
  VariantShapes v;
  v.points[{8192, 1}] = {32, 32};   // above max_k
  v.points[{1024, 1}] = {64, 64};   // in range, ten trailing zero bits
  v.points[{1000, 1}] = {64, 128};  // in range, three
  v.points[{999, 3}] = {1, 1};      // in range, no trailing zero bit
  std::optional<ProbePoint> p = widen_probe_point(7, v, 256, 4096, int64_t{1} << 31);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(*p, (ProbePoint{.variant = 7, .m = 1, .n = 1, .k = 999, .splitk = 3}));
  v.points.erase({999, 3});
  p = widen_probe_point(7, v, 256, 4096, int64_t{1} << 31);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->k, 1000);
  // A cap on M * N * K leaves only what fits; nothing fits: nullopt.
  p = widen_probe_point(7, v, 256, 4096, 5000000);  // 64 x 64 x 1024 = 4194304 fits
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->k, 1024);
  p = widen_probe_point(7, v, 256, 4096, 32 * 32 * 8192);  // and 64 x 128 x 1000 too
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->k, 1000);
  EXPECT_FALSE(widen_probe_point(7, v, 256, 4096, 100).has_value());
}

}  // namespace
}  // namespace fixbits::profile
