// CublasScan: see CublasScan.h. One cell of the map, grid Ks {1, 64, 4096} with
// answers A, A, B (an answer is a variant and a split count): two grid calls agree on
// [1, 64]; between 64 and 4096 the bisection asks 2080, 1072, ... until it holds the
// last K of A's run (say 576) and the first of B's (577), so the cell's runs are
// 1:A, 577:B. Probing, class {id=66 split=0 ...} with variants tile 10 and tile 15:
// the first probe takes the most-used variant, the second the other tile; equal
// descriptors validate the class, unequal ones split it into {... tile=10} and
// {... tile=15}, each checked with the probe it already has and probed once more.
// Re-keying an old table (--resume): {id=23 split=0 ...} with variants tile 11 and tile
// 24, validated by one probe at each, becomes {id=23 tile=11 ...} and {id=23 tile=24
// ...} (ids 13, 23, 24 fix tile and stages now), each without a descriptor but holding
// its probe, so each needs one new probe; {id=66 ...} is unchanged and keeps its own.
#include "profile/CublasScan.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dsl/probe/Probe.h"
#include "profile/GemvGrouping.h"

namespace fixbits::profile {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Whether cell a = (M, N) is a better place to probe a (K, P) than cell b: more of a
// probe's placements per launch (min(M, 128) * min(N, 128): the sample's --probe-batch
// default, each launch answering up to that many), then the smaller M*N (a cheaper
// full-shape launch), then the smaller M. A CPU run of probe_key at 97x3x3617 made
// 6,070 black-box calls (291 placements each); on the H200 such probes (65x2x4001,
// 97x3x3617 in session 8's run 3) took 29-50 s, where 128 x 128 would need about 110.
bool better_probe_cell(std::pair<int64_t, int64_t> a, std::pair<int64_t, int64_t> b) {
  constexpr int64_t kSide = 128;
  const int64_t ba = std::min(a.first, kSide) * std::min(a.second, kSide);
  const int64_t bb = std::min(b.first, kSide) * std::min(b.second, kSide);
  if (ba != bb) return ba > bb;
  if (a.first * a.second != b.first * b.second) return a.first * a.second < b.first * b.second;
  return a.first < b.first;
}

// Point (K, P) of a variant at cell (M, N): kept when the variant has no cell for that
// (K, P) yet or this one is better (better_probe_cell), as the scan, rebuild_shapes and
// merge_shapes all keep it.
void keep_better_point(VariantShapes& shapes, std::pair<int64_t, uint32_t> kp,
                       std::pair<int64_t, int64_t> mn) {
  auto it = shapes.points.find(kp);
  if (it == shapes.points.end() || better_probe_cell(mn, it->second)) shapes.points[kp] = mn;
}

// Up to kSeenPoints of one variant's points, spread over its (K, P) in order, the first
// and last included.
std::vector<ProbePoint> spread_points(int variant, const VariantShapes& shapes) {
  std::vector<ProbePoint> all;
  for (const auto& [kp, mn] : shapes.points) {
    all.push_back(ProbePoint{.variant = variant, .m = mn.first, .n = mn.second, .k = kp.first,
                             .splitk = kp.second});
  }
  if (all.size() <= static_cast<size_t>(kSeenPoints)) return all;
  std::vector<ProbePoint> out;
  for (size_t i = 0; i < kSeenPoints; ++i) {
    out.push_back(all[i * (all.size() - 1) / (kSeenPoints - 1)]);
  }
  return out;
}

// A variant's seen points as probe shapes (a (K, P) the map gave a cell already keeps it).
void add_seen(const std::vector<ProbePoint>& seen, VariantShapes& shapes) {
  for (const ProbePoint& p : seen) {
    shapes.points.emplace(std::pair{p.k, p.splitk}, std::pair{p.m, p.n});
  }
}

// The variants some run of `map` names.
std::set<int> mapped_variants(const FamilyMap& map) {
  std::set<int> out;
  for (const std::vector<MapRun>& runs : map.runs) {
    for (const MapRun& r : runs) out.insert(r.variant);
  }
  return out;
}

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

}  // namespace

void merge_shapes(VariantShapes& into, const VariantShapes& from) {
  for (const auto& [kp, mn] : from.points) keep_better_point(into, kp, mn);
}

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
  using Answer = std::optional<CublasAnswer>;
  auto ask = [&](int64_t m, int64_t n, int64_t k) -> Answer {
    runtime::GemmShape s = family;
    s.m = m, s.n = n, s.k = k;
    if (calls) ++*calls;
    absl::StatusOr<runtime::AlgoConfig> a = heuristic(s);
    if (!a.ok()) return std::nullopt;
    return answer_of(*a);
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
  if (find_map(table, fam) != nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "The table already holds a map of family %s; scan each family once.", fam));
  }
  state.shapes.resize(table.variants.size());
  FamilyMap map;
  map.family = fam;
  map.ms = grid.ms;
  map.ns = grid.ns;
  map.k_max = grid.ks.back();
  map.runs.resize(grid.ms.size() * grid.ns.size());
  int64_t asked = 0, refused = 0;
  std::map<CublasKey, int> variant_index;  // of this family
  std::map<CublasKey, int> class_index;    // coarse class values -> index, this family

  // The answer at one shape as (variant, split count); variant -1 when refused.
  auto answer_at = [&](int64_t m, int64_t n, int64_t k) -> std::pair<int, uint32_t> {
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
      return {-1, 1};
    }
    const CublasAnswer ans = answer_of(*a);
    auto [it, fresh] = variant_index.emplace(ans.key, static_cast<int>(table.variants.size()));
    if (fresh) {
      const CublasClass cls = class_of(ans.key);
      auto [cit, new_class] =
          class_index.emplace(cls.values, static_cast<int>(table.classes.size()));
      if (new_class) {
        TableClass tc;
        tc.family = fam;
        tc.cls = cls;
        table.classes.push_back(std::move(tc));
      }
      table.variants.push_back(
          TableVariant{.family = fam, .key = ans.key, .cls = cit->second, .shapes = 0, .seen = {}});
      state.shapes.emplace_back();
    }
    const int idx = it->second;
    ++table.variants[idx].shapes;
    keep_better_point(state.shapes[idx], {k, ans.splitk}, {m, n});
    return {idx, ans.splitk};
  };

  const int64_t cells = static_cast<int64_t>(map.runs.size());
  const int64_t km = grid.k_multiple;
  for (size_t mi = 0; mi < grid.ms.size(); ++mi) {
    for (size_t ni = 0; ni < grid.ns.size(); ++ni) {
      const int64_t m = grid.ms[mi], n = grid.ns[ni];
      auto& runs = map.runs[mi * grid.ns.size() + ni];
      auto push = [&](int64_t k0, std::pair<int, uint32_t> a) {
        if (runs.empty() || runs.back().variant != a.first || runs.back().splitk != a.second) {
          runs.push_back(MapRun{.k0 = k0, .variant = a.first, .splitk = a.second});
        }
      };
      int64_t prev_k = 0;
      std::pair<int, uint32_t> prev{0, 1};
      for (size_t j = 0; j < grid.ks.size(); ++j) {
        const int64_t k = grid.ks[j];
        const std::pair<int, uint32_t> here = answer_at(m, n, k);
        if (j > 0 && here != prev) {
          // The run of prev ends somewhere in (prev_k, k]: bisect, then go on from the
          // first K past it until the answer reached is the answer at k.
          int64_t lo = prev_k;
          std::pair<int, uint32_t> lo_a = prev;
          while (true) {
            int64_t hi = k;
            std::pair<int, uint32_t> hi_a = here;
            while (hi - lo > km) {
              const int64_t mid = lo + std::max<int64_t>(1, (hi - lo) / (2 * km)) * km;
              const std::pair<int, uint32_t> mid_a = answer_at(m, n, mid);
              if (mid_a == lo_a) {
                lo = mid;
              } else {
                hi = mid;
                hi_a = mid_a;
              }
            }
            push(hi, hi_a);
            if (hi == k || hi_a == here) break;
            lo = hi;
            lo_a = hi_a;
          }
        } else {
          push(k, here);
        }
        prev_k = k;
        prev = here;
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
  const std::set<int> mapped = mapped_variants(map);
  for (const auto& [key, v] : variant_index) {
    if (!mapped.count(v)) table.variants[v].seen = spread_points(v, state.shapes[v]);
  }
  table.maps.push_back(std::move(map));
  return absl::OkStatus();
}

std::vector<std::pair<DType, DType>> reduction_dtypes(uint32_t reduction, DType out) {
  switch (reduction) {
    case 1: return {{DType::kF32, out}};            // in place: partials at f32, merged at out
    case 2: return {{DType::kF32, DType::kF32}};    // compute type
    case 4: return {{out, DType::kF32}};            // output type: partials written at out
    default: return {};
  }
}

namespace {

// The instruction_k of the search of probe_key that gives descriptor `d`
// (dsl::probe::searched_instruction_ks): 8 for mma.sync m16n8k8 where the dtype's own
// instruction folds another count (the second search of f16/bf16 matrix families, whose
// candidates are mma_sync ik=8), else 0 (the dtype's: ik=16 for f16/bf16, tf32's own 8,
// and the scalar leaves, ik=1, which the first search tries before any matrix one).
int search_instruction_k(const dsl::GemmDesc& d) {
  const bool k8 = d.instruction == dsl::Instruction::kMmaSync && d.instruction_k == 8 &&
                  dsl::matrix_instruction_k(d.a_dtype) != 8;
  return k8 ? 8 : 0;
}

}  // namespace

absl::StatusOr<dsl::GemmDesc> probe_key(const dsl::probe::GemmBlackBox& box,
                                        const runtime::GemmShape& s, const CublasKey& key,
                                        dsl::Instruction matrix_instruction,
                                        dsl::probe::BatchLimits limits,
                                        std::function<absl::Status()> keep_going,
                                        uint32_t splitk, std::vector<int> gemv_lanes,
                                        dsl::probe::SparseBlackBox sparse,
                                        dsl::probe::SparseBatchBox sparse_batch,
                                        ProbeSearchNote on_search,
                                        std::vector<dsl::GemmDesc> found_before) {
  using dsl::GemmFamily;
  const GemmFamily first = key.split ? GemmFamily::kSplitK : GemmFamily::kPlain;
  const GemmFamily second = key.split ? GemmFamily::kPlain : GemmFamily::kSplitK;
  std::vector<std::string> tried;
  dsl::probe::Instrument inst(box, s.a_dtype, s.b_dtype, s.out_dtype, limits);
  if (sparse) inst.use_sparse_box(std::move(sparse));
  if (sparse_batch) inst.use_sparse_batch_box(std::move(sparse_batch));
  // f16/bf16 matrix families are searched twice (dsl::probe::searched_instruction_ks):
  // the cutlass_75 "s1688" kernels behind cuBLASLt's id 24 tiles 15/18/20/24 on sm_90
  // fold 8 products (device run 1 of session 7). The instrument's memo serves the
  // second search's walks. A split answer at M = 1 or N = 1 is first tried as the dot
  // family (its split count is the dot kernel's grid; a few dozen candidates), which
  // the split-K search would spend hundreds of candidates failing to reproduce.
  // An unsplit vector shape (M = 1 or N = 1) is first tried as gemv, the family of
  // cuBLAS's gemv kernels: its few dozen candidates cost seconds, while the plain and
  // split-K searches that fail before it passed every probe time limit at K = 4096
  // (session 11's runs 3-4: the id 13 custom 75/92/93 classes). A sequential chain both
  // families express comes back as gemv with one lane, the same bits.
  const bool vector_shape = s.m == 1 || s.n == 1;
  std::vector<GemmFamily> families = {first, second, GemmFamily::kGemv};
  if (vector_shape && splitk <= 1) families = {GemmFamily::kGemv, first, second};
  // A split answer of cuBLASLt's gemv algorithm (id 13: gemvNSP, gemv2T, ...) at a
  // vector shape is tried as a split gemv (gemv_split) right after the dot family:
  // session 13's custom 75/92/93/100 split classes (126 match draws) are the gemv
  // kernel on gridDim.z parts plus splitKreduce.
  if (vector_shape && splitk > 1 && key.id == 13) families = {GemmFamily::kGemv, first, second};
  if (splitk > 1) {
    families.insert(vector_shape ? families.begin() : families.end(), GemmFamily::kDot);
  }
  // Whether family f's search is a split one: its split candidates take split_dtypes.
  auto split_search_of = [&](GemmFamily f) {
    return f == GemmFamily::kSplitK || (f == GemmFamily::kGemv && splitk > 1);
  };
  // The search of family f with ik products an instruction (0: the dtype's), split
  // candidates with every (partial, merge) pair.
  auto options_for = [&](GemmFamily f, int ik) {
    dsl::probe::ProbeOptions o;
    o.a_dtype = s.a_dtype;
    o.b_dtype = s.b_dtype;
    o.out_dtype = s.out_dtype;
    o.family = f;
    o.matrix_instruction = ik == 8 ? dsl::Instruction::kMmaSync : matrix_instruction;
    o.instruction_k = ik;
    o.k = s.k;
    o.blocks = f == GemmFamily::kDot ? splitk : 0;
    if (f == GemmFamily::kGemv) {
      o.gemv_lanes = gemv_lanes;
      o.gemv_split = splitk > 1;
    }
    o.keep_going = keep_going;
    return o;
  };
  // Each recover_gemm_desc call is one search for on_search.
  auto search = [&](const dsl::probe::ProbeOptions& o, bool as_before) {
    const auto t0 = std::chrono::steady_clock::now();
    absl::StatusOr<dsl::GemmDesc> found = dsl::probe::recover_gemm_desc(inst, o);
    if (on_search) {
      const size_t pairs =
          !split_search_of(o.family) ? 0 : o.split_dtypes.empty() ? 9 : o.split_dtypes.size();
      on_search(ProbeSearch{o.family, o.instruction_k, pairs, found.status(),
                            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                            as_before});
    }
    return found;
  };
  // What tells two searches apart: the family, instruction_k and, for a split, its one
  // (partial, merge) pair; none for a split search over several pairs.
  using SearchKey = std::tuple<GemmFamily, int, DType, DType>;
  auto search_key = [&](const dsl::probe::ProbeOptions& o) -> std::optional<SearchKey> {
    if (!split_search_of(o.family)) return SearchKey{o.family, o.instruction_k, DType::kF32, DType::kF32};
    if (o.split_dtypes.size() != 1) return std::nullopt;
    return SearchKey{o.family, o.instruction_k, o.split_dtypes[0].first, o.split_dtypes[0].second};
  };
  // The searches that found the class's earlier descriptors (found_before) come first,
  // each as it found them: its family, its instruction_k (search_instruction_k) and, for
  // a split, its one (partial, merge) pair. Each probe of session 34's id 24 split class
  // 364 (8449x32x515933: split_k, mma.sync k8, partials f32 merged at bf16) spent 190 s
  // of its 322 s in the two split_k searches with 16 products that found nothing, before
  // the k8 search with that pair found it in 133 s, every probe of the class again. A
  // hint that finds nothing costs its one search; the usual order follows, less that
  // same search.
  std::vector<SearchKey> hinted;
  for (const dsl::GemmDesc& d : found_before) {
    if (std::find(families.begin(), families.end(), d.family) == families.end()) continue;
    const int ik = search_instruction_k(d);
    const std::vector<int> iks = dsl::probe::searched_instruction_ks(s.a_dtype, d.family);
    if (std::find(iks.begin(), iks.end(), ik) == iks.end()) continue;  // a search never made here
    dsl::probe::ProbeOptions o = options_for(d.family, ik);
    if (split_search_of(d.family)) o.split_dtypes = {{d.partial_dtype, d.merge_dtype}};
    const SearchKey h = *search_key(o);
    if (std::find(hinted.begin(), hinted.end(), h) != hinted.end()) continue;
    hinted.push_back(h);
    absl::StatusOr<dsl::GemmDesc> found = search(o, /*as_before=*/true);
    if (found.ok()) return found;
    if (!absl::IsNotFound(found.status())) return found.status();  // the box itself failed
  }
  // A usual search that is exactly a hinted one found nothing above, on the same
  // instrument: it is not made again (a wrong hint costs its one search, not two).
  auto made_as_hint = [&](const dsl::probe::ProbeOptions& o) {
    const std::optional<SearchKey> k = search_key(o);
    return k.has_value() && std::find(hinted.begin(), hinted.end(), *k) != hinted.end();
  };
  for (GemmFamily f : families) {
    for (int ik : dsl::probe::searched_instruction_ks(s.a_dtype, f)) {
      dsl::probe::ProbeOptions o = options_for(f, ik);
      // A split's partial/merge dtypes as the reduction scheme names them first (every
      // validated split class so far); only when that search finds nothing, the others.
      if (split_search_of(f)) o.split_dtypes = reduction_dtypes(key.reduction, s.out_dtype);
      absl::StatusOr<dsl::GemmDesc> d =
          made_as_hint(o) ? absl::NotFoundError("the same search as the class's earlier probes', above, found nothing")
                          : search(o, /*as_before=*/false);
      if (!d.ok() && absl::IsNotFound(d.status()) && !o.split_dtypes.empty()) {
        o.split_dtypes = dsl::probe::split_dtypes_without(o.split_dtypes);  // the other eight
        d = search(o, /*as_before=*/false);
      }
      if (d.ok()) return d;
      if (!absl::IsNotFound(d.status())) return d.status();  // the box itself failed
      tried.push_back(absl::StrFormat("as %s%s: %s", dsl::family_name(f),
                                      ik == 8 ? " with mma.sync k8" : "", d.status().message()));
    }
  }
  return absl::NotFoundError(absl::StrFormat("No descriptor reproduces cuBLASLt at %s (%s).",
                                             runtime::to_string(s), absl::StrJoin(tried, "; ")));
}

std::string probe_search_line(const ProbeSearch& q, int64_t judged, int64_t box_calls, double box_s) {
  return absl::StrFormat("search %s%s%s%s: %s in %.1f s, %d candidates judged; %d box calls (%.1f s) so far",
                         dsl::family_name(q.family), q.instruction_k == 8 ? " with mma.sync k8" : "",
                         q.split_pairs > 0 ? absl::StrFormat(" (%d dtype pairs)", q.split_pairs) : "",
                         q.as_before ? " (as the class's earlier probes)" : "",
                         q.status.ok() ? "found" : absl::IsNotFound(q.status) ? "nothing" : "stopped", q.seconds,
                         judged, box_calls, box_s);
}

absl::StatusOr<std::vector<SpanRule>> fit_span_rules(bool split, const std::vector<int64_t>& ks,
                                                     const std::vector<uint32_t>& splitks,
                                                     const std::vector<dsl::GemmDesc>& descs,
                                                     const SpanAlsoFits& also_fits) {
  if (ks.empty() || ks.size() != descs.size() || ks.size() != splitks.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "fit_span_rules needs one probed K and split count per descriptor; it got %d Ks, %d "
        "split counts and %d descriptors.", ks.size(), splitks.size(), descs.size()));
  }
  // descs[0] has every level; a probe with fewer saw only the outer ones (an inner cut
  // whose span covers the probe's parts is invisible there) and is left out of the fit
  // of the levels it lacks.
  const size_t levels = descs[0].k_cuts.size();
  for (size_t j = 1; j < descs.size(); ++j) {
    if (descs[j].k_cuts.size() > levels) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "The probes found %d cut levels at K = %d but %d at K = %d; no span rule carries one "
          "to the other.", levels, ks[0], descs[j].k_cuts.size(), ks[j]));
    }
  }
  // A split count that is no count at every probe (split_count_unset: SPLITK_NUM -1,
  // whose kernel makes no split) gives split/G the span min(K, G), which only the whole
  // K explains beyond G: no split rule then.
  const bool split_granules = split && !std::all_of(splitks.begin(), splitks.end(), split_count_unset);
  std::vector<SpanRule> rules;
  for (size_t i = 0; i < levels; ++i) {
    std::vector<int64_t> spans;  // -1: the probe did not see level i
    for (const dsl::GemmDesc& d : descs) spans.push_back(i < d.k_cuts.size() ? d.k_cuts[i].span : -1);
    auto fits = [&](const SpanRule& r) {
      for (size_t j = 0; j < ks.size(); ++j) {
        if (spans[j] < 0) continue;
        const int64_t want = apply_span_rule(r, spans[0], ks[j], splitks[j]);
        if (want == spans[j]) continue;
        if (!also_fits || !also_fits(j, i, want)) return false;
      }
      return true;
    };
    std::vector<SpanRule> tries;
    if (i == 0 && split_granules) tries = split_rules();
    tries.push_back(SpanRule{.kind = SpanRule::Kind::kWhole});
    tries.push_back(SpanRule{.kind = SpanRule::Kind::kFixed});
    // After fixed: probes that all saw one span s near K / c fit both, and fixed is what
    // the probes before this rule recorded; a probe at another K tells them apart.
    for (int64_t c = 2; c <= 64; ++c) {
      tries.push_back(SpanRule{.kind = SpanRule::Kind::kParts, .granule = c});
    }
    bool found = false;
    for (const SpanRule& r : tries) {
      if (fits(r)) {
        rules.push_back(r);
        found = true;
        break;
      }
    }
    if (!found) {
      std::vector<std::string> at;
      for (size_t j = 0; j < ks.size(); ++j) {
        at.push_back(absl::StrFormat("%d/%d", ks[j], splitks[j]));
      }
      return absl::FailedPreconditionError(absl::StrFormat(
          "No span rule (fixed, whole, parts/c%s) fits cut level %d: spans %s at K/P = %s.",
          i == 0 && split_granules ? ", split/G" : "", i, absl::StrJoin(spans, ","),
          absl::StrJoin(at, ",")));
    }
  }
  return rules;
}

