// GemmReference: reference::gemm, the bits a GemmDesc defines (semantics in the
// header comment of dsl/GemmDesc.h, implemented step for step).
//
// Per output element (m, n), with a_k = a[m,k] and b_k = b[k,n] widened exactly:
//   level(0, [0,K)) -> epilogue -> round to out_dtype.
//   level(i, range): i == k_cuts.size() ? leaf(range)
//                    : fold over the parts of k_cuts[i] (cut_part: spans, or
//                      segments of whole tiles), each level(i+1, part).
// Example: kMmaSync f16, ik = 16, step = 32, short turn last, K = 40: turns [0,32)
// and [32,40); groups [0,16) [16,32) [32,40)+8 zero products.
//
// Points the GemmDesc header leaves open, fixed here (the GPU must match them):
//   * A range with no elements (K = 0) gives +0.0; a level with no parts gives +0.0.
//   * gemv: a lane dealt no tile holds +0.0 (it folds nothing from +0.0); an absent
//     partner (l ^ d >= lanes) is skipped, not added as a zero of either sign.
//   * The zero padding of a short group is +0.0 * +0.0 products.
//   * Matrix instructions get `in` = a_dtype (validate() allows mixed dtypes only
//     for the two fp8 formats, which share the fp8 model constants).
//   * kRelu is max(e, +0.0) with -0.0 -> +0.0 and NaN -> +0.0 (PTX max.f32 / maxNum).
//   * Split-K merge: r = +0.0; r = R(r (+)f32 p_j) for j = 0.., R = round to
//     merge_dtype, p_j = part j rounded to partial_dtype (RNE, overflow to inf).
//   * f32 output NaN is written as the PTX canonical NaN 0x7fffffff; narrower
//     outputs use FloatFormat's NaN (what cvt writes: f16/bf16 0x7fff, ...).
//   * problem.alpha/beta/c are read only when desc.alpha_beta, bias only when
//     desc.bias. tf32 inputs: the low 13 bits of a pattern are ignored (as the
//     hardware does); every other input pattern must fit its dtype's width.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <array>
#include <span>
#include <vector>

#include "absl/strings/str_format.h"
#include "dsl/reference/MmaModel.h"
#include "dsl/reference/PatternChecks.h"
#include "dsl/reference/Reference.h"

namespace fixbits::dsl::reference {
namespace {

constexpr int64_t kMaxOutputElements = int64_t{1} << 32;

absl::Status bad(std::string msg) { return absl::InvalidArgumentError(std::move(msg)); }

absl::Status check_count(const char* field, size_t have, int64_t want, const char* what) {
  if (static_cast<int64_t>(have) != want) {
    return bad(absl::StrFormat("GemmProblem.%s has %d elements; %s = %d.", field, have, what,
                               want));
  }
  return absl::OkStatus();
}

absl::Status check_problem(const GemmDesc& d, const GemmProblem& p) {
  if (p.m < 0 || p.n < 0 || p.k < 0) {
    return bad(absl::StrFormat("GemmProblem shape m=%d n=%d k=%d has a negative extent.",
                               p.m, p.n, p.k));
  }
  const __int128 mk = static_cast<__int128>(p.m) * p.k;
  const __int128 kn = static_cast<__int128>(p.k) * p.n;
  const __int128 mn = static_cast<__int128>(p.m) * p.n;
  if (mn > kMaxOutputElements || mk > kMaxOutputElements || kn > kMaxOutputElements) {
    return bad(absl::StrFormat(
        "GemmProblem shape m=%d n=%d k=%d has an operand of more than 2^32 elements.", p.m,
        p.n, p.k));
  }
  if (absl::Status s = check_count("a", p.a.size(), static_cast<int64_t>(mk), "m*k"); !s.ok())
    return s;
  if (absl::Status s = check_count("b", p.b.size(), static_cast<int64_t>(kn), "k*n"); !s.ok())
    return s;
  if (absl::Status s = check_patterns("GemmProblem", "a", p.a, d.a_dtype); !s.ok()) return s;
  if (absl::Status s = check_patterns("GemmProblem", "b", p.b, d.b_dtype); !s.ok()) return s;
  if (d.alpha_beta) {
    if (absl::Status s = check_count("c", p.c.size(), static_cast<int64_t>(mn), "m*n");
        !s.ok())
      return s;
    if (absl::Status s = check_patterns("GemmProblem", "c", p.c, d.out_dtype); !s.ok()) return s;
  }
  if (d.bias) {
    if (absl::Status s = check_count("bias", p.bias.size(), p.n, "n"); !s.ok()) return s;
  }
  return absl::OkStatus();
}

bool is_matrix(Instruction i) { return i == Instruction::kMmaSync || i == Instruction::kWgmma; }


// Evaluates one output element's tree; a_row and b_col hold the K operands.
class ElementTree {
 public:
  ElementTree(const GemmDesc& d, const MmaModel& model)
      : d_(d), model_(model), pad_a_(std::max(d.instruction_k, 1)),
        pad_b_(std::max(d.instruction_k, 1)) {}

