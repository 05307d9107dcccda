// WidenMap: a family's map grown to larger M and N, its old cells untouched (WidenMap.h).
// Invariant: the table and the state change only when the whole widening succeeded (it
// works on copies); every run of the grown map names a variant of the table or -1.
#include "profile/WidenMap.h"

#include <algorithm>
#include <bit>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_format.h"
#include "profile/CublasKey.h"
#include "profile/JoinKey.h"

namespace fixbits::profile {
namespace {

std::vector<int64_t> above(const std::vector<int64_t>& lines, int64_t last) {
  std::vector<int64_t> out;
  for (int64_t v : lines) {
    if (v > last) out.push_back(v);
  }
  return out;
}

// One axis's new lines: the default lines above `last`, and with refine > 0 the first
// line of each new answer between neighbours from `last` on (refine_grid, the other
// axis at its default lines; what it adds on that other axis is not kept).
absl::StatusOr<std::vector<int64_t>> new_lines(const runtime::GemmShape& family,
                                               const ScanGrid& wide, bool m_axis, int64_t last,
                                               int refine, const HeuristicFn& heuristic,
                                               int64_t* calls, const ProgressFn& progress) {
  std::vector<int64_t> lines = above(m_axis ? wide.ms : wide.ns, last);
  if (lines.empty() || refine <= 0) return lines;
  ScanGrid g = wide;
  std::vector<int64_t>& axis = m_axis ? g.ms : g.ns;
  axis = lines;
  axis.insert(axis.begin(), last);
  absl::StatusOr<ScanGrid> refined = refine_grid(family, g, heuristic, refine, calls, progress);
  if (!refined.ok()) return refined.status();
  return above(m_axis ? refined->ms : refined->ns, last);
}

}  // namespace

absl::StatusOr<WidenStats> widen_map(CublasTable& table, ScanState& state,
                                     const runtime::GemmShape& family, const WidenOptions& options,
                                     const HeuristicFn& heuristic, const ProgressFn& progress) {
  const std::string fam = family_of(family);
  const FamilyMap* old = find_map(table, fam);
  if (old == nullptr) {
    return absl::NotFoundError(absl::StrFormat("widen_map: the table has no map of %s.", fam));
  }
  if (old->ms.empty() || old->ns.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "widen_map: the map of %s has no M or no N line; rescan it.", fam));
  }
  if (options.per_octave < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "WidenOptions.per_octave is %d; it must be >= 1 (the table's own grid).",
        options.per_octave));
  }
  if (options.refine < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "WidenOptions.refine is %d; it must be >= 0 (0: no refinement).", options.refine));
  }
  if (options.max_mn <= old->ms.back() || options.max_mn <= old->ns.back()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "WidenOptions.max_mn is %d; the map of %s already reaches M = %d and N = %d, and a "
        "wider map must pass both.", options.max_mn, fam, old->ms.back(), old->ns.back()));
  }
  if (!heuristic) return absl::InvalidArgumentError("widen_map was given no heuristic.");

  CublasTable t = table;
  ScanState st = state;
  st.shapes.resize(t.variants.size());
  const FamilyMap& map = *find_map(t, fam);
  WidenStats stats;
  const ScanGrid wide = default_grid(family, options.per_octave, options.max_mn, map.k_max);
  absl::StatusOr<std::vector<int64_t>> new_ms =
      new_lines(family, wide, true, map.ms.back(), options.refine, heuristic,
                &stats.heuristic_calls, progress);
  if (!new_ms.ok()) return new_ms.status();
  absl::StatusOr<std::vector<int64_t>> new_ns =
      new_lines(family, wide, false, map.ns.back(), options.refine, heuristic,
                &stats.heuristic_calls, progress);
  if (!new_ns.ok()) return new_ns.status();

  FamilyMap grown;
  grown.family = fam;
  grown.ms = map.ms;
  grown.ms.insert(grown.ms.end(), new_ms->begin(), new_ms->end());
  grown.ns = map.ns;
  grown.ns.insert(grown.ns.end(), new_ns->begin(), new_ns->end());
  grown.k_max = map.k_max;
  grown.refusal = map.refusal;
  grown.runs.resize(grown.ms.size() * grown.ns.size());
  const int classes_before = static_cast<int>(t.classes.size());
  const size_t old_nm = map.ms.size(), old_nn = map.ns.size(), nn = grown.ns.size();
  for (size_t mi = 0; mi < old_nm; ++mi) {
    for (size_t ni = 0; ni < old_nn; ++ni) grown.runs[mi * nn + ni] = map.runs[mi * old_nn + ni];
  }

  // Per joined scratch variant: its table variant and the seen points the scratch scan
  // kept for it (a variant no scratch run shows).
  std::vector<std::pair<int, std::vector<ProbePoint>>> scratch_seen;
  // The new cells in two rectangles: the old M lines by the new N lines, then the new M
  // lines by every N line. Each is scanned into a scratch table and joined by key.
  struct Rect {
    std::vector<int64_t> ms, ns;
    size_t m0, n0;  // where its first cell sits in the grown map
  };
  const std::vector<Rect> rects = {
      Rect{.ms = map.ms, .ns = *new_ns, .m0 = 0, .n0 = old_nn},
      Rect{.ms = *new_ms, .ns = grown.ns, .m0 = old_nm, .n0 = 0},
  };
  for (const Rect& r : rects) {
    if (r.ms.empty() || r.ns.empty()) continue;
    CublasTable scratch;
    scratch.arch = t.arch;
    scratch.library = t.library;
    ScanState scratch_state;
    ScanGrid g{.ms = r.ms, .ns = r.ns, .ks = wide.ks, .k_multiple = wide.k_multiple};
    absl::Status s = scan_heuristic(scratch, scratch_state, family, g, heuristic, progress);
    stats.heuristic_calls += scratch_state.heuristic_calls;
    if (!s.ok()) return s;
    stats.new_cells += static_cast<int64_t>(r.ms.size() * r.ns.size());
    // Scratch variant -> table variant.
    std::vector<int> to(scratch.variants.size(), -1);
    for (size_t sv = 0; sv < scratch.variants.size(); ++sv) {
      const CublasKey& key = scratch.variants[sv].key;
      const JoinedKey j = join_key(
          t, st, fam, key,
          absl::StrFormat("new in the map widened to M, N <= %d (widen_map)", options.max_mn));
      const int v = j.variant;
      if (j.how != JoinedKey::How::kHeld) stats.new_variants.push_back(v);
      if (j.how == JoinedKey::How::kNewClass) stats.new_classes.push_back(j.cls);
      if (j.how == JoinedKey::How::kGained && j.cls < classes_before) {
        stats.gained[j.cls].push_back(v);
      }
      to[sv] = v;
      t.variants[v].shapes += scratch.variants[sv].shapes;
      merge_shapes(st.shapes[v], scratch_state.shapes[sv]);
      if (!scratch.variants[sv].seen.empty()) {
        std::vector<ProbePoint> pts = scratch.variants[sv].seen;
        for (ProbePoint& p : pts) p.variant = v;
        scratch_seen.emplace_back(v, std::move(pts));
      }
    }
    const FamilyMap& part = scratch.maps.front();
    for (size_t i = 0; i < r.ms.size(); ++i) {
      for (size_t j = 0; j < r.ns.size(); ++j) {
        std::vector<MapRun> runs = part.runs[i * r.ns.size() + j];
        for (MapRun& run : runs) {
          if (run.variant >= 0) run.variant = to[run.variant];
        }
        grown.runs[(r.m0 + i) * nn + (r.n0 + j)] = std::move(runs);
      }
    }
    if (grown.refusal.empty()) grown.refusal = part.refusal;
  }
  stats.new_m_lines = static_cast<int64_t>(new_ms->size());
  stats.new_n_lines = static_cast<int64_t>(new_ns->size());

  // A variant the grown map shows in no run keeps the points the new cells met it at.
  std::set<int> mapped;
  for (const std::vector<MapRun>& runs : grown.runs) {
    for (const MapRun& r : runs) mapped.insert(r.variant);
  }
  for (const auto& [v, points] : scratch_seen) {
    if (mapped.count(v)) continue;
    std::vector<ProbePoint>& seen = t.variants[v].seen;
    for (const ProbePoint& p : points) {
      if (seen.size() >= static_cast<size_t>(kSeenPoints)) break;
      if (std::find(seen.begin(), seen.end(), p) == seen.end()) seen.push_back(p);
    }
  }
  for (FamilyMap& m : t.maps) {
    if (m.family == fam) m = std::move(grown);
  }
  table = std::move(t);
  state = std::move(st);
  return stats;
}

