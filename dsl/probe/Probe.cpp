// Probe: the search behind recover_gemm_desc (contract in Probe.h).
//
// Steps, each a function below:
//   1. pair walk (r at 0, +L/-L at m, m+1) -> one Outcome per m;
//   2. candidate_nests: the outermost level takes the smallest span whose predicted
//      walk matches (a pair straddling a boundary of r's part loses r; a pair inside
//      a later part cancels there and leaves r); inside r's part every matching
//      span (up to 6) is kept, since a fold can hide a boundary from r at 0;
//   3. leaves (instruction, fast_accum, k_loop_step) x partial/merge dtypes, or
//      GEMV lane maps (lanes, layout, tile from the walk's first surviving m) with
//      their fold from pairwise lane experiments;
//   4. Judge: each candidate runs reference::gemm on the experiments the black box
//      ran (random draws, the pair walk, the trailing walk, a pair walk from the
//      last outer part, an r
//      walk per candidate span, and for GEMV the strided experiment of its lane
//      map); the first that matches all of them is returned.
// Example (split_k f16, K = 576, span 192, fast accum): the walk is 0 at m = 15,
//   31, ..., 175 (instruction boundaries inside r's part), 191 and 383 (the split),
//   r elsewhere; step 2 finds span 192 (chain), then inside [0,192) span 16 (chain)
//   and others as alternatives to "no inner level"; step 4 keeps [192:chain] with
//   fast accumulation, the first candidate the draws do not reject.
#include "dsl/probe/Probe.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <random>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dsl/reference/MmaModel.h"

