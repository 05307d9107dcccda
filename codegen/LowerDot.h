// LowerDot: one tile dot op -> LLVM IR. d = dot(a, b, acc), a (M,K), b (K,N) of one
// float type, acc and d (M,N) f32, computed as Program.h's kDot defines it:
//   d[i][j] = fma(a[i][K-1], b[K-1][j], ... fma(a[i][0], b[0][j], acc[i][j]) ...)
// a sequential chain over k = 0..K-1 of single-rounding f32 fmas (llvm.fma.f32 ->
// fma.rn.f32 / v_fma_f32), inputs widened exactly to f32 first.
//
// Steps: stage_operands (every thread writes its registers of a and b, widened to
// f32, to shared memory at their padded row-major index; one barrier) ->
// fma_chains (each thread, for every register of d's blocked layout, reads row i
// of a and column j of b and runs the chain from its acc register in k order;
// fully unrolled for K <= kDotUnrollK, else one loop carrying every chain).
//
// Assumes: the op passed tile::validate; a, b and acc are lowered in the blocked
// layouts of their shapes; the op is reached by every thread of the block (it
// contains a barrier), as every op of a tile program is. Guarantees: each output
// is exactly that chain, whatever M, N, K, the warps or the target; the result is
// in the blocked layout of (M,N). Shared memory: two alternating f32 arrays of
// a's and b's padded elements (LowerReduce's alternating_buffers), one barrier per
// execution. Refuses, with a Status naming the dot and the shapes, a dot whose
// staging would take the kernel's shared memory past kDotSmemBytes.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "codegen/Lowering.h"

namespace fixbits::codegen {

// Chains up to this K are unrolled; longer ones run as an LLVM loop over k.
inline constexpr int64_t kDotUnrollK = 64;
// Static shared memory a kernel may reach with a dot's staging (all its arrays).
inline constexpr int64_t kDotSmemBytes = 48 * 1024;

absl::StatusOr<Lowered> lower_dot(LoweringContext& ctx, const tile::Op& op, int op_number);

}  // namespace fixbits::codegen
