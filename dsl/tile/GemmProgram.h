// GemmProgram: dsl::gemm(desc, config) — the tile programs of one GemmDesc.
//
// Contract: every output element (m, n) is computed by exactly the accumulation
// tree GemmDesc.h defines (leaf instruction and order, k_cuts, split-K partial and
// merge roundings, epilogue), so the bits equal dsl::reference::gemm for every
// valid GemmConfig: the knobs only decide how many rows a thread holds, how many
// columns a block unrolls and how many warps a block has. One thread owns an output
// element from its first product to its store (no cross-thread reassociation),
// except in family gemv, where the descriptor's lanes are real lanes of one warp
// and lane_fold runs as xor exchanges (shfl.sync.bfly) in the descriptor's order
// (a lane count that is no power of two is padded to the next one with -0.0 slots,
// which reproduces the skipped rounds of absent partners exactly).
//
// Programs and kernel parameters (operands are addressed by element strides, so
// one program serves row- and column-major A and B):
//   main (kPlain, kChainedChunks, kGemv):
//     a: ptr<a_dtype>, b: ptr<b_dtype>, out: ptr<out_dtype>, c: ptr<out_dtype>,
//     bias: ptr<f32>, m: i32, n: i32, k: i32, a_sm: i64, a_sk: i64, b_sk: i64,
//     b_sn: i64, alpha: f32, beta: f32
//       a[m,k] = a[m*a_sm + k*a_sk], b[k,n] = b[k*b_sk + n*b_sn], out/c are m x n
//       row-major, bias has n f32 values; c/alpha/beta are read only when
//       desc.alpha_beta, bias only when desc.bias (pass any valid pointer otherwise).
//   main (kSplitK): a, b, ws: ptr<partial_dtype>, m, n, k, a_sm, a_sk, b_sk, b_sn
//       part p (grid z) computes k range [p*span0, min((p+1)*span0, K)) with the
//       inner levels and writes ws[(p*M + m)*N + n] rounded to partial_dtype.
//   merge (kSplitK): ws: ptr<partial_dtype>, out, c, bias, m: i32, n: i32,
//       parts: i32, alpha: f32, beta: f32 — r = +0.0, r = M(r + ws_p) in part
//       order (M = round to merge_dtype), then the epilogue.
// Launch: see gemm_launch_shape(); block = 32 * config.warps threads.
// Supported so far: scalar instructions (scalar_fma, scalar_mul_add) with a, b in
// f16/bf16/f32; mma_sync m16n8k16 with f16/bf16 inputs; wgmma m64nNk16 (f16 x f16,
// bf16 x bf16) and m64nNk32 (e4m3/e5m2 x e4m3/e5m2), N = 8*warp_n_tiles, A from
// registers and B through shared memory (256*warp_n_tiles bytes per warp, at most
// 48 KiB per block), which needs warps % 4 == 0 (use_fast_accum and k_loop_step as
// GemmDesc.h says; on the matrix paths each warp owns warp_m_tiles x warp_n_tiles
// output tiles of 16x8, so BLOCK_M = 16*warp_m_tiles*warps and BLOCK_N =
// 8*warp_n_tiles there, rows_per_thread and block_n are unused); out,
// partial and merge in f16/bf16/f32; cuts folded by chain at any level, by
// tree_up / tree_down at inner levels of at most 64 parts (ceil(enclosing span /
// span)). mma_sync with fp8 (its hardware does not follow the measured model),
// outermost tree folds and fp8 outputs return Unimplemented naming the field.
// Example:
//   auto p = dsl::gemm(desc, {.warps = 4, .rows_per_thread = 1, .block_n = 4});
//   // matrix paths, 2 x 4 tiles of 16x8 per warp (wgmma: two m64n32 per k-group):
//   auto q = dsl::gemm(desc, {.warps = 4, .warp_m_tiles = 2, .warp_n_tiles = 4});
//   // p->main is the kernel; p->merge is set for family split_k.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "dsl/GemmDesc.h"
#include "dsl/tile/Program.h"

namespace fixbits::dsl {

// Speed knobs; none of them moves a bit.
struct GemmConfig {
  int warps = 4;            // threads per block = 32 * warps; a power of two in [1, 32]
  int rows_per_thread = 1;  // a power of two in [1, 16]; BLOCK_M = 32*warps*rows_per_thread
  int block_n = 4;          // output columns per block (BLOCK_N), in [1, 32]
  // Matrix paths only (mma_sync, wgmma; the scalar paths ignore them): register
  // blocking. Each warp computes warp_m_tiles x warp_n_tiles output tiles of 16 x 8,
  // reusing each A fragment across warp_n_tiles instructions and each B fragment
  // across warp_m_tiles; BLOCK_M = 16 * warp_m_tiles * warps, BLOCK_N = 8 * warp_n_tiles.
  // Each in [1, 8] and [1, 16], product at most 32 (4 f32 accumulators per tile).
  int warp_m_tiles = 1;
  int warp_n_tiles = 1;
};

// Checks the knobs; the message names the bad field and its value.
absl::Status validate(const GemmConfig& c);
// Rows of outputs one block computes (families other than gemv, scalar paths).
int64_t block_m(const GemmConfig& c);
// The matrix paths' block tile: 16 * warp_m_tiles * warps rows, 8 * warp_n_tiles columns.
int64_t mma_block_m(const GemmConfig& c);
int64_t mma_block_n(const GemmConfig& c);
// Family gemv: the block's tile of max(BLOCK_M, S*warps) elements, S =
// lane_slots(lanes), holds gemv_outputs_per_block(d, c) output columns of one row, S
// elements each (consecutive elements, so a lane group never spans two warps; the
// S - lanes slots past the lanes are absent lanes holding -0.0). Any legal config
// holds any lane count in [1, 64].
int64_t gemv_outputs_per_block(const GemmDesc& d, const GemmConfig& c);

struct GemmPrograms {
  tile::Program main;                  // the products (kSplitK: the partials)
  std::optional<tile::Program> merge;  // kSplitK only: the merge and the epilogue
};

absl::StatusOr<GemmPrograms> gemm(const GemmDesc& desc, const GemmConfig& config = {});

// Grids of one problem. A grid with a zero extent means "do not launch".
struct GemmLaunchShape {
  std::array<int64_t, 3> main_grid{0, 0, 0};
  std::array<int64_t, 3> merge_grid{0, 0, 0};  // kSplitK only
  int64_t parts = 0;             // kSplitK: cut_parts(k_cuts[0], K)
  int64_t workspace_elems = 0;   // kSplitK: parts * M * N partials
};
absl::StatusOr<GemmLaunchShape> gemm_launch_shape(const GemmDesc& desc, const GemmConfig& config,
                                                  int64_t m, int64_t n, int64_t k);

}  // namespace fixbits::dsl