namespace {

// desc carried to (k, splitk) by rules, level by level, without the lookup's clamp of
// inner levels: exactly the descriptor fit_span_rules checked each probe against.
dsl::GemmDesc carried(const dsl::GemmDesc& desc, const std::vector<SpanRule>& rules, int64_t k,
                      uint32_t splitk) {
  dsl::GemmDesc d = desc;
  for (size_t i = 0; i < d.k_cuts.size() && i < rules.size(); ++i) {
    d.k_cuts[i].span = apply_span_rule(rules[i], d.k_cuts[i].span, k, splitk);
  }
  if (d.family == dsl::GemmFamily::kDot) d.blocks = splitk;
  return d;
}

// What explains() learned at one probe point: the replay of its experiments against a
// box computing its descriptor (built on first need) and each descriptor's verdict.
// A replay runs reference GEMMs at the probe's K: built anew at every base_of call, it
// cost 83-94 s of CPU between two probes of a split class (CPU rerun of session 9's
// device run 2).
struct ReplayMemo {
  std::unique_ptr<dsl::probe::ProbeReplay> replay;
  std::map<std::string, bool> accepts;  // dsl::to_string(alt) -> verdict
};

// One probe of a class: where, and what it gave.
struct ProbeResult {
  ProbePoint at;
  absl::StatusOr<dsl::GemmDesc> desc;
  // Shared by the copies of this result (a class split hands its results on).
  std::shared_ptr<ReplayMemo> memo = std::make_shared<ReplayMemo>();
  // The lane count the class's lane rule gives this point (0: the class has none): a
  // gemv descriptor explains the point with that count, as desc_for carries it.
  int rule_lanes = 0;
  // The class's gemv tile cap (0: none): likewise, the tile min(cap, ceil(K / lanes)).
  int64_t rule_tile_cap = 0;
};

std::string where(const ProbePoint& p) {
  return absl::StrFormat("variant %d at %dx%dx%d/%d", p.variant, p.m, p.n, p.k, p.splitk);
}

// 0..j with `base` first, the rest in order.
std::vector<size_t> order_from(size_t base, size_t j) {
  std::vector<size_t> order = {base};
  for (size_t i = 0; i <= j; ++i) {
    if (i != base) order.push_back(i);
  }
  return order;
}

// A probe of class `c` at `at`: the gemv rules the class's descriptor is carried to
// there by (its lane count at N, its tile cap), which explains() applies.
ProbeResult probe_of(const TableClass& c, const ProbePoint& at,
                     absl::StatusOr<dsl::GemmDesc> desc) {
  ProbeResult r{at, std::move(desc)};
  r.rule_lanes = lanes_at(c.lanes_by_n, at.n);
  r.rule_tile_cap = c.lane_tile_cap;
  return r;
}

// Whether `d` (all but its spans) explains the probe at K = k that recovered `there`:
// equal up to spans, or, with there's spans, passing every experiment a probe at k runs
// against a box computing `there` (dsl::probe::ProbeReplay, built once per point and
// kept in *replay). A field one K cannot see (the K-loop step when the span is a
// multiple of it: no short turn) recovers at its canonical value there and is explained
// by the probe that saw it (device run 2 of 2026-12-03: 29 of 31 "disagreeing" classes
// differed only so).
// `d` may have more (inner) cut levels than `there`: they keep d's spans, clamped to
// the enclosing level's (a level whose span covers its parts cuts nothing), and the
// replay decides whether the probe at k could have seen them (session 11's device run
// 4: the id 11 kernel's inner cut of 256 is invisible at K = 257, split into 129s).
// An uncut `there` has no enclosing level: it is no split whose cut hid.
bool replays(const dsl::GemmDesc& alt, const dsl::GemmDesc& there, int64_t k, ReplayMemo* memo);

bool explains(const dsl::GemmDesc& d, const dsl::GemmDesc& there, int64_t k, ReplayMemo* memo,
              int rule_lanes = 0, int64_t rule_tile_cap = 0) {
  if (d.k_cuts.size() < there.k_cuts.size()) return false;
  // A split gemv (one cut) at a point whose probe came back as the dot family: at small K
  // the dot kernel's `blocks` parts reproduce the gemv kernel on as many parts (a test's
  // split gemv class in 4 parts came back as dot at K = 128 and 256, where its separating
  // probes went). The gemv is carried there with parts of ceil(K / blocks) (split/1),
  // and the replay decides.
  const bool dot_there = there.family == dsl::GemmFamily::kDot &&
                         d.family == dsl::GemmFamily::kGemv && d.k_cuts.size() == 1 &&
                         there.blocks > 1;
  if (there.k_cuts.empty() && !d.k_cuts.empty() && !dot_there) return false;
  dsl::GemmDesc alt = with_lanes(d, rule_lanes);
  for (size_t i = 0; i < alt.k_cuts.size(); ++i) {
    if (dot_there) {
      alt.k_cuts[i].span = (k + there.blocks - 1) / there.blocks;
    } else if (alt.k_cuts[i].segments > 0) {
      // A segment split's span is its tile, not a span that follows K: d's own cut is
      // what it says at k (an equal split there may be the same partition: tiles a
      // multiple of the segments), and the replay decides.
    } else if (i < there.k_cuts.size()) {
      alt.k_cuts[i].span = there.k_cuts[i].span;
    } else {
      alt.k_cuts[i].span = std::min(alt.k_cuts[i].span, alt.k_cuts[i - 1].span);
    }
  }
  // The tile cap after the spans: a split gemv's tile follows its part span.
  alt = with_tile_cap(std::move(alt), rule_tile_cap, k);
  if (alt.family == dsl::GemmFamily::kDot && there.family == dsl::GemmFamily::kDot) {
    // The grid is the point's split count; a point whose threads took single elements
    // (a strided operand, dot_at_shape) says nothing about the vector tile.
    alt.blocks = there.blocks;
    if (there.lane_tile == 1) alt.lane_tile = 1;
  }
  return replays(alt, there, k, memo);
}

// Whether `alt` passes every experiment a probe at K = k runs against a box computing
// `there` (equal descriptors pass at once); the verdicts are kept in *memo.
bool replays(const dsl::GemmDesc& alt, const dsl::GemmDesc& there, int64_t k, ReplayMemo* memo) {
  if (alt == there) return true;
  const std::string key = dsl::to_string(alt);
  if (auto it = memo->accepts.find(key); it != memo->accepts.end()) return it->second;
  std::unique_ptr<dsl::probe::ProbeReplay>* replay = &memo->replay;
  if (*replay == nullptr) {
    dsl::probe::ProbeOptions o;
    o.a_dtype = there.a_dtype;
    o.b_dtype = there.b_dtype;
    o.out_dtype = there.out_dtype;
    o.family = there.family;
    o.matrix_instruction = there.instruction == dsl::Instruction::kWgmma
                               ? dsl::Instruction::kWgmma
                               : dsl::Instruction::kMmaSync;
    if (there.instruction == dsl::Instruction::kMmaSync && there.instruction_k == 8) {
      o.instruction_k = 8;
    }
    o.k = k;
    o.blocks = there.blocks;
    absl::StatusOr<std::unique_ptr<dsl::probe::ProbeReplay>> r =
        dsl::probe::ProbeReplay::create(there, o);
    if (!r.ok()) {
      memo->accepts.emplace(key, false);
      return false;
    }
    *replay = *std::move(r);
  }
  std::string why;
  absl::StatusOr<bool> ok = (*replay)->accepts(alt, &why);
  const bool verdict = ok.ok() && *ok;
  memo->accepts.emplace(key, verdict);
  return verdict;
}

// The class's descriptor over results[0..j]: the first probe's descriptor that explains
// every other one, else the first probe's descriptor with another K-loop step (a
// multiple of instruction_k up to 16 of them, short turn first or last) that explains
// every probe: a step S > instruction_k with the short turn first looks like step
// instruction_k / first at K = 257 (257 mod S = 1) and like instruction_k / last at
// K = 17 (a single short turn), so two probes can each return a canonical step and
// only S explains both (the H200's id 24 tile 11 classes). nullopt when none does.
struct Base {
  size_t point = 0;   // the probe the descriptor is attached to (its spans)
  dsl::GemmDesc desc;
};
std::optional<Base> base_of(const std::vector<ProbeResult>& results, size_t j) {
  auto explains_point = [&](const dsl::GemmDesc& d, size_t i) {
    return explains(d, *results[i].desc, results[i].at.k, results[i].memo.get(),
                    results[i].rule_lanes, results[i].rule_tile_cap);
  };
  auto explains_all = [&](const dsl::GemmDesc& d, size_t b) {
    for (size_t i = 0; i <= j; ++i) {
      if (i == b || !results[i].desc.ok()) continue;
      if (!explains_point(d, i)) return false;
    }
    return true;
  };
  for (size_t b = 0; b <= j; ++b) {
    if (results[b].desc.ok() && explains_all(*results[b].desc, b)) return Base{b, *results[b].desc};
  }
  for (size_t b = 0; b <= j; ++b) {
    if (!results[b].desc.ok()) continue;
    const dsl::GemmDesc& d = *results[b].desc;
    if (d.instruction_k <= 1) continue;
    for (int64_t m = 1; m <= 16; ++m) {
      for (dsl::ShortTurn turn : {dsl::ShortTurn::kFirst, dsl::ShortTurn::kLast}) {
        dsl::GemmDesc cand = d;
        cand.k_loop_step = {m == 1 ? 0 : m * d.instruction_k, turn};
        if (cand == d || !dsl::validate(cand).ok()) continue;
        if (explains_point(cand, b) && explains_all(cand, b)) return Base{b, cand};
      }
    }
  }
  return std::nullopt;
}

// Where a plain leaf over [0, k) starts its mainloop turns and its instructions.
std::pair<std::vector<int64_t>, std::vector<int64_t>> leaf_starts(const dsl::GemmDesc& d,
                                                                  int64_t k) {
  const int64_t ik = d.instruction_k, step = d.k_loop_step.step > 0 ? d.k_loop_step.step : ik;
  std::vector<int64_t> turns, groups;
  const int64_t short_len = k % step;
  int64_t t = 0;
  if (short_len > 0 && d.k_loop_step.short_turn == dsl::ShortTurn::kFirst) {
    turns.push_back(0);
    for (int64_t g = 0; g < short_len; g += ik) groups.push_back(g);
    t = short_len;
  }
  for (; t < k; t += step) {
    turns.push_back(t);
    for (int64_t g = t; g < std::min(k, t + step); g += ik) groups.push_back(g);
  }
  return {turns, groups};
}

// Whether two plain descriptors that differ at most in the K-loop step group the
// products of a K differently (instruction starts; with two roundings per turn, turn
// starts too): a probe at such a K tells them apart.
bool steps_differ_at(const dsl::GemmDesc& a, const dsl::GemmDesc& b, int64_t k) {
  const auto [ta, ga] = leaf_starts(a, k);
  const auto [tb, gb] = leaf_starts(b, k);
  return ga != gb || (!a.use_fast_accum && ta != tb);
}

// The lengths of the ranges a descriptor's leaf runs over at K: K itself without cuts;
// with one cut level, its parts' lengths (span s: s and the last part's; segments:
// each segment's, distinct); empty for deeper nests (not handled by the separating
// probe).
std::vector<int64_t> leaf_lengths(const dsl::GemmDesc& d, int64_t k) {
  if (d.k_cuts.empty()) return {k};
  if (d.k_cuts.size() > 1) return {};
  dsl::KCut c = d.k_cuts[0];
  c.span = std::max<int64_t>(1, c.span);
  const int64_t parts = dsl::cut_parts(c, k);
  std::vector<int64_t> lengths;
  // Equal spans: part 0 and the last; segments: every one (few, of two or three lengths).
  std::vector<int64_t> looked_at = {0, parts - 1};
  if (c.segments > 0) {
    looked_at.clear();
    for (int64_t j = 0; j < parts; ++j) looked_at.push_back(j);
  }
  for (int64_t j : looked_at) {
    if (j < 0) continue;
    const auto [e0, e1] = dsl::cut_part(c, j, 0, k);
    if (std::find(lengths.begin(), lengths.end(), e1 - e0) == lengths.end()) lengths.push_back(e1 - e0);
  }
  return lengths;
}

// Whether no leaf range of any probe of results[0..j] (those with a descriptor, at each
// one's own spans: leaf_lengths) tells a candidate from that probe's descriptor, as
// `differ(probe's descriptor, length)` says; nullopt when a probe's nest is deeper than
// leaf_lengths reads (the alternatives are then not looked for at all).
template <typename Differ>
std::optional<bool> alike_at_probes(const std::vector<ProbeResult>& results, size_t j,
                                    const Differ& differ) {
  bool same = true;
  for (size_t i = 0; i <= j && same; ++i) {
    if (!results[i].desc.ok()) continue;
    const std::vector<int64_t> lens = leaf_lengths(*results[i].desc, results[i].at.k);
    if (lens.empty()) return std::nullopt;
    for (int64_t len : lens) same = same && !differ(*results[i].desc, len);
  }
  return same;
}

// The descriptors that differ from `base` only in the K-loop step (1..16 instructions,
// either short turn) and group the products of every leaf range of every probe alike
// (each probe's own spans), so they explain every probe of results[0..j] as well:
// steps the class's probes cannot tell apart. Plain leaves and one cut level only.
// Device run 2 of session 7: the wmma kernel "..._32x32_64x1_..." walks K by 64, its
// probes ran at K = 257 and 17 (K mod 32 = K mod 64), base_of took step 32, and 69 of
// 651 shapes at K mod 64 >= 32 differed; a split class (22x11x25552) likewise.
std::vector<dsl::GemmDesc> step_alternatives(const std::vector<ProbeResult>& results, size_t j,
                                             const Base& base) {
  std::vector<dsl::GemmDesc> out;
  const dsl::GemmDesc& d = base.desc;
  if (d.instruction_k <= 1 || d.k_cuts.size() > 1) return out;
  for (int64_t m = 1; m <= 16; ++m) {
    for (dsl::ShortTurn turn : {dsl::ShortTurn::kFirst, dsl::ShortTurn::kLast}) {
      dsl::GemmDesc cand = d;
      cand.k_loop_step = {m == 1 ? 0 : m * d.instruction_k, turn};
      if (cand == d || !dsl::validate(cand).ok()) continue;
      const std::optional<bool> same = alike_at_probes(
          results, j, [&](const dsl::GemmDesc&, int64_t len) { return steps_differ_at(d, cand, len); });
      if (!same) return {};
      if (*same) out.push_back(cand);
    }
  }
  return out;
}

// `d` with the lane layout and turns of `form` (its layout, fast accumulation and K-loop
// step), every other field its own.
dsl::GemmDesc with_turns_of(dsl::GemmDesc d, const dsl::GemmDesc& form) {
  d.lane_layout = form.lane_layout;
  d.use_fast_accum = form.use_fast_accum;
  d.k_loop_step = form.k_loop_step;
  return d;
}

// The longest gemv turn the alternatives below try: longer than max_probe_k's default,
// so a class probed up to it can still be told from turns it never saw cut.
constexpr int64_t kMaxGemvTurn = 8192;

// The gemv descriptors that differ from `base` only in the lane layout (not for a class
// with a tile cap, whose layout is strided) and the turns (none; or two roundings per
// turn of lanes x tile x 2^i up to kMaxGemvTurn, either short turn) and group the
// products of every leaf range of every probe of results[0..j] alike (GemvGrouping.h, at
// each probe's own lanes, tile and spans): turns the probes were too short to see.
// Session 18: the H200's classes 69 and 143 (gemv2T: 16 strided lanes in turns of 512)
// were validated by probes at K = 257 and 181, where 16 contiguous lanes in turns of 16
// group alike; the match found 11 draws at K >= 529 that differ.
std::vector<dsl::GemmDesc> gemv_turn_alternatives(const std::vector<ProbeResult>& results,
                                                  size_t j, const Base& base, bool tile_cap) {
  std::vector<dsl::GemmDesc> out;
  const dsl::GemmDesc& d = base.desc;
  if (d.family != dsl::GemmFamily::kGemv || d.k_cuts.size() > 1 || d.lanes < 2) return out;
  std::vector<dsl::LaneLayout> layouts = {d.lane_layout};
  if (!tile_cap) layouts = {dsl::LaneLayout::kContiguous, dsl::LaneLayout::kStrided};
  std::vector<std::pair<bool, dsl::KLoopStep>> turns = {{true, {0, dsl::ShortTurn::kLast}},
                                                        {false, {0, dsl::ShortTurn::kLast}}};
  for (int64_t s = int64_t{d.lanes} * d.lane_tile; s <= kMaxGemvTurn; s *= 2) {
    for (dsl::ShortTurn st : {dsl::ShortTurn::kLast, dsl::ShortTurn::kFirst}) {
      turns.push_back({false, {s, st}});
    }
  }
  for (dsl::LaneLayout layout : layouts) {
    for (const auto& [fast, step] : turns) {
      dsl::GemmDesc form = d;
      form.lane_layout = layout;
      form.use_fast_accum = fast;
      form.k_loop_step = step;
      if (form == d || !dsl::validate(form).ok()) continue;
      // (A form some probe's descriptor cannot take is no alternative: it differs.)
      const std::optional<bool> same =
          alike_at_probes(results, j, [&](const dsl::GemmDesc& there, int64_t len) {
            const dsl::GemmDesc alt = with_turns_of(there, form);
            return !dsl::validate(alt).ok() || gemv_groupings_differ(there, alt, len);
          });
      if (!same) return {};
      if (*same) out.push_back(form);
    }
  }
  return out;
}

// fit_span_rules over results[i] for i in `order` (those with a descriptor), with the
// replay as its SpanAlsoFits: a rule's span at a probe that differs from the one the
// probe saw still fits when the probe's descriptor with that span (inner levels clamped
// to it) passes the probe's experiments. Session 12: f16 class 173's probe at K = 17,
// P = 2 returned the uncut span 17 where split/8 cuts at 16 (a last part of one
// product the experiments cannot see), and the class had no rule for 128 of the
// match's draws; the match then found cuBLAS cutting at 16 there.
absl::StatusOr<std::vector<SpanRule>> fit_rules_of(const std::vector<ProbeResult>& results,
                                                   const std::vector<size_t>& order, bool split) {
  std::vector<int64_t> ks;
  std::vector<uint32_t> ps;
  std::vector<dsl::GemmDesc> descs;
  std::vector<size_t> from;  // results index of each fit entry
  for (size_t i : order) {
    if (!results[i].desc.ok()) continue;
    ks.push_back(results[i].at.k);
    ps.push_back(results[i].at.splitk);
    descs.push_back(*results[i].desc);
    from.push_back(i);
  }
  const SpanAlsoFits also = [&](size_t j, size_t level, int64_t span) {
    const dsl::GemmDesc& there = descs[j];
    if (level >= there.k_cuts.size() || span < 1) return false;
    dsl::GemmDesc alt = there;
    alt.k_cuts[level].span = span;
    // The class's segment split (descs[0], the descriptor the rules carry): a probe
    // where its partition is an equal split's (tiles a multiple of the segments) found
    // that span; the rule's cut is the segment split at that span.
    if (level < descs[0].k_cuts.size()) alt.k_cuts[level].segments = descs[0].k_cuts[level].segments;
    for (size_t i = level + 1; i < alt.k_cuts.size(); ++i) {
      alt.k_cuts[i].span = std::min(alt.k_cuts[i].span, alt.k_cuts[i - 1].span);
    }
    return replays(alt, there, ks[j], results[from[j]].memo.get());
  };
  return fit_span_rules(split, ks, ps, descs, also);
}

// The strided tile a gemv descriptor deals K to its lanes in at depth k, when every
// lane gets at most one run (a contiguous layout: its run of whole tiles), or its tile
// (strided); 0 for another family.
int64_t strided_tile(const dsl::GemmDesc& d, int64_t k) {
  if (d.family != dsl::GemmFamily::kGemv) return 0;
  if (d.lane_layout == dsl::LaneLayout::kStrided) return d.lane_tile;
  const int64_t tiles = (gemv_range(d, k) + d.lane_tile - 1) / d.lane_tile;
  return (tiles + d.lanes - 1) / d.lanes * d.lane_tile;
}

// A gemv class whose probes deal K to their lanes in one run each at small K and in
// strided tiles of C at large K (cuBLAS's gemv custom 92: runs of 11, 12, 45 at K =
// 341, 359, 1430, tiles of 64 at K = 4097): the cap C that gives every probe its tile
// as min(C, ceil(K / lanes)), or 0 when no probe is capped or the caps disagree. For a
// split gemv K is the part span (gemv_range: each part's kernel is launched with it).
// Only the layout and tile are compared here; explains() checks the rest with the replay.
// Whether a probe shows the cap is fit_tile_cap's question, below.
int64_t tile_cap_of(const std::vector<ProbeResult>& results) {
  int64_t cap = 0;
  for (const ProbeResult& r : results) {
    if (!r.desc.ok() || r.desc->family != dsl::GemmFamily::kGemv) return 0;
    const int64_t t = strided_tile(*r.desc, r.at.k);
    const int64_t runs = gemv_run(*r.desc, r.at.k);
    if (t < runs) {
      if (cap != 0 && cap != t) return 0;
      cap = t;
    }
  }
  if (cap == 0) return 0;
  for (const ProbeResult& r : results) {
    if (strided_tile(*r.desc, r.at.k) != std::min(cap, gemv_run(*r.desc, r.at.k))) return 0;
  }
  return cap;
}

// Whether some probe dealt runs shorter than `cap` (its tile followed K below the cap):
// only there do a cap and the descriptor's own fixed tile group the products apart.
bool a_run_below(const std::vector<ProbeResult>& results, int64_t cap) {
  for (const ProbeResult& r : results) {
    if (r.desc.ok() && gemv_run(*r.desc, r.at.k) < cap) return true;
  }
  return false;
}

// tile_cap_of, when a probe shows it (a_run_below); else 0, the descriptor's own tile,
// which explains every probe as well. Session 42: class 3 (f16 gemv custom 10, strided
// tiles of 4) was revalidated with a third probe and given tile@4 from probes whose runs
// were 7 to 18; at 1x1450x64 (runs of 2) cuBLAS kept tiles of 4, and 4 of seed 40's
// draws differed. open_tile_cap names such a cap for a separating probe.
int64_t fit_tile_cap(const std::vector<ProbeResult>& results) {
  const int64_t cap = tile_cap_of(results);
  return cap > 0 && a_run_below(results, cap) ? cap : 0;
}

// The cap tile_cap_of fits but no probe shows (fit_tile_cap's 0), or 0: a probe where a
// lane's run is shorter than it tells the cap from the fixed tile.
int64_t open_tile_cap(const std::vector<ProbeResult>& results) {
  const int64_t cap = tile_cap_of(results);
  return cap > 0 && !a_run_below(results, cap) ? cap : 0;
}

// kUncappedTile (CublasTable.h) is the rule of a gemv class whose probes each deal
// their range as one tile of ceil(range / lanes) per lane and saw no cap: a split gemv's
// last, shorter part is dealt in the span's tile, not in runs of its own length, which
// the descriptor's contiguous lanes alone would give. The H200's class 89 (split custom
// 92, 32 lanes) showed runs of 33 in its last part of 1,010 at K = 16385 in 16 parts,
// where its probe at K = 10169 (runs of 20 everywhere) came back as contiguous lanes of
// tile 1, and the two probes disagreed.

// Whether every probe deals its range as one tile of ceil(range / lanes) per lane.
bool tiles_follow_range(const std::vector<ProbeResult>& results) {
  for (const ProbeResult& r : results) {
    if (!r.desc.ok() || r.desc->family != dsl::GemmFamily::kGemv) return false;
    if (strided_tile(*r.desc, r.at.k) != gemv_run(*r.desc, r.at.k)) return false;
  }
  return !results.empty();
}

// The largest tile a probe of `results` dealt (strided_tile), 0 for none.
int64_t largest_probed_tile(const std::vector<ProbeResult>& results) {
  int64_t most = 0;
  for (const ProbeResult& r : results) {
    if (r.desc.ok()) most = std::max(most, strided_tile(*r.desc, r.at.k));
  }
  return most;
}

// Whether results[j] disagrees with results[0..j): nullopt when it agrees, else why.
std::optional<std::string> disagreement(const std::vector<ProbeResult>& results, size_t j,
                                        bool split) {
  const ProbeResult& first = results[0];
  const ProbeResult& r = results[j];
  if (first.desc.ok() != r.desc.ok()) {
    const ProbeResult& bad = first.desc.ok() ? r : first;
    return absl::StrFormat("%s found a descriptor but %s found none (%s)",
                           where(first.desc.ok() ? first.at : r.at), where(bad.at),
                           bad.desc.status().message());
  }
  if (!r.desc.ok()) return std::nullopt;  // both failed: they agree there is none
  const std::optional<Base> base = base_of(results, j);
  if (!base) {
    return absl::StrFormat("%s gives %s but %s gives %s", where(first.at),
                           dsl::to_string(*first.desc), where(r.at), dsl::to_string(*r.desc));
  }
  absl::StatusOr<std::vector<SpanRule>> rules =
      fit_rules_of(results, order_from(base->point, j), split);
  if (!rules.ok()) {
    return absl::StrFormat("with %s: %s", where(r.at), rules.status().message());
  }
  return std::nullopt;
}

// The note finish() writes for a class whose probe found no descriptor: "probe of
// variant <v> at <shape> failed: <the probe's NotFound message>".
bool concluded_note(const std::string& note) {
  const size_t at = note.find("probe of variant ");
  return at != std::string::npos && note.find(" failed: ", at) != std::string::npos;
}

class ClassProber {
 public:
  ClassProber(CublasTable& table, const ScanState& state, const ProbeFn& probe,
              const ProbeOptions& options)
      : table_(table), state_(state), probe_(probe), options_(options) {}

