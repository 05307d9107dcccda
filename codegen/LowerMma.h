// LowerMma: one tile mma_sync op -> one mma.sync.aligned.m16n8k16.row.col per warp
// (f32 accumulate, f16 or bf16 inputs), and one tile wgmma op -> one
// wgmma.mma_async m64nNk16 (f16/bf16) or m64nNk32 (e4m3/e5m2) per warpgroup, N = 8W
// with W = c's values per thread / 4, both emitted as inline PTX in the LLVM IR.
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

// wgmma: the op passed tile::validate (a (2E)/(4E), b (E*W)/(2E*W), c (E*W) f32, E =
// 4 * threads, W in [1, 32]). Requires num_warps % 4 == 0 and 256*W*num_warps bytes
// of slots <= 48 KiB (else a Status naming the op). Each thread holds its warp's
// mma.sync-layout A fragment (A comes from registers) and W B fragments (value
// 4j + r / 8j + r: value r of column tile j); every warp writes them into its own
// 256*W-byte shared-memory slot in the K-major, unswizzled core-matrix layout (8 rows
// of 16 bytes per core matrix; the two core matrices along K 128 bytes apart, the
// next 8 columns 256 bytes on), and the warpgroup's wgmma m64n(8W) reads the slot of
// its first warp through a matrix descriptor (leading byte offset 128, stride byte
// offset 256). All wgmma ops of a kernel with one slot size share one array. Around
// the instruction: fence.proxy.async + bar.sync before (the slot is complete and
// visible to the async proxy), wgmma.fence / commit_group / wait_group 0, and
// bar.sync after (no warp rewrites a slot another warpgroup member may still read).
// The op therefore must be reached by every thread of the block (uniform control
// flow), as GemmProgram's loops are. The accumulators are the instruction's 4W d
// registers (the m64nN D layout: value 4j + r is row g + 8(r/2) + 16(warp%4),
// column 8j + 2t + r%2; scale-d = 1): c in, the product added in the wgmma's model,
// d out.
absl::StatusOr<Lowered> lower_wgmma(LoweringContext& ctx, const tile::Op& op, int op_number);

}  // namespace fixbits::codegen
