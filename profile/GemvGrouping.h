// GemvGrouping: how the leaf of a gemv descriptor groups the products of one range
// [0, len) into f32 additions, in a canonical form, so the scan can tell without a
// device where two descriptors its probes could not tell apart stop agreeing.
//
// Contract:
//   gemv_grouping(d, len) is a token list: a K index (>= 0), kOpen / kClose around a
//   sum that is added as one term (a lane's turn of two or more products, a lane of two
//   or more terms in a chain of lanes). It follows GemmDesc.h's gemv leaf: the range
//   dealt to d.lanes lanes in tiles of d.lane_tile (contiguous runs or strided tiles),
//   turns of k_loop_step.step (use_fast_accum = false) each dealt as a range of its own
//   and added into the lane's accumulator, then the lanes chained (empty lane_fold) or
//   listed in lane order with their fold (d.lane_fold) after them. Terms that add
//   nothing are left out: an empty turn or lane (+0.0 added to a sum that is never
//   -0.0), and the +0.0 an accumulator starts from (its first turn's sum stands for it;
//   a turn of one product joins the accumulator's chain as that product).
//   For inputs whose products are exact in f32 (f16 and fp8 inputs always; bf16 unless
//   a product falls below f32's subnormals), two descriptors of one family, instruction and lane fold with equal lists give the
//   same bits at len for every input. Unequal lists are read as "may differ": the scan
//   only spends a probe there (a list pair that in fact agrees costs a probe, never a
//   wrong descriptor).
//   gemv_groupings_differ(a, b, len): false only where that holds: both gemv, equal
//   dtypes (neither f32), instruction and lane fold, and equal lists.
// Example: 16 strided lanes of tile 1 in turns of 512 (cuBLAS's gemv2T) and 16
//   contiguous lanes of tile 1 in turns of 16 give one list at every len <= 528 (each
//   lane chains the products l, l + 16, ...; a second 512-turn holding one product per
//   lane joins each chain as that product) and differ from len = 529 on, where lane 0's
//   second 512-turn holds 512 and 528 and is added as one term "( 512 528 )".
#pragma once

#include <cstdint>
#include <vector>

#include "dsl/GemmDesc.h"

namespace fixbits::profile {

inline constexpr int64_t kGroupOpen = -1;
inline constexpr int64_t kGroupClose = -2;

// The canonical grouping of d's leaf over [0, len) (above); empty for a family other
// than gemv, or len < 1.
std::vector<int64_t> gemv_grouping(const dsl::GemmDesc& d, int64_t len);

bool gemv_groupings_differ(const dsl::GemmDesc& a, const dsl::GemmDesc& b, int64_t len);

}  // namespace fixbits::profile