namespace fixbits::dsl::probe {
namespace {

// What the pair walk returns when +L lies in part j and -L in part j2 of n parts
// folded by f (r in part 0), when the pair does not lie inside part 0.
Outcome predict_parts(int64_t j, int64_t j2, int64_t n, Fold f, const ProbeValues& v,
                      DType out) {
  std::vector<float> parts(static_cast<size_t>(n), 0.0f);
  parts[0] = v.r;
  if (j != j2) {
    parts[static_cast<size_t>(j)] = v.L;  // j == 0: r met +L inside part 0 and was lost
    parts[static_cast<size_t>(j2)] = -v.L;
  }
  const float x = reference::fold_parts(parts, f);
  return classify(out, v.r, to_bits(out, x));
}

// The same for a level of span s over [0, range), the pair at m, m + 1.
Outcome predict_level(int64_t s, Fold f, int64_t range, int64_t m, const ProbeValues& v,
                      DType out) {
  return predict_parts(m / s, (m + 1) / s, (range + s - 1) / s, f, v, out);
}

// A segment split's candidates (GemmDesc.h, "Segments"): the counts 2..kMaxProbeSegments
// and the tiles of kSegmentTiles, in this order, 64 first: cuBLAS's f16 segment-K kernel
// takes tiles of 64 (tilesize64x256x64); where the walk cannot tell tiles apart (the
// same partition of K) the first is kept.
constexpr int64_t kMaxProbeSegments = 16;
constexpr int64_t kSegmentTiles[] = {64, 128, 32, 256, 16};


struct Leaf {
  Instruction instruction;
  int instruction_k;
  bool fast_accum;
  KLoopStep step;
};

// Leaves in canonical order; equivalent settings are listed once (step == ik is
// step 0; with fast accumulation and the short turn last the step cannot matter,
// since every group then starts at a multiple of instruction_k).
std::vector<Leaf> candidate_leaves(const ProbeOptions& o, int64_t range) {
  std::vector<Leaf> leaves;
  leaves.push_back({Instruction::kScalarFma, 1, true, {0, ShortTurn::kLast}});
  leaves.push_back({Instruction::kScalarMulAdd, 1, true, {0, ShortTurn::kLast}});
  if (o.family == GemmFamily::kChainedChunks) return leaves;
  const int ik = o.instruction_k > 0 ? o.instruction_k : matrix_instruction_k(o.a_dtype);
  if (ik == 0) return leaves;
  const int64_t max_step = (range + ik - 1) / ik * ik;
  for (bool fast : {true, false}) {
    for (int64_t step = 0; step <= max_step; step += ik) {
      if (step == ik) continue;
      for (ShortTurn st : {ShortTurn::kLast, ShortTurn::kFirst}) {
        if (fast && st == ShortTurn::kLast && step != 0) continue;
        leaves.push_back({o.matrix_instruction, ik, fast, {step, st}});
      }
    }
  }
  return leaves;
}

// Random 4 x 4 x K problems (16 independent output elements each). Even draws: moderate values of both signs. Odd draws:
// tiny values plus pairs of large cancelling products, so that where each rounding
// falls shows in the low bits of a small result (visible even at f16/bf16 output).
constexpr int64_t kDrawRows = 4;
// At most this many nests are judged (fewest levels first), bounding the search.
constexpr size_t kMaxNests = 64;
// The partial and merge dtypes a split is searched with, in order.
const std::vector<DType> kSplitDtypes = {DType::kF32, DType::kF16, DType::kBF16};

// The (partial, merge) pairs a split candidate takes (ProbeOptions.split_dtypes), or
// (f32, f32) alone for an unsplit one.
std::vector<std::pair<DType, DType>> split_pairs(const ProbeOptions& o, bool split) {
  if (!split) return {{DType::kF32, DType::kF32}};
  if (!o.split_dtypes.empty()) return o.split_dtypes;
  std::vector<std::pair<DType, DType>> all;
  for (DType partial : kSplitDtypes) {
    for (DType merge : kSplitDtypes) all.emplace_back(partial, merge);
  }
  return all;
}

}  // namespace

std::vector<std::pair<DType, DType>> split_dtypes_without(const std::vector<std::pair<DType, DType>>& tried) {
  std::vector<std::pair<DType, DType>> out;
  for (const auto& pair : split_pairs(ProbeOptions{}, /*split=*/true)) {
    if (std::find(tried.begin(), tried.end(), pair) == tried.end()) out.push_back(pair);
  }
  return out;
}

namespace {

std::vector<reference::GemmProblem> random_draws(const ProbeOptions& o) {
  std::mt19937_64 rng(o.seed);
  auto value = [&](DType t, int e_lo, int e_hi) {
    const int e = e_lo + static_cast<int>(rng() % static_cast<uint64_t>(e_hi - e_lo + 1));
    const float mant = 1.0f + static_cast<float>(rng() % (1u << 23)) / (1u << 23);
    const float x = std::ldexp(mant, e) * ((rng() & 1) ? -1.0f : 1.0f);
    return to_bits(t, x, Saturation::kSatFinite);
  };
  std::vector<reference::GemmProblem> draws;
  for (int d = 0; d < o.random_draws; ++d) {
    // rows x rows outputs per draw (a: rows x K, b: K x rows, both row-major).
    // Draw 0 is a single output, the first and cheapest draw a candidate meets.
    const int64_t rows = d == 0 ? 1 : kDrawRows;
    reference::GemmProblem p;
    p.m = p.n = rows;
    p.k = o.k;
    p.a.resize(static_cast<size_t>(rows * o.k));
    p.b.resize(static_cast<size_t>(rows * o.k));
    const bool cancel = d % 2 == 1;
    for (int64_t i = 0; i < rows * o.k; ++i) {
      p.a[i] = cancel ? value(o.a_dtype, -8, -4) : value(o.a_dtype, -3, 3);
      p.b[i] = cancel ? value(o.b_dtype, -4, -1) : value(o.b_dtype, -3, 3);
    }
    if (cancel) {
      // Pairs of large products that cancel exactly: a[row, i] = +big, a[row, j] =
      // -big with b[i, col] = b[j, col] = 16 for every col.
      const int64_t pairs = std::max<int64_t>(1, o.k / 32);
      for (int64_t row = 0; row < rows; ++row) {
        for (int64_t q = 0; q < pairs; ++q) {
          const int64_t i = static_cast<int64_t>(rng() % static_cast<uint64_t>(o.k));
          const int64_t j = static_cast<int64_t>(rng() % static_cast<uint64_t>(o.k));
          if (i == j) continue;
          const float big = std::ldexp(1.0f + static_cast<float>(rng() % 8) / 8.0f, 8);
          p.a[row * o.k + i] = to_bits(o.a_dtype, big);
          p.a[row * o.k + j] = to_bits(o.a_dtype, -big);
          for (int64_t col = 0; col < rows; ++col) {
            p.b[i * rows + col] = p.b[j * rows + col] = to_bits(o.b_dtype, 16.0f);
          }
        }
      }
    }
    draws.push_back(std::move(p));
  }
  if (o.k < 3) {
    // Below K = 3 the draws alone judge, and a lone -0.0 product is common there (any
    // zero input times a negative): every a is -0.0, every b positive, so every product
    // is -0.0. A tree seeded with +0.0 gives +0.0; cuBLAS's K = 1 kernel (id 12 custom 1,
    // device run 1 of session 14) gives -0.0: a plain scalar leaf seeded with -0.0
    // (GemmDesc.neg_zero_seed), which the search then tries.
    reference::GemmProblem z;
    z.m = z.n = kDrawRows;
    z.k = o.k;
    z.a.assign(static_cast<size_t>(kDrawRows * o.k), to_bits(o.a_dtype, -0.0f));
    for (int64_t i = 0; i < kDrawRows * o.k; ++i) {
      const uint32_t b = value(o.b_dtype, -3, 3);
      z.b.push_back(to_bits(o.b_dtype, std::fabs(to_float(o.b_dtype, b))));
    }
    draws.push_back(std::move(z));
  }
  return draws;
}

absl::Status check_options(const ProbeOptions& o) {
  for (auto [name, t] : {std::pair<const char*, DType>{"a_dtype", o.a_dtype},
                         {"b_dtype", o.b_dtype},
                         {"out_dtype", o.out_dtype}}) {
    if (static_cast<int>(t) > static_cast<int>(DType::kTF32)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ProbeOptions.%s holds %d, which is no DType.", name, static_cast<int>(t)));
    }
  }
  if (static_cast<int>(o.family) > static_cast<int>(GemmFamily::kDot)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ProbeOptions.family holds %d, which is no GemmFamily.", static_cast<int>(o.family)));
  }
  if (o.family == GemmFamily::kDot && o.blocks < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ProbeOptions.blocks is %d but family dot needs the first kernel's block count "
        "(cuBLASLt's split count), >= 1.", o.blocks));
  }
  for (size_t i = 0; i < o.split_dtypes.size(); ++i) {
    for (DType t : {o.split_dtypes[i].first, o.split_dtypes[i].second}) {
      if (std::find(kSplitDtypes.begin(), kSplitDtypes.end(), t) == kSplitDtypes.end()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "ProbeOptions.split_dtypes[%d] holds %s; a split's partial and merge dtypes are "
            "f32, f16 or bf16.", i, dtype_name(t)));
      }
    }
  }
  for (size_t i = 0; i < o.gemv_lanes.size(); ++i) {
    if (o.gemv_lanes[i] < 1 || o.gemv_lanes[i] > 64) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ProbeOptions.gemv_lanes[%d] is %d but a gemv lane count is in [1, 64].", i,
          o.gemv_lanes[i]));
    }
  }
  if (o.k < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ProbeOptions.k is %d but a probe needs K >= 1 (the walks need K >= 3; below, the "
        "random draws alone judge).", o.k));
  }
  if (o.k > (int64_t{1} << 20)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ProbeOptions.k is %d; the probe walks every m, so K is limited to 2^20.", o.k));
  }
  if (o.out_dtype != DType::kF32 && o.out_dtype != DType::kF16 &&
      o.out_dtype != DType::kBF16) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ProbeOptions.out_dtype is %s but the probe needs f32, f16 or bf16 so that r "
        "is visible in the output.",
        dtype_name(o.out_dtype)));
  }
  if (o.matrix_instruction != Instruction::kMmaSync && o.matrix_instruction != Instruction::kWgmma) {
    return absl::InvalidArgumentError(
        "ProbeOptions.matrix_instruction must be mma_sync or wgmma.");
  }
  if (o.instruction_k != 0 && o.instruction_k != matrix_instruction_k(o.a_dtype) &&
      !(o.instruction_k == 8 && o.matrix_instruction == Instruction::kMmaSync &&
        (o.a_dtype == DType::kF16 || o.a_dtype == DType::kBF16))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ProbeOptions.instruction_k is %d; it is 0 (the dtype's), %d for %s inputs, or 8 "
        "with matrix_instruction mma_sync and f16/bf16 inputs.",
        o.instruction_k, matrix_instruction_k(o.a_dtype), dtype_name(o.a_dtype)));
  }
  if (o.max_levels < 1 || o.max_levels > 4) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ProbeOptions.max_levels is %d but must be in [1, 4].", o.max_levels));
  }
  if (o.random_draws < 1 || o.random_draws > 1000) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ProbeOptions.random_draws is %d but must be in [1, 1000].", o.random_draws));
  }
  return absl::OkStatus();
}

// The candidates' judge: the black box's bits on the draws and its walk, and the
// reference's for a candidate.
class Judge {
 public:
  Judge(const ProbeOptions& o, Instrument& inst, std::vector<Outcome> walk)
      : o_(o), inst_(inst), walk_(std::move(walk)), model_(reference::make_sm90_mma_model()) {}

