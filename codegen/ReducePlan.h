// ReducePlan: how one reduce op is split over the three levels of the GPU —
// registers, lanes, warps — for a given input layout. LLVM-free, so the plan can
// be executed on the CPU (simulate_plan) and checked bit for bit against the
// ReduceDesc tree; LowerReduce emits exactly the steps simulate_plan performs.
//
// Pinned order over a rank-1 tile of Q elements, layout index = t*R + r
// (t = warp*lanes + lane), strip S (power of two dividing Q):
//   1. within thread: balanced trees over groups of reg_group = min(S, R)
//      consecutive registers (a tree over the low index bits held in registers);
//   2. within warp: shfl xor with offsets 1, 2, ... < min(S/R, lanes) (count up);
//   3. across warps: each finished "unit" of `unit` = min(S, R*lanes) elements is
//      written to shared slot (t*R + g*reg_group) / unit; after a barrier every
//      thread folds strip s as a balanced tree over slots [s*K, s*K+K), K =
//      units_per_strip, and chains the strips in order into the running value.
// The result is the same tree as ReduceDesc's for every R, lanes and warps.
// Free order: sequential fold of the R registers (from init when in-thread),
// shfl xor lanes/2, ..., 1, then warps folded in order from warp 0.
// A reduce along a dimension held wholly in registers (rank 2, either axis, the
// axis fastest in the register order) is in-thread only: `lines` independent
// lines of `regs` registers each, line k being registers [k*regs, (k+1)*regs).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/Layout.h"
#include "dsl/ReduceDesc.h"
#include "dsl/tile/Program.h"

namespace fixbits::codegen {

struct ReducePlan {
  dsl::TreeOrder order = dsl::TreeOrder::kPinned;
  bool across_threads = true;  // false: the axis lives wholly in registers
  int64_t lines = 1;           // in-thread only: independent lines per thread
  int64_t regs = 1;            // registers of one line per thread (R)
  int lanes = 32;
  int warps = 1;
  int64_t strip = 1;           // pinned: S; free: the extent
  int64_t reg_group = 1;       // pinned: registers per in-thread tree, min(S, R)
  std::vector<int> lane_offsets;  // shfl xor offsets in emission order
  int64_t unit = 1;            // elements one shared-memory slot stands for
  int64_t units = 1;           // shared-memory slots (floats) per pass
  int64_t units_per_strip = 1; // slots folded by one strip's cross-warp tree
  int64_t strips = 1;          // strips per pass, chained in order
  bool uses_smem = false;      // false: the lanes already hold the whole result
};

// The plan of reduce `op` (kind kReduce) over an input of layout `in` (the layout
// SelectLayout chose). Fails with a Status naming the reduce when the axis of a
// rank-2 tile is spread over lanes or warps (SelectLayout converts those first).
absl::StatusOr<ReducePlan> plan_reduce(const Layout& in, const tile::Op& op, int op_number);

// Runs `plan` on the CPU: `x` holds the input in logical order (rank 1: Q values;
// in-thread: threads*lines*regs values, line-major), `init` one value per result
// (empty: identity). Returns the results in logical order. Every combine is one
// binary32 operation, as on the GPU (max/min: NaN-propagating, -0 < +0).
std::vector<float> simulate_plan(const ReducePlan& plan, tile::Combine c,
                                 const std::vector<float>& x, const std::vector<float>& init);

// simulate_plan with the operand in LOGICAL (row-major) order: places every element
// in the (register, lane, warp) slot that layout `in` gives it, runs the plan, and
// returns the results in logical order. `init`: one value per result, one value for
// all, or empty.
std::vector<float> simulate_reduce(const Layout& in, const ReducePlan& plan, tile::Combine c,
                                   const std::vector<float>& x, const std::vector<float>& init);

float combine_f32(tile::Combine c, float a, float b);
float identity_f32(tile::Combine c);

}  // namespace fixbits::codegen
