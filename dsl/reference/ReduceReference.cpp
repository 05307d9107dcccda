// ReduceReference: reference::reduce, the bits a ReduceDesc defines (semantics in
// the header comment of dsl/ReduceDesc.h; free order as Reference.h defines it).
//
// Pinned: each line is cut into strips of `strip`; a strip is reduced by pairing
// neighbours level by level over its logical index (level j combines blocks that
// differ in bit j); strips are chained in index order. Padding past the line's end
// is the combine's identity, and op(x, identity) == x bit for bit for every x (sum:
// x + -0.0 == x including +-0.0; max with -inf; min with +inf), so pads are skipped
// rather than materialised. Example, strip 4, x = [a b c d e]:
//   strip 0: (a+b)+(c+d); strip 1: e (+ three pads); result ((a+b)+(c+d)) + e.
//
// Points the ReduceDesc header leaves open, fixed here (the GPU must match them):
//   * A line of zero elements reduces to the identity (-0.0, -inf, +inf).
//   * max/min order -0.0 below +0.0 (max(-0,+0) = +0, min(-0,+0) = -0), and any
//     NaN operand gives NaN, as PTX max.NaN/min.NaN.f32.
//   * kRmsNorm: n is converted to f32 (RNE) for ms = sum / n; w holds one value per
//     element of a line (cols for kRow, rows for kColumn), in_dtype bits.
//   * f32 output NaN is written as the PTX canonical NaN 0x7fffffff.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_format.h"
#include "dsl/reference/ExpF32.h"
#include "dsl/reference/PatternChecks.h"
#include "dsl/reference/Reference.h"