  absl::Status init() {
    draws_ = random_draws(o_);
    for (size_t d = 0; d < draws_.size(); ++d) {
      absl::StatusOr<std::vector<uint32_t>> out =
          inst_.call(draws_[d], absl::StrFormat("random draw %d", d));
      if (!out.ok()) return out.status();
      box_out_.push_back(std::move(*out));
    }
    // The trailing walk: the pair at (m, m+1) and r right after it, at m+2. r
    // survives only where the pair cancelled in a rounding of its own before r
    // arrived, so it marks where instruction groups end even for fp8, whose
    // instruction drops r whenever it holds an L (so the pair walk sees nothing
    // after r's own instruction there).
    trailing_.assign(static_cast<size_t>(o_.k), Outcome::kR);
    std::vector<Placement> ps;
    for (int64_t m = 0; m + 2 < o_.k; ++m) ps.push_back(trailing_step(m));
    absl::StatusOr<std::vector<Outcome>> out =
        inst_.run_all(ps, [](size_t m) { return absl::StrFormat("trailing walk m=%d", m); });
    if (!out.ok()) return out.status();
    std::copy(out->begin(), out->end(), trailing_.begin());
    return absl::OkStatus();
  }

  // Placements of the trailing walk checked before the whole pair walk.
  static constexpr int64_t kScreen = 64;

  // True when `d` reproduces the black box; otherwise `why` names the experiment.
  // Experiments: the random draws, the pair walk from r at 0, and for a cut nest
  // the walk from r at the start of the outermost level's last part (where a short
  // part shows its short turn), run on the black box once per start.
  absl::StatusOr<bool> accepts(const GemmDesc& d, std::string* why) {
    if (o_.keep_going) {
      if (absl::Status s = o_.keep_going(); !s.ok()) return s;
    }
    ++tried_;
    if (!validate(d).ok()) {
      *why = "validate";
      return false;
    }
    absl::StatusOr<reference::SparseElement> elem = element_of(d);
    if (!elem.ok()) {
      *why = std::string(elem.status().message());
      return false;
    }
    // The walks the box already ran first, then the random draws. The trailing walk's
    // first placements go before any whole walk: most wrong candidates fail there, and
    // a whole walk is K placements (session 15: gemv's chained-lane candidates passed
    // the pair walk and failed the trailing walk at m = 0, 15 ms each at K = 32,768).
    // A walk judges the placements where the box lost r first, so a wrong candidate
    // usually fails within a few; a draw is a dense K-long sum whatever the candidate.
    // Draw 0 (one output) came first until session 29: a search that finds nothing
    // (probe_key's 16-product search on a kernel of 8) judges a number of candidates
    // that grows with K, so the draw made it quadratic: 37.7 s at K = 131,072 against
    // 2.5 s now (probe_bench BM_RecoverInplaceSplitK). On the device (session 30) class
    // 176's probes at K = 116,773 to 160,398 then finished in 51-88 s, where one had
    // passed 380 s; class 364's at K = 500,897 still ran past 300 s, so its time goes
    // elsewhere too. The whole trailing walk then skips the placements the screen
    // already judged.
    const int64_t screen = std::max<int64_t>(0, std::min<int64_t>(kScreen, o_.k - 2));
    auto trailing = [&](int64_t from, int64_t n) {
      return placements_match(
          *elem, n, [&](int64_t m) { return trailing_step(m); }, trailing_,
          [](int64_t m) { return absl::StrFormat("the trailing walk m=%d", m); }, why,
          [from](int64_t m) { return m < from; });
    };
    if (screen > 0 && !trailing(0, screen)) return false;
    if (!walk_matches(*elem, 0, walk_, why)) return false;
    if (!trailing(screen, o_.k - 2)) return false;
    for (size_t i = 0; i < draws_.size(); ++i) {
      if (!draw_matches(d, i, why)) return false;
    }
    // Every candidate faces the same walks: one tail walk per outermost span and
    // one r walk per span of any candidate nest (set_spans), so a candidate that
    // lacks a level is still asked what that level's walk shows.
    for (int64_t q : tail_starts_) {
      if (q <= 0 || o_.k - q < 3) continue;
      absl::StatusOr<const std::vector<Outcome>*> tail = box_walk_from(q);
      if (!tail.ok()) return tail.status();
      if (!walk_matches(*elem, q, **tail, why)) return false;
    }
    for (int64_t span : all_spans_) {
      if (span + 1 >= o_.k) continue;
      absl::StatusOr<const std::vector<Outcome>*> rw = box_r_walk(span);
      if (!rw.ok()) return rw.status();
      if (!r_walk_matches(*elem, span, **rw, why)) return false;
    }
    // A gemv lane map: the r walks with -L at p = tile * 2^i (+L at 0) tell it from a
    // map with fewer lanes, which holds 0 and p in one chain where this one meets them
    // in the fold. The draws and the pair walks do not at large K (32 strided lanes of
    // one element came back as 2, 4 or 8 at K = 1601-4096 in f16 and bf16; the H200's
    // id 13 custom 93 bf16 class, session 11's run 6).
    if (d.family == GemmFamily::kGemv) {
      for (int64_t p = 2 * d.lane_tile; p <= 64 * int64_t{d.lane_tile} && p + 1 < o_.k; p *= 2) {
        absl::StatusOr<const std::vector<Outcome>*> rw = box_r_walk(p);
        if (!rw.ok()) return rw.status();
        if (!r_walk_matches(*elem, p, **rw, why)) return false;
      }
      // Turns: the r walks with -L at every turn step any candidate has (set_turn_walks),
      // where a turn boundary cuts +L's chain from -L's, for every candidate with turns
      // or chained lanes (those without turns among them too: the walks tell them
      // apart). Without them 16 contiguous lanes in turns of 16, and 16 strided lanes
      // without turns, passed for gemv2T's 16 strided lanes in turns of 512.
      if (!d.use_fast_accum || d.lane_fold.empty()) {
        for (int64_t p : turn_walks_) {
          if (p + 1 >= o_.k) continue;
          absl::StatusOr<const std::vector<Outcome>*> rw = box_r_walk(p);
          if (!rw.ok()) return rw.status();
          if (!r_walk_matches(*elem, p, **rw, why)) return false;
        }
      }
    }
    return true;
  }

  // The turn steps of every gemv candidate with turns: each such candidate faces the r
  // walk with -L at each of them.
  void set_turn_walks(std::vector<int64_t> steps) {
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
    turn_walks_ = std::move(steps);
  }

  int64_t tried() const { return tried_; }

