// SparseGemm: reference::gemm_sparse_element, the bits reference::gemm gives one
// output element whose K operands are one fill pair (a_fill, b_fill) except at a few
// entries, computed without visiting every K index.
//
// Invariant: for every descriptor and every fill, gemm_sparse_element(d, K, fills,
// entries) == reference::gemm(d, the dense 1 x 1 x K problem)[0], bit for bit.
// How: every step of GemmDesc.h's tree that sees only fill operands is a pure
// function f of the value it is handed (one scalar step on the fill pair, one matrix
// instruction on fill groups, one mainloop turn, one fill part of a cut level, one
// merge step of such a part). A run of n such steps is f applied n times; it is
// applied until a step returns its input's bits (then every later step does too, f
// being pure) or n times. The probe's fill (a = +0, so every fill product is +0) makes
// f the identity after at most one step; any other fill is still exact, only slower.
// A part of a cut level that holds no entry has a value that depends only on its
// length (the tree inside a part is laid out from the part's start), computed once.
// Cost, with E entries and the probe's fill: O(E * depth + parts of tree folds +
// lanes), against O(K) for the dense reference.
// Families kDot and the alpha/beta and bias epilogues go through the dense reference.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_format.h"
#include "dsl/reference/PatternChecks.h"
#include "dsl/reference/Reference.h"

namespace fixbits::dsl::reference {
namespace {

bool same_bits(float x, float y) { return std::bit_cast<uint32_t>(x) == std::bit_cast<uint32_t>(y); }

// f applied n times to x, stopping at a fixed point (f is pure).
template <class F>
float repeat(float x, int64_t n, const F& f) {
  for (int64_t i = 0; i < n; ++i) {
    const float y = f(x);
    if (same_bits(x, y)) return x;
    x = y;
  }
  return x;
}

float widen(DType t, uint32_t bits) {
  const std::span<const float> table = value_table(t);
  return table.empty() ? to_float(t, bits) : table[bits & (table.size() - 1)];
}

class SparseTree {
 public:
  SparseTree(const GemmDesc& d, const MmaModel& model, float fa, float fb)
      : d_(d), model_(model), fa_(fa), fb_(fb) {}

  // The element's value before the epilogue; the memos of fill-only steps carry over
  // from earlier calls (they depend on the descriptor and the fill only).
  // The entries' widened values come from `widen_a` / `widen_b`; the tree keeps its
  // buffers from call to call (a probe evaluates millions of placements of 3 entries).
  template <typename WidenA, typename WidenB>
  float eval(int64_t k, std::span<const SparseEntry> entries, WidenA widen_a, WidenB widen_b) {
    idx_.clear();
    ea_.clear();
    eb_.clear();
    for (const SparseEntry& e : entries) {
      idx_.push_back(e.k);
      ea_.push_back(widen_a(e.a));
      eb_.push_back(widen_b(e.b));
    }
    lo_ = 0;
    hi_ = idx_.size();
    return level(0, 0, k);
  }

 private:
  // Entries of [k0, k1) among the active ones: [first, last) into idx_.
  size_t first_at(int64_t k0) const {
    return static_cast<size_t>(std::lower_bound(idx_.begin() + lo_, idx_.begin() + hi_, k0) -
                               idx_.begin());
  }
  float a_at(int64_t k) const {
    const size_t i = first_at(k);
    return i < hi_ && idx_[i] == k ? ea_[i] : fa_;
  }
  float b_at(int64_t k) const {
    const size_t i = first_at(k);
    return i < hi_ && idx_[i] == k ? eb_[i] : fb_;
  }

  float scalar_step(float acc, float a, float b) const {
    if (d_.instruction == Instruction::kScalarFma) return std::fma(a, b, acc);
    const float prod = a * b;
    return acc + prod;
  }
  float fill_step(float acc) const { return scalar_step(acc, fa_, fb_); }

  // Elements [k0, k1) in index order into acc.
  float scalar_fold(float acc, int64_t k0, int64_t k1) const {
    int64_t pos = k0;
    for (size_t i = first_at(k0); i < hi_ && idx_[i] < k1; ++i) {
      acc = repeat(acc, idx_[i] - pos, [&](float x) { return fill_step(x); });
      acc = scalar_step(acc, ea_[i], eb_[i]);
      pos = idx_[i] + 1;
    }
    return repeat(acc, k1 - pos, [&](float x) { return fill_step(x); });
  }