  float eval(std::span<const float> a_row, std::span<const float> b_col) {
    a_ = a_row;
    b_ = b_col;
    if (d_.family == GemmFamily::kDot) return dot_value(static_cast<int64_t>(a_row.size()));
    return level(0, 0, static_cast<int64_t>(a_row.size()));
  }

 private:
  // Family kDot (GemmDesc.h): the grid-stride threads, each block's fold, the merge
  // kernel. Threads and blocks with no element hold +0.0 (their loops do not run).
  float dot_value(int64_t k) {
    const int64_t lanes = d_.lanes, tile = d_.lane_tile, blocks = d_.blocks;
    const int64_t grid = blocks * lanes;
    const int64_t tiles = (k + tile - 1) / tile;
    std::vector<float> partials(static_cast<size_t>(blocks), 0.0f);
    std::vector<float> v(static_cast<size_t>(lanes));
    std::vector<float> acc(static_cast<size_t>(tile));
    for (int64_t b = 0; b < blocks && b * lanes < tiles; ++b) {
      for (int64_t l = 0; l < lanes; ++l) {
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int64_t t = b * lanes + l; t < tiles; t += grid) {
          for (int64_t c = 0; c < tile && t * tile + c < k; ++c) {
            acc[static_cast<size_t>(c)] = scalar_step(acc[static_cast<size_t>(c)], t * tile + c);
          }
        }
        float u = acc[0];
        for (int64_t c = 1; c < tile; ++c) u = u + acc[static_cast<size_t>(c)];
        v[static_cast<size_t>(l)] = u;
      }
      partials[static_cast<size_t>(b)] = fold_lanes(v, d_.lane_fold);
    }
    constexpr int kMergeLanes = 128;
    float w[kMergeLanes];
    for (int r = 0; r < kMergeLanes; ++r) {
      w[r] = 0.0f;
      for (int64_t i = r; i < blocks; i += kMergeLanes) w[r] = w[r] + partials[static_cast<size_t>(i)];
    }
    for (int d : {64, 32}) {
      for (int r = 0; r < d; ++r) w[r] = w[r] + w[r + d];
    }
    float c[4];
    for (int q = 0; q < 4; ++q) {
      c[q] = w[q];
      for (int j = 1; j < 8; ++j) c[q] = c[q] + w[q + 4 * j];
    }
    return ((c[0] + c[1]) + c[2]) + c[3];
  }

  float level(size_t i, int64_t k0, int64_t k1) {
    if (i == d_.k_cuts.size()) return leaf(k0, k1);
    const KCut& cut = d_.k_cuts[i];
    std::vector<float> parts;
    for (int64_t j = 0, n = cut_parts(cut, k1 - k0); j < n; ++j) {
      const auto [e0, e1] = cut_part(cut, j, k0, k1);
      parts.push_back(level(i + 1, e0, e1));
    }
    if (parts.empty()) return 0.0f;
    if (has_split(d_) && i == 0) return merge_split(parts);
    return fold_parts(std::move(parts), cut.fold);
  }

  float merge_split(const std::vector<float>& parts) const {
    auto partial = [&](float x) { return round_to(d_.partial_dtype, x); };
    auto merge = [&](float x) { return round_to(d_.merge_dtype, x); };
    float r = 0.0f;  // seeded with +0.0: all -0.0 parts merge to +0.0
    for (float p : parts) r = merge(r + partial(p));
    return r;
  }

  float leaf(int64_t k0, int64_t k1) {
    if (d_.family == GemmFamily::kGemv) return gemv_leaf(k0, k1);
    if (is_matrix(d_.instruction)) return mma_leaf(k0, k1);
    return scalar_fold(d_.neg_zero_seed ? -0.0f : 0.0f, k0, k1);  // the seed (GemmDesc.h)
  }

  float scalar_step(float acc, int64_t k) const {
    if (d_.instruction == Instruction::kScalarFma) return std::fma(a_[k], b_[k], acc);
    const float prod = a_[k] * b_[k];
    return acc + prod;
  }

  float scalar_fold(float acc, int64_t k0, int64_t k1) const {
    for (int64_t k = k0; k < k1; ++k) acc = scalar_step(acc, k);
    return acc;
  }

