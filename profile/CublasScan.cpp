// CublasScan: see CublasScan.h. One cell of the map, grid Ks {1, 64, 4096} with keys
// A, A, B: two grid calls agree on [1, 64]; between 64 and 4096 the bisection asks
// 2080, 1072, ... until it holds the last K of A's run (say 576) and the first of B's
// (577), so the cell's runs are 1:A, 577:B.
#include "profile/CublasScan.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <optional>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dsl/probe/Probe.h"

namespace fixbits::profile {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

absl::Status check_axis(const std::vector<int64_t>& v, const char* name) {
  if (v.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat("ScanGrid.%s is empty.", name));
  }
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 1 || (i > 0 && v[i] <= v[i - 1])) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ScanGrid.%s[%d] is %d; the grid must be positive and strictly ascending.", name, i,
          v[i]));
    }
  }
  return absl::OkStatus();
}

// The descriptor with every cut span zeroed: what must agree across probes of one key.
dsl::GemmDesc without_spans(dsl::GemmDesc d) {
  for (dsl::KCut& c : d.k_cuts) c.span = 0;
  return d;
}

}  // namespace

std::vector<int64_t> log_grid(int64_t lo, int64_t hi, int per_octave, int64_t multiple) {
  std::vector<int64_t> v;
  if (lo < 1 || hi < lo || per_octave < 1 || multiple < 1) return v;
  auto add = [&](int64_t x) {
    x = ceil_div(std::max<int64_t>(x, 1), multiple) * multiple;
    if (x >= lo && x <= hi) v.push_back(x);
  };
  add(lo);
  add(hi);
  for (int i = 0; i < 62 && (int64_t{1} << i) <= hi; ++i) {
    const int64_t p = int64_t{1} << i;
    add(p);
    for (int j = 1; j < per_octave; ++j) {
      add(static_cast<int64_t>(std::llround(static_cast<double>(p) *
                                            std::exp2(static_cast<double>(j) / per_octave))));
    }
    if (p >= 4) {
      add(p - 1);
      add(p + 1);
    }
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

ScanGrid default_grid(const runtime::GemmShape& family, int per_octave, int64_t max_mn,
                      int64_t max_k) {
  ScanGrid g;
  const bool fp8 = dtype_is_fp8(family.a_dtype) || dtype_is_fp8(family.b_dtype);
  g.k_multiple = fp8 ? 16 : 1;
  g.ms = log_grid(1, max_mn, per_octave);
  g.ns = log_grid(g.k_multiple, max_mn, per_octave, g.k_multiple);  // fp8: D's rows aligned
  g.ks = log_grid(g.k_multiple, max_k, per_octave, g.k_multiple);
  return g;
}

absl::StatusOr<ScanGrid> refine_grid(const runtime::GemmShape& family, const ScanGrid& grid,
                                     const HeuristicFn& heuristic, int points_per_gap,
                                     int64_t* calls, const ProgressFn& progress) {
  if (absl::Status s = check_axis(grid.ms, "ms"); !s.ok()) return s;
  if (absl::Status s = check_axis(grid.ns, "ns"); !s.ok()) return s;
  if (absl::Status s = check_axis(grid.ks, "ks"); !s.ok()) return s;
  if (points_per_gap < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "refine_grid was given points_per_gap = %d; it must be >= 1.", points_per_gap));
  }
  if (!heuristic) return absl::InvalidArgumentError("refine_grid was given no heuristic.");
  // A refusal is its own "key" (nullopt), so a refused region has boundaries too.
  using Answer = std::optional<CublasKey>;
  auto ask = [&](int64_t m, int64_t n, int64_t k) -> Answer {
    runtime::GemmShape s = family;
    s.m = m, s.n = n, s.k = k;
    if (calls) ++*calls;
    absl::StatusOr<runtime::AlgoConfig> a = heuristic(s);
    if (!a.ok()) return std::nullopt;
    return key_of(*a);
  };
  const size_t nm = grid.ms.size(), nn = grid.ns.size(), nk = grid.ks.size();
  std::vector<Answer> at(nm * nn * nk);
  auto idx = [&](size_t i, size_t j, size_t l) { return (i * nn + j) * nk + l; };
  for (size_t i = 0; i < nm; ++i) {
    for (size_t j = 0; j < nn; ++j) {
      for (size_t l = 0; l < nk; ++l) at[idx(i, j, l)] = ask(grid.ms[i], grid.ns[j], grid.ks[l]);
    }
    if (progress) progress("refine grid", static_cast<int64_t>(i + 1), static_cast<int64_t>(nm));
  }
  // One axis: `m_axis` bisects M (N and K fixed at grid points), else N.
  auto refine_axis = [&](bool m_axis) {
    const std::vector<int64_t>& axis = m_axis ? grid.ms : grid.ns;
    const size_t other = m_axis ? nn : nm;
    std::vector<int64_t> added;
    for (size_t i = 0; i + 1 < axis.size(); ++i) {
      if (axis[i + 1] - axis[i] < 2 * (m_axis ? 1 : grid.k_multiple)) continue;
      std::vector<std::pair<size_t, size_t>> differ;  // (other index, k index)
      for (size_t j = 0; j < other; ++j) {
        for (size_t l = 0; l < nk; ++l) {
          const Answer& lo = m_axis ? at[idx(i, j, l)] : at[idx(j, i, l)];
          const Answer& hi = m_axis ? at[idx(i + 1, j, l)] : at[idx(j, i + 1, l)];
          if (lo != hi) differ.emplace_back(j, l);
        }
      }
      const size_t take = std::min(differ.size(), static_cast<size_t>(points_per_gap));
      for (size_t t = 0; t < take; ++t) {
        const auto [j, l] = differ[take == 1 ? 0 : t * (differ.size() - 1) / (take - 1)];
        const int64_t fixed = m_axis ? grid.ns[j] : grid.ms[j];
        auto key_at = [&](int64_t v) {
          return m_axis ? ask(v, fixed, grid.ks[l]) : ask(fixed, v, grid.ks[l]);
        };
        const Answer lo_key = m_axis ? at[idx(i, j, l)] : at[idx(j, i, l)];
        // N stays on multiples of k_multiple (fp8's N grid), M on integers.
        const int64_t step = m_axis ? 1 : grid.k_multiple;
        int64_t lo = axis[i], hi = axis[i + 1];
        while (hi - lo > step) {
          const int64_t mid = lo + std::max<int64_t>(1, (hi - lo) / (2 * step)) * step;
          if (key_at(mid) == lo_key) {
            lo = mid;
          } else {
            hi = mid;
          }
        }
        added.push_back(hi);
      }
    }
    return added;
  };
  ScanGrid out = grid;
  for (int64_t v : refine_axis(true)) out.ms.push_back(v);
  for (int64_t v : refine_axis(false)) out.ns.push_back(v);
  for (std::vector<int64_t>* v : {&out.ms, &out.ns}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  return out;
}

absl::Status scan_heuristic(CublasTable& table, ScanState& state, const runtime::GemmShape& family,
                            const ScanGrid& grid, const HeuristicFn& heuristic,
                            const ProgressFn& progress) {
  if (absl::Status s = check_axis(grid.ms, "ms"); !s.ok()) return s;
  if (absl::Status s = check_axis(grid.ns, "ns"); !s.ok()) return s;
  if (absl::Status s = check_axis(grid.ks, "ks"); !s.ok()) return s;
  if (grid.k_multiple < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ScanGrid.k_multiple is %d; it must be >= 1.", grid.k_multiple));
  }
  for (int64_t k : grid.ks) {
    if (k % grid.k_multiple != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ScanGrid.ks holds %d, not a multiple of ScanGrid.k_multiple = %d.", k,
          grid.k_multiple));
    }
  }
  if (!heuristic) return absl::InvalidArgumentError("scan_heuristic was given no heuristic.");
  const std::string fam = family_of(family);
  for (const FamilyMap& m : table.maps) {
    if (m.family == fam) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "The table already holds a map of family %s; scan each family once.", fam));
    }
  }
  state.shapes.resize(table.keys.size());
  FamilyMap map{.family = fam, .ms = grid.ms, .ns = grid.ns, .k_max = grid.ks.back()};
  map.runs.resize(grid.ms.size() * grid.ns.size());
  int64_t asked = 0, refused = 0;

  auto key_at = [&](int64_t m, int64_t n, int64_t k) -> int {
    runtime::GemmShape s = family;
    s.m = m, s.n = n, s.k = k;
    ++asked;
    ++state.heuristic_calls;
    absl::StatusOr<runtime::AlgoConfig> a = heuristic(s);
    if (!a.ok()) {
      ++refused;
      if (map.refusal.empty()) {
        map.refusal = absl::StrFormat("%s: %s", runtime::to_string(s), a.status().message());
      }
      return -1;
    }
    const CublasKey key = key_of(*a);
    int idx = find_key(table, fam, key);
    if (idx < 0) {
      idx = static_cast<int>(table.keys.size());
      table.keys.push_back(TableKey{.family = fam, .key = key, .m = m, .n = n, .k = k});
      state.shapes.emplace_back();
    }
    ++table.keys[idx].shapes;
    auto& by_k = state.shapes[idx].by_k;
    auto it = by_k.find(k);
    if (it == by_k.end() || m * n < it->second.first * it->second.second ||
        (m * n == it->second.first * it->second.second && m < it->second.first)) {
      by_k[k] = {m, n};
    }
    return idx;
  };

  const int64_t cells = static_cast<int64_t>(map.runs.size());
  const int64_t km = grid.k_multiple;
  for (size_t mi = 0; mi < grid.ms.size(); ++mi) {
    for (size_t ni = 0; ni < grid.ns.size(); ++ni) {
      const int64_t m = grid.ms[mi], n = grid.ns[ni];
      auto& runs = map.runs[mi * grid.ns.size() + ni];
      auto push = [&](int64_t k0, int key) {
        if (runs.empty() || runs.back().second != key) runs.emplace_back(k0, key);
      };
      int64_t prev_k = 0;
      int prev_key = 0;
      for (size_t j = 0; j < grid.ks.size(); ++j) {
        const int64_t k = grid.ks[j];
        const int key = key_at(m, n, k);
        if (j > 0 && key != prev_key) {
          // The run of prev_key ends somewhere in (prev_k, k]: bisect, then go on from
          // the first K past it until the key reached is the key at k.
          int64_t lo = prev_k;
          int lo_key = prev_key;
          while (true) {
            int64_t hi = k;
            int hi_key = key;
            while (hi - lo > km) {
              const int64_t mid = lo + std::max<int64_t>(1, (hi - lo) / (2 * km)) * km;
              const int mid_key = key_at(m, n, mid);
              if (mid_key == lo_key) {
                lo = mid;
              } else {
                hi = mid;
                hi_key = mid_key;
              }
            }
            push(hi, hi_key);
            if (hi == k || hi_key == key) break;
            lo = hi;
            lo_key = hi_key;
          }
        } else {
          push(k, key);
        }
        prev_k = k;
        prev_key = key;
      }
      if (progress) {
        progress(absl::StrFormat("heuristic %s", fam),
                 static_cast<int64_t>(mi * grid.ns.size() + ni + 1), cells);
      }
    }
  }
  if (refused == asked) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cuBLASLt's heuristic refused every one of the %d shapes of family %s; the first: %s.",
        asked, fam, map.refusal));
  }
  table.maps.push_back(std::move(map));
  return absl::OkStatus();
}