  // One matrix instruction over [g0, g1), zero-padded to instruction_k products.
  float mma_group(float c, int64_t g0, int64_t g1) {
    const int64_t ik = d_.instruction_k;
    pad_a_.assign(static_cast<size_t>(ik), 0.0f);
    pad_b_.assign(static_cast<size_t>(ik), 0.0f);
    for (int64_t j = g0; j < g1; ++j) {
      pad_a_[static_cast<size_t>(j - g0)] = a_at(j);
      pad_b_[static_cast<size_t>(j - g0)] = b_at(j);
    }
    return model_.mma(c, pad_a_, pad_b_, d_.a_dtype);
  }
  float fill_group(float c) {
    const uint32_t key = std::bit_cast<uint32_t>(c);
    if (auto it = fill_groups_.find(key); it != fill_groups_.end()) return it->second;
    const int64_t ik = d_.instruction_k;
    fill_a_.assign(static_cast<size_t>(ik), fa_);
    fill_b_.assign(static_cast<size_t>(ik), fb_);
    const float y = model_.mma(c, fill_a_, fill_b_, d_.a_dtype);
    fill_groups_.emplace(key, y);
    return y;
  }

  // [t0, t1) cut into units of `unit` from t0, folded into x in order: a run of whole
  // units before the next entry is `fill` repeated (to its fixed point), any other
  // unit (one holding an entry, or the short last one) is one(x, u0, u1).
  template <class Fill, class One>
  float units(float x, int64_t t0, int64_t t1, int64_t unit, const Fill& fill, const One& one) {
    while (t0 < t1) {
      const size_t i = first_at(t0);
      const int64_t next = i < hi_ && idx_[i] < t1 ? idx_[i] : t1;
      const int64_t full = (next - t0) / unit;
      if (full > 0) {
        x = repeat(x, full, fill);
        t0 += full * unit;
        continue;
      }
      const int64_t u1 = std::min(t0 + unit, t1);
      x = one(x, t0, u1);
      t0 = u1;
    }
    return x;
  }

  // While alive, no entry is active: what is computed sees the fill only.
  class FillOnly {
   public:
    explicit FillOnly(SparseTree& t) : t_(t), lo_(t.lo_), hi_(t.hi_) { t.lo_ = t.hi_ = 0; }
    ~FillOnly() {
      t_.lo_ = lo_;
      t_.hi_ = hi_;
    }

   private:
    SparseTree& t_;
    const size_t lo_, hi_;
  };

  // The groups of [t0, t1) (cut from t0) chained from c, one rounding each.
  float groups(float c, int64_t t0, int64_t t1) {
    return units(c, t0, t1, d_.instruction_k, [&](float x) { return fill_group(x); },
                 [&](float x, int64_t g0, int64_t g1) { return mma_group(x, g0, g1); });
  }

  float mma_turn(float acc, int64_t t0, int64_t t1) {
    if (d_.use_fast_accum) return groups(acc, t0, t1);
    return acc + groups(0.0f, t0, t1);
  }

  float mma_leaf(int64_t k0, int64_t k1) {
    const int64_t step = d_.k_loop_step.step > 0 ? d_.k_loop_step.step : d_.instruction_k;
    const int64_t short_len = (k1 - k0) % step;
    float acc = 0.0f;
    int64_t t0 = k0;
    if (short_len != 0 && d_.k_loop_step.short_turn == ShortTurn::kFirst) {
      acc = mma_turn(acc, t0, t0 + short_len);
      t0 += short_len;
    }
    // A whole fill turn maps acc the same way wherever it sits.
    auto fill_turn = [&](float x) {
      const uint32_t key = std::bit_cast<uint32_t>(x);
      if (auto it = fill_turns_.find(key); it != fill_turns_.end()) return it->second;
      FillOnly fill_only(*this);
      const float y = d_.use_fast_accum ? groups(x, 0, step) : x + groups(0.0f, 0, step);
      fill_turns_.emplace(key, y);
      return y;
    };
    return units(acc, t0, k1, step, fill_turn,
                 [&](float x, int64_t u0, int64_t u1) { return mma_turn(x, u0, u1); });
  }