  absl::StatusOr<ProbeStats> run(const ProgressFn& progress) {
    results_.resize(table_.classes.size());
    for (size_t c = 0; c < table_.classes.size(); ++c) {
      const int ci = static_cast<int>(c);
      TableClass& cls = table_.classes[c];
      if (!seen(ci)) {
        if (options_.only_classes.count(ci) > 0 && !cls.desc && options_.slice == 0) {
          // Listed, but no shape to probe it at: say so rather than keep an earlier
          // run's note (session 29: classes 76 and 149 kept "the probe budget ... was
          // spent", written before their shapes were lost). Slice 0 alone writes it,
          // so the slices of one run change the class once (merge_scan_slices).
          stats_.no_shape.push_back(ci);
          cls.note = kNoShape;
        }
        continue;
      }
      const bool extra = options_.extra_points.count(ci) > 0;
      const bool listed = options_.only_classes.count(ci) > 0 || extra;
      const bool some_listed = !options_.only_classes.empty() || !options_.extra_points.empty();
      if (some_listed && !listed) continue;
      if (extra) {
        const std::vector<ProbePoint>& pts = options_.extra_points.at(ci);
        extras_[ci] = std::deque<ProbePoint>(pts.begin(), pts.end());
      }
      if (!cls.desc) {
        // A probe of an earlier run (a resumed table) found no descriptor for this class:
        // probing it again costs the same probes for the same answer (device run 3 of
        // 2026-12-03 spent 25 of its 105 s re-proving 15 such classes). A point given
        // for it (extra_points) is new evidence, so such a class is probed.
        if (!options_.retry_failed && !extra && concluded_note(cls.note)) {
          ++stats_.concluded;
          continue;
        }
        // The probes an earlier run finished before it stopped this class's visit
        // (TableClass::open_probes) stand as if made here: checked first, not run again.
        for (const OpenProbe& o : cls.open_probes) {
          results_[c].push_back(probe_of(cls, o.at, o.desc));
          tried_.insert({o.at.variant, o.at.k, o.at.splitk});
        }
        open_seeded_[ci] = static_cast<int64_t>(cls.open_probes.size());
        work_.push_back(ci);
        continue;
      }
      // Revalidation: a class validated by fewer than `revalidate` probes is probed
      // again. Its probes so far, each with the descriptor carried to its (K, P), are
      // checked with the new ones as if just made; the class gets a descriptor again
      // only if all agree (else it splits, or keeps none with the reason).
      // A class whose probes leave a point that tells K-loop steps or split granules
      // apart (separating_point; a table written before the separating probe, or by a
      // run that could use only grid points) is revalidated too: it gets that probe.
      for (const ProbePoint& at : cls.probes) {
        results_[c].push_back(probe_of(
            cls, at,
            with_gemv_rules(carried(*cls.desc, cls.rules, at.k, at.splitk), cls, at.n, at.k)));
        tried_.insert({at.variant, at.k, at.splitk});
      }
      const bool separable = options_.separate_validated && separating_point(c).has_value();
      if (listed) listed_probes_[ci] = static_cast<int>(cls.probes.size());
      if (options_.revalidate > static_cast<int>(cls.probes.size()) || separable || listed) {
        // The class keeps its descriptor, rules, probes and note until its visit
        // writes its outcome (begin_outcome()), so a table saved before then, or a run
        // cut short, still has them (session 8's device run 3, killed at its time
        // limit, saved 39 such classes without their descriptors and 247 without their
        // notes).
        revalidating_.insert(ci);
        ++stats_.revalidated;
        work_.push_back(ci);
      } else {
        results_[c].clear();
      }
    }
    sort_work();
    if (options_.slices > 1) {
      std::vector<int> mine;
      for (size_t i = 0; i < work_.size(); ++i) {
        if (static_cast<int>(i % static_cast<size_t>(options_.slices)) == options_.slice) {
          mine.push_back(work_[i]);
        } else if (revalidating_.erase(work_[i]) > 0) {
          --stats_.revalidated;  // another slice's
        }
      }
      work_ = std::move(mine);
    }
    for (int c : work_) {
      if (auto it = open_seeded_.find(c); it != open_seeded_.end()) stats_.open_resumed += it->second;
    }
    for (int c : work_) {
      // A note of an earlier table (--resume) says why that run left the class without
      // a descriptor; this run writes its own when it visits the class (process()). A
      // re-keyed class keeps its origin.
      if (!state_.kept.count(c) && !revalidating_.count(c)) stale_note_.insert(c);
    }
    for (const auto& [c, kept] : state_.kept) {
      if (c < 0 || c >= static_cast<int>(results_.size()) || table_.classes[c].desc) continue;
      for (const KeptProbe& k : kept) {
        results_[c].push_back(ProbeResult{k.at, k.desc});
        tried_.insert({k.at.variant, k.at.k, k.at.splitk});
      }
    }
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    while (!work_.empty()) {
      const int c = work_.front();
      work_.erase(work_.begin());
      if (progress) progress("probe", stats_.probes, stats_.probes + planned());
      visit_ = VisitTimes{};
      const double t0 = elapsed();
      process(c, elapsed);
      const double total = elapsed() - t0;
      if (total - visit_.probe > kSlowVisitS) {
        stats_.slow_visits.push_back(absl::StrFormat(
            "class %d: %.1f s, probes %.1f s, heuristic %.1f s, separating %.1f s, next point %.1f s",
            c, total, visit_.probe, visit_.heuristic, visit_.separating, visit_.next_point));
      }
    }
    if (progress) progress("probe", stats_.probes, stats_.probes);
    return stats_;
  }

