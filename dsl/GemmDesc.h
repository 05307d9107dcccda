// GemmDesc: the written-down reduction tree of one GEMM output element.
//
// Invariant: two equal GemmDescs owe each other the same output bits for the same
// inputs, on any GPU and under any speed knob (BLOCK_M/N/K, stages, warps, grid).
// It holds every field that decides the bits (reference §3.2.2) and no speed knob.
//
// Semantics (the CPU reference in dsl/reference implements exactly this). For one
// output element (m, n) with products p_k = a[m,k] * b[k,n], k in [0, K):
//
//  leaf(range [k0,k1)) — the innermost accumulation, from acc = +0.0 (the seed; see
//   neg_zero_seed for the one family that may start from -0.0):
//   * instruction kScalarFma:    acc = fma(a_k, b_k, acc) for k in order.
//   * instruction kScalarMulAdd: acc = acc + round(a_k * b_k) for k in order.
//   * instruction kMmaSync/kWgmma: the range is cut into mainloop turns of
//     k_loop_step.step elements; the one short turn (if (k1-k0) % step != 0) runs
//     first or last per k_loop_step.short_turn. A turn is cut into groups of
//     instruction_k from its start (the last group zero-padded). One group is one
//     matrix instruction evaluated by the MmaModel: mma(c, a[0..ik), b[0..ik)).
//       use_fast_accum = true:  acc = mma(acc, group) for every group (one
//                               rounding per instruction);
//       use_fast_accum = false: per turn, t = mma-chain over the turn's groups
//                               starting from +0.0, then acc = acc (+)f32 t.
//   * family kGemv: the range is dealt to `lanes` lanes in tiles of lane_tile
//     elements: kContiguous gives lane l the l-th of `lanes` equal runs of whole
//     tiles (ceil), kStrided gives tile t to lane t % lanes. Each lane folds its
//     elements in index order with its instruction (kScalarFma or kScalarMulAdd);
//     then for each offset d of lane_fold in order, every lane l sets
//     v[l] = v[l] (+)f32 v[l ^ d]; the result is v[0]. `lanes` need not be a power
//     of two (cuBLAS's gemvNSP deals K to 20, 24 or 26 lanes): lane_fold then holds
//     every power of two below lane_slots(lanes), and a partner l ^ d >= lanes is
//     absent, so lane l keeps its value in that round.
//     An empty lane_fold (lanes > 1) chains the lanes in index order instead:
//     result = ((v[0] (+) v[1]) (+) v[2]) ... (+) v[lanes-1] (cuBLAS's gemv2T, id 13
//     custom 11: 16 lanes, the tree fixbits-cublas-probe --tree recorded in session 11).
//     Turns (use_fast_accum = false, k_loop_step.step = S > 0; fast accumulation
//     takes step 0): the range is cut into turns of S elements, the one short turn
//     first or last per short_turn; each turn is dealt to the lanes as a range of its
//     own (tiles from the turn's start), each lane folds its elements of the turn from
//     +0.0 into t[l], and acc[l] = acc[l] (+)f32 t[l] from acc[l] = +0.0; then the
//     lanes fold (or chain) as above. gemv2T takes turns of 512.
//
//     With one cut (k_cuts = [span:chain], cuBLAS's split gemv: the gemv kernel on
//     gridDim.z parts, then splitKreduce), the cut is a split as family kSplitK's:
//     each part of `span` elements is dealt to the lanes as a range of its own (tiles
//     from the part's start), folded as above, written at partial_dtype, and the
//     parts are merged in part order at merge_dtype from +0.0 (see cuts below).
//
//   * family kDot (cuBLAS's dot_kernel + reduce_1Block_kernel pair, whose trees
//     fixbits-cublas-probe --tree recorded on the H200 in session 10): `blocks` blocks
//     of `lanes` threads, G = blocks * lanes; thread g takes the tiles g, g + G,
//     g + 2G, ... of lane_tile elements (tile t = [t*lane_tile, (t+1)*lane_tile)). It
//     holds lane_tile accumulators from +0.0; accumulator c folds element c of each of
//     its tiles in order with the instruction, and the thread's value is the chain
//     acc_0 (+) acc_1 (+) ... . Each block folds its threads' values with lane_fold
//     (v[l] = v[l] (+)f32 v[l ^ d] inside the block); its thread 0 holds the block's
//     partial p_b (f32). The merge kernel: 128 lanes, lane r from +0.0 adds p_r,
//     p_{r+128}, ... in order; rounds 64 and 32 (w[r] = w[r] (+) w[r + d], r < d); four
//     chains c_q = w[q] (+) w[q+4] (+) ... (+) w[q+28], q = 0..3; acc = ((c_0 (+) c_1)
//     (+) c_2) (+) c_3. (No k_cuts; the table sets `blocks` to cuBLASLt's split count.)
//
//  cuts — k_cuts, outermost first. Level i cuts its range into parts of span_i
//   (the last part short); each part is computed from +0.0 by the next level (or
//   the leaf) and the part results are combined by the level's fold:
//     kChain: r = p_0; r = r (+) p_j in part order;
//     kTreeUp / kTreeDown: a butterfly over the part index padded with -0.0 to a
//     power of two, offsets counting up from 1 / down from half.
//   Segments (KCut.segments = P > 0; text "<span>/seg<P>"; family kSplitK's split
//   only, with no inner level): the level cuts its range instead into P segments of
//   whole tiles of span elements: the range's T = ceil(len / span) tiles (the last
//   may be short) are dealt floor(T / P) to each segment in order, and the T % P left
//   over one more to each of the last T % P segments (a segment of no tile is an
//   empty part, +0.0). cuBLAS's segment-K kernel (docs/cublas.md, session 35): at
//   K = 19982, tiles of 64, P = 2: 313 tiles, segments of 156 and 157 tiles,
//   [0, 9984) and [9984, 19982).
//   For family kSplitK, and kGemv with its one cut, the outermost level is the split: its parts are written at
//   partial_dtype and merged by a second kernel in part order with the running sum
//   held at merge_dtype and seeded with +0.0: r = +0.0; r = r (+) p_j for every j
//   (so a merge whose every part is -0.0 gives +0.0, as cuBLAS's splitKreduce does;
//   docs/cublas.md). Inner levels combine at f32.
//
//  seed — neg_zero_seed (text "seed=-0", printed only when set; family plain with a
//   scalar instruction and no cuts only): the leaf starts from -0.0 instead of +0.0.
//   -0.0 is the identity of (+)f32 and of fma's addend, so the first product enters
//   unchanged, its sign of zero included: a K = 1 output whose product is -0.0 stays
//   -0.0, where +0.0 + -0.0 gives +0.0. cuBLAS's K = 1 kernel (id 12 custom 1 on the
//   H200, docs/cublas.md session 14-15) keeps a lone -0.0 product so. The two seeds
//   differ only where every product folded so far is -0.0.
//
//  epilogue — out = round(out_dtype, e) where e = acc when alpha == 1, beta == 0
//   (kNone); kAlphaBeta: e = fma(beta, c, alpha (x)f32 acc); then + bias[n] (f32)
//   when bias; then activation (kRelu: max(e, +0)).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dsl/FloatFormat.h"

