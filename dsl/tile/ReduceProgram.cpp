// ReduceProgram: builds the tile program of a ReduceDesc. A pinned row sum with
// strip S and pass extent Q = max(S, elems_per_thread*lanes*warps) reads:
//   acc = -0.0
//   for k in [0, cols) step Q:                 // one pass: Q/S whole strips
//     v   = load(x, row*cols + k + arange(Q), mask k+i < cols, other -0.0)  // (Q)
//     acc = reduce(f32(v), axis 0, add, pinned, strip S, init acc)          // chain
//   y[row] = out(acc)
// Free order keeps one accumulator per thread instead (a (threads) tile): each pass
// views the (Q) values as (threads, elems_per_thread) and folds each row into it in
// order; the accumulators are reduced once at the end. A free-order column
// reduction (and column RMSNorm/softmax) is the same program with offsets
// k*cols + col (one block per column); a pinned column sum/max/min is
// coalesced_columns below (C columns per block, row segments per pass).
// Split rows (blocks_per_row P > 1), a pinned row sum, Q = S:
//   partials, block b of row b/P:  for k in [(b%P)*S, cols) step P*S:
//                                     ws[row*n + k/S] = reduce(f32(load(...)), pinned, strip S)
//   fold, block of row r:          acc = -0.0; for j in [0, n): acc = acc + ws[r*n + j]
//                                  y[r] = out(acc)       // uniform: every thread, in order
// alternate_row_order (RMSNorm): normalize's block b takes row rows-1 - b/P instead of
// b/P, the same body; partials' last rows are still in L2 when normalize starts.
// Cluster rows (RMSNorm, P blocks of a row in one cluster, K strips kept, cluster_phase):
//   kept: xk_i = load(strip part + i*P)                         // (S) each, registers
//         ws[row*n + j] = reduce(xk_i*xk_i, pinned, strip S)    // as partials (K >= 2 in
//                                                               // registers: one reduce_group)
//   rest: for k in [(part + K*P)*S, cols) step P*S: ws[...] = ...  // as partials
//   cluster_barrier()                                          // arrive.release, wait.acquire
//   ss = fold(ws) (as normalize); y = (xk_i * r) * w for the kept strips, the rest read again
// Split columns (a pinned column sum, P parts per strip, column_split_phases below):
//   partials, block (group g, part p): ws[(j*P + p)*cols + c] = node of strip j's tree
//                                      over rows [j*S + p*S/P, j*S + (p+1)*S/P)
//   fold, thread of column c:          acc = -0.0; for j in [0, n): acc = acc +
//                                      ((ws[j*P+0] + ws[j*P+1]) + ...)   // top log2(P) levels
#include "dsl/tile/ReduceProgram.h"