absl::StatusOr<dsl::GemmDesc> probe_key(const dsl::probe::GemmBlackBox& box,
                                        const runtime::GemmShape& s, const CublasKey& key,
                                        dsl::Instruction matrix_instruction) {
  using dsl::GemmFamily;
  const GemmFamily first = key.splitk > 1 ? GemmFamily::kSplitK : GemmFamily::kPlain;
  const GemmFamily second = key.splitk > 1 ? GemmFamily::kPlain : GemmFamily::kSplitK;
  std::vector<std::string> tried;
  for (GemmFamily f : {first, second, GemmFamily::kGemv}) {
    dsl::probe::ProbeOptions o;
    o.a_dtype = s.a_dtype;
    o.b_dtype = s.b_dtype;
    o.out_dtype = s.out_dtype;
    o.family = f;
    o.matrix_instruction = matrix_instruction;
    o.k = s.k;
    absl::StatusOr<dsl::GemmDesc> d = dsl::probe::recover_gemm_desc(box, o);
    if (d.ok()) return d;
    if (!absl::IsNotFound(d.status())) return d.status();  // the box itself failed
    tried.push_back(absl::StrFormat("as %s: %s",
                                    f == GemmFamily::kPlain    ? "plain"
                                    : f == GemmFamily::kSplitK ? "split_k"
                                                               : "gemv",
                                    d.status().message()));
  }
  return absl::NotFoundError(absl::StrFormat("No descriptor reproduces cuBLASLt at %s (%s).",
                                             runtime::to_string(s), absl::StrJoin(tried, "; ")));
}