namespace fixbits::dsl {

enum class GemmFamily : uint8_t { kPlain, kSplitK, kChainedChunks, kGemv, kDot };
enum class Instruction : uint8_t { kScalarFma, kScalarMulAdd, kMmaSync, kWgmma };
enum class ShortTurn : uint8_t { kLast, kFirst };
enum class Fold : uint8_t { kChain, kTreeUp, kTreeDown };
enum class LaneLayout : uint8_t { kContiguous, kStrided };
enum class Activation : uint8_t { kNone, kRelu };

struct KLoopStep {
  int64_t step = 0;  // elements of K per mainloop turn; 0 = instruction_k
  ShortTurn short_turn = ShortTurn::kLast;
  bool operator==(const KLoopStep&) const = default;
};

struct KCut {
  int64_t span = 0;  // elements of K per part at this level (> 0); with segments, per tile
  Fold fold = Fold::kChain;
  int64_t segments = 0;  // 0: parts of span, the last short; P > 0: P segments of tiles
  bool operator==(const KCut&) const = default;
};

// The parts cut `c` makes of a range of `len` elements: ceil(len / span), or
// `segments` when set (0 parts when len is 0, either way); and part j's elements [e0, e1) of [k0, k1) (len = k1 - k0),
// by the rules above (empty, e0 == e1, for a segment of no tile). The one definition
// the references, the probe and codegen's part index follow.
// Example: {span 64, segments 2} over [0, 19982): parts 2, part 0 = [0, 9984), part 1 =
// [9984, 19982); {span 64} over [0, 200): parts 4, part 3 = [192, 200).
int64_t cut_parts(const KCut& c, int64_t len);
std::pair<int64_t, int64_t> cut_part(const KCut& c, int64_t j, int64_t k0, int64_t k1);

struct GemmDesc {
  GemmFamily family = GemmFamily::kPlain;
  DType a_dtype = DType::kF16;
  DType b_dtype = DType::kF16;
  DType acc_dtype = DType::kF32;
  DType out_dtype = DType::kF16;