#include <cmath>
#include <optional>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fixbits::dsl {
namespace {

using tile::Builder;
using tile::Combine;
using tile::Elem;
using tile::Value;

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

float identity(Combine c) {
  switch (c) {
    case Combine::kAdd: return -0.0f;
    case Combine::kMax: return -std::numeric_limits<float>::infinity();
    case Combine::kMin: return std::numeric_limits<float>::infinity();
  }
  return -0.0f;
}

// Values every pass of every program shares. A line is a row (kRow: contiguous)
// or a column (kColumn: stride cols); this block reduces line program_id(0).
struct RowFrame {
  Value row64;   // this block's line, i64
  Value cols;    // the line's length, i32 (cols for kRow, rows for kColumn)
  Value base;    // offset of the line's element 0, i64
  Value stride;  // kColumn: element stride (cols), i64; unset for kRow
  Value idx0;    // arange(Q), i32<Q>
  Value zero;    // i32 0
  Value step;    // i32 Q
};

// kRow: line r of `len` = cols elements at r*cols. kColumn: line c of len = rows
// elements at c + i*cols (`width` = cols).
RowFrame make_frame(Builder& b, Value len, std::optional<Value> width, int64_t q) {
  RowFrame f;
  f.cols = len;
  f.row64 = b.cast(b.program_id(0), Elem::kI64);
  if (width) {
    f.stride = b.cast(*width, Elem::kI64);
    f.base = f.row64;
  } else {
    f.base = b.mul(f.row64, b.cast(len, Elem::kI64));
  }
  f.idx0 = b.arange(q);
  f.zero = b.const_int(Elem::kI32, 0);
  f.step = b.const_int(Elem::kI32, q);
  return f;
}

// The same line walked in passes of `q` elements (elementwise passes need no strip).
RowFrame with_extent(Builder& b, RowFrame f, int64_t q) {
  f.idx0 = b.arange(q);
  f.step = b.const_int(Elem::kI32, q);
  return f;
}

// Row `row` (i32) of a row-major x of `cols` columns, walked in passes like `like`'s:
// its passes are masked at `limit` (cols; 0 for a row whose loads must read nothing).
RowFrame frame_at(Builder& b, Value row, Value cols, Value limit, const RowFrame& like) {
  RowFrame f = like;
  f.cols = limit;
  f.row64 = b.cast(row, Elem::kI64);
  f.base = b.mul(f.row64, b.cast(cols, Elem::kI64));
  f.stride = Value{};
  return f;
}

// Inside a pass at line index k: the (Q) line indices, their in-bounds mask and
// global offsets.
// A whole pass (whole_strips) has `whole` set: its mask, if any, is one flag for every
// element (the pass is wholly in the row or wholly past it), so its leaves need no pad
// select: a pad is never stored, and where one enters a chain (a one-block kernel's
// kept pass past the row) the link leaves the running value as it is (ReduceProgram.h,
// whole_strips); no mask at all (mask.id < 0): every element is in the row.
struct PassIndex {
  Value idx, mask, off;
  bool whole = false;
};
PassIndex pass_index(Builder& b, const RowFrame& f, Value k) {
  PassIndex p;
  p.idx = b.add(f.idx0, k);                        // (Q) i32
  p.mask = b.compare(tile::CompareOp::kLt, p.idx, f.cols);
  Value i64 = b.cast(p.idx, Elem::kI64);
  if (f.stride.id >= 0) i64 = b.mul(i64, f.stride);  // kColumn: strided
  p.off = b.add(i64, f.base);                      // (Q) i64
  return p;
}

// The pass at line index k of a row whose passes are whole (ReduceConfig.whole_strips,
// kRow): with `in_row`, a kept pass (or strip) whose every element is in the row exactly
// when that uniform flag holds (its mask is the flag, splat); without, a pass a loop
// bounded by cols walks in steps of whole passes, every element in the row (no mask).
PassIndex whole_strip_index(Builder& b, const RowFrame& f, Value k, std::optional<Value> in_row) {
  PassIndex p;
  p.whole = true;
  p.idx = b.add(f.idx0, k);
  if (in_row) p.mask = b.splat(*in_row, b.type_of(f.idx0).shape);
  p.off = b.add(b.cast(p.idx, Elem::kI64), f.base);
  return p;
}

// The pass at k of a loop bounded by the row's length: unmasked when `whole`.
PassIndex loop_pass_index(Builder& b, const RowFrame& f, Value k, bool whole) {
  return whole ? whole_strip_index(b, f, k, std::nullopt) : pass_index(b, f, k);
}

// x[off] as f32, `pad` (exact in the input type) where masked off; no mask (id < 0):
// every element is read.
Value load_f32(Builder& b, Value ptr, Value off, Value mask, Elem in, float pad) {
  Value v = mask.id < 0 ? b.load(ptr, off) : b.load(ptr, off, mask, b.const_float(in, pad));
  return in == Elem::kF32 ? v : b.cast(v, Elem::kF32);
}

// v where p is in the row, the pad elsewhere; a whole pass's leaves are v as they are
// (PassIndex).
Value padded(Builder& b, const PassIndex& p, Value v, float pad) {
  return p.whole ? v : b.select(p.mask, v, b.const_f32(pad));
}

// y[p.off] = v where p is in the row.
void store_in_row(Builder& b, Value y, const PassIndex& p, Value v) {
  if (p.mask.id < 0) {
    b.store(y, p.off, v);
  } else {
    b.store(y, p.off, v, p.mask);
  }
}

tile::Type f32_ptr() { return tile::Type::ptr(DType::kF32); }
tile::Type i32_type() { return tile::Type::scalar(Elem::kI32); }

// The parameters of the kernels that write a split row's outputs, in their launch
// order: the split normalize kernel and the cluster kernel take the same list, so a
// runner passes both the same arguments.
struct RmsNormOutParams {
  Value x, w, ws, y, cols, eps;
};
RmsNormOutParams rms_norm_out_params(Builder& b, const ReduceDesc& d) {
  RmsNormOutParams q;
  q.x = b.param("x", tile::Type::ptr(d.in_dtype));
  q.w = b.param("w", tile::Type::ptr(d.in_dtype));
  q.ws = b.param("ws", f32_ptr());
  q.y = b.param("y", tile::Type::ptr(d.out_dtype));
  q.cols = b.param("cols", i32_type());
  q.eps = b.param("eps", tile::Type::scalar(Elem::kF32));
  return q;
}
struct SoftmaxOutParams {
  Value x, wsm, wss, y, cols;
};
SoftmaxOutParams softmax_out_params(Builder& b, const ReduceDesc& d) {
  SoftmaxOutParams q;
  q.x = b.param("x", tile::Type::ptr(d.in_dtype));
  q.wsm = b.param("wsm", f32_ptr());
  q.wss = b.param("wss", f32_ptr());
  q.y = b.param("y", tile::Type::ptr(d.out_dtype));
  q.cols = b.param("cols", i32_type());
  return q;
}

// RMSNorm's pieces, one each for the unsplit, split and cluster kernels, so all three
// build the reference's ops in the reference's order: x_i*x_i padded with `pad` where
// masked off; r = 1 / sqrt(ss / cols + eps); y_i = (x_i * r) * w_i stored as out.
Value padded_square(Builder& b, const PassIndex& p, Value v, float pad) {
  return padded(b, p, b.mul(v, v), pad);
}
Value rms_scale(Builder& b, Value ss, Value cols, Value eps) {
  Value ms = b.div(ss, b.cast(cols, Elem::kF32));
  return b.div(b.const_f32(1.0f), b.unary(tile::UnaryOp::kSqrt, b.add(ms, eps)));
}
void store_rms_output(Builder& b, Value y, Value w, const PassIndex& p, Value xv, Value r, Elem in,
                      Elem out) {
  Value wv = load_f32(b, w, b.cast(p.idx, Elem::kI64), p.mask, in, 0.0f);
  Value yv = b.mul(b.mul(xv, r), wv);
  store_in_row(b, y, p, out == Elem::kF32 ? yv : b.cast(yv, out));
}

// Where the loops over x start when the first `kept` passes are held in registers:
// k = kept * Q (i32).
Value kept_end(Builder& b, const RowFrame& f, int64_t q, int kept) {
  if (kept == 0) return f.zero;
  if (kept == 1) return f.step;
  return b.const_int(Elem::kI32, kept * q);
}

// The indices of the first `kept` passes, k = 0, Q, ..., (kept-1)*Q; `whole`
// (whole_strips, a row of whole passes): each pass's mask is its one flag k < cols.
std::vector<PassIndex> kept_passes(Builder& b, const RowFrame& f, int64_t q, int kept, bool whole = false) {
  std::vector<PassIndex> out;
  for (int j = 0; j < kept; ++j) {
    Value k = j == 0 ? f.zero : kept_end(b, f, q, j);
    out.push_back(whole ? whole_strip_index(b, f, k, b.compare(tile::CompareOp::kLt, k, f.cols))
                        : pass_index(b, f, k));
  }
  return out;
}

// The kept x values of some passes (or strips), loaded once before any combine: in
// registers (widened to f32 once, the same value at every use), or with keep_in_shared
// as staged loads in shared memory, widened again at each use (a new op each time, so
// each use reads the shared slots there and no register holds x in between). Either
// way every use sees the same f32 values.
struct KeptX {
  bool staged = false;
  Elem in = Elem::kF32;
  std::vector<Value> values;  // staged: the loads (in); registers: the f32 values
  Value use(Builder& b, size_t i) const {
    if (!staged || in == Elem::kF32) return values[i];
    return b.cast(values[i], Elem::kF32);
  }
};
KeptX load_kept(Builder& b, Value x, const std::vector<PassIndex>& passes, Elem in, float pad, bool staged) {
  KeptX k{staged, in, {}};
  for (const PassIndex& p : passes) {
    k.values.push_back(staged ? b.load_staged(x, p.off, p.mask, b.const_float(in, pad))
                              : load_f32(b, x, p.off, p.mask, in, pad));
  }
  return k;
}

// Softmax's e_i of a kept pass as the sum makes it: held in shared memory with
// stage_exp (read back by each op that uses it), else the value itself.
Value kept_exp(Builder& b, Value e, const ReduceConfig& cfg) { return cfg.stage_exp ? b.stage(e) : e; }

// The e_i an output of kept pass j divides: kept (in registers, or staged with
// stage_exp), or with keep_in_shared alone computed again from the kept x (the same
// ops on the same x: the same value).
template <class ExpOf>
Value output_exp(Builder& b, const KeptX& kx, const std::vector<Value>& ke, size_t j, ExpOf exp_of,
                 const ReduceConfig& cfg) {
  return kx.staged && !cfg.stage_exp ? exp_of(kx.use(b, j)) : ke[j];
}

// The pinned chain over a row's `n` kept passes, leaf(j) building pass j's tile:
// pass j's reduce starts from pass j - 1's result (pass 0's from `init`). Kept in
// registers, two or more passes are one chained reduce_group: their partials cross the
// block through shared memory together, one barrier for all. Staged (keep_in_shared),
// one reduce a pass, leaf j built right before it: pass j is read (and waited for)
// only there, and its tree crosses the block while later passes' copies are in flight.
// (Cluster rows' kept strips: kept_strip_trees.)
template <class Leaf>
Value reduce_kept_chain(Builder& b, int n, Leaf leaf, Combine c, int64_t strip, Value init, bool staged) {
  if (n > 1 && !staged) {
    std::vector<Value> leaves;
    for (int j = 0; j < n; ++j) leaves.push_back(leaf(j));
    return b.reduce_group(leaves, c, strip, init, /*chained=*/true).back();
  }
  Value acc = init;
  for (int j = 0; j < n; ++j) acc = b.reduce(leaf(j), 0, c, TreeOrder::kPinned, strip, acc);
  return acc;
}

// The rows this block reduces, each handed to body(f, kp, kx): its frame, its kept
// passes' indices and their kept x values (keep_passes of them, loaded padded with `pad`).
// rows_per_block 1: this block's line (program_id), its kept passes loaded here. R > 1
// (ReduceConfig.rows_per_block; `rows` is the kernel's rows parameter): rows bR, ...,
// min(bR + R, rows) - 1 in order, one iteration of a row loop each, whose carried values
// are the row's kept x: row bR's are loaded before the loop, row i + 1's at the top of
// row i's iteration (masked off past the block's last row), before any of row i's ops.
// Kept in registers the carried values are the loads' registers; with keep_in_shared
// they are staged loads, a double buffer (tile::OpKind::kLoad) whose next slots row
// i + 1's copies fill, and row i's x is read from its slots into registers once, right
// after those copies are issued (the body sees register values, kx.staged false).
template <class Body>
void block_rows(Builder& b, const ReduceConfig& cfg, Value x, Value len, std::optional<Value> width, int64_t q,
                Elem in, float pad, bool whole, std::optional<Value> rows, Body body) {
  const int keep = cfg.keep_passes;
  if (cfg.rows_per_block == 1) {
    RowFrame f = make_frame(b, len, width, q);
    const std::vector<PassIndex> kp = kept_passes(b, f, q, keep, whole);
    body(f, kp, load_kept(b, x, kp, in, pad, cfg.keep_in_shared));
    return;
  }
  // check_all: kRow, kept in registers. f0: the passes' shape, no row yet.
  RowFrame f0;
  f0.idx0 = b.arange(q);
  f0.zero = b.const_int(Elem::kI32, 0);
  f0.step = b.const_int(Elem::kI32, q);
  Value one = b.const_int(Elem::kI32, 1);
  Value r = b.const_int(Elem::kI32, cfg.rows_per_block);
  Value first = b.mul(b.program_id(0), r);
  Value stop = b.add(first, r);
  Value end = b.select(b.compare(tile::CompareOp::kLt, stop, *rows), stop, *rows);
  const bool staged = cfg.keep_in_shared;
  RowFrame ff = frame_at(b, first, len, len, f0);
  const KeptX k0 = load_kept(b, x, kept_passes(b, ff, q, keep, whole), in, pad, staged);
  std::vector<Value> loop = b.begin_for(first, end, one, k0.values);
  Value next = b.add(loop[0], one);
  Value limit = b.select(b.compare(tile::CompareOp::kLt, next, end), len, f0.zero);
  const KeptX kn = load_kept(b, x, kept_passes(b, frame_at(b, next, len, limit, f0), q, keep, whole), in, pad,
                             staged);
  KeptX kx{false, in, std::vector<Value>(loop.begin() + 1, loop.end())};
  if (staged) {
    for (Value& v : kx.values) v = b.cast(v, Elem::kF32);  // one read of the slots
  }
  RowFrame f = frame_at(b, loop[0], len, len, f0);
  const std::vector<PassIndex> kp = kept_passes(b, f, q, keep, whole);
  body(f, kp, kx);
  b.end_for(kn.values);
}

// The reduction over a row of `leaf(pass)` values (padded with the identity).
// Pinned: chain of strip trees; free: per-element accumulator then one reduce.
// With `kept` > 0 passes (k = 0, Q, ..., whose leaf values kept_leaf(j) builds, so the
// caller can keep them for a later pass), those passes are reduced before the loop,
// in order, and the loop starts at k = kept * Q: the same combines in the same order
// as the un-peeled chain (a kept pass past the row's end is all identity, a no-op
// link; ReduceProgram.h). Pinned, the kept passes are reduce_kept_chain's (`staged`:
// they are keep_in_shared's).
struct NoKept {
  Value operator()(int) const { return Value{}; }
};
template <class Leaf, class KeptLeaf = NoKept>
Value reduce_row(Builder& b, const RowFrame& f, const ReduceDesc& d, int64_t q, int64_t e,
                 Combine c, Leaf leaf, int kept = 0, KeptLeaf kept_leaf = {}, bool whole = false,
                 bool staged = false) {
  Value ident = b.const_f32(identity(c));
  Value lo = kept_end(b, f, q, kept);
  if (d.order == TreeOrder::kPinned) {
    Value acc0 = ident;
    acc0 = reduce_kept_chain(b, kept, kept_leaf, c, d.strip, acc0, staged);
    std::vector<Value> loop = b.begin_for(lo, f.cols, f.step, {acc0});
    // whole (a row of whole passes, pinned only): every pass the loop walks is in the row.
    Value v = leaf(loop_pass_index(b, f, loop[0], whole), identity(c));
    Value r = b.reduce(v, 0, c, TreeOrder::kPinned, d.strip, loop[1]);
    return b.end_for({r})[0];
  }
  // Free: one accumulator per thread (threads = q / e), folding its e elements of
  // every pass in index order; then one reduce over the threads.
  const int64_t threads = q / e;
  Value acc0 = b.splat(ident, {threads});
  for (int j = 0; j < kept; ++j) {
    acc0 = b.reduce(b.reshape(kept_leaf(j), {threads, e}), 1, c, TreeOrder::kFree, 0, acc0);
  }
  std::vector<Value> loop = b.begin_for(lo, f.cols, f.step, {acc0});
  Value v = leaf(pass_index(b, f, loop[0]), identity(c));
  Value per_thread = b.reshape(v, {threads, e});  // (threads, e)
  Value acc = b.end_for({b.reduce(per_thread, 1, c, TreeOrder::kFree, 0, loop[1])})[0];
  return b.reduce(acc, 0, c, TreeOrder::kFree);
}

absl::Status check_desc(const ReduceDesc& d) {
  if (absl::Status s = validate(d); !s.ok()) return s;
  for (DType t : {d.in_dtype, d.out_dtype}) {
    if (t != DType::kF32 && t != DType::kF16 && t != DType::kBF16) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "dsl::reduce: dtype %s is not supported for in/out; use f32, f16 or bf16.",
          std::string(dtype_name(t))));
    }
  }
  if (d.acc_dtype != DType::kF32) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "dsl::reduce: acc_dtype %s is not supported; reductions accumulate in f32.",
        std::string(dtype_name(d.acc_dtype))));
  }
  if (!is_pow2(d.strip) || d.strip > (int64_t{1} << 16)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "dsl::reduce: strip %d is not a power of two in [1, 65536].", d.strip));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status validate(const ReduceConfig& c) {
  if (!is_pow2(c.warps) || c.warps > 32) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ReduceConfig.warps %d is not a power of two in [1, 32].", c.warps));
  }
  if (!is_pow2(c.elems_per_thread) || c.elems_per_thread > 64) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.elems_per_thread %d is not a power of two in [1, 64].", c.elems_per_thread));
  }
  if (c.lanes != 32 && c.lanes != 64) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ReduceConfig.lanes %d is not 32 (NVIDIA) or 64 (AMD wave64).", c.lanes));
  }
  if (c.blocks_per_row < 1 || c.blocks_per_row > 1024) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.blocks_per_row %d is not in [1, 1024] (blocks sharing a row, or a "
        "column group of a pinned column sum/max/min).", c.blocks_per_row));
  }
  if (c.keep_passes < 0 || c.keep_passes > kMaxKeptPerThread) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.keep_passes %d is not in [0, %d] (0: off; N: the row's first N passes "
        "kept in registers).", c.keep_passes, kMaxKeptPerThread));
  }
  if (c.min_blocks_per_sm < 0 || c.min_blocks_per_sm > 32) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.min_blocks_per_sm %d is not in [0, 32] (0: no request).", c.min_blocks_per_sm));
  }
  if (c.cluster_rows && c.lanes != 32) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.cluster_rows needs lanes 32 (NVIDIA sm_90 thread-block clusters); lanes "
        "%d (AMD gfx942) has no clusters, so split rows there run as separate kernels.", c.lanes));
  }
  if (c.cluster_rows && (c.blocks_per_row < 2 || c.blocks_per_row > 8)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.blocks_per_row %d with cluster_rows is not in [2, 8]: the blocks of a "
        "row form one thread-block cluster (8 is the portable limit).", c.blocks_per_row));
  }
  if (c.rows_per_launch < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.rows_per_launch %d is negative (0: every row in one launch).", c.rows_per_launch));
  }
  if (c.rows_per_launch > 0 && (c.blocks_per_row < 2 || c.cluster_rows)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.rows_per_launch %d applies to split rows run as separate kernels "
        "(blocks_per_row > 1 without cluster_rows); here blocks_per_row is %d%s.",
        c.rows_per_launch, c.blocks_per_row, c.cluster_rows ? " with cluster_rows" : ""));
  }
  if (c.alternate_row_order && (c.blocks_per_row < 2 || c.cluster_rows)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.alternate_row_order applies to split rows run as separate kernels "
        "(blocks_per_row > 1 without cluster_rows: a later kernel reads the rows again); here "
        "blocks_per_row is %d%s.",
        c.blocks_per_row, c.cluster_rows ? " with cluster_rows" : ""));
  }
  if (c.divide_by_reciprocal && c.lanes != 32) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.divide_by_reciprocal needs lanes 32 (NVIDIA sm_90a); lanes %d (AMD "
        "gfx942) keeps a division each.", c.lanes));
  }
  if (c.rows_per_block < 1 || c.rows_per_block > 64) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.rows_per_block %d is not in [1, 64] (consecutive rows one block takes; "
        "1: one row a block).", c.rows_per_block));
  }
  if (c.lanes * c.warps > 1024) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.warps %d of %d lanes gives %d threads per block; the limit is 1024.",
        c.warps, c.lanes, c.lanes * c.warps));
  }
  return absl::OkStatus();
}