 private:
  // A class this scan state has shapes of (classes of an --append table have none).
  bool seen(int c) const {
    for (size_t v = 0; v < table_.variants.size() && v < state_.shapes.size(); ++v) {
      if (table_.variants[v].cls == c && !state_.shapes[v].points.empty()) return true;
    }
    return false;
  }
  int wanted(int c) const {
    const int base =
        table_.classes[c].cls.values.split ? 1 + options_.fit_probes : options_.class_probes;
    int want = revalidating_.count(c) ? std::max(base, options_.revalidate) : base;
    // A listed class (ProbeOptions::only_classes) gets at least one probe more than it
    // came with.
    if (auto it = listed_probes_.find(c); it != listed_probes_.end()) want = std::max(want, it->second + 1);
    return want;
  }
  int64_t planned() const {
    int64_t n = 0;
    for (int c : work_) n += wanted(c);
    return n;
  }
  // Most-used classes first; a class whose probe passed its time limit in an earlier
  // run (its note says so) after every other.
  void sort_work() {
    auto timed_out = [&](int c) {
      return table_.classes[c].note.find(kTimedOut) != std::string::npos;
    };
    std::map<int, int64_t> drawn;  // class -> rank_shapes that land in it
    for (const runtime::GemmShape& s : options_.rank_shapes) {
      absl::StatusOr<MapRun> run = lookup_run(table_, s);
      if (run.ok() && run->variant >= 0 && run->variant < static_cast<int>(table_.variants.size())) {
        ++drawn[table_.variants[run->variant].cls];
      }
    }
    auto weight = [&](int c) {
      auto it = drawn.find(c);
      return it == drawn.end() ? int64_t{0} : it->second;
    };
    std::stable_sort(work_.begin(), work_.end(), [&](int a, int b) {
      if (timed_out(a) != timed_out(b)) return timed_out(b);
      if (weight(a) != weight(b)) return weight(a) > weight(b);
      return class_shapes(table_, a) > class_shapes(table_, b);
    });
  }