  // A candidate's own r walk with -L pinned at p (+L at 0), against the black box.
  absl::StatusOr<bool> matches_r_walk(const GemmDesc& d, int64_t p, std::string* why) {
    absl::StatusOr<const std::vector<Outcome>*> rw = box_r_walk(p);
    if (!rw.ok()) return rw.status();
    absl::StatusOr<reference::SparseElement> elem = element_of(d);
    if (!elem.ok()) {
      *why = std::string(elem.status().message());
      return false;
    }
    return r_walk_matches(*elem, p, **rw, why);
  }

  // The spans of every candidate nest, outermost levels separately. The outermost
  // level is kept as where its parts start: part 1 (its r walk's -L; the span, or a
  // segment split's first boundary) and its last part (its tail walk's r).
  void set_spans(const std::vector<std::vector<KCut>>& nests) {
    auto add = [](std::vector<int64_t>& into, int64_t v) {
      if (std::find(into.begin(), into.end(), v) == into.end()) into.push_back(v);
    };
    for (const std::vector<KCut>& nest : nests) {
      for (size_t i = 0; i < nest.size(); ++i) {
        if (i > 0) {
          add(inner_only_, nest[i].span);
          continue;
        }
        const int64_t parts = cut_parts(nest[0], o_.k);
        if (parts < 2) {
          add(outer_spans_, nest[0].span);  // one part: its walks see no boundary
          continue;
        }
        add(outer_spans_, cut_part(nest[0], 1, 0, o_.k).first);
        add(tail_starts_, cut_part(nest[0], parts - 1, 0, o_.k).first);
      }
    }
    all_spans_ = outer_spans_;
    for (int64_t s : inner_only_) {
      if (std::find(all_spans_.begin(), all_spans_.end(), s) == all_spans_.end()) {
        all_spans_.push_back(s);
      }
    }
  }

 private:
  Placement trailing_step(int64_t m) const {
    return Placement{o_.k, {{m, '+'}, {m + 1, '-'}, {m + 2, 'r'}}};
  }

  // The placement of walk step m with r at q: r at q, +L at m, -L at m + 1.
  Placement walk_step(int64_t q, int64_t m) const {
    return Placement{o_.k, {{q, 'r'}, {m, '+'}, {m + 1, '-'}}};
  }

  absl::StatusOr<const std::vector<Outcome>*> box_walk_from(int64_t q) {
    for (const auto& [start, walk] : tails_) {
      if (start == q) return &walk;
    }
    std::vector<Outcome> walk(static_cast<size_t>(o_.k), Outcome::kR);
    std::vector<Placement> ps;
    for (int64_t m = q + 1; m + 1 < o_.k; ++m) ps.push_back(walk_step(q, m));
    absl::StatusOr<std::vector<Outcome>> out = inst_.run_all(ps, [q](size_t i) {
      return absl::StrFormat("pair walk from r at %d, m=%d", q, q + 1 + static_cast<int64_t>(i));
    });
    if (!out.ok()) return out.status();
    std::copy(out->begin(), out->end(), walk.begin() + (q + 1));
    tails_.emplace_back(q, std::move(walk));
    return &tails_.back().second;
  }

  // The r walk with the pair pinned: +L at 0, -L at p, r at m. It reads the fold
  // of a level: r survives iff it joins after +L and -L have met (e.g. a
  // tree_down over parts q0 q1 q2 meets q0 with q2 before q1).
  Placement r_step(int64_t p, int64_t m) const {
    return Placement{o_.k, {{0, '+'}, {p, '-'}, {m, 'r'}}};
  }

  absl::StatusOr<const std::vector<Outcome>*> box_r_walk(int64_t p) {
    for (const auto& [pin, walk] : r_walks_) {
      if (pin == p) return &walk;
    }
    std::vector<Outcome> walk(static_cast<size_t>(o_.k), Outcome::kZero);
    std::vector<Placement> ps;
    std::vector<int64_t> at;
    for (int64_t m = 1; m < o_.k; ++m) {
      if (m == p) continue;
      ps.push_back(r_step(p, m));
      at.push_back(m);
    }
    absl::StatusOr<std::vector<Outcome>> out = inst_.run_all(ps, [p, &at](size_t i) {
      return absl::StrFormat("r walk with -L at %d, r at %d", p, at[i]);
    });
    if (!out.ok()) return out.status();
    for (size_t i = 0; i < at.size(); ++i) walk[static_cast<size_t>(at[i])] = (*out)[i];
    r_walks_.emplace_back(p, std::move(walk));
    return &r_walks_.back().second;
  }

  absl::StatusOr<reference::SparseElement> element_of(const GemmDesc& d) const {
    return reference::SparseElement::create(d, o_.k, to_bits(o_.a_dtype, 0.0f),
                                            inst_.values().fill_b, model_.get());
  }

  bool draw_matches(const GemmDesc& d, size_t i, std::string* why) {
    absl::StatusOr<std::vector<uint32_t>> ref = reference::gemm(d, draws_[i], model_.get());
    if (!ref.ok() || *ref != box_out_[i]) {
      *why = absl::StrFormat("random draw %d", i);
      return false;
    }
    return true;
  }

  // Whether the candidate gives want[m] at placement at(m) for every m in [0, n) where
  // want[m] is set (skip: m for which the walk ran nothing). The m where the box lost r
  // go first: a wrong candidate usually differs there, and a walk is K placements.
  bool placements_match(reference::SparseElement& elem, int64_t n,
                        const std::function<Placement(int64_t)>& at,
                        const std::vector<Outcome>& want,
                        const std::function<std::string(int64_t)>& name, std::string* why,
                        const std::function<bool(int64_t)>& skip = {}) {
    const ProbeValues& v = inst_.values();
    for (bool lost_first : {true, false}) {
      for (int64_t m = 0; m < n; ++m) {
        if ((want[static_cast<size_t>(m)] != Outcome::kR) != lost_first) continue;
        if (skip && skip(m)) continue;
        absl::StatusOr<uint32_t> ref = elem.eval(sparse_entries(at(m), v, o_.a_dtype));
        if (!ref.ok() || classify(o_.out_dtype, v.r, *ref) != want[static_cast<size_t>(m)]) {
          *why = name(m);
          return false;
        }
      }
    }
    return true;
  }

  bool r_walk_matches(reference::SparseElement& elem, int64_t p, const std::vector<Outcome>& walk,
                      std::string* why) {
    return placements_match(
        elem, o_.k, [&](int64_t m) { return r_step(p, m); }, walk,
        [p](int64_t m) { return absl::StrFormat("the r walk with -L at %d, r at %d", p, m); }, why,
        [p](int64_t m) { return m == 0 || m == p; });
  }