int64_t staged_bytes_per_element(const ReduceDesc& d, const ReduceConfig& c) {
  const int64_t sets = c.rows_per_block > 1 ? 2 : 1;  // a double buffer: two slot sets
  return sets * (dtype_bits(d.in_dtype) / 8 + (c.stage_exp ? 4 : 0));
}

int64_t pass_extent(const ReduceDesc& d, const ReduceConfig& c) {
  int64_t block = int64_t{c.elems_per_thread} * c.lanes * c.warps;
  return d.order == TreeOrder::kPinned ? std::max<int64_t>(d.strip, block) : block;
}

int64_t max_keep_passes(const ReduceDesc& d, const ReduceConfig& c) {
  if (!validate(c).ok()) return 0;
  const int64_t per_thread = pass_extent(d, c) / (int64_t{c.lanes} * c.warps);
  const int64_t in_registers = per_thread > kMaxKeptPerThread ? 0 : kMaxKeptPerThread / per_thread;
  if (c.keep_in_shared) {
    // rows_per_block > 1: each row's x is also read into registers for its iteration.
    const int64_t pass_bytes = pass_extent(d, c) * staged_bytes_per_element(d, c);
    const int64_t in_shared = pass_bytes <= 0 ? 0 : std::min(kMaxKeptPerThread, max_staged_bytes(c) / pass_bytes);
    return c.rows_per_block > 1 ? std::min(in_shared, in_registers) : in_shared;
  }
  return in_registers;
}

FreeLayout free_layout(const ReduceConfig& c) { return FreeLayout{c.elems_per_thread, c.lanes, c.warps}; }

// Rq = min(S, elems_per_thread, kMaxConvert / threads); with C = threads columns per
// block every thread holds Rq elements, and the (Rq, C) tile stays within what one
// layout conversion stages.
int64_t column_pass_rows(const ReduceDesc& d, const ReduceConfig& cfg) {
  constexpr int64_t kMaxConvert = 4096;  // codegen::kMaxConvertElems
  const int64_t threads = int64_t{cfg.lanes} * cfg.warps;
  return std::max<int64_t>(1, std::min<int64_t>({d.strip, cfg.elems_per_thread, kMaxConvert / threads}));
}

int64_t max_column_parts(const ReduceDesc& d, const ReduceConfig& c) {
  return std::min<int64_t>(std::max<int64_t>(d.strip / column_pass_rows(d, c), 1), 1024);
}

namespace {

// Shared checks of reduce() and reduce_phases(); returns Q, the pass extent.
absl::StatusOr<int64_t> check_all(const ReduceDesc& d, const ReduceConfig& cfg) {
  if (absl::Status s = check_desc(d); !s.ok()) return s;
  if (absl::Status s = validate(cfg); !s.ok()) return s;
  if (cfg.divide_by_reciprocal && d.op != ReduceOp::kSoftmax) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.divide_by_reciprocal applies to softmax (e_i / s, a tile over one "
        "divisor); %s divides no tile, so it must be false.", to_string(d)));
  }
  if (cfg.keep_passes > 0) {
    if (d.op != ReduceOp::kRmsNorm && d.op != ReduceOp::kSoftmax) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ReduceConfig.keep_passes %d applies to rms_norm and softmax (a second pass over the "
          "row); a plain reduction reads its row once, so it must be 0.", cfg.keep_passes));
    }
    if (d.axis != ReduceAxis::kRow || (cfg.blocks_per_row != 1 && !cfg.cluster_rows)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ReduceConfig.keep_passes %d needs axis=row and blocks_per_row 1 or cluster_rows (got "
          "%s, %d): a split row's passes run in different kernels.",
          cfg.keep_passes, d.axis == ReduceAxis::kRow ? "row" : "column", cfg.blocks_per_row));
    }
  }
  if (cfg.cluster_rows) {
    if (d.op != ReduceOp::kRmsNorm && d.op != ReduceOp::kSoftmax) {
      return absl::InvalidArgumentError(
          "ReduceConfig.cluster_rows applies to rms_norm and softmax (a row read again after "
          "its reduction); a split sum/max/min already reads x once.");
    }
    if (d.axis != ReduceAxis::kRow || d.order != TreeOrder::kPinned) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ReduceConfig.cluster_rows needs axis=row and order=pinned (got %s, %s): it is a form "
          "of split rows.", d.axis == ReduceAxis::kRow ? "row" : "column",
          d.order == TreeOrder::kPinned ? "pinned" : "free"));
    }
  }
  if (cfg.whole_strips && (d.axis != ReduceAxis::kRow || d.order != TreeOrder::kPinned ||
                           (cfg.blocks_per_row != 1 && !cfg.cluster_rows))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.whole_strips applies to pinned rows in one block (blocks_per_row 1) or one "
        "cluster (cluster_rows); got axis=%s, order=%s, blocks_per_row %d%s.",
        d.axis == ReduceAxis::kRow ? "row" : "column", d.order == TreeOrder::kPinned ? "pinned" : "free",
        cfg.blocks_per_row, cfg.cluster_rows ? " with cluster_rows" : " without cluster_rows"));
  }
  if (cfg.alternate_row_order) {
    if (d.op != ReduceOp::kRmsNorm && d.op != ReduceOp::kSoftmax) {
      return absl::InvalidArgumentError(
          "ReduceConfig.alternate_row_order applies to rms_norm and softmax (a later kernel reads "
          "x again); a split sum/max/min's fold reads only the workspace, so it must be false.");
    }
    if (d.axis != ReduceAxis::kRow) {
      return absl::InvalidArgumentError(
          "ReduceConfig.alternate_row_order needs axis=row (got column): it orders the rows of "
          "split rows.");
    }
  }
  if (cfg.rows_per_block > 1 &&
      ((d.op != ReduceOp::kRmsNorm && d.op != ReduceOp::kSoftmax) || d.axis != ReduceAxis::kRow ||
       cfg.blocks_per_row != 1 || cfg.keep_passes == 0 || cfg.stage_exp)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.rows_per_block %d applies to rms_norm and softmax rows in one block with "
        "kept passes (the next row's are loaded while this one is reduced): it needs axis=row, "
        "blocks_per_row 1, keep_passes > 0 and stage_exp false (got %s, blocks_per_row %d, "
        "keep_passes %d, stage_exp %s).",
        cfg.rows_per_block, to_string(d), cfg.blocks_per_row, cfg.keep_passes,
        cfg.stage_exp ? "true" : "false"));
  }
  const int64_t q = pass_extent(d, cfg);
  const int64_t per_thread = q / (int64_t{cfg.lanes} * cfg.warps);
  if (per_thread > 64) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "dsl::reduce: strip %d over %d warps puts %d elements in each thread (at most 64); "
        "raise ReduceConfig.warps to at least %d.",
        d.strip, cfg.warps, per_thread, d.strip / (cfg.lanes * 64)));
  }
  if (cfg.stage_exp && (d.op != ReduceOp::kSoftmax || !cfg.keep_in_shared)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.stage_exp holds softmax's kept e_i in shared memory beside the kept x; it "
        "needs op softmax and keep_in_shared (got %s, keep_in_shared %s).",
        to_string(d), cfg.keep_in_shared ? "true" : "false"));
  }
  if (cfg.keep_in_shared && cfg.keep_passes == 0) {
    return absl::InvalidArgumentError(
        "ReduceConfig.keep_in_shared says where kept passes live; it needs keep_passes > 0 "
        "(got 0).");
  }
  if (cfg.keep_in_shared) {
    const int64_t elem_bytes = staged_bytes_per_element(d, cfg);  // both sets of a double buffer
    const int64_t bytes = cfg.keep_passes * q * elem_bytes;
    const bool two_sets = cfg.rows_per_block > 1;
    if (bytes > max_staged_bytes(cfg)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ReduceConfig.keep_passes %d with keep_in_shared keeps %s%d x %d elements of %s%s = %d "
          "bytes of shared memory per block (passes of %d elements; with cluster_rows a pass is "
          "one strip); the limit is %d bytes, so at most %d passes here.",
          cfg.keep_passes, two_sets ? "2 rows (rows_per_block > 1) x " : "", cfg.keep_passes, q,
          std::string(dtype_name(d.in_dtype)), cfg.stage_exp ? " and their f32 e_i (stage_exp)" : "",
          bytes, q, max_staged_bytes(cfg), max_staged_bytes(cfg) / (q * elem_bytes)));
    }
  }
  if ((!cfg.keep_in_shared || cfg.rows_per_block > 1) && cfg.keep_passes * per_thread > kMaxKeptPerThread) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.keep_passes %d keeps %d x %d = %d values of x per thread (passes of %d "
        "elements over %d threads; with cluster_rows a pass is one strip); the limit is %d "
        "registers, so at most %d passes here%s.",
        cfg.keep_passes, cfg.keep_passes, per_thread, cfg.keep_passes * per_thread, q,
        cfg.lanes * cfg.warps, kMaxKeptPerThread, kMaxKeptPerThread / per_thread,
        cfg.keep_in_shared ? " (keep_in_shared with rows_per_block > 1 reads each row's kept x into "
                             "registers for its iteration)" : ""));
  }
  return q;
}

