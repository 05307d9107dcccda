// SelectLayout: the layout-selection pass of reference §5.2, for the operand of one
// reduce. LLVM-free, so its choice can be checked (and simulated) on the CPU.
//
// What it does: for reduce `op` whose operand arrives in the producer's blocked
// layout, it builds the reduce-friendly layout — warps on the kept dimension, then
// as many lanes as the kept extent takes, the reduced axis in registers and only
// then in the leftover lanes (shuffles) and warps (shared memory) — and decides
// whether reading the operand through a convert_layout (one shared-memory round
// trip: write, barrier, read) pays against reducing where the producer put it.
//
// Assumes: the op passed tile::validate; layouts are blocked (codegen/Layout.h).
// Guarantees: it never changes the op, its axis, its extent, its strip or its
// order; only which (register, lane, warp) holds which element. The pinned tree
// is over the LOGICAL index of the axis, realised level by level wherever each
// index bit lives (ReducePlan), so the result's bits are the same whatever it
// picks. A free-order reduce is never converted (its bits follow the layout).
// Rank-1 operands are already friendly (the blocked layout is the axis in
// registers, then lanes, then warps), so only rank-2 reduces are ever converted.
//
// Before/after, a column reduce of a (4, 128) row-major tile over 4 warps of 32:
//   producer  blocked(shape=4x128 ept=1x4 lanes=1x32 warps=4x1)   coalesced load:
//             warp w holds row w, lane l its columns 4l..4l+3; the reduced axis
//             (rows) sits across the 4 warps: a cross-warp stage per column.
//   friendly  (shape=4x128 ept=4x1 lanes=1x32 warps=1x4 order=0,1)
//             thread t holds column t, all 4 rows in registers: an in-thread
//             tree, no shuffle, no barrier, and the (128) result is already in
//             the blocked layout of its shape.
//   choice    convert (one round trip through shared memory) — cheaper than a
//             cross-warp stage plus redistributing the results.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/Layout.h"
#include "dsl/tile/Program.h"

namespace fixbits::codegen {

// The §5.2 layout of a tile of `shape` reduced along `axis`: kept dimension on
// warps then lanes (then registers), the axis on registers then the leftover lanes
// then the leftover warps; order = {axis, kept} (axis fastest everywhere, so a
// line of the axis is consecutive registers and its lane bits are the low ones).
// Fails (Unimplemented, naming the shape) when the extents do not split evenly.
absl::StatusOr<Layout> reduce_friendly_layout(const std::vector<int64_t>& shape, int axis,
                                              int warp_size, int warps);

// What reducing `axis` in layout `l` costs one thread per execution.
struct ReduceCost {
  bool lowered = true;       // LowerReduce emits this layout directly
  int64_t shuffles = 0;      // lane exchanges
  int64_t smem_trips = 0;    // shared-memory round trips (each: write, barrier, read)
};
ReduceCost reduce_cost(const Layout& l, int axis, int warp_size, int warps);
// One number to compare costs: a round trip weighs as much as 64 shuffles;
// a layout LowerReduce does not emit weighs "infinitely" much.
int64_t weight(const ReduceCost& c);

struct LayoutChoice {
  Layout producer;       // where the operand arrives
  Layout reduce;         // where the reduce reads it (== producer unless convert)
  bool convert = false;  // a convert_layout producer -> reduce is inserted
  std::string why;       // one line, for dumps and tests
};

// Largest tile (elements) a convert_layout stages through shared memory; each of
// its two alternating buffers holds this many floats plus one pad per 32.
inline constexpr int64_t kMaxConvertElems = 4096;

// The pass for reduce `op` (number `op_number`) whose operand arrives in `producer`.
// Fails with a Status naming the reduce when no layout it can lower fits.
absl::StatusOr<LayoutChoice> select_reduce_layout(const Layout& producer, const tile::Op& op,
                                                  int op_number, int warp_size, int warps);

// The whole reduce on the CPU as the GPU runs it: producer = blocked_layout(shape),
// the pass's choice, its ReducePlan, then simulate_plan thread by thread. `x` is the
// operand in logical (row-major) order, `init` one value per result element, one
// value for all (a scalar init) or empty; the results come back in logical order.
absl::StatusOr<std::vector<float>> simulate_reduce_op(const std::vector<int64_t>& shape,
                                                      const tile::Op& op, int op_number,
                                                      int warp_size, int warps,
                                                      const std::vector<float>& x,
                                                      const std::vector<float>& init);

}  // namespace fixbits::codegen