  bool walk_matches(reference::SparseElement& elem, int64_t q, const std::vector<Outcome>& walk,
                    std::string* why) {
    return placements_match(
        elem, o_.k - 1, [&](int64_t m) { return walk_step(q, m); }, walk,
        [q](int64_t m) { return absl::StrFormat("the pair walk from r at %d, m=%d", q, m); }, why,
        [q](int64_t m) { return m <= q; });
  }

  const ProbeOptions& o_;
  Instrument& inst_;
  std::vector<Outcome> walk_;
  std::vector<Outcome> trailing_;  // black box's trailing walk, by m
  std::unique_ptr<reference::MmaModel> model_;
  std::vector<reference::GemmProblem> draws_;
  std::vector<std::vector<uint32_t>> box_out_;
  int64_t tried_ = 0;
  // Black-box walks by start; a deque keeps handed-out pointers valid.
  std::deque<std::pair<int64_t, std::vector<Outcome>>> tails_;
  std::deque<std::pair<int64_t, std::vector<Outcome>>> r_walks_;
  std::vector<int64_t> outer_spans_, inner_only_, all_spans_;
  std::vector<int64_t> tail_starts_;  // where each candidate's last outermost part starts
  std::vector<int64_t> turn_walks_;
};

GemmDesc base_desc(const ProbeOptions& o) {
  GemmDesc d;
  d.family = o.family;
  d.a_dtype = o.a_dtype;
  d.b_dtype = o.b_dtype;
  d.acc_dtype = DType::kF32;
  d.out_dtype = o.out_dtype;
  return d;
}

// The length of the ranges a nest's leaf runs over at K (the longest): K without cuts,
// the innermost span, or a segment split's last (longest) segment.
int64_t innermost_length(const std::vector<KCut>& nest, int64_t k) {
  if (nest.empty()) return k;
  const KCut& c = nest.back();
  if (c.segments == 0) return std::min(k, c.span);
  const auto [e0, e1] = cut_part(c, cut_parts(c, k) - 1, 0, k);
  return e1 - e0;
}

void apply_leaf(const Leaf& l, GemmDesc* d) {
  d->instruction = l.instruction;
  d->instruction_k = l.instruction_k;
  d->use_fast_accum = l.fast_accum;
  d->k_loop_step = l.step;
}

absl::StatusOr<GemmDesc> search_cut_families(const ProbeOptions& o, Instrument& inst,
                                             const std::vector<Outcome>& walk, Judge& judge) {
  const std::vector<std::vector<KCut>> nests =
      candidate_nests(walk, o.k, o.family, o.max_levels, inst.values(), o.out_dtype);
  judge.set_spans(nests);
  const std::vector<std::pair<DType, DType>> pairs =
      split_pairs(o, o.family == GemmFamily::kSplitK);
  std::string why = "no candidate";
  for (const std::vector<KCut>& nest : nests) {
    for (const Leaf& leaf : candidate_leaves(o, innermost_length(nest, o.k))) {
      for (const auto& [partial, merge] : pairs) {
        GemmDesc d = base_desc(o);
        d.k_cuts = nest;
        apply_leaf(leaf, &d);
        d.partial_dtype = partial;
        d.merge_dtype = merge;
        absl::StatusOr<bool> ok = judge.accepts(d, &why);
        if (!ok.ok()) return ok.status();
        if (*ok) return d;
        // Below K = 3 the signed-zero draw shows the seed: a plain scalar leaf that
        // keeps a lone -0.0 product starts from -0.0 (GemmDesc.h, "seed").
        const bool scalar = d.instruction == Instruction::kScalarFma ||
                            d.instruction == Instruction::kScalarMulAdd;
        if (o.k < 3 && o.family == GemmFamily::kPlain && nest.empty() && scalar) {
          d.neg_zero_seed = true;
          ok = judge.accepts(d, &why);
          if (!ok.ok()) return ok.status();
          if (*ok) return d;
        }
      }
    }
  }
  std::string nest_text;
  for (const std::vector<KCut>& nest : nests) {
    GemmDesc shown;
    shown.k_cuts = nest;
    std::string cuts = to_string(shown);
    const size_t at = cuts.find("cuts=");
    nest_text += " " + cuts.substr(at, cuts.find(']', at) - at + 1);
  }
  return absl::NotFoundError(absl::StrFormat(
      "no %s descriptor reproduces the black box at K=%d: %d candidates over the nests "
      "the pair walk allows (%s) were tried; the last was rejected by %s.",
      family_name(o.family), o.k,
      judge.tried(), nest_text.empty() ? " none" : nest_text, why));
}