std::string kernel_name(const ReduceDesc& d, const ReduceConfig& cfg, const std::string& phase) {
  const char* op_names[] = {"sum", "max", "min", "rmsnorm", "softmax"};
  std::string name = absl::StrFormat(
      "fixbits_%s%s_%s_%s_%s_s%d_w%d_e%d%s", op_names[static_cast<int>(d.op)],
      d.axis == ReduceAxis::kRow ? "" : "_col",
      std::string(dtype_name(d.in_dtype)), std::string(dtype_name(d.out_dtype)),
      d.order == TreeOrder::kPinned ? "pinned" : "free", d.strip, cfg.warps, cfg.elems_per_thread,
      cfg.lanes == 32 ? "" : "_l64");
  if (cfg.keep_passes > 0) name += absl::StrFormat("_k%d%s", cfg.keep_passes, cfg.keep_in_shared ? "s" : "");
  if (cfg.min_blocks_per_sm > 0) name += absl::StrFormat("_mb%d", cfg.min_blocks_per_sm);
  if (!phase.empty()) name += absl::StrFormat("_p%d_%s", cfg.blocks_per_row, phase);
  if (cfg.whole_strips) name += "_ws";
  if (cfg.divide_by_reciprocal) name += "_rd";
  if (cfg.stage_exp) name += "_se";
  if (cfg.rows_per_block > 1) name += absl::StrFormat("_rb%d", cfg.rows_per_block);
  return name;
}

Combine combine_of(ReduceOp op) {
  return op == ReduceOp::kSum ? Combine::kAdd : op == ReduceOp::kMax ? Combine::kMax : Combine::kMin;
}

// ---- Split rows -------------------------------------------------------------

// This block's share of a split row: row = pid / P (backward: rows-1 - pid / P),
// part = pid % P; the row's strip results live at ws[ws_base + j], j < n.
struct SplitFrame {
  RowFrame line;  // row64/base/cols of the row; idx0/step set per loop
  Value part;     // i32 in [0, P)
  Value n;        // i32 strips of the row: (cols - 1) / S + 1
  Value ws_base;  // i64 row * n
};

SplitFrame make_split_frame(Builder& b, Value cols, int64_t strip, int p,
                            std::optional<Value> backward_rows = std::nullopt) {
  SplitFrame f;
  Value pid = b.program_id(0);
  Value row = pid;
  f.part = b.const_int(Elem::kI32, 0);
  if (p > 1) {  // grid "row_blocks": P consecutive blocks share a row
    Value pc = b.const_int(Elem::kI32, p);
    row = b.div(pid, pc);
    f.part = b.sub(pid, b.mul(row, pc));
  }
  if (backward_rows) {  // the first blocks take the last row
    row = b.sub(b.sub(*backward_rows, b.const_int(Elem::kI32, 1)), row);
  }
  f.line.cols = cols;
  f.line.row64 = b.cast(row, Elem::kI64);
  f.line.base = b.mul(f.line.row64, b.cast(cols, Elem::kI64));
  f.line.zero = b.const_int(Elem::kI32, 0);
  Value one = b.const_int(Elem::kI32, 1);
  f.n = b.add(b.div(b.sub(cols, one), b.const_int(Elem::kI32, strip)), one);
  f.ws_base = b.mul(f.line.row64, b.cast(f.n, Elem::kI64));
  return f;
}

// For a fold kernel on grid "rows": one block per row, part 0.
SplitFrame make_row_frame(Builder& b, Value cols, int64_t strip) { return make_split_frame(b, cols, strip, 1); }

// The partials loop: this block's strips, each reduced by one pinned tree of
// `strip` elements (the pass extent is the strip) and stored to ws[row*n + k/S].
// `from` (cluster rows): the first strip's index k instead of part*S; `whole`
// (whole_strips): every strip the loop walks is wholly in the row, unmasked.
template <class Leaf>
void store_strip_partials(Builder& b, const SplitFrame& f, const ReduceDesc& d, int p, Value ws,
                          Combine c, Leaf leaf, std::optional<Value> from = std::nullopt,
                          bool whole = false) {
  RowFrame line = with_extent(b, f.line, d.strip);
  Value strip = b.const_int(Elem::kI32, d.strip);
  Value lo = from ? *from : b.mul(f.part, strip);
  Value step = b.const_int(Elem::kI32, d.strip * p);
  std::vector<Value> loop = b.begin_for(lo, line.cols, step, {});
  Value v = leaf(loop_pass_index(b, line, loop[0], whole), identity(c));  // (S)
  Value r = b.reduce(v, 0, c, TreeOrder::kPinned, d.strip);   // identity (+) tree: the strip
  Value j = b.cast(b.div(loop[0], strip), Elem::kI64);
  b.store(ws, b.add(f.ws_base, j), r);
  b.end_for({});
}

// x (+) y for the combine c.
Value combine_values(Builder& b, Combine c, Value x, Value y) {
  return c == Combine::kAdd ? b.add(x, y) : c == Combine::kMax ? b.max(x, y) : b.min(x, y);
}

// The chain identity (+) ws[base] (+) ... (+) ws[base+n-1], in index order, as a
// uniform scalar. Groups of kUnroll loads are issued before their combines so their
// latencies overlap: first the whole groups, unmasked (j < n - n % kUnroll), then at
// most one masked group for the last n % kUnroll, where a lane past n keeps the
// running value (select), so no combine beyond the chain's own is ever applied.
Value fold_strips(Builder& b, const SplitFrame& f, Value ws, Combine c) {
  constexpr int kUnroll = 16;
  Value ident = b.const_f32(identity(c));
  Value unroll = b.const_int(Elem::kI32, kUnroll);
  Value whole_end = b.mul(b.div(f.n, unroll), unroll);  // n rounded down to whole groups
  std::vector<Value> loop = b.begin_for(f.line.zero, whole_end, unroll, {ident});
  std::vector<Value> vals;
  for (int u = 0; u < kUnroll; ++u) {
    Value j = b.add(loop[0], b.const_int(Elem::kI32, u));
    vals.push_back(b.load(ws, b.add(f.ws_base, b.cast(j, Elem::kI64))));
  }
  Value r = loop[1];
  for (int u = 0; u < kUnroll; ++u) r = combine_values(b, c, r, vals[u]);
  Value folded = b.end_for({r})[0];
  // The last n % kUnroll: one masked group (no iteration when n is whole groups).
  loop = b.begin_for(whole_end, f.n, unroll, {folded});
  std::vector<Value> masks;
  vals.clear();
  for (int u = 0; u < kUnroll; ++u) {
    Value j = b.add(loop[0], b.const_int(Elem::kI32, u));
    Value m = b.compare(tile::CompareOp::kLt, j, f.n);
    masks.push_back(m);
    vals.push_back(b.load(ws, b.add(f.ws_base, b.cast(j, Elem::kI64)), m, ident));
  }
  r = loop[1];
  for (int u = 0; u < kUnroll; ++u) r = b.select(masks[u], combine_values(b, c, r, vals[u]), r);
  return b.end_for({r})[0];
}

// An elementwise pass over this block's chunks of the row: chunks of B elements,
// chunk part, part + P, ...; `body` stores what it computes.
template <class Body>
void split_elementwise(Builder& b, const SplitFrame& f, int64_t block_extent, int p, Body body) {
  RowFrame line = with_extent(b, f.line, block_extent);
  Value lo = b.mul(f.part, b.const_int(Elem::kI32, block_extent));
  std::vector<Value> loop = b.begin_for(lo, line.cols, b.const_int(Elem::kI32, block_extent * p), {});
  body(pass_index(b, line, loop[0]));
  b.end_for({});
}

absl::Status check_column_split(const ReduceDesc& d, const ReduceConfig& cfg);  // below