  // The next point to probe for class c, or nullopt when no unprobed point is left.
  std::optional<ProbePoint> next_point(int c) const {
    const TableClass& cls = table_.classes[c];
    const std::vector<ProbeResult>& done = results_[c];
    std::optional<ProbePoint> best;
    std::vector<int64_t> best_rank;
    // A dot class probed only where an operand is strided has not seen its threads'
    // vector tile (dot_at_shape): its next probe goes where both are contiguous.
    bool want_contiguous = !done.empty();
    for (const ProbeResult& r : done) {
      want_contiguous &= r.desc.ok() && r.desc->family == dsl::GemmFamily::kDot && r.desc->lane_tile == 1;
    }
    // K = 1 and 2 leave the probe no walk (the random draws alone judge): such points
    // are probed only in a class that has no other (class 66 of session 13 lives at
    // K = 1 only); elsewhere a walkless probe would count as a validation it is not.
    bool walkable = false;
    for (size_t v = 0; v < table_.variants.size() && v < state_.shapes.size(); ++v) {
      if (table_.variants[v].cls != c) continue;
      for (const auto& [kp, mn] : state_.shapes[v].points) walkable |= kp.first >= 3;
    }
    for (size_t v = 0; v < table_.variants.size() && v < state_.shapes.size(); ++v) {
      if (table_.variants[v].cls != c) continue;
      const CublasKey& key = table_.variants[v].key;
      // Fields outside the class's mask in which v differs from every probed variant.
      int fine_diff = done.empty() ? 0 : kKeyFieldCount;
      for (const ProbeResult& r : done) {
        const uint32_t d =
            differing_fields(key, table_.variants[r.at.variant].key) & ~cls.cls.mask;
        fine_diff = std::min(fine_diff, std::popcount(d));
      }
      for (const auto& [kp, mn] : state_.shapes[v].points) {
        const auto [k, p] = kp;
        if (k < (walkable ? 3 : 1) || k > options_.max_probe_k) continue;
        const ProbePoint pt{.variant = static_cast<int>(v), .m = mn.first, .n = mn.second,
                            .k = k, .splitk = p};
        if (tried_.count({pt.variant, k, p})) continue;
        // A class that holds at one layout only (KLayout) is not probed at the other.
        if (!holds_at_layout(cls, pt.m, pt.n)) continue;
        // (With no split count, split_count_unset, ceil(K / P) is 1 everywhere: a new K
        // is what tells the span rules apart.)
        bool new_ratio = true;
        for (const ProbeResult& r : done) {
          new_ratio &= split_count_unset(p) && split_count_unset(r.at.splitk)
                           ? r.at.k != k
                           : ceil_div(r.at.k, r.at.splitk) != ceil_div(k, p);
        }
        // With small_probe_k, a class whose probes so far all ran at K >= min_probe_k
        // takes its next probe at a K in [small_probe_k, min_probe_k) where it has one:
        // kernels whose short-K path differs (the H200 match found 1-ulp differences
        // at K = 25 and 57 in a class probed at K = 257 and 259) show there.
        bool want_small = options_.small_probe_k > 0 && !done.empty();
        for (const ProbeResult& r : done) want_small &= r.at.k >= options_.min_probe_k;
        const int64_t lo = want_small ? options_.small_probe_k : options_.min_probe_k;
        const int64_t hi = want_small ? options_.min_probe_k : std::numeric_limits<int64_t>::max();
        const bool in_range = k >= lo && k < hi;
        // Out of that range, the point nearest it: below it the largest K, above it (a
        // class whose K all pass min_probe_k when short K are wanted) the smallest, so
        // a class living at K >= 426 takes its second probe near 426, not at K = 131072
        // (class 204's second probe, session 20: 150 s and no descriptor).
        const int64_t off = in_range ? 0 : (k < lo ? lo - k : k - hi + 1);
        // A point whose full shape is over max_probe_mnk runs every experiment of the
        // probe on that many multiply-adds (device run 13: 75 s at 257 x 16257 x 4096);
        // it is taken only when the class has no other point.
        const bool small_enough = pt.m * pt.n * k <= options_.max_probe_mnk;
        const bool contiguous = want_contiguous && dot_contiguous(cls.family, pt.m, pt.n);
        // Larger rank wins, compared in order.
        const std::vector<int64_t> rank = {
            small_enough ? 1 : 0,
            contiguous ? 1 : 0,
            in_range ? 1 : 0,
            fine_diff,
            cls.cls.values.split && new_ratio ? 1 : 0,
            table_.variants[v].shapes,
            in_range ? -std::countr_zero(static_cast<uint64_t>(k)) : 0,
            in_range ? -k : -off};
        if (!best || rank > best_rank) {
          best = pt;
          best_rank = rank;
        }
      }
    }
    return best;
  }

  // For a class whose probes all found a descriptor that other K-loop steps explain as
  // well (step_alternatives), or, split, whose probed spans other split rules fit
  // (fit_span_rules takes the first): the untried point (K in [3, max_probe_k]) that
  // tells the most of them apart from the class's own, the cheapest of those (points
  // over max_probe_mnk last); grid points, and with ProbeOptions::heuristic K values
  // inside the map's runs too. nullopt when no point tells any apart.
  std::optional<ProbePoint> separating_point(int c) const {
    const std::vector<ProbeResult>& done = results_[c];
    if (done.empty()) return std::nullopt;
    for (const ProbeResult& r : done) {
      if (!r.desc.ok()) return std::nullopt;
    }
    const std::optional<Base> base = base_of(done, done.size() - 1);
    if (!base) return std::nullopt;
    const dsl::GemmDesc& bd = base->desc;
    if (bd.k_cuts.size() > 1) return std::nullopt;
    const TableClass& cls = table_.classes[c];
    // gemv: turns and lane layouts (gemv_turn_alternatives); else K-loop steps.
    const bool gemv = bd.family == dsl::GemmFamily::kGemv;
    std::vector<dsl::GemmDesc> alts =
        gemv ? gemv_turn_alternatives(done, done.size() - 1, *base, cls.lane_tile_cap > 0)
             : step_alternatives(done, done.size() - 1, *base);
    // With one cut level, the span the class's rule (as finish() fits it) gives a point.
    std::optional<SpanRule> rule;
    if (bd.k_cuts.size() == 1) {
      absl::StatusOr<std::vector<SpanRule>> rules = fit_rules_of(
          done, order_from(base->point, done.size() - 1), table_.classes[c].cls.values.split);
      if (!rules.ok() || rules->size() != 1) return std::nullopt;
      rule = (*rules)[0];
    }
    // Split rules that fit every probe's span: plain granules (split/G), and aligned
    // ones (split/G'/A) whose A is the class's granule (or its A), or whose G is the
    // class's G: whether a granule holds only at K that are multiples of it, or has an
    // exception there.
    std::vector<SpanRule> split_alts;
    if (bd.k_cuts.size() == 1 && table_.classes[c].cls.values.split && rule &&
        rule->kind == SpanRule::Kind::kSplit) {
      // The rule's granule G also has the alternatives split/G/A (an alignment
      // exception: the CPU replays of session 8 found split/8 classes that round to 64
      // at K multiples of 64, and device run 3 fitted split/8/16 where an earlier probe
      // at K = 2240 had needed A = 64).
      const int64_t own = rule->aligned > 0 ? rule->aligned : rule->granule;
      for (const SpanRule& r : split_rules()) {
        if (r.aligned > 0 && r.aligned != own && r.granule != rule->granule) continue;
        bool fits = true;
        for (const ProbeResult& pr : done) {
          fits = fits && apply_span_rule(r, 0, pr.at.k, pr.at.splitk) == pr.desc->k_cuts[0].span;
        }
        if (fits) split_alts.push_back(r);
      }
      if (split_alts.size() < 2) split_alts.clear();
    }
    // A gemv class under the uncapped tile rule (kUncappedTile): every cap between the
    // largest tile its probes dealt and a point's own run length explains its probes as
    // well; a probe where the run is longer tells that many of them apart.
    const int64_t probed_tile =
        gemv && cls.lane_tile_cap == kUncappedTile ? largest_probed_tile(done) : 0;
    // A cap the probes fit but do not show (open_tile_cap): a point where a lane's run
    // is shorter than it tells the cap from the descriptor's fixed tile.
    const int64_t open_cap =
        gemv && cls.lane_tile_cap != kUncappedTile ? open_tile_cap(done) : 0;
    if (alts.empty() && split_alts.empty() && probed_tile == 0 && open_cap == 0) {
      return std::nullopt;
    }
    // How many of the alternatives a point (k, p) tells apart from the class's own
    // descriptor and rule (0: none): the probe there rules out at least that many.
    // steps_differ_at and gemv_groupings_differ are O(len) and the candidates share few
    // leaf lengths: one answer per (length, lanes, tile, alternative).
    std::map<std::tuple<int64_t, int, int>, std::vector<char>> differ_at_len;
    auto differing = [&](const dsl::GemmDesc& own, int64_t len) -> const std::vector<char>& {
      auto [it, fresh] = differ_at_len.try_emplace({len, own.lanes, own.lane_tile});
      if (fresh) {
        for (const dsl::GemmDesc& a : alts) {
          it->second.push_back(gemv ? gemv_groupings_differ(own, with_turns_of(own, a), len)
                                    : steps_differ_at(own, a, len));
        }
      }
      return it->second;
    };
    dsl::GemmDesc at = bd;  // bd at the candidate's (K, P)
    auto separated_at = [&](const ProbePoint& pt) {
      const int64_t k = pt.k, p = pt.splitk;
      int64_t n = 0;
      if (rule) at.k_cuts[0].span = apply_span_rule(*rule, bd.k_cuts[0].span, k, p);
      if (probed_tile > 0) {
        n += std::max<int64_t>(0, gemv_run(at, k) - probed_tile);
      }
      if (open_cap > 0) n += gemv_run(with_lanes(at, lanes_at(cls.lanes_by_n, pt.n)), k) < open_cap;
      if (!alts.empty()) {
        // A gemv class's lanes and tile at the point (its lane rule at N, its tile cap).
        const dsl::GemmDesc own = gemv ? with_gemv_rules(at, cls, pt.n, k) : at;
        std::vector<char> differs(alts.size(), 0);
        for (int64_t len : leaf_lengths(own, k)) {
          const std::vector<char>& d = differing(own, len);
          for (size_t i = 0; i < alts.size(); ++i) differs[i] |= d[i];
        }
        for (char d : differs) n += d;
      }
      // A span that leaves the last part one product is no separation: the merge adds
      // that product much as the part before it would have, and the probe's experiments
      // do not tell the two apart (session 12: class 173's probe at K = 17, P = 2 saw no
      // cut where split/8 cuts at 16).
      auto lone_last = [&](int64_t span) { return span < k && (k - 1) % span == 0; };
      if (split_alts.empty()) return n;
      const int64_t own_span = apply_span_rule(*rule, 0, k, p);
      for (const SpanRule& r : split_alts) {
        const int64_t span = apply_span_rule(r, 0, k, p);
        n += span != own_span && !lone_last(span) && !lone_last(own_span);
      }
      return n;
    };
    // The candidates: each untried (K, P) once, at its best cell (better_probe_cell).
    // One (K, P) is held by many cells and map runs (a split class of the committed
    // table: up to 17,000 runs, 150,000 distinct (K, P)), so separated_at runs once per
    // (K, P), not once per cell.
    std::map<std::pair<int64_t, uint32_t>, ProbePoint> cands;
    auto offer = [&](int v, int64_t m, int64_t n, int64_t k, uint32_t p) {
      if (k < 3 || k > options_.max_probe_k || tried_.count({v, k, p})) return;
      const ProbePoint pt{.variant = v, .m = m, .n = n, .k = k, .splitk = p};
      auto [it, fresh] = cands.try_emplace({k, p}, pt);
      if (!fresh && better_probe_cell({m, n}, {it->second.m, it->second.n})) it->second = pt;
    };
    for (size_t v = 0; v < table_.variants.size() && v < state_.shapes.size(); ++v) {
      if (table_.variants[v].cls != c) continue;
      for (const auto& [kp, mn] : state_.shapes[v].points) {
        offer(static_cast<int>(v), mn.first, mn.second, kp.first, kp.second);
      }
    }
    // With the heuristic to check a point against (ProbeOptions::heuristic), K values
    // between the grid points too: each map run of the class's variants holds for
    // [k0, next k0), and its first kOffGridKs + 1 K values from k0 are offered at the
    // cell holding that run.
    if (options_.heuristic) {
      constexpr int64_t kOffGridKs = 256;
      for (const FamilyMap& map : table_.maps) {
        if (map.family != table_.classes[c].family) continue;
        for (size_t cell = 0; cell < map.runs.size(); ++cell) {
          const int64_t m = map.ms[cell / map.ns.size()], n = map.ns[cell % map.ns.size()];
          const std::vector<MapRun>& runs = map.runs[cell];
          for (size_t r = 0; r < runs.size(); ++r) {
            const MapRun& run = runs[r];
            if (run.variant < 0 || run.variant >= static_cast<int>(table_.variants.size()) ||
                table_.variants[run.variant].cls != c) {
              continue;
            }
            const int64_t end = r + 1 < runs.size() ? runs[r + 1].k0 : map.k_max + 1;
            const int64_t hi = std::min({end - 1, options_.max_probe_k, run.k0 + kOffGridKs});
            for (int64_t k = std::max<int64_t>(run.k0, 3); k <= hi; ++k) {
              offer(run.variant, m, n, k, run.splitk);
            }
          }
        }
      }
    }
    // The point that separates the most alternatives, the cheapest among those: points
    // over max_probe_mnk last, and cells with fewer than kSmallCell placements per launch
    // after every larger one (a probe at 91x2x4257 took 117 s on the H200 in session 9's
    // run 1, where 128 x 128 needs about a hundred launches); then the most placements,
    // then the smallest M*N*K. One probe at K = 3 tells split/1 and split/2 from split/64,
    // but not split/8/64 (the scan test AnAlignedSplitGranule...).
    constexpr int64_t kSmallCell = 32 * 32;
    std::optional<ProbePoint> best;
    std::tuple<bool, bool, int64_t, int64_t, int64_t> best_cost;
    for (const auto& [kp, pt] : cands) {
      const int64_t separated = separated_at(pt);
      if (separated == 0) continue;
      const int64_t mnk = pt.m * pt.n * pt.k;
      const int64_t placements = std::min<int64_t>(pt.m, 128) * std::min<int64_t>(pt.n, 128);
      const std::tuple<bool, bool, int64_t, int64_t, int64_t> cost = {
          mnk > options_.max_probe_mnk, placements < kSmallCell, -separated, -placements, mnk};
      if (best && !(cost < best_cost)) continue;
      best = pt;
      best_cost = cost;
    }
    return best;
  }