  float gemv_leaf(int64_t k0, int64_t k1) {
    const int64_t step = d_.k_loop_step.step;
    if (d_.use_fast_accum || step <= 0) {
      gemv_lanes(k0, k1, lanes_buf_);
      return fold_lanes(lanes_buf_, d_.lane_fold);
    }
    // Turns (GemmDesc.h): the short one and those holding an entry are dealt as
    // ranges; a run of whole fill-only turns adds one memoized lane vector per turn,
    // repeated until each lane stops changing.
    const int64_t len = k1 - k0, short_len = len % step;
    const bool short_first = short_len != 0 && d_.k_loop_step.short_turn == ShortTurn::kFirst;
    const int64_t whole0 = short_first ? k0 + short_len : k0;  // turns of `step` from here
    std::vector<float>& acc = acc_buf_;
    acc.assign(static_cast<size_t>(d_.lanes), 0.0f);
    auto add = [&](int64_t t0, int64_t t1) {  // the turn [t0, t1) into acc
      gemv_lanes(t0, t1, lanes_buf_);
      for (size_t l = 0; l < acc.size(); ++l) acc[l] = acc[l] + lanes_buf_[l];
    };
    auto add_fill_turns = [&](int64_t n) {
      if (n <= 0) return;
      if (fill_turn_.empty()) {
        FillOnly fill_only(*this);
        gemv_lanes(0, step, fill_turn_);
      }
      for (size_t l = 0; l < acc.size(); ++l) {
        acc[l] = repeat(acc[l], n, [&](float x) { return x + fill_turn_[l]; });
      }
    };
    if (short_first) add(k0, whole0);
    int64_t at = whole0;  // the next turn not added yet
    for (size_t i = first_at(whole0); i < hi_ && idx_[i] < k1; ++i) {
      const int64_t t0 = whole0 + (idx_[i] - whole0) / step * step;
      if (t0 < at) continue;  // its turn was added with an earlier entry
      add_fill_turns((t0 - at) / step);
      add(t0, std::min(t0 + step, k1));
      at = t0 + step;
    }
    if (at < k1) {
      const int64_t whole = (k1 - at) / step;  // the short last turn, if any, after them
      add_fill_turns(whole);
      at += whole * step;
      if (at < k1) add(at, k1);
    }
    return fold_lanes(acc, d_.lane_fold);
  }

  // The lanes' values over [k0, k1): the range dealt to the lanes, each folding its
  // elements in order from +0.0.
  void gemv_lanes(int64_t k0, int64_t k1, std::vector<float>& v) {
    const int64_t lanes = d_.lanes, tile = d_.lane_tile, len = k1 - k0;
    const int64_t tiles = gemv_tiles(d_, len);
    v.assign(static_cast<size_t>(lanes), 0.0f);
    for (int64_t l = 0; l < lanes; ++l) {
      if (d_.lane_layout == LaneLayout::kContiguous) {
        const auto [e0, e1] = gemv_contiguous_span(d_, l, k0, k1);
        v[static_cast<size_t>(l)] = scalar_fold(0.0f, e0, e1);
        continue;
      }
      // Strided: lane l folds tiles l, l + lanes, ... in order; an element's place in
      // that sequence is its rank.
      if (l >= tiles) continue;
      int64_t count = ((tiles - 1 - l) / lanes + 1) * tile;
      if ((tiles - 1) % lanes == l) count -= tiles * tile - len;  // the clipped last tile
      float acc = 0.0f;
      int64_t pos = 0;
      for (size_t i = first_at(k0); i < hi_ && idx_[i] < k1; ++i) {
        const int64_t x = idx_[i] - k0, t = x / tile;
        if (t % lanes != l) continue;
        const int64_t rank = t / lanes * tile + x % tile;
        acc = repeat(acc, rank - pos, [&](float y) { return fill_step(y); });
        acc = scalar_step(acc, ea_[i], eb_[i]);
        pos = rank + 1;
      }
      v[static_cast<size_t>(l)] = repeat(acc, count - pos, [&](float y) { return fill_step(y); });
    }
  }

  float leaf(int64_t k0, int64_t k1) {
    if (d_.family == GemmFamily::kGemv) return gemv_leaf(k0, k1);
    if (d_.instruction == Instruction::kMmaSync || d_.instruction == Instruction::kWgmma) {
      return mma_leaf(k0, k1);
    }
    return scalar_fold(d_.neg_zero_seed ? -0.0f : 0.0f, k0, k1);  // the seed (GemmDesc.h)
  }

  // The value of a part of level i, `len` long, that holds no entry.
  float fill_part(size_t i, int64_t len) {
    const auto key = std::make_pair(i, len);
    if (auto it = fill_parts_.find(key); it != fill_parts_.end()) return it->second;
    FillOnly fill_only(*this);
    const float v = level(i, 0, len);
    fill_parts_.emplace(key, v);
    return v;
  }