absl::Status check_split(const ReduceDesc& d, const ReduceConfig& cfg) {
  if (d.order != TreeOrder::kPinned) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.blocks_per_row %d needs order=pinned; the free order's bits follow one "
        "block's layout and have no split form.", cfg.blocks_per_row));
  }
  if (d.axis != ReduceAxis::kRow) return check_column_split(d, cfg);
  const int64_t block = int64_t{cfg.elems_per_thread} * cfg.lanes * cfg.warps;
  if (block > d.strip) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.blocks_per_row %d needs elems_per_thread*lanes*warps (%d*%d*%d = %d) at "
        "most the strip %d, so that every pass of a block is one whole strip.",
        cfg.blocks_per_row, cfg.elems_per_thread, cfg.lanes, cfg.warps, block, d.strip));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<tile::Program>> split_phases(const ReduceDesc& d, const ReduceConfig& cfg) {
  const int p = cfg.blocks_per_row;
  const Elem in = *tile::elem_of(d.in_dtype);
  const Elem out = *tile::elem_of(d.out_dtype);
  const int64_t block = int64_t{cfg.elems_per_thread} * cfg.lanes * cfg.warps;
  std::vector<tile::Program> phases;
  // A phase that walks the rows backward (alternate_row_order) is named _<phase>_rev.
  auto start = [&](const std::string& phase, const std::string& grid, int warps) {
    const bool backward = phase_walks_rows_backward(cfg, phases.size());
    Builder b(kernel_name(d, cfg, phase) + (backward ? "_rev" : ""));
    b.set_num_warps(warps);
    b.set_grid(grid);
    return b;
  };
  // The rows parameter of the phase being built when it walks the rows backward,
  // declared after its other parameters; nullopt when it walks them forward.
  auto backward_rows = [&](Builder& b) -> std::optional<Value> {
    if (!phase_walks_rows_backward(cfg, phases.size())) return std::nullopt;
    return b.param("rows", i32_type());
  };
  auto finish = [&](Builder& b) -> absl::Status {
    absl::StatusOr<tile::Program> prog = b.finish();
    if (!prog.ok()) return prog.status();
    phases.push_back(*std::move(prog));
    return absl::OkStatus();
  };

  switch (d.op) {
    case ReduceOp::kSum:
    case ReduceOp::kMax:
    case ReduceOp::kMin: {
      const Combine c = combine_of(d.op);
      {
        Builder b = start("partials", "row_blocks", cfg.warps);
        Value x = b.param("x", tile::Type::ptr(d.in_dtype));
        Value ws = b.param("ws", f32_ptr());
        Value cols = b.param("cols", i32_type());
        SplitFrame f = make_split_frame(b, cols, d.strip, p);
        store_strip_partials(b, f, d, p, ws, c, [&](const PassIndex& pi, float pad) {
          return load_f32(b, x, pi.off, pi.mask, in, pad);
        });
        if (absl::Status s = finish(b); !s.ok()) return s;
      }
      {
        Builder b = start("fold", "rows", 1);
        Value ws = b.param("ws", f32_ptr());
        Value y = b.param("y", tile::Type::ptr(d.out_dtype));
        Value cols = b.param("cols", i32_type());
        SplitFrame f = make_row_frame(b, cols, d.strip);
        Value r = fold_strips(b, f, ws, c);
        b.store(y, f.line.row64, out == Elem::kF32 ? r : b.cast(r, out));
        if (absl::Status s = finish(b); !s.ok()) return s;
      }
      break;
    }
    case ReduceOp::kRmsNorm: {
      {
        Builder b = start("partials", "row_blocks", cfg.warps);
        Value x = b.param("x", tile::Type::ptr(d.in_dtype));
        Value ws = b.param("ws", f32_ptr());
        Value cols = b.param("cols", i32_type());
        SplitFrame f = make_split_frame(b, cols, d.strip, p, backward_rows(b));
        store_strip_partials(b, f, d, p, ws, Combine::kAdd, [&](const PassIndex& pi, float pad) {
          return padded_square(b, pi, load_f32(b, x, pi.off, pi.mask, in, 0.0f), pad);  // (S)
        });
        if (absl::Status s = finish(b); !s.ok()) return s;
      }
      {
        Builder b = start("normalize", "row_blocks", cfg.warps);
        const auto [x, w, ws, y, cols, eps] = rms_norm_out_params(b, d);
        SplitFrame f = make_split_frame(b, cols, d.strip, p, backward_rows(b));
        Value ss = fold_strips(b, f, ws, Combine::kAdd);
        Value r = rms_scale(b, ss, cols, eps);
        split_elementwise(b, f, block, p, [&](const PassIndex& pi) {  // (B) (x_i * r) * w_i
          store_rms_output(b, y, w, pi, load_f32(b, x, pi.off, pi.mask, in, 0.0f), r, in, out);
        });
        if (absl::Status s = finish(b); !s.ok()) return s;
      }
      break;
    }
    case ReduceOp::kSoftmax: {
      {
        Builder b = start("maxpart", "row_blocks", cfg.warps);
        Value x = b.param("x", tile::Type::ptr(d.in_dtype));
        Value wsm = b.param("wsm", f32_ptr());
        Value cols = b.param("cols", i32_type());
        SplitFrame f = make_split_frame(b, cols, d.strip, p, backward_rows(b));
        store_strip_partials(b, f, d, p, wsm, Combine::kMax, [&](const PassIndex& pi, float pad) {
          return load_f32(b, x, pi.off, pi.mask, in, pad);
        });
        if (absl::Status s = finish(b); !s.ok()) return s;
      }
      {
        Builder b = start("exppart", "row_blocks", cfg.warps);
        Value x = b.param("x", tile::Type::ptr(d.in_dtype));
        Value wsm = b.param("wsm", f32_ptr());
        Value wss = b.param("wss", f32_ptr());
        Value cols = b.param("cols", i32_type());
        SplitFrame f = make_split_frame(b, cols, d.strip, p, backward_rows(b));
        Value m = fold_strips(b, f, wsm, Combine::kMax);
        store_strip_partials(b, f, d, p, wss, Combine::kAdd, [&](const PassIndex& pi, float pad) {
          Value v = load_f32(b, x, pi.off, pi.mask, in, 0.0f);
          Value e = b.unary(tile::UnaryOp::kExpNonPositive, b.sub(v, m));
          return b.select(pi.mask, e, b.const_f32(pad));  // (S) e_i, -0.0 padded
        });
        if (absl::Status s = finish(b); !s.ok()) return s;
      }
      {
        Builder b = start("normalize", "row_blocks", cfg.warps);
        const auto [x, wsm, wss, y, cols] = softmax_out_params(b, d);
        SplitFrame f = make_split_frame(b, cols, d.strip, p, backward_rows(b));
        Value m = fold_strips(b, f, wsm, Combine::kMax);
        Value s = fold_strips(b, f, wss, Combine::kAdd);
        split_elementwise(b, f, block, p, [&](const PassIndex& pi) {
          Value v = load_f32(b, x, pi.off, pi.mask, in, 0.0f);
          Value yv = b.div(b.unary(tile::UnaryOp::kExpNonPositive, b.sub(v, m)), s);  // (B) e_i / s
          b.store(y, pi.off, out == Elem::kF32 ? yv : b.cast(yv, out), pi.mask);
        });
        if (absl::Status st = finish(b); !st.ok()) return st;
      }
      break;
    }
  }
  return phases;
}

// ---- Cluster rows (kRmsNorm / kSoftmax, cluster_rows) ---------------------------

// The strips this block keeps in registers: j_i = part + i*P for i < K, each an
// S-element pass at k = j_i * S; `stored` says j_i < n (a kept strip past the row's
// end is all padding: neither stored to ws nor written to y). `rest` is the first
// index k of the strips the block walks in a loop afterwards: (part + K*P) * S.
// `whole` (whole_strips): a kept strip's mask is its flag j_i < n (whole_strip_index).
struct KeptStrips {
  std::vector<PassIndex> pass;  // (S) each
  std::vector<Value> ws_off;    // i64 ws_base + j_i
  std::vector<Value> stored;    // i1 j_i < n
  Value rest;                   // i32
};
KeptStrips kept_strips(Builder& b, const SplitFrame& f, const RowFrame& line, int64_t strip, int p,
                       int kept, bool whole) {
  KeptStrips k;
  Value s = b.const_int(Elem::kI32, strip);
  for (int i = 0; i < kept; ++i) {
    Value j = i == 0 ? f.part : b.add(f.part, b.const_int(Elem::kI32, int64_t{i} * p));
    Value stored = b.compare(tile::CompareOp::kLt, j, f.n);
    k.pass.push_back(whole ? whole_strip_index(b, line, b.mul(j, s), stored) : pass_index(b, line, b.mul(j, s)));
    k.ws_off.push_back(b.add(f.ws_base, b.cast(j, Elem::kI64)));
    k.stored.push_back(stored);
  }
  k.rest = b.mul(b.add(f.part, b.const_int(Elem::kI32, int64_t{kept} * p)), s);
  return k;
}

// The pinned trees of a cluster block's n kept strips, tile(i) building strip i's, each
// from the identity and handed to store(i, tree) (each is stored to ws on its own, never
// chained). Kept in registers, two or more are one unchained reduce_group: their
// partials cross the block together, one barrier for all, then each is stored. Staged
// (keep_in_shared), one reduce a strip, its tile built right before it and its tree
// stored right after it, as reduce_kept_chain does. Storing each staged tree before the
// next strip's is what keeps these kernels small: session 27 stored them all after the
// last tree, and LLVM sank each tree's cross-warp adds into the store's branch, so the
// 16 warp partials of every strip stayed live to the end (RMSNorm 16 x 4, keep 6 in
// shared: 32 -> 121 registers uncapped, 280 spilled bytes a thread at mb 4, ptxas 13.0;
// found in session 33). (Grouped, these kernels first signed apart from the same kernels
// ungrouped: the checker read LLVM's "[%rd+-32]" as a register "%rd+", an unknown named
// by its number; fixed in verify/PtxWalk.cpp, session 27.)
template <class Tile, class Store>
void kept_strip_trees(Builder& b, int n, Tile tile, Store store, Combine c, int64_t strip, bool staged) {
  if (n > 1 && !staged) {
    std::vector<Value> tiles;
    for (int i = 0; i < n; ++i) tiles.push_back(tile(i));
    const std::vector<Value> trees = b.reduce_group(tiles, c, strip, std::nullopt, /*chained=*/false);
    for (int i = 0; i < n; ++i) store(i, trees[i]);
    return;
  }
  for (int i = 0; i < n; ++i) store(i, b.reduce(tile(i), 0, c, TreeOrder::kPinned, strip));
}