  // One matrix instruction over [g0, g1), zero-padded to instruction_k products.
  float mma_group(float c, int64_t g0, int64_t g1) {
    const int64_t ik = d_.instruction_k;
    std::fill(pad_a_.begin(), pad_a_.end(), 0.0f);
    std::fill(pad_b_.begin(), pad_b_.end(), 0.0f);
    std::copy(a_.begin() + g0, a_.begin() + g1, pad_a_.begin());
    std::copy(b_.begin() + g0, b_.begin() + g1, pad_b_.begin());
    return model_.mma(c, std::span<const float>(pad_a_.data(), ik),
                      std::span<const float>(pad_b_.data(), ik), d_.a_dtype);
  }

  float mma_turn(float acc, int64_t t0, int64_t t1) {
    const int64_t ik = d_.instruction_k;
    if (d_.use_fast_accum) {
      for (int64_t g0 = t0; g0 < t1; g0 += ik) acc = mma_group(acc, g0, std::min(g0 + ik, t1));
      return acc;
    }
    float t = 0.0f;
    for (int64_t g0 = t0; g0 < t1; g0 += ik) t = mma_group(t, g0, std::min(g0 + ik, t1));
    return acc + t;
  }

  float mma_leaf(int64_t k0, int64_t k1) {
    const int64_t step = d_.k_loop_step.step > 0 ? d_.k_loop_step.step : d_.instruction_k;
    const int64_t len = k1 - k0;
    const int64_t short_len = len % step;
    float acc = 0.0f;
    int64_t t0 = k0;
    if (short_len != 0 && d_.k_loop_step.short_turn == ShortTurn::kFirst) {
      acc = mma_turn(acc, t0, t0 + short_len);
      t0 += short_len;
    }
    for (; t0 < k1; t0 += step) acc = mma_turn(acc, t0, std::min(t0 + step, k1));
    return acc;
  }

  float gemv_leaf(int64_t k0, int64_t k1) {
    const int64_t step = d_.k_loop_step.step;
    if (d_.use_fast_accum || step <= 0) return fold_lanes(gemv_lanes(k0, k1), d_.lane_fold);
    // Turns: each dealt as a range of its own, lane values added into the accumulators.
    std::vector<float> acc(static_cast<size_t>(d_.lanes), 0.0f);
    auto add_turn = [&](int64_t t0, int64_t t1) {
      const std::vector<float> t = gemv_lanes(t0, t1);
      for (size_t l = 0; l < acc.size(); ++l) acc[l] = acc[l] + t[l];
    };
    const int64_t short_len = (k1 - k0) % step;
    int64_t t0 = k0;
    if (short_len != 0 && d_.k_loop_step.short_turn == ShortTurn::kFirst) {
      add_turn(t0, t0 + short_len);
      t0 += short_len;
    }
    for (; t0 < k1; t0 += step) add_turn(t0, std::min(t0 + step, k1));
    return fold_lanes(acc, d_.lane_fold);
  }

  // The lanes' values over [k0, k1): the range dealt to the lanes, each folding its
  // elements in order from +0.0.
  std::vector<float> gemv_lanes(int64_t k0, int64_t k1) {
    const int64_t lanes = d_.lanes, tile = d_.lane_tile;
    const int64_t tiles = gemv_tiles(d_, k1 - k0);
    std::vector<float> v(lanes, 0.0f);
    for (int64_t l = 0; l < lanes; ++l) {
      if (d_.lane_layout == LaneLayout::kContiguous) {
        const auto [e0, e1] = gemv_contiguous_span(d_, l, k0, k1);
        v[l] = scalar_fold(0.0f, e0, e1);
      } else {
        float acc = 0.0f;
        for (int64_t t = l; t < tiles; t += lanes) {
          acc = scalar_fold(acc, k0 + t * tile, std::min(k1, k0 + (t + 1) * tile));
        }
        v[l] = acc;
      }
    }
    return v;
  }

  const GemmDesc& d_;
  const MmaModel& model_;
  std::span<const float> a_, b_;
  std::vector<float> pad_a_, pad_b_;
};

float epilogue(const GemmDesc& d, const GemmProblem& p, int64_t m, int64_t n, float acc) {
  float e = acc;
  if (d.alpha_beta) {
    const float c = to_float(d.out_dtype, p.c[m * p.n + n]);
    const float scaled = p.alpha * acc;
    e = std::fma(p.beta, c, scaled);
  }
  if (d.bias) e = e + bits_float(p.bias[n]);
  if (d.activation == Activation::kRelu) e = e > 0.0f ? e : 0.0f;
  return e;
}

uint32_t store(DType out, float e) {
  if (out == DType::kF32 && std::isnan(e)) return 0x7fffffffu;
  return to_bits(out, e);
}

}  // namespace