  // Seconds of one class visit by kind of work (stats_.slow_visits).
  struct VisitTimes {
    double probe = 0, heuristic = 0, separating = 0, next_point = 0;
  };
  template <typename F>
  static auto timed(double* into, F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = f();
    *into += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }

  template <typename Elapsed>
  void process(int c, const Elapsed& elapsed) {
    // The first visit of a class replaces what the earlier run left (a class split
    // off during this run is visited again with the note the split gave it), but only
    // when the visit writes its outcome (begin_outcome).
    if (!visited_.count(c)) {
      if (revalidating_.count(c)) {
        fresh_note_[c] = "revalidated";
      } else if (stale_note_.count(c)) {
        fresh_note_[c] = "";
      }
    }
    visited_.insert(c);
    std::vector<ProbeResult>& done = results_[c];
    const bool split = table_.classes[c].cls.values.split;
    // Probes handed down from a split parent are checked before new ones run.
    for (size_t j = 1; j < done.size(); ++j) {
      if (std::optional<std::string> why = disagreement(done, j, split)) {
        return disagree(c, j, *why);
      }
    }
    int broken_here = 0;
    // Once the class has its probes, one more where the K-loop steps that explain them
    // all group the products differently (separating_point), if the class has such a
    // point.
    std::optional<ProbePoint> forced;
    int separated = 0;
    while (true) {
      // The points given for this class (ProbeOptions::extra_points) come first.
      std::optional<ProbePoint> given;
      if (auto it = extras_.find(c); it != extras_.end() && !it->second.empty()) {
        given = it->second.front();
        it->second.pop_front();
      }
      if (!given && static_cast<int>(done.size()) >= wanted(c)) {
        // Up to kMaxSeparating per visit: one point rarely rules out every split rule
        // (split/16/128 and split/8/64 agree at K = 190, 382, 4096 and 33 with P = 3).
        if (separated >= kMaxSeparating) break;
        ++separated;
        forced = timed(&visit_.separating, [&] { return separating_point(c); });
        if (!forced) break;
        ++stats_.separating;
      }
      const std::optional<ProbePoint> pt =
          given    ? given
          : forced ? forced
                   : timed(&visit_.next_point, [&] { return next_point(c); });
      forced.reset();
      if (!pt) break;
      // A class that holds at one layout only (KLayout) learns nothing of its descriptor
      // from the other; a point given for it there (--probe-at) is probed for the other
      // layout's tree (OtherLayout, add_other).
      const bool other_layout = !holds_at_layout(table_.classes[c], pt->m, pt->n);
      if (other_layout && !given) {
        tried_.insert({pt->variant, pt->k, pt->splitk});
        continue;
      }
      // The separating probe is an extra: without budget for it the class keeps what its
      // probes give.
      if (separated && elapsed() > options_.budget_s) break;
      if (elapsed() > options_.budget_s) {
        return stop_early(c, absl::StrFormat(
                                 "the probe budget of %.0f s was spent after %d of %d probes",
                                 options_.budget_s, done.size(), wanted(c)));
      }
      runtime::GemmShape s = *parse_family(table_.classes[c].family);
      s.m = pt->m, s.n = pt->n, s.k = pt->k;
      if (options_.heuristic) {
        const CublasAnswer want{table_.variants[pt->variant].key, pt->splitk};
        absl::StatusOr<runtime::AlgoConfig> got =
            timed(&visit_.heuristic, [&] { return options_.heuristic(s); });
        if (!got.ok() || answer_of(*got) != want) {
          // Not this class's kernel here (an off-grid point the map's run does not hold
          // for): no evidence either way, and no count against the class.
          tried_.insert({pt->variant, pt->k, pt->splitk});
          ++stats_.instrument_errors;
          broken_[pt->variant].push_back(absl::StrFormat(
              "%s: cuBLASLt's heuristic %s there", where(*pt),
              got.ok() ? absl::StrCat("answers ", to_string(answer_of(*got).key), " split ",
                                      answer_of(*got).splitk)
                       : absl::StrCat("failed: ", got.status().message())));
          continue;
        }
      }
      ++stats_.probes;
      tried_.insert({pt->variant, pt->k, pt->splitk});
      // The descriptors the class's probes found so far go with the probe: its search
      // tries first what found them (probe_key's found_before).
      std::vector<dsl::GemmDesc> found_before;
      for (const ProbeResult& r : done) {
        if (r.desc.ok()) found_before.push_back(*r.desc);
      }
      absl::StatusOr<dsl::GemmDesc> desc = timed(
          &visit_.probe, [&] { return probe_(s, table_.variants[pt->variant].key, found_before); });
      if (!desc.ok() && !absl::IsNotFound(desc.status())) {
        // The instrument failed (the black box, the device): no evidence either way
        // about the class, so the point is dropped, not counted as a disagreement.
        ++stats_.instrument_errors;
        broken_[pt->variant].push_back(
            absl::StrFormat("%s: %s", where(*pt), desc.status().message()));
        if (absl::IsDeadlineExceeded(desc.status())) {
          // A point past the probe's time limit ends the class for this run, so one
          // class cannot take the budget point after point (device runs 3-4 of session
          // 7: three points of one class took 164 s); a later --resume ranks it last.
          return stop_early(c, absl::StrFormat("%s at %s (%s)", kTimedOut, where(*pt),
                                               desc.status().message()));
        }
        if (++broken_here >= kMaxInstrumentErrors) {
          return fail(c, absl::StrFormat(
              "not validated: %d probes failed in the instrument after %d of %d probes "
              "(last: %s)", broken_here, done.size(), wanted(c), broken_[pt->variant].back()));
        }
        continue;
      }
      if (other_layout) {
        add_other(c, *pt, desc);
        continue;
      }
      done.push_back(probe_of(table_.classes[c], *pt, std::move(desc)));
      keep_open(c);
      // gemv probes whose tiles follow K with a cap (fit_tile_cap) give the class that
      // cap; each probe is then explained with its tile under it.
      // (An uncapped rule, below, gives way to a cap a later probe shows.)
      const int64_t had_cap = table_.classes[c].lane_tile_cap;
      if (done.size() > 1 && (had_cap == 0 || had_cap == kUncappedTile)) {
        if (const int64_t cap = fit_tile_cap(done); cap > 0) set_tile_cap(c, cap);
      }
      if (done.size() > 1) {
        std::optional<std::string> why = disagreement(done, done.size() - 1, split);
        // gemv probes that disagree as they stand may agree with one tile of
        // ceil(range / lanes) per lane in every part, the last one too (kUncappedTile).
        if (why && table_.classes[c].lane_tile_cap == 0 && tiles_follow_range(done)) {
          set_tile_cap(c, kUncappedTile);
          why = disagreement(done, done.size() - 1, split);
          if (why) set_tile_cap(c, 0);
        }
        // A cap the class came with (a table's, fitted before fit_tile_cap asked a probe
        // to show it) that a probe where the runs are shorter contradicts may have been
        // the descriptor's fixed tile all along (session 42: class 3's tile@4).
        if (why && had_cap > 0 && had_cap != kUncappedTile) {
          set_tile_cap(c, 0);
          why = disagreement(done, done.size() - 1, split);
          if (why) set_tile_cap(c, had_cap);
        }
        if (why) return disagree(c, done.size() - 1, *why);
      }
      // No descriptor in the searched space reproduces this point: more points of the
      // class would cost probes (device run 1 of 2026-12-03 spent 45 probes on 15 such
      // classes) and could not give it a descriptor, so the class ends here.
      if (!done.back().desc.ok()) break;
    }
    finish(c);
  }

  // The visit of class c writes its outcome: what the earlier run left goes now, not
  // at the visit's start, so a table saved between the visit's probes (the sample saves
  // every 30 s) or by a run cut short in it keeps the descriptor, rules, probes and note
  // it had (session 23's device run 6, stopped at its time limit, saved six classes
  // with no note at all).
  void begin_outcome(int c) {
    auto it = fresh_note_.find(c);
    if (it == fresh_note_.end()) return;
    TableClass& cls = table_.classes[c];
    if (revalidating_.count(c)) {
      cls.desc.reset();
      cls.rules.clear();
      cls.probes.clear();
    }
    cls.note = std::move(it->second);
    fresh_note_.erase(it);
  }

  // Ends class c's visit before its probes are complete (the budget spent, a probe past
  // its time limit), saying why. A class being revalidated keeps the descriptor its
  // earlier probes (and any new ones, which agreed) give: an unfinished revalidation is
  // no evidence against it (device run 1 of 2026-12-03 lost 20 descriptors that way).
  // Any other class keeps none.
  void stop_early(int c, const std::string& why) {
    begin_outcome(c);
    const std::vector<ProbeResult>& done = results_[c];
    if (revalidating_.count(c) && !done.empty() && done[0].desc.ok()) {
      TableClass& cls = table_.classes[c];
      cls.note = absl::StrCat(cls.note.empty() ? "" : cls.note + "; ",
                              "revalidation not finished: ", why);
      return finish(c);
    }
    // The layout a disagreement bounded the class to stays with the probes kept at it.
    const KLayout layout = table_.classes[c].layout;
    std::optional<OtherLayout> other = table_.classes[c].other;
    fail(c, "not validated: " + why);
    keep_open(c);
    if (!table_.classes[c].open_probes.empty()) {
      table_.classes[c].layout = layout;
      table_.classes[c].other = std::move(other);
    }
  }

  // Class c, while it has no descriptor, keeps the probes of this visit that found one
  // in the table (TableClass::open_probes) as each finishes: a table saved between
  // probes, or a visit the budget or a time limit stops, keeps them for a later scan.
  // A class being revalidated keeps its descriptor and none until its outcome.
  void keep_open(int c) {
    TableClass& cls = table_.classes[c];
    if (cls.desc) return;
    cls.open_probes.clear();
    for (const ProbeResult& r : results_[c]) {
      if (r.desc.ok()) cls.open_probes.push_back(OpenProbe{r.at, *r.desc});
    }
  }

