// GemvGrouping (contract in GemvGrouping.h).
// Example: 4 strided lanes of tile 1 over [0, 10) in turns of 8: turn [0, 8) gives lane 0
//   the products 0 and 4, turn [8, 10) the product 8, which joins its chain: lane 0 is
//   "0 4 8", lane 1 "1 5 9", lane 2 "2 6", lane 3 "3 7", and the chain of lanes
//   "0 4 8 ( 1 5 9 ) ( 2 6 ) ( 3 7 )". No turns, or turns of 4 (one product per lane
//   and turn), give the same list; 4 contiguous lanes ("0 1 2 ( 3 4 5 ) ...") do not.
#include "profile/GemvGrouping.h"

#include <algorithm>

namespace fixbits::profile {
namespace {

using Tokens = std::vector<int64_t>;

// Appends `term` (a sum of its own) to the chain `into`: the whole term when the chain
// is empty (the +0.0 it starts from adds nothing), one product as itself, else the term
// in brackets. An empty term adds nothing.
void add_term(Tokens& into, const Tokens& term) {
  if (term.empty()) return;
  if (into.empty() || term.size() == 1) {
    into.insert(into.end(), term.begin(), term.end());
    return;
  }
  into.push_back(kGroupOpen);
  into.insert(into.end(), term.begin(), term.end());
  into.push_back(kGroupClose);
}

// The products lane l folds over [k0, k1) (the range dealt as one), in order.
Tokens lane_products(const dsl::GemmDesc& d, int64_t l, int64_t k0, int64_t k1) {
  const int64_t lanes = d.lanes, tile = d.lane_tile;
  const int64_t tiles = dsl::gemv_tiles(d, k1 - k0);
  Tokens out;
  if (d.lane_layout == dsl::LaneLayout::kContiguous) {
    const auto [e0, e1] = dsl::gemv_contiguous_span(d, l, k0, k1);
    for (int64_t e = e0; e < e1; ++e) out.push_back(e);
  } else {
    for (int64_t t = l; t < tiles; t += lanes) {
      const int64_t e1 = std::min(k1, k0 + (t + 1) * tile);
      for (int64_t e = k0 + t * tile; e < e1; ++e) out.push_back(e);
    }
  }
  return out;
}

// Lane l's accumulator over [0, len): its products, or with turns the chain of its
// turns' sums.
Tokens lane_value(const dsl::GemmDesc& d, int64_t l, int64_t len) {
  const int64_t step = d.k_loop_step.step;
  if (d.use_fast_accum || step <= 0) return lane_products(d, l, 0, len);
  Tokens acc;
  const int64_t short_len = len % step;
  int64_t t0 = 0;
  if (short_len != 0 && d.k_loop_step.short_turn == dsl::ShortTurn::kFirst) {
    add_term(acc, lane_products(d, l, 0, short_len));
    t0 = short_len;
  }
  for (; t0 < len; t0 += step) add_term(acc, lane_products(d, l, t0, std::min(len, t0 + step)));
  return acc;
}

bool exact_products(DType t) { return t != DType::kF32; }

}  // namespace

std::vector<int64_t> gemv_grouping(const dsl::GemmDesc& d, int64_t len) {
  if (d.family != dsl::GemmFamily::kGemv || len < 1 || d.lanes < 1 || d.lane_tile < 1) return {};
  Tokens out;
  for (int64_t l = 0; l < d.lanes; ++l) {
    const Tokens v = lane_value(d, l, len);
    if (d.lane_fold.empty()) {
      add_term(out, v);
    } else {
      // A fold pairs lanes by index: each lane's value in its place, empty ones too.
      out.push_back(kGroupOpen);
      out.insert(out.end(), v.begin(), v.end());
      out.push_back(kGroupClose);
    }
  }
  return out;
}

bool gemv_groupings_differ(const dsl::GemmDesc& a, const dsl::GemmDesc& b, int64_t len) {
  if (a.family != dsl::GemmFamily::kGemv || b.family != dsl::GemmFamily::kGemv) return true;
  if (a.a_dtype != b.a_dtype || a.b_dtype != b.b_dtype || a.instruction != b.instruction ||
      a.lane_fold != b.lane_fold || (!a.lane_fold.empty() && a.lanes != b.lanes)) {
    return true;
  }
  if (!exact_products(a.a_dtype) || !exact_products(a.b_dtype)) return !(a == b);
  return gemv_grouping(a, len) != gemv_grouping(b, len);
}

}  // namespace fixbits::profile
