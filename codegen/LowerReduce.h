// LowerReduce: one tile reduce op -> LLVM IR, in three named steps:
// reduce_within_thread -> reduce_within_warp -> reduce_across_warps, following the
// ReducePlan of the op (see codegen/ReducePlan.h for the tree each step builds).
//
// Before those steps, SelectLayout (reference §5.2) may move a rank-2 operand to
// the layout that holds the reduced axis in registers: convert_layout, one round
// trip through shared memory (write by logical index, barrier, read), so the
// reduce reads the friendly layout and its result lands in the blocked layout of
// its shape. The tree is over the logical index either way.
//
// Assumes: the input tile is lowered with a blocked layout and the op passed
// tile::validate. Guarantees: the emitted combines are exactly those that
// simulate_plan performs, in the same association, so the kernel's bits equal
// the plan's (and, for pinned order, ReduceDesc's tree) for every knob setting.
// Shared memory: two internal addrspace(3) f32 arrays per reduce (and per
// conversion, and per reduce group) that needs it, used alternately, so each
// execution costs one barrier (write; barrier; read).
#pragma once

#include "absl/status/statusor.h"
#include "codegen/Lowering.h"

namespace fixbits::codegen {

absl::StatusOr<Lowered> lower_reduce(LoweringContext& ctx, const tile::Op& op, int op_number);

// A kReduceGroup op: every tile's steps 1 and 2, then one shared buffer holding all
// their units (tile j's at an offset of its own), one barrier, and each tile's
// step 3 in order, result j chained from result j - 1 when the op says so. Sets
// ctx.values of the op's K results. Where some tile needs no shared memory or a
// layout conversion, the K reduces are lowered one after another instead (the same
// combines either way).
absl::Status lower_reduce_group(LoweringContext& ctx, const tile::Op& op, int op_number);

// Shared-memory helpers of this pass that LowerDot reuses.
// Two internal shared f32 arrays of `n` elements used alternately by successive
// executions of the emitted code (write; barrier; read): the one of this execution.
struct SmemBuffer {
  llvm::ArrayType* ty;
  llvm::Value* base;
};
SmemBuffer alternating_buffers(LoweringContext& ctx, int64_t n, const char* what);
// The row-major index of register `reg` of this thread in layout `l`, as i32 IR.
llvm::Value* emit_flat_index(LoweringContext& ctx, const Layout& l, int64_t reg);
// A tile staged through shared memory by its row-major index i sits at slot
// i + i/32 (one pad slot per 32, so row-major writes and column reads miss bank
// conflicts): padded_slots(n) slots hold n elements, padded_index(i) is i's slot.
inline int64_t padded_slots(int64_t elems) { return elems + elems / 32; }
llvm::Value* padded_index(llvm::IRBuilder<>& b, llvm::Value* flat);

}  // namespace fixbits::codegen