// One kernel for a split RMSNorm / softmax row (ReduceProgram.h, "Cluster rows"):
//   kept x (K strips) -> strip trees to ws (kept, then the rest as the partials loop)
//   -> cluster barrier -> fold (as normalize) -> outputs (kept from registers, rest read).
absl::StatusOr<std::vector<tile::Program>> cluster_phase(const ReduceDesc& d, const ReduceConfig& cfg) {
  const int p = cfg.blocks_per_row;
  const int kept = cfg.keep_passes;
  const Elem in = *tile::elem_of(d.in_dtype);
  const Elem out = *tile::elem_of(d.out_dtype);
  Builder b(kernel_name(d, cfg, "cluster"));
  b.set_num_warps(cfg.warps);
  b.set_grid("row_blocks");
  b.set_cluster(p);
  // The rest of the block's strips (those not kept), S elements each, as `body` needs.
  const bool whole = cfg.whole_strips;
  auto rest_strips = [&](const RowFrame& line, Value from, auto body) {
    std::vector<Value> loop = b.begin_for(from, line.cols, b.const_int(Elem::kI32, d.strip * p), {});
    body(loop_pass_index(b, line, loop[0], whole));
    b.end_for({});
  };
  if (d.op == ReduceOp::kRmsNorm) {
    const auto [x, w, ws, y, cols, eps] = rms_norm_out_params(b, d);
    SplitFrame f = make_split_frame(b, cols, d.strip, p);
    RowFrame line = with_extent(b, f.line, d.strip);
    KeptStrips ks = kept_strips(b, f, line, d.strip, p, kept, whole);
    auto square = [&](const PassIndex& pi, Value v, float pad) {
      return padded_square(b, pi, v, pad);  // (S) x_i*x_i, -0.0 padded
    };
    // (S) each: the kept strips of x, loaded before any combine
    const KeptX kx = load_kept(b, x, ks.pass, in, 0.0f, cfg.keep_in_shared);
    kept_strip_trees(b, kept, [&](int i) {
      return square(ks.pass[i], kx.use(b, i), identity(Combine::kAdd));
    }, [&](int i, Value sum) { b.store(ws, ks.ws_off[i], sum, ks.stored[i]); }, Combine::kAdd, d.strip,
                     cfg.keep_in_shared);
    store_strip_partials(b, f, d, p, ws, Combine::kAdd, [&](const PassIndex& pi, float pad) {
      return square(pi, load_f32(b, x, pi.off, pi.mask, in, 0.0f), pad);
    }, ks.rest, whole);
    b.cluster_barrier();  // every ws[row*n + j] of the row is written and visible
    Value ss = fold_strips(b, f, ws, Combine::kAdd);
    Value r = rms_scale(b, ss, cols, eps);
    auto normalize = [&](const PassIndex& pi, Value xv) {
      store_rms_output(b, y, w, pi, xv, r, in, out);  // (S) (x_i * r) * w_i
    };
    // The kept strips' indices and masks are built again after the barrier (a new
    // arange), so they are not held across it.
    const KeptStrips again = kept_strips(b, f, with_extent(b, f.line, d.strip), d.strip, p, kept, whole);
    for (int i = 0; i < kept; ++i) normalize(again.pass[i], kx.use(b, i));
    rest_strips(line, ks.rest, [&](const PassIndex& pi) {
      normalize(pi, load_f32(b, x, pi.off, pi.mask, in, 0.0f));
    });
  } else {
    const auto [x, wsm, wss, y, cols] = softmax_out_params(b, d);
    SplitFrame f = make_split_frame(b, cols, d.strip, p);
    RowFrame line = with_extent(b, f.line, d.strip);
    KeptStrips ks = kept_strips(b, f, line, d.strip, p, kept, whole);
    // (S) each, padded with the max identity -inf
    const KeptX kx = load_kept(b, x, ks.pass, in, identity(Combine::kMax), cfg.keep_in_shared);
    kept_strip_trees(b, kept, [&](int i) { return kx.use(b, i); },
                     [&](int i, Value max) { b.store(wsm, ks.ws_off[i], max, ks.stored[i]); }, Combine::kMax,
                     d.strip, cfg.keep_in_shared);
    store_strip_partials(b, f, d, p, wsm, Combine::kMax, [&](const PassIndex& pi, float pad) {
      return load_f32(b, x, pi.off, pi.mask, in, pad);
    }, ks.rest, whole);
    b.cluster_barrier();  // the row's strip maxima
    Value m = fold_strips(b, f, wsm, Combine::kMax);
    auto exp_of = [&](Value v) { return b.unary(tile::UnaryOp::kExpNonPositive, b.sub(v, m)); };
    // (S) each: e_i of the kept strips (a padded lane's is never used); stage_exp: in
    // shared memory until the outputs read them.
    std::vector<Value> ke;
    kept_strip_trees(b, kept, [&](int i) {
      ke.push_back(kept_exp(b, exp_of(kx.use(b, i)), cfg));
      return padded(b, ks.pass[i], ke[i], identity(Combine::kAdd));
    }, [&](int i, Value sum) { b.store(wss, ks.ws_off[i], sum, ks.stored[i]); }, Combine::kAdd, d.strip,
                     cfg.keep_in_shared);
    store_strip_partials(b, f, d, p, wss, Combine::kAdd, [&](const PassIndex& pi, float pad) {
      Value e = exp_of(load_f32(b, x, pi.off, pi.mask, in, 0.0f));
      return padded(b, pi, e, pad);  // (S) e_i, -0.0 padded
    }, ks.rest, whole);
    b.cluster_barrier();  // the row's strip sums
    Value s = fold_strips(b, f, wss, Combine::kAdd);
    auto store_y = [&](const PassIndex& pi, Value e) {
      Value yv = b.div(e, s);  // (S) e_i / s
      store_in_row(b, y, pi, out == Elem::kF32 ? yv : b.cast(yv, out));
    };
    // As for RMSNorm: the kept strips' indices and masks built again after the barrier.
    const KeptStrips again = kept_strips(b, f, with_extent(b, f.line, d.strip), d.strip, p, kept, whole);
    for (int i = 0; i < kept; ++i) store_y(again.pass[i], output_exp(b, kx, ke, i, exp_of, cfg));
    rest_strips(line, ks.rest, [&](const PassIndex& pi) {
      store_y(pi, exp_of(load_f32(b, x, pi.off, pi.mask, in, 0.0f)));
    });
  }
  absl::StatusOr<tile::Program> prog = b.finish();
  if (!prog.ok()) return prog.status();
  std::vector<tile::Program> v;
  v.push_back(*std::move(prog));
  return v;
}

// ---- Coalesced column reductions (pinned kSum/kMax/kMin) ----------------------

// One chunk of the binary counter that merges the chunk trees of a strip (or of one
// aligned part of it) into its balanced tree. Chunk m's tree t enters at level 0;
// level j keeps t as a left sibling (carried[j]) at the first 0 bit of m and, while
// the bits are 1, merges the kept left sibling with t (left (+) right). `complete`
// (a uniform i1) is set when m's low carried.size() bits are all 1: t is then the
// whole node over the 2^levels chunks ending at m. Example, 2 levels, chunks a b c d:
// m=0 keeps a; m=1 gives a+b, kept at level 1; m=2 keeps c; m=3 gives (a+b)+(c+d).
struct CounterStep {
  Value complete;              // i1: this chunk closes the node
  Value t;                     // (C) the merged subtree (the node when complete)
  std::vector<Value> carried;  // (C) each: the left siblings for the next chunk
};
CounterStep counter_step(Builder& b, Combine c, Value t, Value m, std::vector<Value> carried,
                         Value zero) {
  Value active = b.compare(tile::CompareOp::kEq, zero, zero);   // true
  Value no = b.compare(tile::CompareOp::kNe, zero, zero);       // false
  std::vector<Value> in = carried;
  for (size_t j = 0; j < in.size(); ++j) {
    Value q = b.div(m, b.const_int(Elem::kI32, int64_t{1} << j));
    Value bit = b.sub(q, b.mul(b.div(q, b.const_int(Elem::kI32, 2)), b.const_int(Elem::kI32, 2)));
    Value one = b.compare(tile::CompareOp::kEq, bit, b.const_int(Elem::kI32, 1));
    Value nil = b.compare(tile::CompareOp::kEq, bit, zero);
    Value store_here = b.select(active, nil, no);    // first 0 bit: keep t as a left sibling
    carried[j] = b.select(store_here, t, carried[j]);
    active = b.select(active, one, no);              // a 1 bit: merge with the left sibling
    t = b.select(active, combine_values(b, c, in[j], t), t);
  }
  return {active, t, std::move(carried)};
}

// Block p reduces columns [p*C, p*C + C) (C = threads; blocks past the last column
// run no pass). Each pass loads rows [k, k + Rq) of those columns as one (Rq*C)
// row-major tile — thread t holds Rq consecutive columns of one row, consecutive
// lanes consecutive pieces, so every warp reads whole row segments — and reduces
// it along axis 0 (codegen converts it so each thread holds one column). When
// Rq < S the S/Rq chunk trees of a strip are merged as a binary counter: level j
// keeps the left sibling until bit j of the chunk index completes the pair, so the
// strip's tree is the balanced tree over its S rows; finished strips chain into acc.
absl::StatusOr<tile::Program> coalesced_columns(const ReduceDesc& d, const ReduceConfig& cfg) {
  const Elem in = *tile::elem_of(d.in_dtype);
  const Elem out = *tile::elem_of(d.out_dtype);
  const Combine c = combine_of(d.op);
  const int64_t cw = int64_t{cfg.lanes} * cfg.warps;  // C: columns per block
  const int64_t rq = column_pass_rows(d, cfg);        // Rq: rows per pass
  int levels = 0;                                     // L = log2(S / Rq)
  for (int64_t v = d.strip / rq; v > 1; v /= 2) ++levels;
  Builder b(kernel_name(d, cfg, ""));
  b.set_num_warps(cfg.warps);
  b.set_grid(absl::StrCat("cols/", cw));
  Value x = b.param("x", tile::Type::ptr(d.in_dtype));
  Value y = b.param("y", tile::Type::ptr(d.out_dtype));
  Value rows = b.param("rows", tile::Type::scalar(Elem::kI32));
  Value cols = b.param("cols", tile::Type::scalar(Elem::kI32));
  Value zero = b.const_int(Elem::kI32, 0);
  Value c_w = b.const_int(Elem::kI32, cw);
  Value c0 = b.mul(b.program_id(0), c_w);                          // first column
  Value strip = b.const_int(Elem::kI32, d.strip);
  Value whole = b.mul(b.div(b.add(rows, b.sub(strip, b.const_int(Elem::kI32, 1))), strip), strip);
  Value hi = b.select(b.compare(tile::CompareOp::kLt, c0, cols), whole, zero);  // rows padded to strips
  Value cols64 = b.cast(cols, Elem::kI64);
  Value i = b.arange(rq * cw);                                     // (Rq*C) i32
  Value r_i = b.div(i, c_w);                                       // row in the pass
  Value c_i = b.add(b.sub(i, b.mul(r_i, c_w)), c0);                // column
  Value col_ok = b.compare(tile::CompareOp::kLt, c_i, cols);
  Value ident = b.const_f32(identity(c));
  Value acc0 = b.splat(ident, {cw});                               // (C)
  std::vector<Value> inits(levels + 1, acc0);                      // acc, stack[0..L)
  std::vector<Value> loop = b.begin_for(zero, hi, b.const_int(Elem::kI32, rq), inits);
  Value row = b.add(r_i, loop[0]);                                 // (Rq*C) i32
  Value mask = b.select(col_ok, b.compare(tile::CompareOp::kLt, row, rows), col_ok);
  Value off = b.add(b.mul(b.cast(row, Elem::kI64), cols64), b.cast(c_i, Elem::kI64));
  Value v = load_f32(b, x, off, mask, in, identity(c));            // (Rq*C) f32
  Value tile2 = b.reshape(v, {rq, cw});                            // (Rq, C)
  std::vector<Value> yields;
  if (levels == 0) {
    yields.push_back(b.reduce(tile2, 0, c, TreeOrder::kPinned, d.strip, loop[1]));  // acc (+) strip
  } else {
    Value t = b.reduce(tile2, 0, c, TreeOrder::kPinned, rq);      // (C) this chunk's tree
    Value m = b.div(loop[0], b.const_int(Elem::kI32, rq));        // chunk index
    CounterStep k = counter_step(b, c, t, m, std::vector<Value>(loop.begin() + 2, loop.end()), zero);
    yields.push_back(b.select(k.complete, combine_values(b, c, loop[1], k.t), loop[1]));  // strip done
    for (Value s : k.carried) yields.push_back(s);
  }
  Value acc = b.end_for(yields)[0];
  Value oc = b.add(b.arange(cw), c0);                              // (C) columns
  Value y_ok = b.compare(tile::CompareOp::kLt, oc, cols);
  b.store(y, b.cast(oc, Elem::kI64), out == Elem::kF32 ? acc : b.cast(acc, out), y_ok);
  return b.finish();
}

// ---- Split columns (pinned kSum/kMax/kMin, blocks_per_row = P > 1) -------------

int log2_of(int64_t v) {
  int l = 0;
  for (; v > 1; v /= 2) ++l;
  return l;
}

