// ReduceProgram: dsl::reduce(desc, config) — the tile program of a row reduction
// (sum, max, min) or of a fused RMSNorm / softmax, for one ReduceDesc.
//
// Contract: the program computes exactly ReduceDesc's tree (pinned order) for
// every valid ReduceConfig; the config's knobs only pick the tile extent, the warp
// count, the split, which block takes which row and how many passes stay in
// registers. For kFree the bits follow FreeLayout{elems_per_thread, 32, warps}
// (free_layout(config)), as the CPU reference defines them. Compile for a target
// whose warp width equals config.lanes (pinned bits do not depend on it).
// x is rows x cols row-major. axis=row: one block per row (grid = "rows");
// axis=column, pinned kSum/kMax/kMin: grid = "cols/C", block p owns columns
// [p*C, p*C + C), C = lanes*warps (columns past the last one are masked off); each
// pass loads Rq = min(strip, elems_per_thread, 4096/C) whole row segments coalesced
// and reduces them along axis 0 (codegen/SelectLayout.h converts the tile so a
// thread holds one column); chunk trees of a strip merge as a binary counter, so
// the tree is the strip's balanced tree. Other column reductions (free order,
// kRmsNorm, kSoftmax): one block per column (grid = "cols"), stride cols, uncoalesced.
// Kernel parameters, in order, where LINE = `cols: i32` for rows and
// `rows: i32, cols: i32` for columns:
//   kSum/kMax/kMin: x: ptr<in>, y: ptr<out>, LINE        (y: one value per line)
//   kRmsNorm:       x: ptr<in>, w: ptr<in>, y: ptr<out>, LINE, eps: f32
//                   (w: one value per element of a line)
//   kSoftmax:       x: ptr<in>, y: ptr<out>, LINE         (y shaped like x)
// The elementwise second pass of kRmsNorm / kSoftmax walks the line in chunks of
// elems_per_thread*lanes*warps elements (no tree there, so any extent is exact).
//
// Split rows (ReduceConfig.blocks_per_row = P > 1; kRow and kPinned only): a row
// is shared by P blocks and the reduction becomes a few kernels (reduce_phases),
// launched in order on one stream. A "partials" kernel runs on grid "row_blocks"
// (rows * P blocks; block b works on row b / P) and computes whole strips: block
// part = b % P takes strips part, part + P, part + 2P, ... and stores each strip's
// tree result (f32) to ws[row * n + strip], n = strip_count(desc, cols). The chain
// r = identity (+) s_0 (+) s_1 (+) ... (+) s_{n-1} is then folded in index order by
// every thread of a block of the next kernel (each computes the same uniform value
// from the same loads; thread 0 stores it), so the bits are the unsplit kernel's.
// Phases and their parameters (ws*: ptr<f32>, rows * n floats each):
//   kSum/kMax/kMin: partials (x, ws, cols) on row_blocks; fold (ws, y, cols) on rows
//   kRmsNorm:       partials of x_i*x_i (x, ws, cols); normalize (x, w, ws, y, cols,
//                   eps) on row_blocks (each block folds ss, then writes its chunks)
//   kSoftmax:       max partials (x, wsm, cols); exp partials (x, wsm, wss, cols),
//                   folding m first; normalize (x, wsm, wss, y, cols) on row_blocks
// alternate_row_order (kRmsNorm / kSoftmax): phases 1, 3, ... walk the rows backward:
// block b works on row rows-1 - b/P, part b % P, with rows: i32 appended to the
// parameters above (RMSNorm's normalize (x, w, ws, y, cols, eps, rows); softmax's exp
// partials (x, wsm, wss, cols, rows)), and the name ends in _<phase>_rev.
// Cluster rows (ReduceConfig.cluster_rows, kRmsNorm / kSoftmax, P in [2, 8]): one
// kernel "cluster" on grid "row_blocks" whose P blocks of a row form one thread-block
// cluster (Program.cluster = P: cluster dims (P, 1, 1), so a plain launch of rows * P
// blocks puts each row's blocks in one cluster). Block part = b % P loads its first K =
// keep_passes strips (part + iP, i < K) into registers, reduces each with the partials
// kernel's tree and stores it to ws[row * n + strip] exactly as the partials kernel
// does (a kept strip at or past n is neither stored nor written), then its other
// strips (part + KP, part + (K+1)P, ...) as the partials loop does; cluster barrier
// (arrive.release / wait.acquire: every block sees the row's n results); every block
// folds the chain from ws in index order as the normalize kernel does and writes its
// own strips' outputs, the kept ones from registers, the others read again. Softmax:
// max partials -> barrier -> fold m -> exp partials (kept: from registers) -> barrier
// -> fold s -> outputs. The same combines in the same order as the split phases: the
// same bits for every P and K.
// whole_strips (rows whose length is a multiple of S): the same kernel with a kept
// strip's per-element masks replaced by its flag j < n and the other strips unmasked;
// the one-block kernels likewise for rows of whole passes (ReduceConfig.whole_strips).
//   kRmsNorm: cluster (x, w, ws, y, cols, eps)    kSoftmax: cluster (x, wsm, wss, y, cols)
// Split columns (pinned kSum/kMax/kMin, axis=column, blocks_per_row = P > 1, a power
// of two at most S/Rq): P blocks share each column group of C columns and the
// reduction becomes two kernels. Part p of strip j is the aligned subtree over rows
// [j*S + p*S/P, j*S + (p+1)*S/P) -- a node of the strip's balanced tree -- built by
// the chunk/binary-counter scheme above with log2(S/(P*Rq)) levels. A "partials"
// kernel on grid "col_blocks/C" (ceil(cols/C) * P blocks; block b: group b / P,
// part b % P) stores each (strip j, part p) result of its C columns to
// ws[(j*P + p)*cols + c] (coalesced; a part of the last strip that starts at or past
// `rows` holds only padding and is neither computed nor stored). A "fold" kernel on
// grid "cols/C" (one thread per column) combines, per strip, its P part results with
// the top log2(P) levels of the balanced tree (pairs (0,1), (2,3), ... counting up;
// a padding-only part reads as the identity), chains the strip results in strip
// order into an accumulator seeded with the identity and stores y: the unsplit
// kernel's combines on the same values, so the same bits for every P.
//   kSum/kMax/kMin columns: partials (x, ws, rows, cols) on col_blocks/C;
//                           fold (ws, y, rows, cols) on cols/C;
//                           ws: strip_count(desc, rows) * P * cols floats.
// keep_passes = N > 0 (kRmsNorm / kSoftmax rows): the passes at k = 0, Q, ..., (N-1)*Q
// are loaded before the loops, reduced first in that order (the chain's first N
// links), and their registers feed the elementwise pass for [0, N*Q); every loop over
// x then starts at k = N*Q. A kept pass wholly past the row's end holds only the
// identity: its strip trees are the identity and acc (+) identity is acc bit for bit
// (x + -0.0 = x, max(x, -inf) = x, a NaN stays a NaN and is written canonical), so
// the bits are the unkept chain's for every row length. Kept in registers, N >= 2
// passes' trees are one chained tile reduce_group (one barrier for the N; the same
// combines as N reduces). keep_in_shared: each kept
// pass is a staged load of x (tile::OpKind::kLoad, staged) and every use widens it
// again (RMSNorm: the square for the tree, then the output; softmax: the max tree,
// the exp for the sum tree, the exp again for the output), so the same values meet
// the same combines.
// Example: dsl::reduce({.op = ReduceOp::kSum, .strip = 1024}, {.warps = 8})
//          -> program whose loop walks a row 1024 elements at a time.
#pragma once

