// LowerMma: one tile mma_sync op -> one mma.sync.aligned.m16n8k16.row.col per warp
// (f32 accumulate, f16 or bf16 inputs), emitted as inline PTX in the LLVM IR.
//
// Assumes: the op passed tile::validate (a: (2E), b: (E) of one of f16/bf16, c: (E)
// f32). Requires E = 4 * threads per block, so every thread holds exactly the PTX
// fragments: 8 a values (4 .b32 registers of two halves, lower index in the low
// half), 4 b values (2 registers), 4 c values; otherwise returns a Status naming the
// op. Guarantees: exactly one mma.sync per warp per op, fed the thread's registers in
// fragment order, so the product is what the PTX ISA defines for those fragments.
#pragma once

#include "absl/status/statusor.h"
#include "codegen/Lowering.h"

namespace fixbits::codegen {

absl::StatusOr<Lowered> lower_mma_sync(LoweringContext& ctx, const tile::Op& op, int op_number);

}  // namespace fixbits::codegen