absl::StatusOr<std::vector<SpanRule>> fit_span_rules(const CublasKey& key,
                                                     const std::vector<int64_t>& ks,
                                                     const std::vector<dsl::GemmDesc>& descs) {
  if (ks.empty() || ks.size() != descs.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "fit_span_rules needs one probed K per descriptor; it got %d Ks and %d descriptors.",
        ks.size(), descs.size()));
  }
  const size_t levels = descs[0].k_cuts.size();
  for (size_t j = 1; j < descs.size(); ++j) {
    if (descs[j].k_cuts.size() != levels) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "The probes of key %s found %d cut levels at K = %d but %d at K = %d; no span rule "
          "carries one to the other.", to_string(key), levels, ks[0], descs[j].k_cuts.size(),
          ks[j]));
    }
  }
  std::vector<SpanRule> rules;
  for (size_t i = 0; i < levels; ++i) {
    std::vector<int64_t> spans;
    for (const dsl::GemmDesc& d : descs) spans.push_back(d.k_cuts[i].span);
    auto fits = [&](const SpanRule& r) {
      for (size_t j = 0; j < ks.size(); ++j) {
        if (apply_span_rule(r, spans[0], ks[j]) != spans[j]) return false;
      }
      return true;
    };
    std::vector<SpanRule> tries;
    if (i == 0 && key.splitk > 1) {
      for (int64_t g = 1024; g >= 1; g /= 2) {
        tries.push_back(SpanRule{.kind = SpanRule::Kind::kSplit, .parts = key.splitk, .granule = g});
      }
    }
    tries.push_back(SpanRule{.kind = SpanRule::Kind::kWhole});
    tries.push_back(SpanRule{.kind = SpanRule::Kind::kFixed});
    bool found = false;
    for (const SpanRule& r : tries) {
      if (fits(r)) {
        rules.push_back(r);
        found = true;
        break;
      }
    }
    if (!found) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "No span rule (fixed, whole, split%d/G) fits level %d of key %s: spans %s at K = %s.",
          key.splitk, i, to_string(key), absl::StrJoin(spans, ","), absl::StrJoin(ks, ",")));
    }
  }
  return rules;
}