absl::Status check_column_split(const ReduceDesc& d, const ReduceConfig& cfg) {
  const int p = cfg.blocks_per_row;
  if (d.op != ReduceOp::kSum && d.op != ReduceOp::kMax && d.op != ReduceOp::kMin) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.blocks_per_row %d splits a pinned column sum, max or min; a column "
        "rms_norm or softmax runs one block per column.", p));
  }
  if (!is_pow2(p)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.blocks_per_row %d is not a power of two; a split column cuts every "
        "strip into blocks_per_row aligned parts, nodes of the strip's balanced tree.", p));
  }
  const int64_t rq = column_pass_rows(d, cfg);
  if (p > d.strip / rq) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.blocks_per_row %d exceeds strip / rows per pass (%d / %d = %d) for a "
        "column reduction: each block's part of a strip must hold whole passes.",
        p, d.strip, rq, d.strip / rq));
  }
  return absl::OkStatus();
}

// partials: block b = group*P + part walks, for every strip j, the rows of its part
// (S/P rows from j*S + part*S/P) in passes of Rq rows, merges the chunk trees with
// the counter (log2(S/(P*Rq)) levels) and stores the part's tree to ws. The loop
// index t runs over the part's rows of all strips: t = j*(S/P) + row within the part.
//   for t in [0, span) step Rq:                       // span: S/P per non-empty part
//     row0 = (t / (S/P))*S + part*(S/P) + t % (S/P)
//     tree = reduce(f32(load(x, rows row0.., cols c0..)), axis 0, pinned, strip Rq)  // (C)
//     counter_step(tree); when complete: ws[(j*P + part)*cols + c] = node
// fold: per column c (one thread each), for u in [0, n*P) step U = min(P, 16):
//     U parts' results (padding-only parts read as the identity), pair tree -> node
//     counter_step over log2(P/U) levels; when complete: acc = acc (+) strip result
//   y[c] = out(acc)
absl::StatusOr<std::vector<tile::Program>> column_split_phases(const ReduceDesc& d,
                                                               const ReduceConfig& cfg) {
  const int p = cfg.blocks_per_row;
  const Elem in = *tile::elem_of(d.in_dtype);
  const Elem out = *tile::elem_of(d.out_dtype);
  const Combine c = combine_of(d.op);
  const int64_t cw = int64_t{cfg.lanes} * cfg.warps;  // C: columns per block
  const int64_t rq = column_pass_rows(d, cfg);        // Rq: rows per pass
  const int64_t sp = d.strip / p;                     // S/P: rows of one part of a strip
  const int part_levels = log2_of(sp / rq);           // counter levels inside a part
  constexpr int64_t kFoldParts = 16;                  // loads in flight per fold iteration
  const int64_t u_parts = std::min<int64_t>(p, kFoldParts);  // U: parts one fold iteration loads
  const int fold_levels = log2_of(p / u_parts);       // counter levels over the U-part nodes
  std::vector<tile::Program> phases;
  {
    Builder b(kernel_name(d, cfg, "partials"));
    b.set_num_warps(cfg.warps);
    b.set_grid(absl::StrCat("col_blocks/", cw));
    Value x = b.param("x", tile::Type::ptr(d.in_dtype));
    Value ws = b.param("ws", tile::Type::ptr(DType::kF32));
    Value rows = b.param("rows", tile::Type::scalar(Elem::kI32));
    Value cols = b.param("cols", tile::Type::scalar(Elem::kI32));
    Value zero = b.const_int(Elem::kI32, 0);
    Value one = b.const_int(Elem::kI32, 1);
    Value c_w = b.const_int(Elem::kI32, cw);
    Value pc = b.const_int(Elem::kI32, p);
    Value pid = b.program_id(0);
    Value group = b.div(pid, pc);
    Value part = b.sub(pid, b.mul(group, pc));                        // in [0, P)
    Value c0 = b.mul(group, c_w);                                     // first column
    Value strip = b.const_int(Elem::kI32, d.strip);
    Value sp_c = b.const_int(Elem::kI32, sp);
    Value n = b.add(b.div(b.sub(rows, one), strip), one);             // strips
    Value part_row = b.mul(part, sp_c);                               // part's offset in a strip
    Value last = b.add(b.mul(b.sub(n, one), strip), part_row);        // its first row, last strip
    Value span = b.select(b.compare(tile::CompareOp::kLt, last, rows), b.mul(n, sp_c),
                          b.mul(b.sub(n, one), sp_c));                // padding-only part: skipped
    Value hi = b.select(b.compare(tile::CompareOp::kLt, c0, cols), span, zero);
    Value cols64 = b.cast(cols, Elem::kI64);
    Value i = b.arange(rq * cw);                                      // (Rq*C) i32
    Value r_i = b.div(i, c_w);                                        // row in the pass
    Value c_i = b.add(b.sub(i, b.mul(r_i, c_w)), c0);                 // column
    Value col_ok = b.compare(tile::CompareOp::kLt, c_i, cols);
    Value oc = b.add(b.arange(cw), c0);                               // (C) columns
    Value y_ok = b.compare(tile::CompareOp::kLt, oc, cols);
    Value oc64 = b.cast(oc, Elem::kI64);
    Value ident = b.const_f32(identity(c));
    std::vector<Value> inits(part_levels, b.splat(ident, {cw}));      // carried left siblings
    std::vector<Value> loop = b.begin_for(zero, hi, b.const_int(Elem::kI32, rq), inits);
    Value j = b.div(loop[0], sp_c);                                   // strip
    Value within = b.sub(loop[0], b.mul(j, sp_c));                    // row within the part
    Value row0 = b.add(b.add(b.mul(j, strip), part_row), within);
    Value row = b.add(r_i, row0);                                     // (Rq*C) i32
    Value mask = b.select(col_ok, b.compare(tile::CompareOp::kLt, row, rows), col_ok);
    Value off = b.add(b.mul(b.cast(row, Elem::kI64), cols64), b.cast(c_i, Elem::kI64));
    Value v = load_f32(b, x, off, mask, in, identity(c));             // (Rq*C) f32
    Value tree = b.reduce(b.reshape(v, {rq, cw}), 0, c, TreeOrder::kPinned, rq);  // (C)
    Value slot = b.cast(b.add(b.mul(j, pc), part), Elem::kI64);       // j*P + part
    Value ws_off = b.add(b.mul(slot, cols64), oc64);                  // (C) i64
    if (part_levels == 0) {
      b.store(ws, ws_off, tree, y_ok);                                // the part is one pass
      b.end_for({});
    } else {
      CounterStep k = counter_step(b, c, tree, b.div(within, b.const_int(Elem::kI32, rq)),
                                   std::vector<Value>(loop.begin() + 1, loop.end()), zero);
      Value none = b.compare(tile::CompareOp::kNe, oc, oc);          // (C) false
      b.store(ws, ws_off, k.t, b.select(k.complete, y_ok, none));
      b.end_for(k.carried);
    }
    absl::StatusOr<tile::Program> prog = b.finish();
    if (!prog.ok()) return prog.status();
    phases.push_back(*std::move(prog));
  }
  {
    Builder b(kernel_name(d, cfg, "fold"));
    b.set_num_warps(cfg.warps);
    b.set_grid(absl::StrCat("cols/", cw));
    Value ws = b.param("ws", tile::Type::ptr(DType::kF32));
    Value y = b.param("y", tile::Type::ptr(d.out_dtype));
    Value rows = b.param("rows", tile::Type::scalar(Elem::kI32));
    Value cols = b.param("cols", tile::Type::scalar(Elem::kI32));
    Value zero = b.const_int(Elem::kI32, 0);
    Value one = b.const_int(Elem::kI32, 1);
    Value pc = b.const_int(Elem::kI32, p);
    Value c0 = b.mul(b.program_id(0), b.const_int(Elem::kI32, cw));  // first column
    Value strip = b.const_int(Elem::kI32, d.strip);
    Value sp_c = b.const_int(Elem::kI32, sp);
    Value n = b.add(b.div(b.sub(rows, one), strip), one);             // strips
    Value hi = b.select(b.compare(tile::CompareOp::kLt, c0, cols), b.mul(n, pc), zero);
    Value cols64 = b.cast(cols, Elem::kI64);
    Value oc = b.add(b.arange(cw), c0);                               // (C) columns
    Value y_ok = b.compare(tile::CompareOp::kLt, oc, cols);
    Value oc64 = b.cast(oc, Elem::kI64);
    Value none = b.compare(tile::CompareOp::kNe, oc, oc);             // (C) false
    Value ident = b.const_f32(identity(c));
    std::vector<Value> inits(fold_levels + 1, b.splat(ident, {cw}));  // acc, carried
    std::vector<Value> loop = b.begin_for(zero, hi, b.const_int(Elem::kI32, u_parts), inits);
    Value j = b.div(loop[0], pc);                                     // strip
    Value p0 = b.sub(loop[0], b.mul(j, pc));                          // first part of the U
    Value first_row = b.add(b.mul(j, strip), b.mul(p0, sp_c));
    std::vector<Value> node;                                          // U x (C)
    for (int64_t k = 0; k < u_parts; ++k) {
      Value start = b.add(first_row, b.const_int(Elem::kI32, k * sp));
      Value has_rows = b.compare(tile::CompareOp::kLt, start, rows);  // else padding only
      Value slot = b.cast(b.add(loop[0], b.const_int(Elem::kI32, k)), Elem::kI64);
      node.push_back(b.load(ws, b.add(b.mul(slot, cols64), oc64), b.select(has_rows, y_ok, none), ident));
    }
    while (node.size() > 1) {                                         // pairs, counting up
      std::vector<Value> next;
      for (size_t k = 0; k + 1 < node.size(); k += 2) next.push_back(combine_values(b, c, node[k], node[k + 1]));
      node = std::move(next);
    }
    std::vector<Value> yields;
    if (fold_levels == 0) {
      yields.push_back(combine_values(b, c, loop[1], node[0]));      // acc (+) strip
    } else {
      CounterStep k = counter_step(b, c, node[0], b.div(p0, b.const_int(Elem::kI32, u_parts)),
                                   std::vector<Value>(loop.begin() + 2, loop.end()), zero);
      yields.push_back(b.select(k.complete, combine_values(b, c, loop[1], k.t), loop[1]));  // strip done
      for (Value s : k.carried) yields.push_back(s);
    }
    Value acc = b.end_for(yields)[0];
    b.store(y, oc64, out == Elem::kF32 ? acc : b.cast(acc, out), y_ok);
    absl::StatusOr<tile::Program> prog = b.finish();
    if (!prog.ok()) return prog.status();
    phases.push_back(*std::move(prog));
  }
  return phases;
}

}  // namespace

absl::StatusOr<int64_t> grid_blocks(const std::string& grid, int64_t rows, int64_t cols,
                                    int64_t blocks_per_row) {
  if (grid == "rows") return rows;
  if (grid == "cols") return cols;
  if (grid == "row_blocks") return rows * blocks_per_row;
  int64_t per = 0;
  if (absl::StartsWith(grid, "rows/") && absl::SimpleAtoi(grid.substr(5), &per) && per > 0) {
    return rows < 1 ? 0 : (rows - 1) / per + 1;
  }
  if (absl::StartsWith(grid, "cols/") && absl::SimpleAtoi(grid.substr(5), &per) && per > 0) {
    return cols < 1 ? 0 : (cols - 1) / per + 1;
  }
  if (absl::StartsWith(grid, "col_blocks/") && absl::SimpleAtoi(grid.substr(11), &per) && per > 0) {
    return cols < 1 ? 0 : ((cols - 1) / per + 1) * blocks_per_row;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "Program.grid \"", grid, "\" is not rows, cols, row_blocks, rows/<R>, cols/<C> or col_blocks/<C>."));
}