  Instruction instruction = Instruction::kMmaSync;
  int instruction_k = 16;  // products folded into one rounding
  bool use_fast_accum = true;
  KLoopStep k_loop_step;

  std::vector<KCut> k_cuts;  // outermost first; empty for kPlain
  DType partial_dtype = DType::kF32;  // kSplitK: how a finished part is written
  DType merge_dtype = DType::kF32;    // kSplitK: the merge's running sum

  // kGemv (lanes of one warp) and kDot (threads of one block; layout strided).
  LaneLayout lane_layout = LaneLayout::kContiguous;
  int lanes = 32;               // kGemv: any count in [1, 64]; kDot: a power of two
  int lane_tile = 8;
  std::vector<int> lane_fold;  // xor offsets, one per round, in round order
  int64_t blocks = 0;          // kDot only: the blocks of the first kernel (> 0)
  bool neg_zero_seed = false;  // the leaf starts from -0.0 (plain, scalar, no cuts)

  // Epilogue (decides bits, so it is part of the descriptor).
  bool alpha_beta = false;
  bool bias = false;
  Activation activation = Activation::kNone;

  bool operator==(const GemmDesc&) const = default;
};

// Whether the outermost cut is a split, written at partial_dtype and merged by a
// second kernel: family kSplitK, and kGemv with a cut.
bool has_split(const GemmDesc& d);

// The width of a lane fold over `lanes` lanes: the smallest power of two >= lanes
// (lane_slots(20) = 32, lane_slots(32) = 32, lane_slots(1) = 1; at most 2^30).
int lane_slots(int lanes);

// Gemv lane dealing (family kGemv, see above): a range of `len` elements is cut into
// gemv_tiles(d, len) = ceil(len / lane_tile) tiles from its start (the last may be
// short). kContiguous: lane l takes the run of ceil(tiles / lanes) whole tiles from
// tile l * run, i.e. the elements gemv_contiguous_span(d, l, k0, k1) = [e0, e1) of
// [k0, k1) (empty, e0 == e1, for a lane past the last tile). kStrided: lane l takes
// tiles l, l + lanes, l + 2 * lanes, ... The one definition the references and the
// profile's canonical grouping deal by.
// Example: lanes 4, lane_tile 2, [0, 13): 7 tiles, runs of 2: lane 1 -> [4, 8),
// lane 3 -> [12, 13).
int64_t gemv_tiles(const GemmDesc& d, int64_t len);
std::pair<int64_t, int64_t> gemv_contiguous_span(const GemmDesc& d, int64_t l, int64_t k0, int64_t k1);

// Products one sm_90 matrix instruction folds for inputs of `t` (mma.sync and
// wgmma alike): 16 for f16/bf16, 32 for fp8, 8 for tf32, 0 for f32 (none).
// mma_sync with f16/bf16 inputs may also fold 8 (m16n8k8, instruction_k = 8).
int matrix_instruction_k(DType t);

// OK, or InvalidArgument naming the first bad field ("GemmDesc.instruction_k: ...").
absl::Status validate(const GemmDesc& d);
// Canonical one-line text form, e.g.
//   gemm{family=plain a=f16 b=f16 acc=f32 out=f16 instr=mma_sync ik=16 fast_accum=1
//        k_loop=16/last cuts=[] partial=f32 merge=f32 ... }
// print -> parse gives an equal descriptor; every field is always printed, except
// `blocks`, printed for family dot only, and `seed=-0`, printed (last) only when
// neg_zero_seed is set, so the text and hash of every other descriptor are what they
// were before those fields existed.
std::string to_string(const GemmDesc& d);
absl::StatusOr<GemmDesc> parse_gemm_desc(std::string_view text);
// The family's name in the text form ("plain", "split_k", "chained_chunks", "gemv";
// "?<n>" for a value outside the enum), and the family a name denotes
// (InvalidArgument listing the names otherwise).
std::string family_name(GemmFamily f);
absl::StatusOr<GemmFamily> parse_family(std::string_view name);
// Stable 64-bit hash: FNV-1a over to_string(d). Documented, so it never changes
// between builds or machines.
uint64_t hash(const GemmDesc& d);
// Writes to_string(d) (so gtest prints descriptors readably).
std::ostream& operator<<(std::ostream& os, const GemmDesc& d);

}  // namespace fixbits::dsl