#include "absl/status/statusor.h"
#include "dsl/ReduceDesc.h"
#include "dsl/tile/Program.h"

namespace fixbits::dsl {

// Speed knobs; none of them moves the bits of a pinned reduction.
struct ReduceConfig {
  int warps = 4;             // threads per block = 32 * warps; a power of two in [1, 32]
  int elems_per_thread = 4;  // elements one thread holds per pass; a power of two in [1, 64]
  int lanes = 32;            // the target's warp width: 32 (NVIDIA) or 64 (AMD wave64)
  // Blocks sharing one row, in [1, 1024]; > 1 builds the split kernels of
  // reduce_phases (needs order=pinned; axis=row: elems_per_thread*lanes*warps <= strip;
  // axis=column, sum/max/min only: it is the blocks per column group (C columns), a
  // power of two at most strip / column_pass_rows, each block one aligned part of
  // every strip).
  int blocks_per_row = 1;
  // kRmsNorm / kSoftmax, axis=row, blocks_per_row 1 (or cluster_rows: the block's
  // first N strips, see below): load the row's first N passes
  // (elements [0, N*Q), Q = pass_extent) once and keep them in registers for the later
  // passes, so a row of at most N*Q elements is read from memory once instead of twice
  // (three times for softmax). 0: off; 1: the first pass only. The same combines in
  // the same order: the same bits (tests/codegen/reduce_resident_test). Bound: the
  // kept values, N * Q / (lanes*warps) per thread, at most kMaxKeptPerThread (64 f32
  // registers; max_keep_passes). Off by default: the static checker (verify/) does
  // not yet collapse passes peeled out of the pass loop, so these kernels sign as a
  // class of their own rather than the descriptor's one pinned class.
  int keep_passes = 0;
  // kRmsNorm / kSoftmax, axis=row, order=pinned, blocks_per_row P in [2, 8], lanes 32
  // (NVIDIA sm_90 thread-block clusters; gfx942 has none): the split row as one kernel
  // (reduce_phases returns one program, "cluster" below) instead of the split phases.
  // keep_passes = K then counts the block's own strips kept in registers (strips part,
  // part + P, ..., part + (K-1)P; a split pass is one strip), with the same bound
  // K * strip / (lanes*warps) <= kMaxKeptPerThread; a row of at most K*P strips is read
  // from memory once (0: every strip is read again after the barrier).
  bool cluster_rows = false;
  // With keep_passes > 0: hold the kept passes (with cluster_rows, the kept strips) in
  // shared memory instead of registers (tile::Builder::load_staged: cp.async on NVIDIA),
  // read back at each use, so the values take no register across the reduction and
  // the cluster barrier and more blocks fit an SM. The bound is then the shared bytes:
  // keep_passes * Q * sizeof(in) <= max_staged_bytes(config) (dynamic shared memory,
  // which the launch passes: 200 KiB on NVIDIA, 40 KiB on gfx942). The same values in the same
  // combines: the same bits.
  bool keep_in_shared = false;
  // Every kernel asks the compiler to fit this many blocks on one SM (NVIDIA
  // .minnctapersm, gfx942 waves per EU): registers are capped to fit, spilling if need
  // be. 0: no request; at most 32. A speed knob only: the same ops, the same bits.
  int min_blocks_per_sm = 0;
  // Split rows (blocks_per_row > 1, axis=row, not cluster_rows): launch the phases for
  // groups of this many rows at a time (every phase of one group, then the next group),
  // so a group's x, read by its first phase, is still in L2 when a later phase reads it
  // again (256 x 131072 bf16 is 64 MiB of x, more than the H200's 50 MB L2).
  // Launch-only: the kernels, and so the bits, are the same for every value (each row's
  // combines are its own). 0: every row in one launch per phase.
  int64_t rows_per_launch = 0;
  // Split RMSNorm / softmax rows run as separate kernels (blocks_per_row > 1, axis=row,
  // not cluster_rows): each phase after the first walks the rows in the direction
  // opposite to the phase before it -- RMSNorm's normalize and softmax's exppart last
  // row to first, softmax's normalize first to last again -- so a phase starts on the
  // rows whose x the phase before it read last, the ones still in L2 when x is larger
  // than L2 (phase_walks_rows_backward). Which block does which row only: every row's
  // combines are its own, so the bits are the same either way.
  bool alternate_row_order = false;
  // Pinned rows in one block (blocks_per_row 1) or one cluster (cluster_rows): the kernel
  // is for rows whose length is a multiple of the pass extent Q = pass_extent(desc,
  // config) (the strip for a cluster kernel; LLM hidden sizes), so every pass of a row is
  // whole: a kept pass (or kept strip) is either wholly in the row (k < cols; strip
  // index j < n) or wholly past it, and the passes of the loops are all in it. Its
  // loads, stores and leaves then carry no per-element mask or pad select: a kept pass is
  // guarded by its one flag, the loops' passes by nothing. A kept pass past the row
  // feeds its chain leaves of the loaded pad (0.0 squared is +0.0, not -0.0; softmax's
  // exp of -inf is +0.0) where the masked kernel selects the identity; the link is the
  // same value, as the running value is then +0.0 or more (a sum of squares or of
  // exps, the row's first pass being in it) or a NaN, and (+0.0 or more) + (+0.0)
  // changes nothing. So the same bits for such rows (tests/codegen/
  // reduce_whole_strips_test). A runner refuses a problem whose line length is not a
  // multiple of Q (jit::ReduceRunner::upload); the name ends in _ws.
  bool whole_strips = false;
  // Softmax, lanes 32 (NVIDIA sm_90a): y_i = e_i / s as r = RN(1/s) once and two fmas
  // each, instead of an IEEE division each (tile::Program::divide_by_reciprocal,
  // codegen/LowerDivide.h): every quotient has the division's bits (the correction step
  // is exact where it runs; a NaN, infinite, negative, -0 or tiny e_i, or s outside
  // [1, 2^24], takes the division in a branch). A speed knob: the same bits. Its kernels
  // sign as a class of their own (each output's tree carries that branch): one class over
  // warps and elements a thread with whole_strips, and from 2 elements a thread when
  // masked (1 element signs apart; tests/jit/reduce_divide_by_reciprocal_signature_test);
  // the name ends in _rd.
  bool divide_by_reciprocal = false;
  // Softmax with keep_in_shared: the kept passes' (strips') e_i = exp(x_i - m) are held in
  // shared memory too (f32, tile::Builder::stage), stored once where the sum makes them
  // and read back by the outputs, which otherwise compute each exp again from the kept x:
  // one exp an element instead of two, for 4 more shared bytes an element (the bound is
  // keep_passes * Q * (sizeof(in) + 4) <= max_staged_bytes(config)). The same e_i in the
  // same ops: the same bits. The name ends in _se. One block a row, the kernel signs as
  // without the knob; with cluster_rows the static checker does not yet see that (it
  // names a fold loop's holes apart), though the bits are the same
  // (tests/jit/reduce_stage_exp_test).
  bool stage_exp = false;
  // RMSNorm / softmax rows in one block (axis=row, blocks_per_row 1) with kept passes
  // (keep_passes > 0, not stage_exp): each block takes R consecutive rows,
  // block b rows bR, ..., min(bR + R, rows) - 1 in that order (grid "rows/R": ceil(rows /
  // R) blocks), and issues the loads of row i + 1's kept passes before it reduces row i,
  // so they are in flight through row i's reductions, exps and stores (one-block rows
  // otherwise load only at a block's start). The next row's kept values are the row
  // loop's carried registers (a load past the block's last row is masked off: it reads
  // nothing). Which block does which row, and when, only: every row's combines are its
  // own, so the same bits for every R. The kernel takes rows: i32 (the rows of its
  // launch) after its other parameters; the name ends in _rb<R>. 1: off; at most 64.
  // Kept in registers, that speed knob did not pay on the H100 (session 40): the carried
  // registers cost 16 x 4 softmax half its blocks an SM (docs/performance.md). With
  // keep_in_shared the next row's kept x is in flight in shared memory instead (cp.async
  // into a double buffer: two slot sets of keep_passes * Q * sizeof(in) bytes, the
  // limit max_staged_bytes), carrying no register, and each row's is read into registers
  // once at its iteration's start (so keep_passes * Q / (lanes*warps) <= kMaxKeptPerThread
  // too); the body is then the register-kept kernel's.
  int rows_per_block = 1;
};

// Checks the knobs; the message names the bad field and its value. (keep_passes'
// register bound and the ops it applies to depend on the descriptor: dsl::reduce
// checks them.)
absl::Status validate(const ReduceConfig& c);
// Kept x values one thread may hold with keep_passes: keep_passes * Q / (lanes*warps)
// <= 64, so a kept row stays in registers (a thread's pass is at most 64 values too).
inline constexpr int64_t kMaxKeptPerThread = 64;
// Shared bytes the kept passes of keep_in_shared may take in one block, as dynamic
// shared memory: sm_90 gives a block up to 227 KiB once the launch opts in (the runtime
// does), gfx942 64 KiB of LDS; the rest is left to the reduction trees' static buffers.
inline constexpr int64_t kMaxStagedBytesNvidia = 200 * 1024;
inline constexpr int64_t kMaxStagedBytesAmd = 40 * 1024;
inline constexpr int64_t max_staged_bytes(const ReduceConfig& c) {
  return c.lanes == 64 ? kMaxStagedBytesAmd : kMaxStagedBytesNvidia;
}
// The largest keep_passes dsl::reduce accepts for (d, c): kMaxKeptPerThread / (Q /
// (lanes*warps)): the register bound only (0 when c is invalid or one pass alone
// exceeds it); with keep_in_shared, max_staged_bytes(c) / (Q * staged_bytes_per_element)
// instead (at most kMaxKeptPerThread; with rows_per_block > 1 the register bound too, as
// each row is read into registers); which ops and axes take the knob is dsl::reduce's
// check.
int64_t max_keep_passes(const ReduceDesc& d, const ReduceConfig& c);
// Shared bytes keep_in_shared takes per kept element: sizeof(in), plus 4 (its f32 e_i)
// with stage_exp; twice that with rows_per_block > 1 (a double buffer: a slot in each of
// its two sets).
int64_t staged_bytes_per_element(const ReduceDesc& d, const ReduceConfig& c);
// The extent of one pass over the row: max(strip, elems_per_thread*lanes*warps)
// for pinned order, elems_per_thread*lanes*warps for free order.
int64_t pass_extent(const ReduceDesc& d, const ReduceConfig& c);
FreeLayout free_layout(const ReduceConfig& c);

// The one kernel of an unsplit reduction (blocks_per_row == 1; otherwise an error
// pointing to reduce_phases).
absl::StatusOr<tile::Program> reduce(const ReduceDesc& desc, const ReduceConfig& config = {});

// Blocks to launch for a reduce kernel's grid name: "rows" -> rows, "cols" -> cols,
// "rows/<R>" -> ceil(rows / R) (rows_per_block), "row_blocks" -> rows * blocks_per_row,
// "cols/<C>" -> ceil(cols / C) (the coalesced column kernel: C columns per block),
// "col_blocks/<C>" -> ceil(cols / C) * blocks_per_row (split columns' partials).
// InvalidArgument naming the grid otherwise.
absl::StatusOr<int64_t> grid_blocks(const std::string& grid, int64_t rows, int64_t cols,
                                    int64_t blocks_per_row);

// Strip results one row leaves in a split workspace: ceil(cols / strip), cols >= 1.
int64_t strip_count(const ReduceDesc& d, int64_t cols);
// Rows one pass of the coalesced column kernel holds: Rq = min(strip, elems_per_thread,
// 4096 / (lanes*warps)), at least 1.
int64_t column_pass_rows(const ReduceDesc& d, const ReduceConfig& c);
// The largest blocks_per_row a pinned column sum/max/min accepts: min(strip / Rq, 1024).
int64_t max_column_parts(const ReduceDesc& d, const ReduceConfig& c);
// Floats of one workspace of a split reduction (blocks_per_row > 1): rows *
// strip_count(cols) for rows, strip_count(rows) * blocks_per_row * cols for columns.
int64_t split_workspace_floats(const ReduceDesc& d, int blocks_per_row, int64_t rows, int64_t cols);
// Whether phase `phase` (launch order) of reduce_phases(d, c) walks the rows last to
// first: alternate_row_order and an odd phase of split rows. Such a phase takes one
// more parameter, rows: i32 (the rows of its launch), after its others.
bool phase_walks_rows_backward(const ReduceConfig& c, size_t phase);
// Every kernel of the reduction, in launch order: {reduce(desc, config)} when
// blocks_per_row == 1, the split phases above (rows or columns) otherwise, the one
// cluster kernel with cluster_rows. Program names end in _p<P>_<phase> (partials,
// fold, normalize, maxpart, exppart, cluster), then _rev for a phase that walks the
// rows backward.
absl::StatusOr<std::vector<tile::Program>> reduce_phases(const ReduceDesc& desc,
                                                         const ReduceConfig& config = {});

}  // namespace fixbits::dsl