int64_t plan_widen_probes(const CublasTable& table, const ScanState& state,
                          const WidenStats& stats, size_t per_class, ProbeOptions* options) {
  int64_t added = 0;
  for (int c : stats.new_classes) options->only_classes.insert(c);
  for (const auto& [c, gained] : stats.gained) {
    std::vector<int> vs = gained;
    std::stable_sort(vs.begin(), vs.end(), [&](int a, int b) {
      return table.variants[a].shapes > table.variants[b].shapes;
    });
    for (size_t i = 0; i < vs.size() && i < per_class; ++i) {
      std::optional<ProbePoint> pt =
          widen_probe_point(vs[i], state.shapes[vs[i]], options->min_probe_k,
                            options->max_probe_k, options->max_probe_mnk);
      if (!pt) continue;
      options->extra_points[c].push_back(*pt);
      ++added;
    }
  }
  return added;
}

std::optional<ProbePoint> widen_probe_point(int variant, const VariantShapes& shapes,
                                            int64_t min_k, int64_t max_k, int64_t max_mnk) {
  std::optional<ProbePoint> best;
  // Rank: inside [min_k, max_k] first, then the fewest trailing zero bits, then small K.
  auto rank = [&](const ProbePoint& p) {
    return std::tuple(!(p.k >= min_k && p.k <= max_k), std::countr_zero(static_cast<uint64_t>(p.k)),
                      p.k);
  };
  for (const auto& [kp, mn] : shapes.points) {
    const ProbePoint p{.variant = variant, .m = mn.first, .n = mn.second, .k = kp.first,
                       .splitk = kp.second};
    if (p.m * p.n * p.k > max_mnk) continue;
    if (!best || rank(p) < rank(*best)) best = p;
  }
  return best;
}

}  // namespace fixbits::profile