absl::StatusOr<std::vector<uint32_t>> gemm(const GemmDesc& desc, const GemmProblem& p,
                                           const MmaModel* model) {
  if (absl::Status s = validate(desc); !s.ok()) return s;
  if (absl::Status s = check_problem(desc, p); !s.ok()) return s;
  std::unique_ptr<MmaModel> owned;
  if (model == nullptr) {
    owned = make_sm90_mma_model();
    model = owned.get();
  }
  // Widen once: a as m rows of k, b as n columns of k (8/16-bit formats by their value
  // table, read here directly: the call per element was a tenth of a probe's time).
  std::vector<float> a_rows(static_cast<size_t>(p.m * p.k));
  std::vector<float> b_cols(static_cast<size_t>(p.n * p.k));
  auto widener = [](DType t) {
    return [t, table = value_table(t)](uint32_t bits) {
      return table.empty() ? to_float(t, bits) : table[bits & (table.size() - 1)];
    };
  };
  const auto widen_a = widener(desc.a_dtype), widen_b = widener(desc.b_dtype);
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t kk = 0; kk < p.k; ++kk) {
      const int64_t src = p.a_row_major ? i * p.k + kk : kk * p.m + i;
      a_rows[i * p.k + kk] = widen_a(p.a[src]);
    }
  }
  for (int64_t j = 0; j < p.n; ++j) {
    for (int64_t kk = 0; kk < p.k; ++kk) {
      const int64_t src = p.b_row_major ? kk * p.n + j : j * p.k + kk;
      b_cols[j * p.k + kk] = widen_b(p.b[src]);
    }
  }
  std::vector<uint32_t> out(static_cast<size_t>(p.m * p.n));
  ElementTree tree(desc, *model);
  for (int64_t i = 0; i < p.m; ++i) {
    std::span<const float> a_row(a_rows.data() + i * p.k, p.k);
    for (int64_t j = 0; j < p.n; ++j) {
      std::span<const float> b_col(b_cols.data() + j * p.k, p.k);
      const float acc = tree.eval(a_row, b_col);
      out[i * p.n + j] = store(desc.out_dtype, epilogue(desc, p, i, j, acc));
    }
  }
  return out;
}

namespace {

// A butterfly over `v` padded with -0.0 to a power of two: every lane l sets
// v[l] = v[l] (+) v[l ^ d] for d = 1, 2, ... (up) or ..., 2, 1 (down). Returns v[0].
float butterfly(std::vector<float> v, bool up) {
  size_t size = 1;
  while (size < v.size()) size *= 2;
  v.resize(size, -0.0f);
  std::vector<size_t> offsets;
  for (size_t d = 1; d < size; d *= 2) offsets.push_back(d);
  if (!up) std::reverse(offsets.begin(), offsets.end());
  std::vector<float> next(size);
  for (size_t d : offsets) {
    for (size_t l = 0; l < size; ++l) next[l] = v[l] + v[l ^ d];
    v.swap(next);
  }
  return v[0];
}

}  // namespace

float fold_lanes(std::span<const float> lanes_in, const std::vector<int>& fold) {
  if (fold.empty()) {  // the lanes chained in index order (GemmDesc.h: gemv2T)
    float r = lanes_in.empty() ? 0.0f : lanes_in[0];
    for (size_t l = 1; l < lanes_in.size(); ++l) r = r + lanes_in[l];
    return r;
  }
  // A partner l ^ d >= lanes (only when the count is not a power of two) is absent:
  // lane l keeps its value in that round. Two rounds' values on the stack (up to dot's
  // 1024 threads; the probe's judge calls this per placement).
  const size_t lanes = lanes_in.size();
  if (lanes == 0) return 0.0f;
  std::vector<float> heap;
  std::array<float, 2048> stack;
  float* buf = stack.data();
  if (lanes > stack.size() / 2) {
    heap.resize(2 * lanes);
    buf = heap.data();
  }
  float* v = buf;
  float* next = buf + lanes;
  std::copy(lanes_in.begin(), lanes_in.end(), v);
  for (int d : fold) {
    for (size_t l = 0; l < lanes; ++l) {
      const size_t partner = l ^ static_cast<size_t>(d);
      next[l] = partner < lanes ? v[l] + v[partner] : v[l];
    }
    std::swap(v, next);
  }
  return v[0];
}

float fold_parts(std::vector<float> parts, Fold f) {
  if (parts.empty()) return 0.0f;
  switch (f) {
    case Fold::kChain: {
      float r = parts[0];
      for (size_t j = 1; j < parts.size(); ++j) r = r + parts[j];
      return r;
    }
    case Fold::kTreeUp:
      return butterfly(std::move(parts), /*up=*/true);
    case Fold::kTreeDown:
      return butterfly(std::move(parts), /*up=*/false);
  }
  return parts[0];
}

}  // namespace fixbits::dsl::reference