  float level(size_t i, int64_t k0, int64_t k1) {
    if (i == d_.k_cuts.size()) return leaf(k0, k1);
    const KCut& cut = d_.k_cuts[i];
    if (k1 <= k0) return 0.0f;
    if (cut.segments > 0) return segment_level(i, k0, k1);
    const int64_t n = (k1 - k0 + cut.span - 1) / cut.span;
    // Parts that differ from a whole fill part: those holding an entry, and a short last.
    absl::InlinedVector<std::pair<int64_t, float>, 8> special;
    for (size_t e = first_at(k0); e < hi_ && idx_[e] < k1; ++e) {
      const int64_t j = (idx_[e] - k0) / cut.span;
      if (!special.empty() && special.back().first == j) continue;
      const int64_t p0 = k0 + j * cut.span;
      special.emplace_back(j, level(i + 1, p0, std::min(p0 + cut.span, k1)));
    }
    const int64_t last0 = k0 + (n - 1) * cut.span;
    if (k1 - last0 < cut.span && (special.empty() || special.back().first != n - 1)) {
      special.emplace_back(n - 1, level(i + 1, last0, k1));
    }
    const float fill = n > static_cast<int64_t>(special.size()) ? fill_part(i + 1, cut.span) : 0.0f;
    const bool split = has_split(d_) && i == 0;
    if (split || cut.fold == Fold::kChain) {
      // split: r = +0.0, r = M(r + P(p_j)) for every j; chain: r = p_0, r = r + p_j.
      auto add = [&](float r, float p) { return split ? merge_step(r, p) : r + p; };
      // The chain starts from part 0 itself; the split's merge from +0.0.
      float r = 0.0f;
      int64_t pos = 0;
      size_t s = 0;
      if (!split) {
        const bool first_special = !special.empty() && special.front().first == 0;
        r = first_special ? special.front().second : fill;
        pos = 1;
        s = first_special ? 1 : 0;
      }
      for (; s < special.size(); ++s) {
        const auto& [j, value] = special[s];
        r = repeat(r, j - pos, [&](float x) { return add(x, fill); });
        r = add(r, value);
        pos = j + 1;
      }
      return repeat(r, n - pos, [&](float x) { return add(x, fill); });
    }
    std::vector<float> parts(static_cast<size_t>(n), fill);
    for (const auto& [j, value] : special) parts[static_cast<size_t>(j)] = value;
    return fold_parts(std::move(parts), cut.fold);
  }

  // A segment split (validate: the split of split_k, level 0, no inner level): its
  // few parts differ in length, so each is evaluated, or taken from the fill memo.
  float segment_level(size_t i, int64_t k0, int64_t k1) {
    const KCut& cut = d_.k_cuts[i];
    float r = 0.0f;  // the split's merge: r = +0.0, r = M(r + P(p_j))
    for (int64_t j = 0; j < cut.segments; ++j) {
      const auto [e0, e1] = cut_part(cut, j, k0, k1);
      const size_t e = first_at(e0);
      const bool holds_entry = e < hi_ && idx_[e] < e1;
      const float p = holds_entry ? level(i + 1, e0, e1) : fill_part(i + 1, e1 - e0);
      r = merge_step(r, p);
    }
    return r;
  }

  // One step of a split's merge: r = M(r + P(p)), M and P the merge and partial dtypes.
  float merge_step(float r, float p) const {
    return round_to(d_.merge_dtype, r + round_to(d_.partial_dtype, p));
  }