namespace fixbits::dsl::reference {
namespace {

constexpr int64_t kMaxElements = int64_t{1} << 32;

absl::Status bad(std::string msg) { return absl::InvalidArgumentError(std::move(msg)); }

enum class Combine { kSum, kMax, kMin };

float identity(Combine c) {
  switch (c) {
    case Combine::kSum: return -0.0f;
    case Combine::kMax: return -std::numeric_limits<float>::infinity();
    case Combine::kMin: return std::numeric_limits<float>::infinity();
  }
  return -0.0f;
}

// One combine, a correctly rounded f32 operation (validate() pins acc_dtype to f32).
float combine(Combine c, float x, float y) {
  switch (c) {
    case Combine::kSum:
      return x + y;
    case Combine::kMax:
    case Combine::kMin: {
      if (std::isnan(x) || std::isnan(y)) return bits_float(0x7fffffffu);
      const bool want_max = c == Combine::kMax;
      if (x == y) {  // equal values; only +-0.0 can differ in bits
        return (std::signbit(x) == std::signbit(y)) ? x
               : want_max                           ? 0.0f
                                                    : -0.0f;
      }
      return (x > y) == want_max ? x : y;
    }
  }
  return x + y;
}

// The pinned tree over leaves v (see the file comment).
float pinned_tree(Combine c, const std::vector<float>& v, int64_t strip) {
  const int64_t n = static_cast<int64_t>(v.size());
  if (n == 0) return identity(c);
  float r = 0.0f;
  std::vector<float> level;
  for (int64_t s0 = 0; s0 < n; s0 += strip) {
    level.assign(v.begin() + s0, v.begin() + std::min(n, s0 + strip));
    while (level.size() > 1) {
      const size_t half = (level.size() + 1) / 2;
      for (size_t j = 0; j < half; ++j) {
        level[j] = 2 * j + 1 < level.size() ? combine(c, level[2 * j], level[2 * j + 1])
                                            : level[2 * j];  // partner is all padding
      }
      level.resize(half);
    }
    r = s0 == 0 ? level[0] : combine(c, r, level[0]);
  }
  return r;
}

float free_tree(Combine c, const std::vector<float>& v, const FreeLayout& f) {
  const int64_t n = static_cast<int64_t>(v.size());
  const int64_t e = f.elems_per_thread, lanes = f.lanes, warps = f.warps;
  const int64_t chunk = e * lanes * warps;
  std::vector<float> warp_results(warps);
  std::vector<float> lane(lanes), next(lanes);
  for (int64_t w = 0; w < warps; ++w) {
    // Within a thread: every element it holds, chunk by chunk, in index order.
    for (int64_t l = 0; l < lanes; ++l) {
      float acc = identity(c);
      const int64_t first = (w * lanes + l) * e;
      for (int64_t c0 = 0; c0 < n; c0 += chunk) {
        for (int64_t i = c0 + first; i < std::min(n, c0 + first + e); ++i) {
          acc = combine(c, acc, v[i]);
        }
      }
      lane[l] = acc;
    }
    // Within a warp: butterfly counting down.
    for (int64_t d = lanes / 2; d >= 1; d /= 2) {
      for (int64_t l = 0; l < lanes; ++l) next[l] = combine(c, lane[l], lane[l ^ d]);
      lane.swap(next);
    }
    warp_results[w] = lane[0];
  }
  // Across warps: sequential.
  float r = warp_results[0];
  for (int64_t w = 1; w < warps; ++w) r = combine(c, r, warp_results[w]);
  return r;
}

float tree(const ReduceDesc& d, Combine c, const std::vector<float>& v, const FreeLayout& f) {
  return d.order == TreeOrder::kPinned ? pinned_tree(c, v, d.strip) : free_tree(c, v, f);
}

uint32_t store(DType out, float y) {
  if (out == DType::kF32 && std::isnan(y)) return 0x7fffffffu;
  return to_bits(out, y);
}

absl::Status check_problem(const ReduceDesc& d, const ReduceProblem& p) {
  if (p.rows < 0 || p.cols < 0) {
    return bad(absl::StrFormat("ReduceProblem shape rows=%d cols=%d has a negative extent.",
                               p.rows, p.cols));
  }
  const __int128 count = static_cast<__int128>(p.rows) * p.cols;
  if (count > kMaxElements) {
    return bad(absl::StrFormat(
        "ReduceProblem shape rows=%d cols=%d has more than 2^32 elements.", p.rows, p.cols));
  }
  if (static_cast<__int128>(p.x.size()) != count) {
    return bad(absl::StrFormat("ReduceProblem.x has %d elements; rows*cols = %d.", p.x.size(),
                               static_cast<int64_t>(count)));
  }
  if (absl::Status s = check_patterns("ReduceProblem", "x", p.x, d.in_dtype); !s.ok()) return s;
  if (d.op == ReduceOp::kRmsNorm) {
    const int64_t line = d.axis == ReduceAxis::kRow ? p.cols : p.rows;
    if (static_cast<int64_t>(p.w.size()) != line) {
      return bad(absl::StrFormat(
          "ReduceProblem.w has %d elements; kRmsNorm along %s needs one per element of a "
          "line, %s = %d.",
          p.w.size(), d.axis == ReduceAxis::kRow ? "rows" : "columns",
          d.axis == ReduceAxis::kRow ? "cols" : "rows", line));
    }
    if (absl::Status s = check_patterns("ReduceProblem", "w", p.w, d.in_dtype); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status validate_free_layout(const FreeLayout& f) {
  if (f.elems_per_thread < 1 || f.elems_per_thread > 4096) {
    return bad(absl::StrFormat("FreeLayout.elems_per_thread is %d but must be in [1, 4096].",
                               f.elems_per_thread));
  }
  if (f.lanes < 1 || f.lanes > 64 || (f.lanes & (f.lanes - 1)) != 0) {
    return bad(absl::StrFormat("FreeLayout.lanes is %d but must be a power of two in [1, 64].",
                               f.lanes));
  }
  if (f.warps < 1 || f.warps > 32) {
    return bad(absl::StrFormat("FreeLayout.warps is %d but must be in [1, 32].", f.warps));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint32_t>> reduce(const ReduceDesc& desc, const ReduceProblem& p,
                                             const FreeLayout& free_layout) {
  if (absl::Status s = validate(desc); !s.ok()) return s;
  if (desc.order == TreeOrder::kFree) {
    if (absl::Status s = validate_free_layout(free_layout); !s.ok()) return s;
  }
  if (absl::Status s = check_problem(desc, p); !s.ok()) return s;

  const bool by_row = desc.axis == ReduceAxis::kRow;
  const int64_t lines = by_row ? p.rows : p.cols;
  const int64_t len = by_row ? p.cols : p.rows;
  auto index = [&](int64_t line, int64_t i) { return by_row ? line * p.cols + i : i * p.cols + line; };
  const bool elementwise = desc.op == ReduceOp::kRmsNorm || desc.op == ReduceOp::kSoftmax;
  std::vector<uint32_t> out(static_cast<size_t>(elementwise ? lines * len : lines));

  std::vector<float> x(len), leaf(len);
  std::vector<float> w;
  if (desc.op == ReduceOp::kRmsNorm) {
    for (uint32_t b : p.w) w.push_back(to_float(desc.in_dtype, b));
  }
  for (int64_t line = 0; line < lines; ++line) {
    for (int64_t i = 0; i < len; ++i) x[i] = to_float(desc.in_dtype, p.x[index(line, i)]);
    switch (desc.op) {
      case ReduceOp::kSum:
      case ReduceOp::kMax:
      case ReduceOp::kMin: {
        const Combine c = desc.op == ReduceOp::kSum   ? Combine::kSum
                          : desc.op == ReduceOp::kMax ? Combine::kMax
                                                      : Combine::kMin;
        out[line] = store(desc.out_dtype, tree(desc, c, x, free_layout));
        break;
      }
      case ReduceOp::kRmsNorm: {
        for (int64_t i = 0; i < len; ++i) leaf[i] = x[i] * x[i];
        const float sum = tree(desc, Combine::kSum, leaf, free_layout);
        const float ms = sum / static_cast<float>(len);
        const float root = std::sqrt(ms + p.eps);
        const float r = 1.0f / root;
        for (int64_t i = 0; i < len; ++i) {
          const float scaled = x[i] * r;
          out[index(line, i)] = store(desc.out_dtype, scaled * w[i]);
        }
        break;
      }
      case ReduceOp::kSoftmax: {
        const float m = tree(desc, Combine::kMax, x, free_layout);
        for (int64_t i = 0; i < len; ++i) leaf[i] = fixbits_exp(x[i] - m);
        const float s = tree(desc, Combine::kSum, leaf, free_layout);
        for (int64_t i = 0; i < len; ++i) out[index(line, i)] = store(desc.out_dtype, leaf[i] / s);
        break;
      }
    }
  }
  return out;
}

}  // namespace fixbits::dsl::reference