absl::StatusOr<GemmDesc> search_gemv(const ProbeOptions& o, Instrument& inst,
                                     const std::vector<Outcome>& walk, Judge& judge) {
  // The first m where r survives: lane 0's leading run (strided: one tile;
  // contiguous: the lane's whole run) ends at m.
  int64_t w = o.k;
  for (int64_t m = 1; m + 1 < o.k; ++m) {
    if (walk[m] != Outcome::kZero) {
      w = m;
      break;
    }
  }
  // Strided lanes: w is the tile. Contiguous lanes: tile 1 first, whose equal runs of
  // ceil(K / lanes) give the same lanes as tile w whenever each lane's run is one tile,
  // and carry to every K, where tile w does not (session 10: four GEMV classes,
  // id 13 custom 58/72/74 and bf16's, were refused because their probes at two K came
  // back as tiles 33 and 32, 22 and 9, ...).
  std::vector<int64_t> strided_tiles = {w};
  if (w != 1) strided_tiles.push_back(1);
  std::vector<int64_t> contiguous_tiles = {1};
  if (w != 1) contiguous_tiles.push_back(w);
  std::string why = "no candidate";
  std::vector<std::pair<std::vector<int64_t>, std::vector<int>>> fold_cache;
  std::vector<int> lane_counts = o.gemv_lanes;
  if (lane_counts.empty()) {
    for (int lanes = 1; lanes <= 64; lanes *= 2) lane_counts.push_back(lanes);
  }
  // Unsplit first; with gemv_split, then each split span the walk allows (a chain cut
  // shorter than K: a pair straddling a later boundary loses r in the merge).
  std::vector<std::vector<KCut>> nests = {{}};
  if (o.gemv_split) {
    for (std::vector<KCut>& n : candidate_nests(walk, o.k, GemmFamily::kSplitK, 1,
                                                inst.values(), o.out_dtype)) {
      if (n.size() == 1 && n[0].span < o.k && n[0].segments == 0) nests.push_back(std::move(n));
    }
    judge.set_spans(nests);
  }
  // The turn steps of the lane maps with tiles w and 1 (lanes x tile x 2^j below the
  // range), so each candidate with turns faces the walks of the others' steps too (a
  // split's contiguous tiles that divide w take turns as well, but add no walks of their
  // own: each is K more placements on the box).
  auto turn_steps = [](int lanes, int64_t tile, int64_t range) {
    std::vector<int64_t> steps;
    if (lanes > 1) {
      for (int64_t s = lanes * tile; s < range; s *= 2) steps.push_back(s);
    }
    return steps;
  };
  {
    std::vector<int64_t> all;
    for (const std::vector<KCut>& nest : nests) {
      const int64_t range = nest.empty() ? o.k : nest[0].span;
      for (int lanes : lane_counts) {
        for (int64_t tile : {w, int64_t{1}}) {
          if (tile > (int64_t{1} << 30)) continue;
          for (int64_t s : turn_steps(lanes, tile, range)) all.push_back(s);
        }
      }
    }
    judge.set_turn_walks(std::move(all));
  }
  for (const std::vector<KCut>& nest : nests) {
    const int64_t range = nest.empty() ? o.k : nest[0].span;  // part 0, where the walks look
    for (int lanes : lane_counts) {
      for (LaneLayout layout : {LaneLayout::kContiguous, LaneLayout::kStrided}) {
        if (lanes == 1 && layout == LaneLayout::kStrided) continue;
        // A split's short last part deals its runs by whole tiles, so there every tile
        // that divides lane 0's run in part 0 is a different candidate.
        std::vector<int64_t> tiles = layout == LaneLayout::kContiguous ? contiguous_tiles : strided_tiles;
        if (!nest.empty() && layout == LaneLayout::kContiguous) {
          for (int64_t t = 2; t < w; ++t) {
            if (w % t == 0) tiles.push_back(t);
          }
        }
        for (int64_t tile : tiles) {
          if (tile > (int64_t{1} << 30)) continue;
          // Each lane's first element in part 0 (-1: the lane gets none), dealt as the
          // references deal (gemv_contiguous_span; strided: tile l).
          GemmDesc deal;
          deal.lanes = lanes;
          deal.lane_tile = static_cast<int>(tile);
          std::vector<int64_t> first(static_cast<size_t>(lanes), -1);
          for (int l = 0; l < lanes; ++l) {
            if (layout == LaneLayout::kContiguous) {
              const auto [e0, e1] = gemv_contiguous_span(deal, l, 0, range);
              if (e0 < e1) first[l] = e0;
            } else if (l * tile < range) {
              first[l] = l * tile;
            }
          }
          // The fold the walks give this lane map (when they are consistent with one),
          // then the lanes chained in index order (gemv2T; the same as a butterfly
          // below 3 lanes).
          std::vector<std::vector<int>> folds;
          bool cached = false;
          for (const auto& [key, value] : fold_cache) {
            if (key == first) {
              folds.push_back(value);
              cached = true;
            }
          }
          if (!cached) {
            absl::StatusOr<std::vector<int>> f = recover_lane_fold(inst, o.k, lanes, first);
            if (f.ok()) {
              folds.push_back(*f);
              fold_cache.emplace_back(first, *f);
            } else if (f.status().code() == absl::StatusCode::kFailedPrecondition) {
              why = std::string(f.status().message());  // no butterfly fits this lane map
            } else {
              return f.status();
            }
          }
          if (lanes > 2) folds.push_back({});
          // Turns (fast_accum=0, GemmDesc.h) go with the chained lanes, as in gemv2T
          // (turns of 512 = 16 lanes x 32): every lanes x tile x 2^j below the range,
          // short turn last then first; step 0 (no turns) first.
          for (const std::vector<int>& fold : folds) {
            std::vector<KLoopStep> steps = {{0, ShortTurn::kLast}};
            if (fold.empty()) {
              for (int64_t s : turn_steps(lanes, tile, range)) {
                steps.push_back({s, ShortTurn::kLast});
                steps.push_back({s, ShortTurn::kFirst});
              }
            }
            for (const KLoopStep& step : steps) {
              for (Instruction instr : {Instruction::kScalarFma, Instruction::kScalarMulAdd}) {
                for (const auto& [partial, merge] : split_pairs(o, !nest.empty())) {
                  GemmDesc d = base_desc(o);
                  d.instruction = instr;
                  d.instruction_k = 1;
                  d.use_fast_accum = step.step == 0;
                  d.k_loop_step = step;
                  d.lanes = lanes;
                  d.lane_layout = layout;
                  d.lane_tile = static_cast<int>(tile);
                  d.lane_fold = fold;
                  d.k_cuts = nest;
                  d.partial_dtype = partial;
                  d.merge_dtype = merge;
                  absl::StatusOr<bool> ok = judge.accepts(d, &why);
                  if (!ok.ok()) return ok.status();
                  if (*ok) return d;
                }
              }
            }
          }
        }
      }
    }
  }
  return absl::NotFoundError(absl::StrFormat(
      "no gemv descriptor reproduces the black box at K=%d: %d candidates (lanes %s, "
      "both layouts, lane_tile in {%d, 1}, butterfly or chained lanes, turns with the "
      "chain%s) were tried; the last was rejected by %s.",
      o.k, judge.tried(),
      o.gemv_lanes.empty() ? std::string("1..64") : absl::StrJoin(o.gemv_lanes, ","), w,
      o.gemv_split ? absl::StrFormat(", unsplit and %d split spans", nests.size() - 1) : "",
      why));
}

// Family dot: the thread count, the tile each thread loads and the order of its
// block's fold are the kernel's; the merge is the family's (GemmDesc.h). Session 10's
// trees: 128 threads, tiles of 2 (1 when an operand is strided), rounds 64 down to 1.
absl::StatusOr<GemmDesc> search_dot(const ProbeOptions& o, Judge& judge) {
  std::string why = "no candidate";
  for (int lanes : {128, 256, 64, 512, 32}) {
    for (int tile : {2, 1, 4, 8}) {
      for (bool down : {true, false}) {
        GemmDesc d = base_desc(o);
        d.instruction = Instruction::kScalarFma;
        d.instruction_k = 1;
        d.k_loop_step = {0, ShortTurn::kLast};
        d.lane_layout = LaneLayout::kStrided;
        d.lanes = lanes;
        d.lane_tile = tile;
        d.blocks = o.blocks;
        for (int off = 1; off < lanes; off *= 2) d.lane_fold.push_back(off);
        if (down) std::reverse(d.lane_fold.begin(), d.lane_fold.end());
        absl::StatusOr<bool> ok = judge.accepts(d, &why);
        if (!ok.ok()) return ok.status();
        if (*ok) return d;
      }
    }
  }
  return absl::NotFoundError(absl::StrFormat(
      "no dot descriptor reproduces the black box at K=%d with %d blocks: %d candidates "
      "(32 to 512 threads, tiles 1 to 8, block rounds down or up) were tried; the last was "
      "rejected by %s.",
      o.k, o.blocks, judge.tried(), why));
}

}  // namespace