  // A probe of layout-bound class c at the other layout (OtherLayout): the first that
  // finds a descriptor without K cuts gives the class its tree there; each later one must
  // be reproduced by that tree (the replay of its own experiments), or the class keeps
  // none there, and its note says why; the run's later points there then start none.
  // (A later run starts afresh from its own points: the table keeps no refutation.)
  void add_other(int c, const ProbePoint& at, const absl::StatusOr<dsl::GemmDesc>& desc) {
    TableClass& cls = table_.classes[c];
    if (other_refuted_.count(c)) return;
    auto it = fresh_note_.find(c);
    std::string& note = it != fresh_note_.end() ? it->second : cls.note;
    auto none = [&](const std::string& why) {
      other_refuted_.insert(c);
      cls.other.reset();
      const std::string text = absl::StrFormat(
          "no tree where the K vectors are not %s: %s", layout_name(cls.layout), why);
      note = note.empty() ? text : absl::StrCat(note, "; ", text);
    };
    if (!desc.ok()) return none(absl::StrCat(where(at), ": ", desc.status().message()));
    if (!desc->k_cuts.empty()) {
      return none(absl::StrFormat("%s found %s, which cuts K (no span rule carries it there)",
                                  where(at), dsl::to_string(*desc)));
    }
    if (!cls.other) {
      cls.other = OtherLayout{.probes = {at}, .desc = *desc};
      return;
    }
    ReplayMemo memo;
    if (!replays(cls.other->desc, *desc, at.k, &memo)) {
      return none(absl::StrFormat("%s found %s, which %s (from %s) does not reproduce", where(at),
                                  dsl::to_string(*desc), dsl::to_string(cls.other->desc),
                                  where(cls.other->probes[0])));
    }
    // (A point probed again, a later run's --probe-at, is listed once.)
    if (std::find(cls.other->probes.begin(), cls.other->probes.end(), at) ==
        cls.other->probes.end()) {
      cls.other->probes.push_back(at);
    }
  }

  // Class c's gemv tile cap (0: none), and every probe of it explained under that cap.
  void set_tile_cap(int c, int64_t cap) {
    table_.classes[c].lane_tile_cap = cap;
    for (ProbeResult& r : results_[c]) r.rule_tile_cap = cap;
  }

  void fail(int c, const std::string& note) {
    begin_outcome(c);
    TableClass& cls = table_.classes[c];
    cls.desc.reset();
    cls.rules.clear();
    cls.lane_tile_cap = 0;  // fitted from the probes that no longer stand
    cls.layout = KLayout::kAny;
    cls.other.reset();
    cls.probes.clear();
    cls.open_probes.clear();  // a conclusion; stop_early keeps them again
    cls.note = cls.note.empty() ? note : absl::StrCat(cls.note, "; ", note);
    ++stats_.failed;
  }

  void finish(int c) {
    begin_outcome(c);
    std::vector<ProbeResult>& done = results_[c];
    TableClass& cls = table_.classes[c];
    cls.open_probes.clear();  // the visit's outcome: a descriptor or the reason for none
    // Instrument failures at the class's variants, for its note.
    std::vector<std::string> broken;
    for (size_t v = 0; v < table_.variants.size(); ++v) {
      if (table_.variants[v].cls != c) continue;
      if (auto it = broken_.find(static_cast<int>(v)); it != broken_.end()) {
        broken.insert(broken.end(), it->second.begin(), it->second.end());
      }
    }
    const std::string broken_note =
        broken.empty() ? ""
                       : absl::StrFormat("%d probe(s) failed in the instrument (first: %s)",
                                         broken.size(), broken[0]);
    if (done.empty() && !broken.empty()) return fail(c, broken_note);
    if (done.empty()) {
      int64_t smallest = 0;
      for (size_t v = 0; v < table_.variants.size() && v < state_.shapes.size(); ++v) {
        if (table_.variants[v].cls != c || state_.shapes[v].points.empty()) continue;
        const int64_t k = state_.shapes[v].points.begin()->first.first;
        smallest = smallest == 0 ? k : std::min(smallest, k);
      }
      return fail(c, absl::StrFormat(
          "not probed: every scanned shape of this class has K outside [3, %d] (smallest K %d)",
          options_.max_probe_k, smallest));
    }
    if (!done[0].desc.ok()) {
      std::vector<std::string> why;
      for (const ProbeResult& r : done) {
        why.push_back(absl::StrFormat("probe of %s failed: %s", where(r.at),
                                      r.desc.status().message()));
      }
      return fail(c, absl::StrJoin(why, "; "));
    }
    // A split class's level-0 span rule needs probes at two values of ceil(K / P): the
    // span of one is given by every granule up to it (session 12's device run 6 validated
    // class 177 from its only probe, K = 16384 and P = 64, as split/256; cuBLAS rounds to
    // 8 there, and all 19 of the match's shapes of the class differed).
    // A split count that is no count (split_count_unset: cuBLASLt's SPLITK_NUM -1, class
    // 146 in session 23, whose kernel makes no split) gives ceil(K / P) = 1 at every K,
    // and fit_span_rules no split rule: the spans the probes saw pin the rule ("whole"
    // or "fixed") once they come from two K.
    if (cls.cls.values.split && !done[0].desc->k_cuts.empty()) {
      std::set<int64_t> parts, ks;
      bool unset = true;
      for (const ProbeResult& r : done) {
        if (!r.desc.ok()) continue;
        parts.insert(ceil_div(r.at.k, r.at.splitk));
        ks.insert(r.at.k);
        unset = unset && split_count_unset(r.at.splitk);
      }
      if (unset && ks.size() < 2) {
        return fail(c, absl::StrFormat(
            "not validated: the probes saw one K (%s, span %d) with no split count (SPLITK_NUM "
            "-1), which fits a fixed span and the whole K alike; a probe at another K is "
            "needed (--probe-at)",
            where(done[0].at), done[0].desc->k_cuts[0].span));
      }
      if (!unset && parts.size() < 2) {
        return fail(c, absl::StrFormat(
            "not validated: the probes saw one K / P (%s, span %d), which fits every split "
            "granule up to its span; a probe at another K / P is needed (--probe-at)",
            where(done[0].at), done[0].desc->k_cuts[0].span));
      }
    }
    // The class's descriptor is the probe that explains all the others (checked by
    // disagreement() as each probe came); its point is listed first.
    const std::optional<Base> base = base_of(done, done.size() - 1);
    const std::vector<size_t> order = order_from(base ? base->point : 0, done.size() - 1);
    for (size_t i : order) cls.probes.push_back(done[i].at);
    absl::StatusOr<std::vector<SpanRule>> rules =
        fit_rules_of(done, order, cls.cls.values.split);
    if (!rules.ok()) return fail(c, std::string(rules.status().message()));  // checked before
    cls.desc = base ? base->desc : *done[order[0]].desc;
    cls.rules = *rules;
    std::set<int> variants;
    int total = 0;
    for (const ProbeResult& r : done) variants.insert(r.at.variant);
    for (const TableVariant& v : table_.variants) total += v.cls == c;
    const std::string seen = absl::StrFormat(
        "%d probe(s) agree over %d of the class's %d variant(s)", done.size(), variants.size(),
        total);
    cls.note = cls.note.empty() ? seen : absl::StrCat(cls.note, "; ", seen);
    if (!broken_note.empty()) absl::StrAppend(&cls.note, "; ", broken_note);
    ++stats_.validated;
  }

  // Probe j disagrees with the ones before it: split the class by the fields outside
  // its mask in which j's variant differs from theirs, or give up when there are none.
  void disagree(int c, size_t j, const std::string& why) {
    begin_outcome(c);
    // Taken out first: results_ grows below.
    std::vector<ProbeResult> done = std::move(results_[c]);
    results_[c].clear();
    const CublasClass old = table_.classes[c].cls;
    const CublasKey kj = table_.variants[done[j].at.variant].key;
    uint32_t fields = 0;
    for (size_t i = 0; i < j; ++i) {
      fields |= differing_fields(kj, table_.variants[done[i].at.variant].key) & ~old.mask;
    }
    // Probes before j all at one layout of the K vectors and j at the other: the
    // kernel computes another tree there (class 114 of session 38), so the class holds
    // at one layout only, the one where the scan saw more of its (K, P) points (ties:
    // the first probe's), drops the probes at the other and goes on; the next visit
    // checks the ones it keeps against each other again.
    const std::string& family = table_.classes[c].family;
    const KLayout before = layout_at(family, done[0].at.m, done[0].at.n);
    bool one_layout = fields == 0 && layout_at(family, done[j].at.m, done[j].at.n) != before;
    for (size_t i = 1; i < j && one_layout; ++i) {
      one_layout = layout_at(family, done[i].at.m, done[i].at.n) == before;
    }
    int64_t seen_before = 0, seen_other = 0;
    for (size_t v = 0; one_layout && v < table_.variants.size() && v < state_.shapes.size(); ++v) {
      if (table_.variants[v].cls != c) continue;
      for (const auto& [kp, mn] : state_.shapes[v].points) {
        ++(layout_at(family, mn.first, mn.second) == before ? seen_before : seen_other);
      }
    }
    const bool keep_before = seen_other <= seen_before;
    const ProbeResult& kept = keep_before ? done[0] : done[j];
    const ProbeResult& dropped = keep_before ? done[j] : done[0];
    if (one_layout && kept.desc.ok()) {
      const KLayout keep = layout_at(family, kept.at.m, kept.at.n);
      TableClass& cls = table_.classes[c];
      cls.layout = keep;
      const std::string other = absl::StrFormat(
          "holds only where the K vectors are %s (%d of the scan's %d points of the class): at "
          "%s they are not, and the probe found %s",
          layout_name(keep),
          keep_before ? seen_before : seen_other, seen_before + seen_other, where(dropped.at),
          dropped.desc.ok() ? dsl::to_string(*dropped.desc)
                            : std::string(dropped.desc.status().message()));
      // The visit's first note when it has one (begin_outcome writes it), else the class's.
      auto it = fresh_note_.find(c);
      std::string& note = it != fresh_note_.end() ? it->second : cls.note;
      note = note.empty() ? other : absl::StrCat(note, "; ", other);
      // The dropped probe is the other layout's first (a later visit's given points
      // there check it: add_other).
      if (!cls.other) add_other(c, dropped.at, dropped.desc);
      for (ProbeResult& r : done) {
        if (layout_at(family, r.at.m, r.at.n) == keep) results_[c].push_back(std::move(r));
      }
      keep_open(c);  // a table saved from here on keeps no probe at the other layout
      work_.insert(work_.begin(), c);  // checked again and probed on at its layout
      return;
    }
    if (fields == 0) {
      return fail(c, absl::StrFormat(
          "the probes disagree though their variants are equal, so the descriptor depends on K "
          "or the split count beyond any span rule: %s", why));
    }
    ++stats_.splits;
    const uint32_t mask = old.mask | fields;
    const std::string note = absl::StrFormat("split from class {%s} by %s because %s",
                                             to_string(old), fields_text(kj, fields), why);
    // The class keeps the part holding its first probe's variant; the others are new.
    std::map<CublasKey, int> parts;
    parts[class_of(table_.variants[done[0].at.variant].key, mask).values] = c;
    std::vector<int> touched = {c};
    for (TableVariant& v : table_.variants) {
      if (v.cls != c) continue;
      const CublasClass part = class_of(v.key, mask);
      auto [it, fresh] = parts.emplace(part.values, static_cast<int>(table_.classes.size()));
      if (fresh) {
        TableClass tc;
        tc.family = table_.classes[c].family;
        tc.cls = part;
        table_.classes.push_back(std::move(tc));
        results_.emplace_back();
        touched.push_back(it->second);
      }
      v.cls = it->second;
    }
    table_.classes[c].cls = class_of(table_.variants[done[0].at.variant].key, mask);
    for (ProbeResult& r : done) results_[table_.variants[r.at.variant].cls].push_back(std::move(r));
    for (int t : touched) {
      table_.classes[t].note = note;
      keep_open(t);  // each part's own probes, also when this run does not visit it
      if (seen(t)) work_.push_back(t);
    }
    sort_work();
  }

  CublasTable& table_;
  const ScanState& state_;
  const ProbeFn& probe_;
  const ProbeOptions& options_;
  static constexpr int kMaxInstrumentErrors = 3;  // per class visit
  static constexpr double kSlowVisitS = 5;        // stats_.slow_visits
  VisitTimes visit_;
  std::map<int, int> listed_probes_;  // listed class -> the probes it came with
  static constexpr int kMaxSeparating = 3;        // separating probes per class visit
  static constexpr const char* kTimedOut = "a probe passed its time limit";
  static constexpr const char* kNoShape =
      "not probed: no variant of this class has a shape in the table (a map run or a seen "
      "point); fixbits-cublas-scan --find-points asks the heuristic for them again";
  std::vector<int> work_;                         // classes still to process
  std::set<std::tuple<int, int64_t, uint32_t>> tried_;  // (variant, K, P) probed
  std::map<int, std::vector<std::string>> broken_;     // instrument failures by variant
  std::vector<std::vector<ProbeResult>> results_;  // per class
  std::set<int> revalidating_;  // classes that had a descriptor and are probed again
  // Classes whose other layout's probes disagreed in this run: a later point there does
  // not start a tree again (add_other).
  std::set<int> other_refuted_;
  std::set<int> stale_note_;    // classes whose earlier run's note process() replaces
  std::map<int, int64_t> open_seeded_;  // class -> open probes it started from
  std::map<int, std::string> fresh_note_;  // visited, outcome not written: its first note
  std::set<int> visited_;       // classes process() has started on
  std::map<int, std::deque<ProbePoint>> extras_;  // extra_points not probed yet, by class
  ProbeStats stats_;
};

}  // namespace