bool phase_walks_rows_backward(const ReduceConfig& c, size_t phase) {
  return c.alternate_row_order && c.blocks_per_row > 1 && !c.cluster_rows && phase % 2 == 1;
}

int64_t strip_count(const ReduceDesc& d, int64_t cols) {
  return cols < 1 ? 0 : (cols - 1) / d.strip + 1;
}

int64_t split_workspace_floats(const ReduceDesc& d, int blocks_per_row, int64_t rows, int64_t cols) {
  if (d.axis == ReduceAxis::kRow) return rows * strip_count(d, cols);
  return strip_count(d, rows) * blocks_per_row * cols;
}

namespace {

absl::StatusOr<std::vector<tile::Program>> split_kernels(const ReduceDesc& d, const ReduceConfig& cfg) {
  absl::StatusOr<int64_t> q = check_all(d, cfg);
  if (!q.ok()) return q.status();
  if (absl::Status s = check_split(d, cfg); !s.ok()) return s;
  if (d.axis == ReduceAxis::kColumn) return column_split_phases(d, cfg);
  if (cfg.cluster_rows) return cluster_phase(d, cfg);
  return split_phases(d, cfg);
}

absl::StatusOr<tile::Program> one_kernel(const ReduceDesc& d, const ReduceConfig& cfg);  // below

}  // namespace

absl::StatusOr<std::vector<tile::Program>> reduce_phases(const ReduceDesc& d, const ReduceConfig& cfg) {
  if (cfg.blocks_per_row == 1) {
    absl::StatusOr<tile::Program> one = reduce(d, cfg);
    if (!one.ok()) return one.status();
    std::vector<tile::Program> v;
    v.push_back(*std::move(one));
    return v;
  }
  absl::StatusOr<std::vector<tile::Program>> progs = split_kernels(d, cfg);
  if (progs.ok()) {
    for (tile::Program& p : *progs) {
      p.min_blocks_per_sm = cfg.min_blocks_per_sm;  // validated: [0, 32]
      p.divide_by_reciprocal = cfg.divide_by_reciprocal;
    }
  }
  return progs;
}

absl::StatusOr<tile::Program> reduce(const ReduceDesc& d, const ReduceConfig& cfg) {
  absl::StatusOr<tile::Program> p = one_kernel(d, cfg);
  if (p.ok()) {
    p->min_blocks_per_sm = cfg.min_blocks_per_sm;  // validated: [0, 32]
    p->divide_by_reciprocal = cfg.divide_by_reciprocal;
  }
  return p;
}

namespace {

absl::StatusOr<tile::Program> one_kernel(const ReduceDesc& d, const ReduceConfig& cfg) {
  absl::StatusOr<int64_t> checked = check_all(d, cfg);
  if (!checked.ok()) return checked.status();
  if (cfg.blocks_per_row != 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "dsl::reduce: ReduceConfig.blocks_per_row %d splits a row over several kernels; build "
        "them with dsl::reduce_phases.", cfg.blocks_per_row));
  }
  if (d.axis == ReduceAxis::kColumn && d.order == TreeOrder::kPinned &&
      (d.op == ReduceOp::kSum || d.op == ReduceOp::kMax || d.op == ReduceOp::kMin)) {
    return coalesced_columns(d, cfg);
  }
  const int64_t q = *checked;
  const int64_t block = int64_t{cfg.elems_per_thread} * cfg.lanes * cfg.warps;
  const Elem in = *tile::elem_of(d.in_dtype);
  const Elem out = *tile::elem_of(d.out_dtype);
  Builder b(kernel_name(d, cfg, ""));
  b.set_num_warps(cfg.warps);
  const bool by_row = d.axis == ReduceAxis::kRow;
  // rows_per_block R > 1 (check_all: rows): ceil(rows / R) blocks (block_rows).
  b.set_grid(!by_row ? "cols" : cfg.rows_per_block > 1 ? absl::StrCat("rows/", cfg.rows_per_block) : "rows");
  // whole_strips: a row of whole passes (check_all: kRow, pinned), so the loops' passes
  // are unmasked and a kept pass is guarded by its one flag (whole_strip_index).
  const bool whole = cfg.whole_strips;
  // kRow: cols (i32); kColumn: rows, cols (i32, i32). Declared after the pointers.
  // Returns (line length, column stride if kColumn); emits no op.
  auto line_params = [&]() -> std::pair<Value, std::optional<Value>> {
    if (by_row) return {b.param("cols", tile::Type::scalar(Elem::kI32)), std::nullopt};
    Value rows = b.param("rows", tile::Type::scalar(Elem::kI32));
    return {rows, b.param("cols", tile::Type::scalar(Elem::kI32))};
  };

  switch (d.op) {
    case ReduceOp::kSum:
    case ReduceOp::kMax:
    case ReduceOp::kMin: {
      Combine c = combine_of(d.op);
      Value x = b.param("x", tile::Type::ptr(d.in_dtype));
      Value y = b.param("y", tile::Type::ptr(d.out_dtype));
      auto [len, width] = line_params();
      RowFrame f = make_frame(b, len, width, q);
      Value r = reduce_row(b, f, d, q, cfg.elems_per_thread, c, [&](const PassIndex& p, float pad) {
        return load_f32(b, x, p.off, p.mask, in, pad);
      }, 0, NoKept{}, whole);
      b.store(y, f.row64, out == Elem::kF32 ? r : b.cast(r, out));
      break;
    }
    case ReduceOp::kRmsNorm: {
      Value x = b.param("x", tile::Type::ptr(d.in_dtype));
      Value w = b.param("w", tile::Type::ptr(d.in_dtype));
      Value y = b.param("y", tile::Type::ptr(d.out_dtype));
      auto [len, width] = line_params();
      Value eps = b.param("eps", tile::Type::scalar(Elem::kF32));
      std::optional<Value> rows;
      if (cfg.rows_per_block > 1) rows = b.param("rows", tile::Type::scalar(Elem::kI32));
      auto square = [&](const PassIndex& p, Value v, float pad) {
        return padded_square(b, p, v, pad);  // (Q) x_i*x_i, -0.0 padded
      };
      // keep_passes N: the row's first N passes (k = 0, Q, ...) are loaded once, all
      // before any combine, and kept in registers for the elementwise pass, so a row
      // of at most N*Q elements is read once.
      const int keep = cfg.keep_passes;
      block_rows(b, cfg, x, len, width, q, in, 0.0f, whole, rows,
                 [&](const RowFrame& f, const std::vector<PassIndex>& kp, const KeptX& kx) {
        Value ss = reduce_row(b, f, d, q, cfg.elems_per_thread, Combine::kAdd, [&](const PassIndex& p, float pad) {
          return square(p, load_f32(b, x, p.off, p.mask, in, 0.0f), pad);
        }, keep, [&](int j) { return square(kp[j], kx.use(b, j), identity(Combine::kAdd)); }, whole,
        kx.staged);
        Value r = rms_scale(b, ss, f.cols, eps);
        auto normalize = [&](const PassIndex& p, Value xv) {
          store_rms_output(b, y, w, p, xv, r, in, out);  // (x_i * r) * w_i
        };
        for (int j = 0; j < keep; ++j) normalize(kp[j], kx.use(b, j));  // (Q) elements [jQ, jQ+Q), kept
        RowFrame fe = q == block ? f : with_extent(b, f, block);  // elementwise: (B) chunks
        std::vector<Value> loop = b.begin_for(kept_end(b, f, q, keep), fe.cols, fe.step, {});
        PassIndex p = loop_pass_index(b, fe, loop[0], whole);
        normalize(p, load_f32(b, x, p.off, p.mask, in, 0.0f));
        b.end_for({});
      });
      break;
    }
    case ReduceOp::kSoftmax: {
      Value x = b.param("x", tile::Type::ptr(d.in_dtype));
      Value y = b.param("y", tile::Type::ptr(d.out_dtype));
      auto [len, width] = line_params();
      std::optional<Value> rows;
      if (cfg.rows_per_block > 1) rows = b.param("rows", tile::Type::scalar(Elem::kI32));
      // keep_passes N: the first N passes are loaded once, padded with the max
      // identity -inf, and serve all three passes (a padded lane's exp is never kept
      // or stored).
      const int keep = cfg.keep_passes;
      block_rows(b, cfg, x, len, width, q, in, identity(Combine::kMax), whole, rows,
                 [&](const RowFrame& f, const std::vector<PassIndex>& kp, const KeptX& kx) {
        Value m = reduce_row(b, f, d, q, cfg.elems_per_thread, Combine::kMax, [&](const PassIndex& p, float pad) {
          return load_f32(b, x, p.off, p.mask, in, pad);
        }, keep, [&](int j) { return kx.use(b, j); }, whole, kx.staged);
        auto exp_of = [&](Value v) { return b.unary(tile::UnaryOp::kExpNonPositive, b.sub(v, m)); };
        std::vector<Value> ke;  // (Q) e_i of pass j (stage_exp: in shared memory)
        Value s = reduce_row(b, f, d, q, cfg.elems_per_thread, Combine::kAdd, [&](const PassIndex& p, float pad) {
          Value e = exp_of(load_f32(b, x, p.off, p.mask, in, 0.0f));
          return padded(b, p, e, pad);  // (Q) e_i, -0.0 padded
        }, keep, [&](int j) {
          ke.push_back(kept_exp(b, exp_of(kx.use(b, j)), cfg));
          return padded(b, kp[j], ke[j], identity(Combine::kAdd));
        }, whole, kx.staged);
        auto store_y = [&](const PassIndex& p, Value e) {
          Value yv = b.div(e, s);  // e_i / s
          store_in_row(b, y, p, out == Elem::kF32 ? yv : b.cast(yv, out));
        };
        for (int j = 0; j < keep; ++j) {  // (Q) elements [jQ, jQ+Q): e_i kept, or again from shared x
          store_y(kp[j], output_exp(b, kx, ke, j, exp_of, cfg));
        }
        RowFrame fe = q == block ? f : with_extent(b, f, block);  // elementwise: (B) chunks
        std::vector<Value> loop = b.begin_for(kept_end(b, f, q, keep), fe.cols, fe.step, {});
        PassIndex p = loop_pass_index(b, fe, loop[0], whole);
        store_y(p, exp_of(load_f32(b, x, p.off, p.mask, in, 0.0f)));
        b.end_for({});
      });
      break;
    }
  }
  return b.finish();
}

}  // namespace

}  // namespace fixbits::dsl