std::vector<LevelMatch> match_levels(const std::vector<Outcome>& walk, int64_t range,
                                     bool chain_only, const ProbeValues& v, DType out,
                                     size_t max_matches) {
  std::vector<LevelMatch> matches;
  for (int64_t s = 2; s < range && matches.size() < max_matches; ++s) {
    if (walk[static_cast<size_t>(s - 1)] != Outcome::kZero) continue;
    LevelMatch here;
    here.span = s;
    for (Fold f : {Fold::kChain, Fold::kTreeUp, Fold::kTreeDown}) {
      if (chain_only && f != Fold::kChain) continue;
      bool ok = true;
      for (int64_t m = s - 1; ok && m + 2 <= range; ++m) {
        ok = predict_level(s, f, range, m, v, out) == walk[static_cast<size_t>(m)];
      }
      if (ok) here.folds.push_back(f);
    }
    if (!here.folds.empty()) matches.push_back(std::move(here));
  }
  return matches;
}

LevelMatch match_level(const std::vector<Outcome>& walk, int64_t range, bool chain_only,
                       const ProbeValues& v, DType out) {
  std::vector<LevelMatch> m = match_levels(walk, range, chain_only, v, out, 1);
  return m.empty() ? LevelMatch{} : m[0];
}

std::vector<KCut> segment_cuts(const std::vector<Outcome>& walk, int64_t k, const ProbeValues& v,
                               DType out) {
  std::vector<KCut> cuts;
  std::vector<std::vector<int64_t>> seen;  // each cut's part starts (its partition of K)
  const auto walk_at = [&](int64_t m) { return walk[static_cast<size_t>(m)]; };
  for (int64_t segments = 2; segments <= kMaxProbeSegments; ++segments) {
    for (int64_t tile : kSegmentTiles) {
      const KCut c{tile, Fold::kChain, segments};
      // Part starts inside (0, k) and the part of each index from the first on.
      std::vector<int64_t> starts;
      for (int64_t j = 1; j < segments; ++j) {
        const int64_t e0 = cut_part(c, j, 0, k).first;
        if (e0 > 0 && e0 < k && (starts.empty() || starts.back() != e0)) starts.push_back(e0);
      }
      if (starts.empty() || starts.front() < 2 || starts.back() > k - 1) continue;
      if (std::find(seen.begin(), seen.end(), starts) != seen.end()) continue;
      // An equal split's partition is the equal span's candidate already.
      bool equal = true;
      for (size_t j = 0; j < starts.size(); ++j) {
        equal = equal && starts[j] == static_cast<int64_t>(j + 1) * starts[0];
      }
      if (equal && (k - 1) / starts[0] == static_cast<int64_t>(starts.size())) continue;
      bool ok = true;  // cheap first: a pair across every boundary loses r
      for (int64_t b : starts) ok = ok && walk_at(b - 1) == Outcome::kZero;
      // From the first boundary on, the chain sees: a pair across the first boundary
      // (r lost to +L in part 0), across a later one, or inside a later part.
      const int64_t n = static_cast<int64_t>(starts.size()) + 1;
      const Outcome across_first = predict_parts(0, 1, n, Fold::kChain, v, out);
      const Outcome across_later = n > 2 ? predict_parts(1, 2, n, Fold::kChain, v, out) : across_first;
      const Outcome inside = predict_parts(1, 1, n, Fold::kChain, v, out);
      size_t next = 0;  // starts[next]: the first boundary above m
      for (int64_t m = starts.front() - 1; ok && m + 2 <= k; ++m) {
        while (next < starts.size() && starts[next] <= m) ++next;
        const bool across = next < starts.size() && starts[next] == m + 1;
        ok = (across ? (next == 0 ? across_first : across_later) : inside) == walk_at(m);
      }
      if (!ok) continue;
      seen.push_back(starts);
      cuts.push_back(c);
    }
  }
  return cuts;
}

std::vector<std::vector<KCut>> candidate_nests(const std::vector<Outcome>& walk, int64_t k,
                                               GemmFamily family, int max_levels,
                                               const ProbeValues& v, DType out) {
  // gen(range, depth): nests for the leading part [0, range) at level `depth`.
  std::function<std::vector<std::vector<KCut>>(int64_t, int)> gen = [&](int64_t range,
                                                                         int depth) {
    std::vector<std::vector<KCut>> nests;
    const bool required = depth == 0 && family != GemmFamily::kPlain;
    if (family == GemmFamily::kPlain || family == GemmFamily::kGemv) {
      nests.push_back({});
      return nests;
    }
    if (!required) nests.push_back({});
    if (depth >= max_levels) return nests;
    const bool chain_only = depth == 0 && family == GemmFamily::kSplitK;
    // The outermost level takes the smallest matching span (a smaller false match
    // would predict boundaries in later parts that the walk does not show); inside
    // a part, a fold can hide a boundary from r at 0, so every match is kept.
    const std::vector<LevelMatch> matches =
        match_levels(walk, std::min(range, k), chain_only, v, out, depth == 0 ? 1 : 6);
    for (const LevelMatch& m : matches) {
      for (Fold f : m.folds) {
        for (std::vector<KCut>& inner : gen(m.span, depth + 1)) {
          std::vector<KCut> nest = {KCut{m.span, f}};
          nest.insert(nest.end(), inner.begin(), inner.end());
          nests.push_back(std::move(nest));
        }
      }
    }
    // A split whose parts are not equal spans: segments of whole tiles (cuBLAS's
    // segment-K kernel), after the span's nests (a span can match the first of three
    // segments' boundaries: 640 at 320, 640 of K = 1000; where both say one partition,
    // segment_cuts leaves it to the span, the canonical form).
    if (required && family == GemmFamily::kSplitK) {
      for (KCut& c : segment_cuts(walk, k, v, out)) nests.push_back({c});
    }
    // No cut shows inside this range: an outermost cut at least K long. Below K = 3 no
    // walk shows any cut, so a cut of one element is a candidate too (the draws judge).
    if (required) nests.push_back({KCut{k, Fold::kChain}});
    if (required && k == 2) nests.push_back({KCut{1, Fold::kChain}});
    return nests;
  };
  std::vector<std::vector<KCut>> nests = gen(k, 0);
  std::stable_sort(nests.begin(), nests.end(),
                   [](const auto& x, const auto& y) { return x.size() < y.size(); });
  if (nests.size() > kMaxNests) nests.resize(kMaxNests);
  return nests;
}