  const GemmDesc d_;
  const MmaModel& model_;
  const float fa_, fb_;
  std::vector<int64_t> idx_;
  std::vector<float> ea_, eb_;
  size_t lo_ = 0, hi_ = 0;  // the active entries: idx_[lo_, hi_)
  std::vector<float> fill_turn_;  // a whole fill-only gemv turn's lane values (memo)
  std::vector<float> lanes_buf_, acc_buf_;  // gemv scratch: one range's lanes, the turns' sum
  std::vector<float> pad_a_, pad_b_, fill_a_, fill_b_;
  // Memos of pure functions of the fill: a part's value by (level, length); one fill
  // group and one fill turn by the bits they are handed.
  std::map<std::pair<size_t, int64_t>, float> fill_parts_;
  absl::flat_hash_map<uint32_t, float> fill_groups_, fill_turns_;
};

}  // namespace

struct SparseElement::Impl {
  GemmDesc desc;
  int64_t k = 0;
  uint32_t a_fill = 0, b_fill = 0;
  std::unique_ptr<MmaModel> owned;
  const MmaModel* model = nullptr;
  std::unique_ptr<SparseTree> tree;  // null: the dense reference (kDot, alpha/beta, bias)
  std::vector<uint32_t> a_bits, b_bits;  // eval's pattern check, kept from call to call
};

SparseElement::SparseElement(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SparseElement::SparseElement(SparseElement&&) noexcept = default;
SparseElement& SparseElement::operator=(SparseElement&&) noexcept = default;
SparseElement::~SparseElement() = default;

absl::StatusOr<SparseElement> SparseElement::create(const GemmDesc& desc, int64_t k,
                                                    uint32_t a_fill, uint32_t b_fill,
                                                    const MmaModel* model) {
  if (absl::Status s = validate(desc); !s.ok()) return s;
  if (k < 0 || k > (int64_t{1} << 32)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "gemm_sparse_element: k is %d; it must be in [0, 2^32].", k));
  }
  if (absl::Status s = check_patterns("gemm_sparse_element", "a", {a_fill}, desc.a_dtype); !s.ok())
    return s;
  if (absl::Status s = check_patterns("gemm_sparse_element", "b", {b_fill}, desc.b_dtype); !s.ok())
    return s;
  auto impl = std::make_unique<Impl>();
  impl->desc = desc;
  impl->k = k;
  impl->a_fill = a_fill;
  impl->b_fill = b_fill;
  if (model == nullptr) {
    impl->owned = make_sm90_mma_model();
    model = impl->owned.get();
  }
  impl->model = model;
  if (desc.family != GemmFamily::kDot && !desc.alpha_beta && !desc.bias) {
    impl->tree = std::make_unique<SparseTree>(impl->desc, *model, widen(desc.a_dtype, a_fill),
                                              widen(desc.b_dtype, b_fill));
  }
  return SparseElement(std::move(impl));
}

absl::StatusOr<uint32_t> SparseElement::eval(std::span<const SparseEntry> entries) {
  Impl& im = *impl_;
  const GemmDesc& desc = im.desc;
  std::vector<uint32_t>& a_bits = im.a_bits;
  std::vector<uint32_t>& b_bits = im.b_bits;
  a_bits.clear();
  b_bits.clear();
  for (size_t i = 0; i < entries.size(); ++i) {
    const SparseEntry& e = entries[i];
    if (e.k < 0 || e.k >= im.k || (i > 0 && e.k <= entries[i - 1].k)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "gemm_sparse_element: entries[%d].k is %d; entries must be ascending, distinct and "
          "in [0, %d).", i, e.k, im.k));
    }
    a_bits.push_back(e.a);
    b_bits.push_back(e.b);
  }
  if (absl::Status s = check_patterns("gemm_sparse_element", "a", a_bits, desc.a_dtype); !s.ok())
    return s;
  if (absl::Status s = check_patterns("gemm_sparse_element", "b", b_bits, desc.b_dtype); !s.ok())
    return s;
  if (im.tree == nullptr) {
    GemmProblem p;
    p.m = p.n = 1;
    p.k = im.k;
    p.a.assign(static_cast<size_t>(im.k), im.a_fill);
    p.b.assign(static_cast<size_t>(im.k), im.b_fill);
    for (const SparseEntry& e : entries) {
      p.a[static_cast<size_t>(e.k)] = e.a;
      p.b[static_cast<size_t>(e.k)] = e.b;
    }
    if (desc.alpha_beta) p.c = {0};
    if (desc.bias) p.bias = {0};
    absl::StatusOr<std::vector<uint32_t>> out = gemm(desc, p, im.model);
    if (!out.ok()) return out.status();
    return (*out)[0];
  }
  float e = im.tree->eval(
      im.k, entries, [&](uint32_t a) { return widen(desc.a_dtype, a); },
      [&](uint32_t b) { return widen(desc.b_dtype, b); });
  if (desc.activation == Activation::kRelu) e = e > 0.0f ? e : 0.0f;
  if (desc.out_dtype == DType::kF32 && std::isnan(e)) return 0x7fffffffu;
  return to_bits(desc.out_dtype, e);
}

absl::StatusOr<uint32_t> gemm_sparse_element(const GemmDesc& desc, int64_t k, uint32_t a_fill,
                                             uint32_t b_fill, std::span<const SparseEntry> entries,
                                             const MmaModel* model) {
  absl::StatusOr<SparseElement> e = SparseElement::create(desc, k, a_fill, b_fill, model);
  if (!e.ok()) return e.status();
  return e->eval(entries);
}

}  // namespace fixbits::dsl::reference