absl::StatusOr<ProbeStats> probe_classes(CublasTable& table, const ScanState& state,
                                         const ProbeFn& probe, const ProbeOptions& options,
                                         const ProgressFn& progress) {
  if (!probe) return absl::InvalidArgumentError("probe_classes was given no probe.");
  for (int c : options.only_classes) {
    if (c < 0 || c >= static_cast<int>(table.classes.size())) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ProbeOptions.only_classes names class %d; the table has classes 0 to %d.", c,
          static_cast<int>(table.classes.size()) - 1));
    }
  }
  for (const auto& [c, pts] : options.extra_points) {
    for (const ProbePoint& p : pts) {
      if (c < 0 || c >= static_cast<int>(table.classes.size()) || p.variant < 0 ||
          p.variant >= static_cast<int>(table.variants.size()) ||
          table.variants[p.variant].cls != c || p.m < 1 || p.n < 1 || p.k < 1 || p.splitk < 1) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "ProbeOptions.extra_points[%d] holds a point of variant %d at %dx%dx%d/%d, which is "
            "not a shape of a variant of that class; make it with point_of_shape.", c, p.variant,
            p.m, p.n, p.k, p.splitk));
      }
    }
  }
  if (options.slices < 1 || options.slice < 0 || options.slice >= options.slices) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ProbeOptions.slice is %d of %d slices; it must be in [0, slices) with slices >= 1.",
        options.slice, options.slices));
  }
  if (options.max_probe_k < 3) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ProbeOptions.max_probe_k is %d; the probe needs K >= 3.", options.max_probe_k));
  }
  if (options.fit_probes < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ProbeOptions.fit_probes is %d; it must be >= 0.", options.fit_probes));
  }
  if (options.class_probes < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ProbeOptions.class_probes is %d; it must be >= 1.", options.class_probes));
  }
  if (options.revalidate < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ProbeOptions.revalidate is %d; it must be >= 0.", options.revalidate));
  }
  if (options.small_probe_k < 0 || (options.small_probe_k > 0 && options.small_probe_k < 3) ||
      (options.small_probe_k > 0 && options.small_probe_k >= options.min_probe_k)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ProbeOptions.small_probe_k is %d; it must be 0 (off) or in [3, min_probe_k = %d).",
        options.small_probe_k, options.min_probe_k));
  }
  if (state.shapes.size() != table.variants.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "probe_classes was given a ScanState of %d variants for a table of %d; pass the state "
        "the scan filled.", state.shapes.size(), table.variants.size()));
  }
  for (const auto& [c, kept] : state.kept) {
    for (const KeptProbe& k : kept) {
      if (c < 0 || c >= static_cast<int>(table.classes.size()) || k.at.variant < 0 ||
          k.at.variant >= static_cast<int>(table.variants.size()) ||
          table.variants[k.at.variant].cls != c) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "ScanState.kept[%d] holds a probe of variant %d, which is not a variant of that "
            "class; pass the state rekey_table filled for this table.", c, k.at.variant));
      }
    }
  }
  return ClassProber(table, state, probe, options).run(progress);
}

absl::StatusOr<ProbePoint> point_of_shape(const CublasTable& table, const runtime::GemmShape& s,
                                          const runtime::AlgoConfig& answer, int* cls) {
  const std::string family = family_of(s);
  const CublasAnswer a = answer_of(answer);
  for (size_t v = 0; v < table.variants.size(); ++v) {
    const TableVariant& tv = table.variants[v];
    if (tv.family != family || tv.key != a.key) continue;
    if (cls != nullptr) *cls = tv.cls;
    return ProbePoint{.variant = static_cast<int>(v), .m = s.m, .n = s.n, .k = s.k,
                      .splitk = a.splitk};
  }
  return absl::NotFoundError(absl::StrFormat(
      "The table has no %s variant %s (cuBLASLt's answer at %dx%dx%d); scan the shape's "
      "family again to meet it.", family, to_string(a.key), s.m, s.n, s.k));
}

absl::StatusOr<RekeyStats> rekey_table(CublasTable& table, ScanState& state) {
  const std::vector<TableClass> old = table.classes;
  RekeyStats stats;
  stats.classes_before = static_cast<int64_t>(old.size());
  // The new class of each variant; variants grouped by (family, class), in variant order.
  std::map<std::pair<std::string, std::pair<uint32_t, CublasKey>>, std::vector<int>> groups;
  std::vector<std::pair<std::string, std::pair<uint32_t, CublasKey>>> order;
  std::vector<std::vector<int>> old_members(old.size());
  for (size_t v = 0; v < table.variants.size(); ++v) {
    const TableVariant& tv = table.variants[v];
    if (tv.cls < 0 || tv.cls >= static_cast<int>(old.size())) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "rekey_table: variant %d names class %d of %d.", v, tv.cls, old.size()));
    }
    old_members[tv.cls].push_back(static_cast<int>(v));
    const CublasClass c = class_of(tv.key, key_mask(tv.key) | old[tv.cls].cls.mask);
    auto key = std::make_pair(tv.family, std::make_pair(c.mask, c.values));
    auto [it, fresh] = groups.emplace(key, std::vector<int>{});
    if (fresh) order.push_back(key);
    it->second.push_back(static_cast<int>(v));
  }
  // Index per group: an unchanged class keeps its own; of a changed old class's parts,
  // the one holding its first probe's variant (else its first variant) keeps it.
  std::vector<int> index(order.size(), -1);
  std::vector<bool> taken(old.size(), false);
  auto first_variant = [&](int c) {
    return !old[c].probes.empty() ? old[c].probes[0].variant
                                  : (old_members[c].empty() ? -1 : old_members[c][0]);
  };
  for (size_t g = 0; g < order.size(); ++g) {
    const std::vector<int>& members = groups[order[g]];
    const int c = table.variants[members[0]].cls;
    if (!taken[c] && (members == old_members[c] ||
                      std::find(members.begin(), members.end(), first_variant(c)) !=
                          members.end())) {
      index[g] = c;
      taken[c] = true;
    }
  }
  std::vector<TableClass> classes(old.size());
  std::vector<bool> used(old.size(), false);
  state.kept.clear();
  for (size_t g = 0; g < order.size(); ++g) {
    const std::vector<int>& members = groups[order[g]];
    const int c = table.variants[members[0]].cls;  // the old class of its first variant
    if (index[g] < 0) {
      index[g] = static_cast<int>(classes.size());
      classes.emplace_back();
    }
    const int i = index[g];
    used[i] = true;
    TableClass& tc = classes[i];
    tc.family = order[g].first;
    tc.cls = CublasClass{.mask = order[g].second.first, .values = order[g].second.second};
    if (members == old_members[c]) {
      tc.desc = old[c].desc;
      tc.probes = old[c].probes;
      tc.rules = old[c].rules;
      tc.lanes_by_n = old[c].lanes_by_n;
      tc.lane_tile_cap = old[c].lane_tile_cap;
      tc.layout = old[c].layout;
      tc.other = old[c].other;
      tc.note = old[c].note;
      tc.open_probes = old[c].open_probes;
      ++stats.unchanged;
      continue;
    }
    ++stats.changed;
    std::vector<KeptProbe>& kept = state.kept[i];
    std::set<int> olds;
    for (int v : members) olds.insert(table.variants[v].cls);
    for (int o : olds) {
      // An open probe (a class an earlier run left unvalidated) is kept as it was found.
      for (const OpenProbe& p : old[o].open_probes) {
        if (std::find(members.begin(), members.end(), p.at.variant) != members.end()) {
          kept.push_back(KeptProbe{p.at, p.desc});
        }
      }
      if (!old[o].desc) continue;
      for (const ProbePoint& p : old[o].probes) {
        if (std::find(members.begin(), members.end(), p.variant) == members.end()) continue;
        kept.push_back(KeptProbe{
            p, with_gemv_rules(carried(*old[o].desc, old[o].rules, p.k, p.splitk), old[o], p.n,
                               p.k)});
      }
    }
    stats.probes_kept += static_cast<int64_t>(kept.size());
    std::vector<std::string> from;
    for (int o : olds) {
      from.push_back(absl::StrFormat("{%s} (%d of its %d variants, %d of its %d probes)",
                                     to_string(old[o].cls),
                                     std::count_if(members.begin(), members.end(),
                                                   [&](int v) { return table.variants[v].cls == o; }),
                                     old_members[o].size(),
                                     std::count_if(kept.begin(), kept.end(),
                                                   [&](const KeptProbe& k) {
                                                     return table.variants[k.at.variant].cls == o;
                                                   }),
                                     old[o].probes.size() + old[o].open_probes.size()));
    }
    tc.note = absl::StrFormat("re-keyed from class %s", absl::StrJoin(from, " and "));
  }
  for (size_t c = 0; c < old.size(); ++c) {
    if (old[c].desc && !(used[c] && classes[c].desc)) ++stats.descs_dropped;
  }
  // An old index no part took (its parts all went elsewhere, or it had no variants)
  // would leave a hole: the classes are renumbered without it.
  std::vector<int> renumber(classes.size(), -1);
  std::vector<TableClass> packed;
  for (size_t c = 0; c < classes.size(); ++c) {
    if (!used[c] && c < old.size()) continue;
    renumber[c] = static_cast<int>(packed.size());
    packed.push_back(std::move(classes[c]));
  }
  std::map<int, std::vector<KeptProbe>> kept;
  for (auto& [c, k] : state.kept) kept[renumber[c]] = std::move(k);
  state.kept = std::move(kept);
  for (size_t g = 0; g < order.size(); ++g) {
    for (int v : groups[order[g]]) table.variants[v].cls = renumber[index[g]];
  }
  table.classes = std::move(packed);
  stats.classes_after = static_cast<int64_t>(table.classes.size());
  return stats;
}

absl::Status rebuild_shapes(const CublasTable& table, ScanState& state, int per_octave,
                            const std::vector<std::string>& families) {
  if (per_octave < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "rebuild_shapes was given per_octave = %d; it must be >= 1.", per_octave));
  }
  auto in_families = [&](const std::string& f) {
    return families.empty() || std::find(families.begin(), families.end(), f) != families.end();
  };
  state.shapes.assign(table.variants.size(), VariantShapes{});
  for (const FamilyMap& map : table.maps) {
    if (!in_families(map.family)) continue;
    absl::StatusOr<runtime::GemmShape> family = parse_family(map.family);
    if (!family.ok()) return family.status();
    const std::vector<int64_t> ks =
        default_grid(*family, per_octave, map.ns.empty() ? 1 : map.ns.back(), map.k_max).ks;
    for (size_t mi = 0; mi < map.ms.size(); ++mi) {
      for (size_t ni = 0; ni < map.ns.size(); ++ni) {
        const int64_t m = map.ms[mi], n = map.ns[ni];
        const std::vector<MapRun>& runs = map.runs[mi * map.ns.size() + ni];
        for (size_t r = 0; r < runs.size(); ++r) {
          const MapRun& run = runs[r];
          if (run.variant < 0) continue;  // refused
          if (run.variant >= static_cast<int>(table.variants.size())) {
            return absl::InvalidArgumentError(absl::StrFormat(
                "rebuild_shapes: a run of family %s names variant %d of %d.", map.family,
                run.variant, table.variants.size()));
          }
          const int64_t end = r + 1 < runs.size() ? runs[r + 1].k0 : map.k_max + 1;
          auto add = [&](int64_t k) {
            keep_better_point(state.shapes[run.variant], {k, run.splitk}, {m, n});
          };
          add(run.k0);
          for (auto it = std::lower_bound(ks.begin(), ks.end(), run.k0);
               it != ks.end() && *it < end; ++it) {
            add(*it);
          }
        }
      }
    }
  }
  for (size_t v = 0; v < table.variants.size(); ++v) {
    if (in_families(table.variants[v].family)) add_seen(table.variants[v].seen, state.shapes[v]);
  }
  return absl::OkStatus();
}

absl::StatusOr<FoundPoints> find_points(CublasTable& table, ScanState& state,
                                        const runtime::GemmShape& family, int per_octave,
                                        const HeuristicFn& heuristic, const ProgressFn& progress) {
  const std::string fam = family_of(family);
  const FamilyMap* map = find_map(table, fam);
  if (map == nullptr) {
    return absl::NotFoundError(absl::StrFormat("find_points: the table has no map of %s.", fam));
  }
  if (state.shapes.size() != table.variants.size()) state.shapes.resize(table.variants.size());
  const std::set<int> mapped = mapped_variants(*map);
  auto without_shape = [&](int v) {
    return table.variants[v].family == fam && !mapped.count(v) && table.variants[v].seen.empty();
  };
  FoundPoints out;
  for (size_t v = 0; v < table.variants.size(); ++v) out.without += without_shape(static_cast<int>(v));
  ScanGrid grid =
      default_grid(family, per_octave, map->ns.empty() ? 1 : map->ns.back(), map->k_max);
  grid.ms = map->ms;
  grid.ns = map->ns;
  CublasTable scratch;
  scratch.arch = table.arch;
  scratch.library = table.library;
  ScanState scratch_state;
  absl::Status st = scan_heuristic(scratch, scratch_state, family, grid, heuristic, progress);
  out.heuristic_calls = scratch_state.heuristic_calls;
  if (!st.ok()) return st;
  for (size_t sv = 0; sv < scratch.variants.size(); ++sv) {
    const CublasKey& key = scratch.variants[sv].key;
    const int v = find_variant(table, fam, key);
    if (v < 0) {
      ++out.unknown;
      if (out.unknown_keys.size() < 8) out.unknown_keys.push_back(to_string(key));
      continue;
    }
    if (!without_shape(v) || scratch_state.shapes[sv].points.empty()) continue;
    table.variants[v].seen = spread_points(v, scratch_state.shapes[sv]);
    add_seen(table.variants[v].seen, state.shapes[v]);
    ++out.found;
  }
  return out;
}

}  // namespace fixbits::profile