absl::StatusOr<std::vector<int>> recover_lane_fold(Instrument& inst, int64_t k, int lanes,
                                                   const std::vector<int64_t>& first_index) {
  std::vector<int> seen, unseen;
  for (int d = 1; d < lanes; d *= 2) {
    (first_index[0] >= 0 && first_index[d] >= 0 ? seen : unseen).push_back(d);
  }
  // before[i][j]: offset seen[i] is folded in an earlier round than seen[j].
  const size_t n = seen.size();
  std::vector<std::vector<bool>> before(n, std::vector<bool>(n, false));
  std::vector<Placement> ps;
  std::vector<std::pair<int, int>> de;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      const int d = seen[i], e = seen[j];
      ps.push_back(Placement{k, {{first_index[0], '+'}, {first_index[d], '-'}, {first_index[e], 'r'}}});
      de.emplace_back(d, e);
    }
  }
  absl::StatusOr<std::vector<Outcome>> outs = inst.run_all(ps, [&](size_t t) {
    return absl::StrFormat("lane fold d=%d e=%d of %d lanes", de[t].first, de[t].second, lanes);
  });
  if (!outs.ok()) return outs.status();
  size_t t = 0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j, ++t) {
      const int d = seen[i], e = seen[j];
      const Outcome* o = &(*outs)[t];
      if (*o == Outcome::kOther) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "lane fold experiment d=%d e=%d of %d lanes returned neither 0 nor r", d, e,
            lanes));
      }
      // r lost: e's round came first (r met +L before -L did).
      before[j][i] = *o == Outcome::kZero;
      before[i][j] = !before[j][i];
    }
  }
  // Rank by how many offsets come before: a consistent order has ranks 0..n-1.
  std::vector<size_t> rank(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) rank[i] += before[j][i] ? 1 : 0;
  }
  std::vector<int> fold(n, 0);
  std::vector<bool> used(n, false);
  for (size_t i = 0; i < n; ++i) {
    if (rank[i] >= n || used[rank[i]]) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "lane fold experiments over %d lanes are not a consistent order (offset %d)",
          lanes, seen[i]));
    }
    used[rank[i]] = true;
    fold[rank[i]] = seen[i];
  }
  fold.insert(fold.end(), unseen.begin(), unseen.end());
  return fold;
}

struct ProbeReplay::State {
  GemmDesc truth;
  ProbeOptions opts;
  std::unique_ptr<Instrument> inst;
  std::unique_ptr<Judge> judge;
};

ProbeReplay::ProbeReplay(std::unique_ptr<State> s) : s_(std::move(s)) {}
ProbeReplay::~ProbeReplay() = default;

absl::StatusOr<std::unique_ptr<ProbeReplay>> ProbeReplay::create(const GemmDesc& truth,
                                                                 const ProbeOptions& opts) {
  if (absl::Status s = check_options(opts); !s.ok()) return s;
  auto st = std::make_unique<State>();
  st->truth = truth;
  st->opts = opts;
  const GemmDesc* t = &st->truth;  // stable: State is heap-held
  GemmBlackBox box = [t](const reference::GemmProblem& p) { return reference::gemm(*t, p); };
  st->inst = std::make_unique<Instrument>(box, opts.a_dtype, opts.b_dtype, opts.out_dtype);
  st->inst->use_sparse_box(reference_sparse_box(truth));  // the walks cost O(K), not O(K^2)
  absl::StatusOr<std::vector<Outcome>> walk = st->inst->pair_walk(opts.k);
  if (!walk.ok()) return walk.status();
  st->judge = std::make_unique<Judge>(st->opts, *st->inst, *walk);
  if (absl::Status s = st->judge->init(); !s.ok()) return s;
  return std::unique_ptr<ProbeReplay>(new ProbeReplay(std::move(st)));
}

absl::StatusOr<bool> ProbeReplay::accepts(const GemmDesc& candidate, std::string* why) {
  s_->judge->set_spans({candidate.k_cuts, s_->truth.k_cuts});
  return s_->judge->accepts(candidate, why);
}

absl::StatusOr<bool> reproduces(const GemmDesc& candidate, const GemmDesc& truth,
                                const ProbeOptions& opts, std::string* why) {
  absl::StatusOr<std::unique_ptr<ProbeReplay>> r = ProbeReplay::create(truth, opts);
  if (!r.ok()) return r.status();
  return (*r)->accepts(candidate, why);
}

std::vector<int> searched_instruction_ks(DType a, GemmFamily family) {
  const bool half = a == DType::kF16 || a == DType::kBF16;
  if (half && family != GemmFamily::kGemv && family != GemmFamily::kDot) return {0, 8};
  return {0};
}

absl::StatusOr<GemmDesc> recover_gemm_desc(const GemmBlackBox& box, const ProbeOptions& opts) {
  if (!box) return absl::InvalidArgumentError("recover_gemm_desc was given an empty black box.");
  Instrument inst(box, opts.a_dtype, opts.b_dtype, opts.out_dtype);
  return recover_gemm_desc(inst, opts);
}

absl::StatusOr<GemmDesc> recover_gemm_desc(Instrument& inst, const ProbeOptions& opts) {
  if (absl::Status s = check_options(opts); !s.ok()) return s;
  if (inst.a_dtype() != opts.a_dtype || inst.b_dtype() != opts.b_dtype ||
      inst.out_dtype() != opts.out_dtype) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "recover_gemm_desc was given an instrument of %s x %s -> %s but ProbeOptions of "
        "%s x %s -> %s (a_dtype, b_dtype, out_dtype must agree).",
        dtype_name(inst.a_dtype()), dtype_name(inst.b_dtype()), dtype_name(inst.out_dtype()),
        dtype_name(opts.a_dtype), dtype_name(opts.b_dtype), dtype_name(opts.out_dtype)));
  }
  absl::StatusOr<std::vector<Outcome>> walk = inst.pair_walk(opts.k);
  if (!walk.ok()) return walk.status();
  Judge judge(opts, inst, *walk);
  if (absl::Status s = judge.init(); !s.ok()) return s;
  switch (opts.family) {
    case GemmFamily::kGemv:
      return search_gemv(opts, inst, *walk, judge);
    case GemmFamily::kDot:
      return search_dot(opts, judge);
    case GemmFamily::kPlain:
    case GemmFamily::kSplitK:
    case GemmFamily::kChainedChunks:
      return search_cut_families(opts, inst, *walk, judge);
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "ProbeOptions.family holds %d, which is no GemmFamily.", static_cast<int>(opts.family)));
}

}  // namespace fixbits::dsl::probe