absl::Status probe_keys(CublasTable& table, const ScanState& state, const ProbeFn& probe,
                        const ProbeOptions& options, const ProgressFn& progress) {
  if (!probe) return absl::InvalidArgumentError("probe_keys was given no probe.");
  if (options.max_probe_k < 3) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ProbeOptions.max_probe_k is %d; the probe needs K >= 3.", options.max_probe_k));
  }
  if (options.fit_probes < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ProbeOptions.fit_probes is %d; it must be >= 0.", options.fit_probes));
  }
  if (state.shapes.size() != table.keys.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "probe_keys was given a ScanState of %d keys for a table of %d; pass the state the "
        "scan filled.", state.shapes.size(), table.keys.size()));
  }
  std::vector<int> order;
  // Keys of earlier scans (no shapes in this state) keep what they have.
  for (size_t i = 0; i < table.keys.size(); ++i) {
    if (!table.keys[i].desc && !state.shapes[i].by_k.empty()) order.push_back(static_cast<int>(i));
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return table.keys[a].shapes > table.keys[b].shapes; });
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  int64_t done = 0;
  for (int idx : order) {
    TableKey& key = table.keys[idx];
    if (progress) progress("probe", done++, static_cast<int64_t>(order.size()));
    if (elapsed() > options.budget_s) {
      key.note = absl::StrFormat("not probed: the probe budget of %.0f s was spent",
                                 options.budget_s);
      continue;
    }
    // Probe-able Ks (the pair walk needs K >= 3); the representative is the one in
    // [min_probe_k, max_probe_k] with the fewest trailing zero bits (a short turn or a
    // short part shows there), the smallest among those; below min_probe_k the largest.
    std::vector<int64_t> candidates;
    for (const auto& [k, mn] : state.shapes[idx].by_k) {
      if (k >= 3 && k <= options.max_probe_k) candidates.push_back(k);
    }
    if (candidates.empty()) {
      key.note = absl::StrFormat(
          "not probed: every scanned shape of this key has K outside [3, %d] (smallest K %d)",
          options.max_probe_k,
          state.shapes[idx].by_k.empty() ? 0 : state.shapes[idx].by_k.begin()->first);
      continue;
    }
    auto tz = [](int64_t k) { return std::countr_zero(static_cast<uint64_t>(k)); };
    std::stable_sort(candidates.begin(), candidates.end(), [&](int64_t a, int64_t b) {
      const bool a_in = a >= options.min_probe_k, b_in = b >= options.min_probe_k;
      if (a_in != b_in) return a_in;
      if (!a_in) return a > b;
      if (tz(a) != tz(b)) return tz(a) < tz(b);
      return a < b;
    });
    std::vector<int64_t> ks = {candidates[0]};
    if (key.key.splitk > 1) {
      for (size_t j = 1; j < candidates.size() && static_cast<int>(j) <= options.fit_probes; ++j) {
        ks.push_back(candidates[j]);
      }
    }
    std::vector<int64_t> got_k;
    std::vector<dsl::GemmDesc> descs;
    std::vector<std::string> notes;
    const runtime::GemmShape fam = *parse_family(key.family);
    for (int64_t k : ks) {
      runtime::GemmShape s = fam;
      s.k = k;
      s.m = state.shapes[idx].by_k.at(k).first;
      s.n = state.shapes[idx].by_k.at(k).second;
      absl::StatusOr<dsl::GemmDesc> d = probe(s, key.key);
      if (!d.ok()) {
        notes.push_back(absl::StrFormat("probe at %dx%dx%d failed: %s", s.m, s.n, s.k,
                                        d.status().message()));
        if (descs.empty()) break;  // the representative failed: no descriptor
        continue;
      }
      if (descs.empty()) {
        key.m = s.m, key.n = s.n, key.k = s.k;
      }
      got_k.push_back(k);
      descs.push_back(*d);
    }
    key.probed_k = got_k;
    if (descs.empty()) {
      key.note = absl::StrJoin(notes, "; ");
      continue;
    }
    // Fields no experiment can see at one K come back canonical there, so probes may
    // disagree beyond their spans; the K with the fewest trailing zero bits (where a
    // short turn or a short part shows) is kept.
    size_t keep = 0;
    for (size_t j = 1; j < descs.size(); ++j) {
      if (without_spans(descs[j]) != without_spans(descs[0])) {
        notes.push_back(absl::StrFormat("the probes at K = %d and K = %d differ beyond spans",
                                        got_k[0], got_k[j]));
      }
      if (std::countr_zero(static_cast<uint64_t>(got_k[j])) <
          std::countr_zero(static_cast<uint64_t>(got_k[keep]))) {
        keep = j;
      }
    }
    absl::StatusOr<std::vector<SpanRule>> rules = fit_span_rules(key.key, got_k, descs);
    if (!rules.ok()) {
      notes.push_back(std::string(rules.status().message()));
      key.note = absl::StrJoin(notes, "; ");
      continue;
    }
    // The rules reproduce every probed span, so the kept descriptor's own spans are
    // carried back to the representative's K through them.
    dsl::GemmDesc d = descs[keep];
    for (size_t i = 0; i < d.k_cuts.size(); ++i) {
      d.k_cuts[i].span = (*rules)[i].kind == SpanRule::Kind::kFixed
                             ? d.k_cuts[i].span
                             : apply_span_rule((*rules)[i], d.k_cuts[i].span, got_k[0]);
    }
    key.desc = d;
    key.rules = *rules;
    key.note = absl::StrJoin(notes, "; ");
  }
  if (progress) progress("probe", done, static_cast<int64_t>(order.size()));
  return absl::OkStatus();
}

}  // namespace fixbits::profile
