// GemmProgram: builds the tile programs of a GemmDesc. A plain scalar_fma GEMM with
// BLOCK_M rows per block and BLOCK_N = 2 reads (one thread per row, columns unrolled):
//   rows = pid.y*BLOCK_M + arange(BLOCK_M)                       // (BLOCK_M) i64
//   acc0 = acc1 = +0.0                                            // (BLOCK_M) f32
//   for k in [0, K):
//     av   = f32(load(a, rows*a_sm + k*a_sk, rows < M, 0))        // (BLOCK_M)
//     acc0 = fma(av, f32(b[k*b_sk + n0*b_sn]), acc0)              // b is uniform
//     acc1 = fma(av, f32(b[k*b_sk + n1*b_sn]), acc1)
//   out[rows*N + n_j] = round(epilogue(acc_j))                    // masked
// A cut level wraps the leaf in a loop over its parts, chained from -0.0 (exact:
// -0.0 + p == p), or for an inner tree fold kept in slots and folded by a
// butterfly after the loop; the top level of an empty K gives +0.0, as the
// reference does. Family gemv deals a tile of S*G elements (G outputs of one row,
// S = lane_slots(lanes) slots each, the absent ones -0.0) and folds lanes with
// xor_permute in lane_fold's order.
// Family dot is two programs: one block of the grid-stride loop per (column, row,
// block) writing its partial, and the merge kernel's 128 lanes per output, both on one
// warp so every exchange stays inside it.
// The matrix paths (mma_sync, wgmma) give each warp warp_m_tiles x warp_n_tiles
// output tiles of 16x8 held as mma.sync fragments (A reused across a row of tiles,
// B across a column); a turn loop over k_loop_step runs a group loop of one instruction per
// instruction_k elements (masked loads give the zero padding).
#include "dsl/tile/GemmProgram.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_format.h"

namespace fixbits::dsl {
namespace {

using tile::Builder;
using tile::CompareOp;
using tile::Elem;
using tile::Type;
using tile::Value;

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

absl::Status unimplemented(const std::string& msg) { return absl::UnimplementedError(msg); }

absl::Status check_io_dtype(const char* field, DType t) {
  if (t != DType::kF32 && t != DType::kF16 && t != DType::kBF16) {
    return unimplemented(absl::StrFormat(
        "dsl::gemm: GemmDesc.%s is %s; the generated kernels read and write f32, f16 and bf16 "
        "only so far.",
        field, std::string(dtype_name(t))));
  }
  return absl::OkStatus();
}

// A tree fold keeps every part of its level in registers until the level ends.
constexpr int64_t kMaxTreeParts = 64;
int64_t max_parts(const GemmDesc& d, size_t i) {
  return (d.k_cuts[i - 1].span + d.k_cuts[i].span - 1) / d.k_cuts[i].span;
}

bool is_matrix(Instruction i) { return i == Instruction::kMmaSync || i == Instruction::kWgmma; }

absl::Status check_desc(const GemmDesc& d) {
  if (absl::Status s = validate(d); !s.ok()) return s;
  const bool half_pair = (d.a_dtype == DType::kF16 || d.a_dtype == DType::kBF16) &&
                         d.b_dtype == d.a_dtype;
  const bool half_in = half_pair && d.instruction_k == 16;
  const bool fp8_in = dtype_is_fp8(d.a_dtype) && dtype_is_fp8(d.b_dtype) && d.instruction_k == 32;
  // instruction_k 8 (m16n8k8) runs as m16n8k16 whose upper 8 products are masked to
  // +0.0: under the sm_90 model (MmaModel.h) zero terms change neither the largest
  // exponent nor the exact sum, so it is the 8-product instruction's value.
  if (d.instruction == Instruction::kMmaSync && !(half_pair && (d.instruction_k == 16 ||
                                                               d.instruction_k == 8))) {
    return unimplemented(absl::StrFormat(
        "dsl::gemm: GemmDesc.a_dtype is %s; mma_sync is generated for f16 and bf16 inputs "
        "(m16n8k16, and m16n8k8 as m16n8k16 with the upper half zero) only (mma.sync with "
        "fp8 does not follow the measured sm_90 model, see docs/mma-model.md: use "
        "instruction wgmma for fp8).",
        std::string(dtype_name(d.a_dtype))));
  }
  if (d.instruction == Instruction::kWgmma && !half_in && !fp8_in) {
    return unimplemented(absl::StrFormat(
        "dsl::gemm: GemmDesc.a_dtype %s with b_dtype %s and instruction_k %d; wgmma is "
        "generated for f16 x f16 or bf16 x bf16 (m64n8k16) and e4m3/e5m2 x e4m3/e5m2 "
        "(m64n8k32).",
        std::string(dtype_name(d.a_dtype)), std::string(dtype_name(d.b_dtype)),
        d.instruction_k));
  }
  if (!(d.instruction == Instruction::kWgmma && fp8_in)) {
    if (absl::Status s = check_io_dtype("a_dtype", d.a_dtype); !s.ok()) return s;
    if (absl::Status s = check_io_dtype("b_dtype", d.b_dtype); !s.ok()) return s;
  }
  if (absl::Status s = check_io_dtype("out_dtype", d.out_dtype); !s.ok()) return s;
  if (absl::Status s = check_io_dtype("partial_dtype", d.partial_dtype); !s.ok()) return s;
  if (absl::Status s = check_io_dtype("merge_dtype", d.merge_dtype); !s.ok()) return s;
  if (d.acc_dtype != DType::kF32) {
    return unimplemented(absl::StrFormat(
        "dsl::gemm: GemmDesc.acc_dtype is %s; the generated kernels accumulate in f32.",
        std::string(dtype_name(d.acc_dtype))));
  }
  for (size_t i = 0; i < d.k_cuts.size(); ++i) {
    const bool split = has_split(d) && i == 0;
    if (split || d.k_cuts[i].fold == Fold::kChain) continue;
    const char* fold = d.k_cuts[i].fold == Fold::kTreeUp ? "tree_up" : "tree_down";
    if (i == 0) {
      return unimplemented(absl::StrFormat(
          "dsl::gemm: GemmDesc.k_cuts[0].fold is %s; a tree fold is generated only for an "
          "inner level (its part count must be bounded by the enclosing span).",
          fold));
    }
    if (max_parts(d, i) > kMaxTreeParts) {
      return unimplemented(absl::StrFormat(
          "dsl::gemm: GemmDesc.k_cuts[%d].fold is %s over up to %d parts (span %d inside %d); "
          "tree folds are generated for at most %d parts.",
          i, fold, max_parts(d, i), d.k_cuts[i].span, d.k_cuts[i - 1].span, kMaxTreeParts));
    }
  }
  return absl::OkStatus();
}

Value to_f32(Builder& b, Value v, Elem from) { return from == Elem::kF32 ? v : b.cast(v, Elem::kF32); }
Value from_f32(Builder& b, Value v, Elem to) { return to == Elem::kF32 ? v : b.cast(v, to); }
// x rounded to `t` and widened back (the exact value an f32 of it would hold).
Value round_to(Builder& b, Value x, Elem t) {
  return t == Elem::kF32 ? x : b.cast(b.cast(x, t), Elem::kF32);
}
Value i64(Builder& b, int64_t v) { return b.const_int(Elem::kI64, v); }

// The parameters the product part of every kernel reads.
struct Operands {
  Value a, b, m, n, k;             // m, n, k as i64
  Value a_sm, a_sk, b_sk, b_sn;    // i64 strides
  Elem a_elem = Elem::kF32, b_elem = Elem::kF32;
};

// One fold step of the leaf instruction: acc (+)= a * b.
Value leaf_step(Builder& b, Instruction ins, Value acc, Value av, Value bv) {
  if (ins == Instruction::kScalarFma) return b.fma(av, bv, acc);
  return b.add(acc, b.mul(av, bv));  // two roundings: codegen never contracts
}

// Accumulators of one block: BLOCK_N column tiles (plain) or one lane tile (gemv).
using Accs = std::vector<Value>;
using LeafFn = std::function<Accs(Value k0, Value k1)>;

// A tree level (inner levels only, at most kMaxTreeParts parts): the parts are kept
// in slots (slot j = part j, the rest -0.0, the padding), and after the loop the
// butterfly over the padded size S = next power of two >= part count is taken;
// each candidate S is built and the actual one selected (S is known only at run time).
Accs tree_level(Builder& b, const GemmDesc& d, size_t i, Value k0, Value k1,
                const Accs& shape_like, const LeafFn& leaf);

// level(i, [k0, k1)) of GemmDesc.h for cut levels i..end: a chain level starts
// from -0.0 (each part computed from +0.0 by the next level or the leaf).
Accs level(Builder& b, const GemmDesc& d, size_t i, Value k0, Value k1, const Accs& shape_like,
           const LeafFn& leaf) {
  if (i == d.k_cuts.size()) return leaf(k0, k1);
  if (d.k_cuts[i].fold != Fold::kChain) return tree_level(b, d, i, k0, k1, shape_like, leaf);
  Value neg_zero = b.const_f32(-0.0f);
  Accs inits;
  for (Value v : shape_like) inits.push_back(b.splat(neg_zero, b.type_of(v).shape));
  std::vector<Value> loop = b.begin_for(k0, k1, i64(b, d.k_cuts[i].span), inits);
  Value hi = b.min(b.add(loop[0], i64(b, d.k_cuts[i].span)), k1);
  Accs parts = level(b, d, i + 1, loop[0], hi, shape_like, leaf);
  Accs yields;
  for (size_t j = 0; j < parts.size(); ++j) yields.push_back(b.add(loop[1 + j], parts[j]));
  return b.end_for(yields);
}

// v[0] of a butterfly over `v` (a power of two of values, padding included): every
// lane l sets v[l] = v[l] (+) v[l ^ off] for each offset in order; only the adds
// v[0] depends on are emitted (a tree of v.size() - 1 adds).
Value butterfly_root(Builder& b, const std::vector<Value>& v, const std::vector<int64_t>& offs) {
  std::function<Value(int64_t, size_t)> at = [&](int64_t l, size_t round) -> Value {
    if (round == 0) return v[l];
    return b.add(at(l, round - 1), at(l ^ offs[round - 1], round - 1));
  };
  return at(0, offs.size());
}

// The top of the tree: an empty K range gives +0.0 (only a cut level can see one
// as -0.0, the chain's start).
Accs top(Builder& b, const GemmDesc& d, size_t first, Value k0, Value k1, const Accs& shape_like,
         const LeafFn& leaf) {
  Accs r = level(b, d, first, k0, k1, shape_like, leaf);
  if (first == d.k_cuts.size()) return r;
  Value nonempty = b.compare(CompareOp::kLt, k0, k1);
  Value zero = b.const_f32(0.0f);
  for (Value& v : r) v = b.select(nonempty, v, zero);
  return r;
}

Accs tree_level(Builder& b, const GemmDesc& d, size_t i, Value k0, Value k1,
                const Accs& shape_like, const LeafFn& leaf) {
  const int64_t span = d.k_cuts[i].span;
  const int64_t pmax = max_parts(d, i);
  int64_t smax = 1;
  while (smax < pmax) smax *= 2;
  const size_t na = shape_like.size();
  Value neg_zero = b.const_f32(-0.0f);
  Accs inits;  // slot q of accumulator a is inits[a * smax + q]
  for (size_t a = 0; a < na; ++a) {
    Value pad = b.splat(neg_zero, b.type_of(shape_like[a]).shape);
    for (int64_t q = 0; q < smax; ++q) inits.push_back(pad);
  }
  std::vector<Value> loop = b.begin_for(k0, k1, i64(b, span), inits);
  Value hi = b.min(b.add(loop[0], i64(b, span)), k1);
  Accs parts = level(b, d, i + 1, loop[0], hi, shape_like, leaf);
  Value j = b.div(b.sub(loop[0], k0), i64(b, span));  // this part's index
  Accs yields;
  for (size_t a = 0; a < na; ++a) {
    for (int64_t q = 0; q < smax; ++q) {
      Value slot = loop[1 + a * smax + q];
      yields.push_back(q < pmax ? b.select(b.compare(CompareOp::kEq, j, i64(b, q)), parts[a], slot)
                                : slot);
    }
  }
  Accs slots = b.end_for(yields);
  Value count = b.div(b.add(b.sub(k1, k0), i64(b, span - 1)), i64(b, span));
  Accs out;
  for (size_t a = 0; a < na; ++a) {
    Value r = slots[a * smax];  // one part: S = 1
    for (int64_t size = 2; size <= smax; size *= 2) {
      std::vector<int64_t> offs;
      for (int64_t o = 1; o < size; o *= 2) offs.push_back(o);
      if (d.k_cuts[i].fold == Fold::kTreeDown) std::reverse(offs.begin(), offs.end());
      std::vector<Value> v(slots.begin() + a * smax, slots.begin() + a * smax + size);
      Value tree = butterfly_root(b, v, offs);
      r = b.select(b.compare(CompareOp::kGt, count, i64(b, size / 2)), tree, r);
    }
    out.push_back(r);
  }
  return out;
}

// The epilogue of GemmDesc.h on one (rows) tile `e` of column(s) `n_off`:
// alpha/beta with c at `c_off`, bias at `n_off`, relu.
struct Epilogue {
  Value c, bias, alpha, beta;  // params (unused ones are never read)
  Elem out_elem = Elem::kF32;
};
Value apply_epilogue(Builder& b, const GemmDesc& d, const Epilogue& ep, Value e, Value c_off,
                     Value c_mask, Value bias_off, Value bias_mask) {
  if (d.alpha_beta) {
    Value cv = to_f32(b, b.load(ep.c, c_off, c_mask, b.const_float(ep.out_elem, 0.0f)), ep.out_elem);
    e = b.fma(ep.beta, cv, b.mul(ep.alpha, e));
  }
  if (d.bias) e = b.add(e, b.load(ep.bias, bias_off, bias_mask, b.const_f32(0.0f)));
  if (d.activation == Activation::kRelu) {
    Value zero = b.const_f32(0.0f);
    e = b.select(b.compare(CompareOp::kGt, e, zero), e, zero);  // -0.0, NaN -> +0.0
  }
  return e;
}

// Rows and columns of a non-gemv block: rows pid.y*BLOCK_M + arange, columns
// pid.x*BLOCK_N + j.
struct BlockFrame {
  Value rows;                 // (BM) i64
  Value row_ok;               // (BM) i1
  Value a_row_off;            // (BM) i64 = rows * a_sm
  std::vector<Value> col;     // BLOCK_N scalars i64
  std::vector<Value> col_ok;  // BLOCK_N scalars i1
  std::vector<Value> mask;    // BLOCK_N (BM) i1: row and column in bounds
};

BlockFrame block_frame(Builder& b, const GemmConfig& cfg, const Operands& o) {
  BlockFrame f;
  const int64_t bm = block_m(cfg);
  Value row0 = b.mul(b.cast(b.program_id(1), Elem::kI64), i64(b, bm));
  f.rows = b.add(b.cast(b.arange(bm), Elem::kI64), row0);
  f.row_ok = b.compare(CompareOp::kLt, f.rows, o.m);
  f.a_row_off = b.mul(f.rows, o.a_sm);
  Value col0 = b.mul(b.cast(b.program_id(0), Elem::kI64), i64(b, cfg.block_n));
  Value zero = i64(b, 0);
  for (int j = 0; j < cfg.block_n; ++j) {
    Value n = b.add(col0, i64(b, j));
    Value ok = b.compare(CompareOp::kLt, n, o.n);
    f.col.push_back(n);
    f.col_ok.push_back(ok);
    // rows < (n < N ? M : 0): in bounds in both dimensions, with no i1 "and".
    f.mask.push_back(b.compare(CompareOp::kLt, f.rows, b.select(ok, o.m, zero)));
  }
  return f;
}

// The scalar leaf of a non-gemv block: BLOCK_N accumulators over [k0, k1).
LeafFn plain_leaf(Builder& b, const GemmDesc& d, const GemmConfig& cfg, const Operands& o,
                  const BlockFrame& f) {
  return [&b, &d, &cfg, o, f](Value k0, Value k1) {
    const int64_t bm = block_m(cfg);
    Value seed = b.const_f32(d.neg_zero_seed ? -0.0f : 0.0f);  // GemmDesc.h, "seed"
    Accs inits(cfg.block_n, b.splat(seed, {bm}));
    std::vector<Value> loop = b.begin_for(k0, k1, i64(b, 1), inits);
    Value k = loop[0];
    Value a_off = b.add(f.a_row_off, b.mul(k, o.a_sk));                  // (BM) i64
    Value av = to_f32(b, b.load(o.a, a_off, f.row_ok, b.const_float(o.a_elem, 0.0f)), o.a_elem);
    Value b_row = b.mul(k, o.b_sk);
    Accs yields;
    for (int j = 0; j < cfg.block_n; ++j) {
      Value b_off = b.add(b_row, b.mul(f.col[j], o.b_sn));
      Value bv = to_f32(b, b.load(o.b, b_off, f.col_ok[j], b.const_float(o.b_elem, 0.0f)), o.b_elem);
      yields.push_back(leaf_step(b, d.instruction, loop[1 + j], av, bv));
    }
    return b.end_for(yields);
  };
}

Operands read_operands(Builder& b, const GemmDesc& d) {
  Operands o;
  o.a_elem = *tile::elem_of(d.a_dtype);
  o.b_elem = *tile::elem_of(d.b_dtype);
  o.a = b.param("a", Type::ptr(d.a_dtype));
  o.b = b.param("b", Type::ptr(d.b_dtype));
  return o;
}

// Declares m, n (and k) as i32 params; widen_sizes() turns them into i64 values
// once every parameter is declared (the Builder wants params before any op).
void declare_sizes(Builder& b, Operands& o, bool with_k) {
  o.m = b.param("m", Type::scalar(Elem::kI32));
  o.n = b.param("n", Type::scalar(Elem::kI32));
  if (with_k) o.k = b.param("k", Type::scalar(Elem::kI32));
}

void widen_sizes(Builder& b, Operands& o, bool with_k) {
  o.m = b.cast(o.m, Elem::kI64);
  o.n = b.cast(o.n, Elem::kI64);
  if (with_k) o.k = b.cast(o.k, Elem::kI64);
}

void read_strides(Builder& b, Operands& o) {
  o.a_sm = b.param("a_sm", Type::scalar(Elem::kI64));
  o.a_sk = b.param("a_sk", Type::scalar(Elem::kI64));
  o.b_sk = b.param("b_sk", Type::scalar(Elem::kI64));
  o.b_sn = b.param("b_sn", Type::scalar(Elem::kI64));
}

Epilogue read_epilogue(Builder& b, const GemmDesc& d, Value* out) {
  Epilogue ep;
  ep.out_elem = *tile::elem_of(d.out_dtype);
  *out = b.param("out", Type::ptr(d.out_dtype));
  ep.c = b.param("c", Type::ptr(d.out_dtype));
  ep.bias = b.param("bias", Type::ptr(DType::kF32));
  return ep;
}

std::string kernel_name(const GemmDesc& d, const GemmConfig& c, const char* what) {
  // The register-blocking knobs show only when set, so 1x1 kernels keep their names.
  const std::string tiles = c.warp_m_tiles == 1 && c.warp_n_tiles == 1
                                ? ""
                                : absl::StrFormat("_wm%d_wn%d", c.warp_m_tiles, c.warp_n_tiles);
  return absl::StrFormat("fixbits_gemm_%016x_w%d_r%d_n%d%s_%s", hash(d), c.warps,
                         c.rows_per_thread, c.block_n, tiles, what);
}

// Where a block's accumulators land: accumulator j covers rows[j] x cols[j]
// (tiles, or scalars that broadcast), in bounds where mask[j]; leaf() computes
// them over a K range.
struct OutFrame {
  Accs shape_like;
  std::vector<Value> rows, cols, col_ok, mask;
  LeafFn leaf;
};

OutFrame scalar_frame(Builder& b, const GemmDesc& d, const GemmConfig& cfg, const Operands& o) {
  BlockFrame f = block_frame(b, cfg, o);
  OutFrame out;
  out.shape_like.assign(cfg.block_n, f.a_row_off);  // (BM) tiles
  out.rows.assign(cfg.block_n, f.rows);
  out.cols = f.col;
  out.col_ok = f.col_ok;
  out.mask = f.mask;
  out.leaf = plain_leaf(b, d, cfg, o, f);
  return out;
}

OutFrame mma_frame(Builder& b, const GemmDesc& d, const GemmConfig& cfg, const Operands& o);

OutFrame gemv_frame(Builder& b, const GemmDesc& d, const GemmConfig& cfg, const Operands& o);

OutFrame out_frame(Builder& b, const GemmDesc& d, const GemmConfig& cfg, const Operands& o) {
  if (d.family == GemmFamily::kGemv) return gemv_frame(b, d, cfg, o);
  return is_matrix(d.instruction) ? mma_frame(b, d, cfg, o)
                                                : scalar_frame(b, d, cfg, o);
}

// The parameters of a kernel that writes the output (kPlain, kChainedChunks, kGemv),
// in the documented order: a, b, out, c, bias, m, n, k, strides, alpha, beta.
Operands read_output_kernel_params(Builder& b, const GemmDesc& d, Value* out, Epilogue* ep) {
  Operands o = read_operands(b, d);
  *ep = read_epilogue(b, d, out);
  declare_sizes(b, o, /*with_k=*/true);
  read_strides(b, o);
  ep->alpha = b.param("alpha", Type::scalar(Elem::kF32));
  ep->beta = b.param("beta", Type::scalar(Elem::kF32));
  widen_sizes(b, o, /*with_k=*/true);
  return o;
}

// kPlain / kChainedChunks: products, tree and epilogue in one kernel.
absl::StatusOr<tile::Program> build_plain(const GemmDesc& d, const GemmConfig& cfg) {
  Builder b(kernel_name(d, cfg, "main"));
  b.set_num_warps(cfg.warps);
  b.set_grid("gemm");
  Value out;
  Epilogue ep;
  Operands o = read_output_kernel_params(b, d, &out, &ep);
  OutFrame f = out_frame(b, d, cfg, o);
  Accs acc = top(b, d, 0, i64(b, 0), o.k, f.shape_like, f.leaf);
  for (size_t j = 0; j < acc.size(); ++j) {
    Value off = b.add(b.mul(f.rows[j], o.n), f.cols[j]);  // i64, out is m x n row-major
    Value e = apply_epilogue(b, d, ep, acc[j], off, f.mask[j], f.cols[j], f.col_ok[j]);
    b.store(out, off, from_f32(b, e, ep.out_elem), f.mask[j]);
  }
  return b.finish();
}

// kSplitK, kernel 1: part pid.z of the outermost cut, written at partial_dtype.
// The parameters of a first kernel that writes partials (the runner's ABI, jit/GemmRunner):
// a, b, ws, m, n, k, a_sm, a_sk, b_sk, b_sn; sizes widened to i64.
Operands read_partials_params(Builder& b, const GemmDesc& d, Value* ws) {
  Operands o = read_operands(b, d);
  *ws = b.param("ws", Type::ptr(d.partial_dtype));
  declare_sizes(b, o, /*with_k=*/true);
  read_strides(b, o);
  widen_sizes(b, o, /*with_k=*/true);
  return o;
}

// The parameters of a merge kernel (the runner's ABI): ws, out, c, bias, m, n, parts,
// alpha, beta; sizes and parts widened to i64.
struct MergeParams {
  Value ws, out, parts;
  Epilogue ep;
  Operands o;
};
MergeParams read_merge_params(Builder& b, const GemmDesc& d) {
  MergeParams mp;
  mp.ws = b.param("ws", Type::ptr(d.partial_dtype));
  mp.ep = read_epilogue(b, d, &mp.out);
  declare_sizes(b, mp.o, /*with_k=*/false);
  mp.parts = b.param("parts", Type::scalar(Elem::kI32));
  mp.ep.alpha = b.param("alpha", Type::scalar(Elem::kF32));
  mp.ep.beta = b.param("beta", Type::scalar(Elem::kF32));
  widen_sizes(b, mp.o, /*with_k=*/false);
  mp.parts = b.cast(mp.parts, Elem::kI64);
  return mp;
}

// Part `part`'s range [k0, k1) of [0, k) under the split `cut` (GemmDesc.h's cut_part,
// in the program's arithmetic; k is a kernel parameter).
std::pair<Value, Value> split_part_range(Builder& b, const KCut& cut, Value part, Value k) {
  const Value span = i64(b, cut.span);
  if (cut.segments == 0) {
    Value k0 = b.mul(part, span);
    return {k0, b.min(b.add(k0, span), k)};
  }
  const Value segs = i64(b, cut.segments);
  Value tiles = b.div(b.add(k, i64(b, cut.span - 1)), span);
  Value base = b.div(tiles, segs);
  Value first_long = b.sub(segs, b.sub(tiles, b.mul(base, segs)));
  // Tiles before segment s: s * base + max(0, s - first_long).
  auto tiles_before = [&](Value s) {
    return b.add(b.mul(s, base), b.max(b.sub(s, first_long), i64(b, 0)));
  };
  Value k0 = b.min(b.mul(tiles_before(part), span), k);
  Value k1 = b.min(b.mul(tiles_before(b.add(part, i64(b, 1))), span), k);
  return {k0, k1};
}

absl::StatusOr<tile::Program> build_split_parts(const GemmDesc& d, const GemmConfig& cfg) {
  Builder b(kernel_name(d, cfg, "parts"));
  b.set_num_warps(cfg.warps);
  b.set_grid("gemm");
  const Elem pe = *tile::elem_of(d.partial_dtype);
  Value ws;
  Operands o = read_partials_params(b, d, &ws);
  OutFrame f = out_frame(b, d, cfg, o);
  Value part = b.cast(b.program_id(2), Elem::kI64);
  auto [k0, k1] = split_part_range(b, d.k_cuts[0], part, o.k);
  // A part is empty only as a segment of no tile (K under P tiles): its leaf folds
  // nothing and writes +0.0, as the reference's empty part.
  Accs acc = level(b, d, 1, k0, k1, f.shape_like, f.leaf);
  Value plane = b.mul(b.mul(part, o.m), o.n);
  for (size_t j = 0; j < acc.size(); ++j) {
    Value off = b.add(b.add(b.mul(f.rows[j], o.n), f.cols[j]), plane);
    b.store(ws, off, from_f32(b, acc[j], pe), f.mask[j]);
  }
  return b.finish();
}

// kSplitK, kernel 2: r = +0.0, r = M(r + ws_p) in part order, then the epilogue.
absl::StatusOr<tile::Program> build_split_merge(const GemmDesc& d, const GemmConfig& cfg) {
  Builder b(kernel_name(d, cfg, "merge"));
  b.set_num_warps(cfg.warps);
  b.set_grid("gemm");
  const Elem pe = *tile::elem_of(d.partial_dtype);
  const Elem me = *tile::elem_of(d.merge_dtype);
  MergeParams mp = read_merge_params(b, d);
  Value ws = mp.ws, out = mp.out, parts = mp.parts;
  Epilogue ep = mp.ep;
  Operands o = mp.o;
  o.a_sm = i64(b, 0);  // block_frame's a offsets are unused here
  BlockFrame f = block_frame(b, cfg, o);
  const int64_t bm = block_m(cfg);
  Value zero = b.const_f32(0.0f);
  Value plane = b.mul(o.m, o.n);
  std::vector<Value> offs;
  Accs inits;
  for (int j = 0; j < cfg.block_n; ++j) {
    offs.push_back(b.add(b.mul(f.rows, o.n), f.col[j]));  // (BM) i64
    inits.push_back(b.splat(zero, {bm}));                 // the merge's +0.0 seed
  }
  std::vector<Value> loop = b.begin_for(i64(b, 0), parts, i64(b, 1), inits);
  Value base = b.mul(loop[0], plane);
  Accs yields;
  for (int j = 0; j < cfg.block_n; ++j) {
    Value p = to_f32(b, b.load(ws, b.add(offs[j], base), f.mask[j], b.const_float(pe, 0.0f)), pe);
    yields.push_back(round_to(b, b.add(loop[1 + j], p), me));
  }
  Accs acc = b.end_for(yields);
  for (int j = 0; j < cfg.block_n; ++j) {
    Value e = apply_epilogue(b, d, ep, acc[j], offs[j], f.mask[j], f.col[j], f.col_ok[j]);
    b.store(out, offs[j], from_f32(b, e, ep.out_elem), f.mask[j]);
  }
  return b.finish();
}

// kDot, kernel 1 (GemmDesc.h, family dot): program (col, row, block) is one block of
// `lanes` threads as one (lanes) tile on one warp (lanes / 32 values per thread, so
// every lane_fold offset is an exchange inside the warp). Thread l of block b takes the
// tiles t = b*lanes + l + i*G (G = blocks*lanes) in order, one accumulator per element
// of a tile; its value is their chain; the block folds with lane_fold and lane 0
// writes the partial to ws[b][row][col] (f32).
absl::StatusOr<tile::Program> build_dot_blocks(const GemmDesc& d, const GemmConfig& cfg) {
  GemmConfig one_warp = cfg;  // the name says what runs: one warp, whatever cfg.warps
  one_warp.warps = 1;
  Builder b(kernel_name(d, one_warp, "dot"));
  b.set_num_warps(1);
  b.set_grid("gemm");
  Value ws;
  Operands o = read_partials_params(b, d, &ws);
  const int64_t lanes = d.lanes, tile_len = d.lane_tile, grid = d.blocks * d.lanes;
  Value col = b.cast(b.program_id(0), Elem::kI64);
  Value row = b.cast(b.program_id(1), Elem::kI64);
  Value block = b.cast(b.program_id(2), Elem::kI64);
  Value lane = b.cast(b.arange(lanes), Elem::kI64);
  Value thread = b.add(b.mul(block, i64(b, lanes)), lane);                  // (L) i64
  Value tiles = b.div(b.add(o.k, i64(b, tile_len - 1)), i64(b, tile_len));
  Value passes = b.div(b.add(tiles, i64(b, grid - 1)), i64(b, grid));      // uniform
  Value a_row = b.mul(row, o.a_sm);
  Value b_col = b.mul(col, o.b_sn);
  Value zero = b.const_f32(0.0f);
  std::vector<Value> inits(static_cast<size_t>(tile_len), b.splat(zero, {lanes}));
  std::vector<Value> loop = b.begin_for(i64(b, 0), passes, i64(b, 1), inits);
  Value t = b.add(thread, b.mul(loop[0], i64(b, grid)));
  std::vector<Value> next;
  for (int64_t c = 0; c < tile_len; ++c) {
    Value k = b.add(b.mul(t, i64(b, tile_len)), i64(b, c));
    Value ok = b.compare(CompareOp::kLt, k, o.k);
    Value av = to_f32(b, b.load(o.a, b.add(a_row, b.mul(k, o.a_sk)), ok,
                                b.const_float(o.a_elem, 0.0f)), o.a_elem);
    Value bv = to_f32(b, b.load(o.b, b.add(b.mul(k, o.b_sk), b_col), ok,
                                b.const_float(o.b_elem, 0.0f)), o.b_elem);
    Value acc = loop[static_cast<size_t>(1 + c)];
    next.push_back(b.select(ok, leaf_step(b, d.instruction, acc, av, bv), acc));
  }
  std::vector<Value> accs = b.end_for(next);
  Value v = accs[0];
  for (size_t c = 1; c < accs.size(); ++c) v = b.add(v, accs[c]);
  for (int off : d.lane_fold) v = b.add(v, b.xor_permute(v, off));        // v[l] (+) v[l ^ off]
  Value off = b.add(b.mul(block, b.mul(o.m, o.n)), b.add(b.mul(row, o.n), col));
  b.store(ws, b.splat(off, {lanes}), v, b.compare(CompareOp::kEq, lane, i64(b, 0)));
  return b.finish();
}

// kDot, kernel 2 (the merge): program (col, row) is 128 lanes on one warp. Lane r adds
// the partials r, r + 128, ... from +0.0; rounds 64 and 32; the four chains of every
// fourth lane (w[q ^ 4j] is w[q + 4j] for q < 4) and their chain; then the epilogue.
absl::StatusOr<tile::Program> build_dot_merge(const GemmDesc& d, const GemmConfig& cfg) {
  GemmConfig one_warp = cfg;
  one_warp.warps = 1;
  Builder b(kernel_name(d, one_warp, "dot_merge"));
  b.set_num_warps(1);
  b.set_grid("gemm");
  MergeParams mp = read_merge_params(b, d);
  Value ws = mp.ws, out = mp.out, parts = mp.parts;
  const Epilogue& ep = mp.ep;
  const Operands& o = mp.o;
  constexpr int64_t kLanes = 128;
  Value col = b.cast(b.program_id(0), Elem::kI64);
  Value row = b.cast(b.program_id(1), Elem::kI64);
  Value lane = b.cast(b.arange(kLanes), Elem::kI64);
  Value cell = b.add(b.mul(row, o.n), col);
  Value plane = b.mul(o.m, o.n);
  Value rounds = b.div(b.add(parts, i64(b, kLanes - 1)), i64(b, kLanes));
  std::vector<Value> loop =
      b.begin_for(i64(b, 0), rounds, i64(b, 1), {b.splat(b.const_f32(0.0f), {kLanes})});
  Value p = b.add(lane, b.mul(loop[0], i64(b, kLanes)));
  Value ok = b.compare(CompareOp::kLt, p, parts);
  Value part = b.load(ws, b.add(b.mul(p, plane), cell), ok, b.const_f32(0.0f));
  Value w = b.end_for({b.select(ok, b.add(loop[1], part), loop[1])})[0];
  w = b.add(w, b.xor_permute(w, 64));
  w = b.add(w, b.xor_permute(w, 32));
  // w[q ^ x] for x = 4, 8, ..., 28, composed of power-of-two exchanges.
  auto xor_of = [&](Value v, int64_t x) {
    for (int64_t bit = 1; bit <= x; bit *= 2) {
      if (x & bit) v = b.xor_permute(v, bit);
    }
    return v;
  };
  Value c = w;
  for (int64_t j = 1; j < 8; ++j) c = b.add(c, xor_of(w, 4 * j));
  Value r = c;
  for (int64_t q = 1; q < 4; ++q) r = b.add(r, xor_of(c, q));
  Value cells = b.splat(cell, {kLanes});
  Value first = b.compare(CompareOp::kEq, lane, i64(b, 0));
  Value e = apply_epilogue(b, d, ep, r, cells, first, b.splat(col, {kLanes}), first);
  b.store(out, cells, from_f32(b, e, ep.out_elem), first);
  return b.finish();
}

// kGemv: element i of the block's (E) tile is slot i % S of output column
// pid.x*G + i / S of row pid.y, S = lane_slots(lanes) (= lanes for a power of two).
// Slot l < lanes is lane l; slots l >= lanes (only when lanes is not a power of two)
// are absent lanes: they deal no tile and start from -0.0 instead of +0.0, so the
// plain butterfly over S slots gives the descriptor's skip (proof below).
//
// Why the padded butterfly is exact for the one lane that is stored, lane 0. Write
// u_r / v_r for the padded slots / the descriptor's lanes after round r (offset d_r),
// and S_r for the span (xor-closure) of the offsets of the rounds after r: u_R[0]
// reads u_r only at slots of S_r. Claim: u_r[x] == v_r[x] (bits) for every x in S_r
// with x < lanes. r = 0: the slots are the lanes. Round r, x in S_r, x < lanes:
// x and x ^ d_r lie in S_(r-1). If x ^ d_r < lanes, both sides add the same two
// values. Else (the descriptor skips) y = x ^ d_r = x + d_r (x in S_r lacks bit
// d_r), and u_(r-1)[y] is a butterfly over the initial slots y ^ s, s in the
// span of d_1..d_(r-1). x's bits are all offsets of rounds after r, disjoint from
// d_r and s, so y ^ s = x + d_r + s >= y >= lanes: every one is an absent slot,
// -0.0, and a sum of -0.0s is -0.0 (round to nearest). x + (-0.0) == x for every f32
// x (+0.0, -0.0, inf and NaN included), so u_r[x] = u_(r-1)[x] = v_r[x]. (A +0.0
// padding would turn a lane holding -0.0, an fma whose product underflows, into
// +0.0.) Absent slots outside S_r may hold sums of real lanes: lane 0 never reads them.
// The gemv block's frame: its (E) lanes, their leaf over a K range (deal, lane folds,
// the lane fold; lane 0 of a column ends with its value) and where it stores: lane 0 of
// each in-bounds column, at (row, col). rows/cols/mask hold one (E) accumulator.
OutFrame gemv_frame(Builder& b, const GemmDesc& d, const GemmConfig& cfg, const Operands& o) {
  const int64_t g = gemv_outputs_per_block(d, cfg);
  const int64_t lanes = d.lanes, tile = d.lane_tile;
  const int64_t slots = lane_slots(d.lanes);
  const bool padded = slots != lanes;
  const int64_t e = g * slots;
  Value idx = b.arange(e);                                                  // (E) i32
  Value out_local = b.div(idx, b.const_int(Elem::kI32, slots));            // (E) i32
  Value lane = b.cast(b.sub(idx, b.mul(out_local, b.const_int(Elem::kI32, slots))), Elem::kI64);
  Value col0 = b.mul(b.cast(b.program_id(0), Elem::kI64), i64(b, g));
  Value col = b.add(b.cast(out_local, Elem::kI64), col0);                   // (E) i64
  Value col_ok = b.compare(CompareOp::kLt, col, o.n);
  Value row = b.cast(b.program_id(1), Elem::kI64);                          // uniform
  Value a_row = b.mul(row, o.a_sm);
  Value b_col = b.mul(col, o.b_sn);                                         // (E) i64
  Value zero = b.const_f32(0.0f);
  // Elements that fold products: in-bounds columns, and (padded) present lanes only.
  Value folds = padded ? b.compare(CompareOp::kLt, b.select(col_ok, lane, i64(b, lanes)),
                                   i64(b, lanes))
                       : col_ok;                                             // (E) i1
  // Present lanes start from +0.0, absent slots from -0.0 (the identity of (+)f32).
  auto initial = [=, &b] {
    if (!padded) return b.splat(zero, {e});
    Value present = b.compare(CompareOp::kLt, lane, i64(b, lanes));
    return b.select(present, b.splat(zero, {e}), b.splat(b.const_f32(-0.0f), {e}));
  };

  // Folds k into acc where k < limit (a per-element bound); elsewhere acc stays.
  auto step_at = [=, &b](Value acc, Value k, Value limit) {
    Value ok = b.compare(CompareOp::kLt, k, limit);
    Value av = to_f32(b, b.load(o.a, b.add(a_row, b.mul(k, o.a_sk)), ok,
                                b.const_float(o.a_elem, 0.0f)), o.a_elem);
    Value bv = to_f32(b, b.load(o.b, b.add(b.mul(k, o.b_sk), b_col), ok,
                                b.const_float(o.b_elem, 0.0f)), o.b_elem);
    return b.select(ok, leaf_step(b, d.instruction, acc, av, bv), acc);
  };
  // The lanes' values over [k0, k1): the range dealt to them, each folding its
  // elements in order onto acc0 (+0.0 present, -0.0 absent).
  auto deal = [=, &b](Value k0, Value k1, Value acc0) {
    Value len = b.sub(k1, k0);
    Value tiles = b.div(b.add(len, i64(b, tile - 1)), i64(b, tile));
    Value rounds = b.div(b.add(tiles, i64(b, lanes - 1)), i64(b, lanes));  // tiles per lane (ceil)
    Value v;
    if (d.lane_layout == LaneLayout::kContiguous) {
      Value run = b.mul(rounds, i64(b, tile));                              // elements per lane
      Value e0 = b.min(k1, b.add(k0, b.mul(lane, run)));                   // (E) i64
      Value e1 = b.min(k1, b.add(k0, b.mul(b.add(lane, i64(b, 1)), run)));
      e1 = b.select(folds, e1, e0);  // columns past N and absent lanes fold nothing
      std::vector<Value> loop = b.begin_for(i64(b, 0), run, i64(b, 1), {acc0});
      Value r = step_at(loop[1], b.add(e0, loop[0]), e1);
      v = b.end_for({r})[0];
    } else {
      Value limit = b.select(folds, b.splat(k1, {e}), b.splat(k0, {e}));
      std::vector<Value> outer = b.begin_for(i64(b, 0), rounds, i64(b, 1), {acc0});
      Value t = b.add(lane, b.mul(outer[0], i64(b, lanes)));                // (E) tile index
      Value t0 = b.add(k0, b.mul(t, i64(b, tile)));
      std::vector<Value> inner = b.begin_for(i64(b, 0), i64(b, tile), i64(b, 1), {outer[1]});
      Value r = step_at(inner[1], b.add(t0, inner[0]), limit);
      Value after_tile = b.end_for({r})[0];
      v = b.end_for({after_tile})[0];
    }
    return v;
  };
  // Turns (fast_accum = 0, GemmDesc.h): each turn dealt from its own start onto a fresh
  // initial value and added to the lane's accumulator; the short turn first or last.
  const int64_t step = d.k_loop_step.step;
  const bool turns = !d.use_fast_accum && step > 0;
  const bool short_first = d.k_loop_step.short_turn == ShortTurn::kFirst;
  LeafFn leaf = [=, &b](Value k0, Value k1) {
    Value v;
    if (!turns) {
      v = deal(k0, k1, initial());
    } else {
      auto turn = [=, &b](Value acc, Value t0, Value t1) {
        return b.add(acc, deal(t0, t1, initial()));
      };
      Value acc = initial();
      Value start = k0;
      if (short_first) {
        // Runs once when the short turn is non-empty.
        Value len = b.sub(k1, k0);
        Value t1 = b.add(k0, b.sub(len, b.mul(b.div(len, i64(b, step)), i64(b, step))));
        std::vector<Value> loop = b.begin_for(k0, t1, i64(b, step), {acc});
        acc = b.end_for({turn(loop[1], loop[0], t1)})[0];
        start = t1;
      }
      std::vector<Value> loop = b.begin_for(start, k1, i64(b, step), {acc});
      v = b.end_for({turn(loop[1], loop[0], b.min(b.add(loop[0], i64(b, step)), k1))})[0];
    }
    if (d.lane_fold.empty()) {
      // The lanes chained in index order (gemv2T): lane 0 adds v[1], v[2], ... in turn,
      // each fetched by the xor permutes of its index's bits (xor_permute(v, l)[0] = v[l]).
      Value r = v;
      for (int64_t l = 1; l < lanes; ++l) {
        Value p = v;
        for (int64_t bit = 1; bit < slots; bit *= 2) {
          if (l & bit) p = b.xor_permute(p, bit);
        }
        r = b.add(r, p);
      }
      v = r;
    }
    for (int off : d.lane_fold) v = b.add(v, b.xor_permute(v, off));  // v[l] (+) v[l ^ off]
    return Accs{v};
  };
  OutFrame f;
  f.shape_like = {b.splat(zero, {e})};
  f.rows = {row};
  f.cols = {col};
  f.col_ok = {col_ok};
  // Lane 0 of each in-bounds column stores: (col < N ? lane : 1) == 0.
  f.mask = {b.compare(CompareOp::kEq, b.select(col_ok, lane, i64(b, 1)), i64(b, 0))};
  f.leaf = leaf;
  return f;
}

absl::StatusOr<tile::Program> build_gemv(const GemmDesc& d, const GemmConfig& cfg) {
  Builder b(kernel_name(d, cfg, "gemv"));
  b.set_num_warps(cfg.warps);
  b.set_grid("gemm");
  Value out;
  Epilogue ep;
  Operands o = read_output_kernel_params(b, d, &out, &ep);
  OutFrame f = gemv_frame(b, d, cfg, o);
  Accs acc = top(b, d, 0, i64(b, 0), o.k, f.shape_like, f.leaf);
  Value off = b.add(b.mul(f.rows[0], o.n), f.cols[0]);                      // (E) i64
  Value res = apply_epilogue(b, d, ep, acc[0], off, f.col_ok[0], f.cols[0], f.col_ok[0]);
  b.store(out, off, from_f32(b, res, ep.out_elem), f.mask[0]);
  return b.finish();
}

// Matrix path (mma.sync m16n8k16, or wgmma m64n8k16 / m64n8k32 whose per-warp
// fragments are the same). With WM = warp_m_tiles, WN = warp_n_tiles, the block
// covers rows pid.y*16*WM*W + [0, 16*WM*W) and columns pid.x*8*WN + [0, 8*WN).
// Row tile i (< WM) of warp w starts at
//   mma_sync: 16*(WM*w + i)
//   wgmma:    64*WM*(w/4) + 64*i + 16*(w%4)  (instruction i of warpgroup w/4 covers
//             64 rows, 16 per warp, as wgmma's A and D layouts need)
// and column tile j (< WN) at 8*j. mma_sync: accumulator i*WN + j is the 16x8 tile
// (i, j); every k-group loads WM A fragments and WN B fragments and issues WM*WN
// mma.sync. wgmma: accumulator i is the 64 x 8*WN tile of instruction i (one
// wgmma m64n(8*WN)), B is loaded once per k-group as a K x 8*WN tile; every
// k-group issues WM wgmma. Either way an output element still sees exactly the
// descriptor's chain of groups and turns (only which warp holds it moves). Fragment coordinates per PTX ISA (g = lane / 4, t = lane % 4, r the
// value index):
//   A (16x16, row): row g + 8*((r/2)%2), k 2t + r%2 + 8*(r/4)      r in 0..7
//   B (16x8, col):  k 2t + r%2 + 8*(r/2), column g                   r in 0..3
//   A (16x32, fp8): row g + 8*((r/4)%2), k 4t + r%4 + 16*(r/8)     r in 0..15
//   B (32x8, fp8):  k 4t + r%4 + 16*(r/4), column g                  r in 0..7
//   C (16x8):       row g + 8*(r/2),      column 2t + r%2            r in 0..3
struct Frag {
  Value warp, g, t, r;  // i32 tiles
};
Frag frag(Builder& b, int64_t extent, int64_t per_thread) {
  auto c = [&](int64_t v) { return b.const_int(Elem::kI32, v); };
  Value i = b.arange(extent);
  Value tid = b.div(i, c(per_thread));
  Frag f;
  f.r = b.sub(i, b.mul(tid, c(per_thread)));
  f.warp = b.div(tid, c(32));
  Value lane = b.sub(tid, b.mul(f.warp, c(32)));
  f.g = b.div(lane, c(4));
  f.t = b.sub(lane, b.mul(f.g, c(4)));
  return f;
}

OutFrame mma_frame(Builder& b, const GemmDesc& d, const GemmConfig& cfg, const Operands& o) {
  auto c = [&](int64_t v) { return b.const_int(Elem::kI32, v); };
  auto wide = [&](Value v) { return b.cast(v, Elem::kI64); };
  auto half = [&](Value r) { return b.sub(r, b.mul(b.div(r, c(2)), c(2))); };  // r % 2
  const int64_t threads = int64_t{32} * cfg.warps;
  const int64_t wm = cfg.warp_m_tiles, wn = cfg.warp_n_tiles;
  const bool wgmma = d.instruction == Instruction::kWgmma;
  Value m0 = b.mul(b.program_id(1), c(mma_block_m(cfg)));                // i32
  Value n0 = b.mul(b.program_id(0), c(mma_block_n(cfg)));
  Value zero64 = i64(b, 0);
  // First row of row tile i of the fragment's warp (i32 tile).
  auto row_base = [&](const Frag& f, int64_t i) {
    // (with WM = 1 the wgmma rows 64*(w/4) + 16*(w%4) are 16*w, as for mma_sync)
    if (!wgmma || wm == 1) return b.add(m0, b.mul(f.warp, c(16 * wm)));
    Value group = b.div(f.warp, c(4));
    Value in_group = b.sub(f.warp, b.mul(group, c(4)));
    return b.add(b.add(m0, b.mul(group, c(64 * wm))), b.add(c(64 * i), b.mul(in_group, c(16))));
  };
  auto tile_row = [&](const Frag& f, int64_t i) {  // mma_sync: + 16*i after the warp base
    if (wgmma || i == 0) return row_base(f, i);
    return b.add(row_base(f, i), c(16 * i));
  };

  // p = values per 32-bit register: 2 (f16/bf16), 4 (fp8); A holds 4p, B 2p values.
  const bool fp8 = dtype_is_fp8(d.a_dtype);
  const int64_t p = fp8 ? 4 : 2;
  auto mod_p = [&](Value r) { return b.sub(r, b.mul(b.div(r, c(p)), c(p))); };  // r % p
  Frag fa = frag(b, threads * 4 * p, 4 * p);
  Value a_in_tile = b.add(fa.g, b.mul(half(b.div(fa.r, c(p))), c(8)));
  Value a_k = wide(b.add(b.add(b.mul(fa.t, c(p)), mod_p(fa.r)),
                         b.mul(b.div(fa.r, c(2 * p)), c(4 * p))));
  std::vector<Value> a_row_ok, a_row_off;
  for (int64_t i = 0; i < wm; ++i) {
    Value a_row = wide(b.add(tile_row(fa, i), a_in_tile));
    a_row_ok.push_back(b.compare(CompareOp::kLt, a_row, o.m));
    a_row_off.push_back(b.mul(a_row, o.a_sm));
  }

  // B: mma_sync loads one (2p per thread) fragment per column tile; wgmma loads the
  // warpgroup's whole K x 8*WN operand as one tile of 2p*WN values per thread, value
  // r = 2p*j + r' being fragment value r' of column tile j (the m64nNk16/k32 form).
  const int64_t b_tiles = wgmma ? 1 : wn;            // B loads per k-group
  const int64_t b_per = wgmma ? 2 * p * wn : 2 * p;  // B values per thread per load
  Frag fb = frag(b, threads * b_per, b_per);
  const bool multi = wgmma && wn > 1;  // values of several column tiles per thread
  Value b_j = multi ? b.div(fb.r, c(2 * p)) : Value{};               // column tile
  Value b_r = multi ? b.sub(fb.r, b.mul(b_j, c(2 * p))) : fb.r;      // fragment value index
  Value b_k = wide(b.add(b.add(b.mul(fb.t, c(p)), mod_p(b_r)), b.mul(b.div(b_r, c(p)), c(4 * p))));
  Value b_in_tile = multi ? b.add(fb.g, b.mul(b_j, c(8))) : fb.g;  // column in the block tile
  std::vector<Value> b_col_ok, b_col_off;
  for (int64_t j = 0; j < b_tiles; ++j) {
    Value b_col = wide(b.add(j == 0 ? n0 : b.add(n0, c(8 * j)), b_in_tile));
    b_col_ok.push_back(b.compare(CompareOp::kLt, b_col, o.n));
    b_col_off.push_back(b.mul(b_col, o.b_sn));
  }

  // C: mma_sync holds WM*WN accumulators of 4 values per thread; wgmma WM of 4*WN
  // (value r = 4j + r', the m64nN D layout: r' as in the 16x8 C fragment, column +8j).
  const int64_t c_tiles = wgmma ? 1 : wn;
  const int64_t c_per = wgmma ? 4 * wn : 4;
  Frag fc = frag(b, threads * c_per, c_per);
  Value c_j = multi ? b.div(fc.r, c(4)) : Value{};
  Value c_r = multi ? b.sub(fc.r, b.mul(c_j, c(4))) : fc.r;
  OutFrame out;
  Value c_in_tile = b.add(fc.g, b.mul(b.div(c_r, c(2)), c(8)));
  Value c_col_in_tile = b.add(b.mul(fc.t, c(2)), half(c_r));
  if (multi) c_col_in_tile = b.add(c_col_in_tile, b.mul(c_j, c(8)));
  for (int64_t i = 0; i < wm; ++i) {
    Value c_row = wide(b.add(tile_row(fc, i), c_in_tile));
    for (int64_t j = 0; j < c_tiles; ++j) {
      Value c_col = wide(b.add(j == 0 ? n0 : b.add(n0, c(8 * j)), c_col_in_tile));
      Value c_col_ok = b.compare(CompareOp::kLt, c_col, o.n);
      out.shape_like.push_back(c_row);
      out.rows.push_back(c_row);
      out.cols.push_back(c_col);
      out.col_ok.push_back(c_col_ok);
      out.mask.push_back(b.compare(CompareOp::kLt, c_row, b.select(c_col_ok, o.m, zero64)));
    }
  }

  const Elem in = *tile::elem_of(d.a_dtype);
  const Elem in_b = *tile::elem_of(d.b_dtype);
  const int64_t ik = d.instruction_k;
  const int64_t step = d.k_loop_step.step > 0 ? d.k_loop_step.step : ik;
  const bool fast = d.use_fast_accum;
  const bool short_first = d.k_loop_step.short_turn == ShortTurn::kFirst;
  const int64_t e = threads * c_per;  // one accumulator's extent
  const size_t n_acc = static_cast<size_t>(wm * c_tiles);
  // One instruction group over [g0, gend) for every tile: elements past gend (and
  // rows / columns out of bounds) load +0.0, the reference's zero padding.
  auto group = [=, &b, &o](const Accs& acc, Value g0, Value gend) {
    Value ka = b.add(a_k, g0);
    std::vector<Value> av;
    for (int64_t i = 0; i < wm; ++i) {
      Value a_mask = b.compare(CompareOp::kLt, ka, b.select(a_row_ok[i], gend, zero64));
      av.push_back(b.load(o.a, b.add(a_row_off[i], b.mul(ka, o.a_sk)), a_mask,
                          b.const_float(in, 0.0f)));
    }
    Value kb = b.add(b_k, g0);
    Value b_row_off = b.mul(kb, o.b_sk);
    std::vector<Value> bv;
    for (int64_t j = 0; j < b_tiles; ++j) {
      Value b_mask = b.compare(CompareOp::kLt, kb, b.select(b_col_ok[j], gend, zero64));
      bv.push_back(b.load(o.b, b.add(b_row_off, b_col_off[j]), b_mask, b.const_float(in_b, 0.0f)));
    }
    Accs r;
    for (int64_t i = 0; i < wm; ++i) {
      for (int64_t j = 0; j < b_tiles; ++j) {
        Value a_ij = acc[i * b_tiles + j];
        r.push_back(wgmma ? b.wgmma(av[i], bv[j], a_ij) : b.mma_sync(av[i], bv[j], a_ij));
      }
    }
    return r;
  };
  // One mainloop turn [t0, t1): its groups chained into acc (fast accumulation) or
  // into a fresh +0.0 partial added to acc once.
  auto turn = [=, &b](const Accs& acc, Value t0, Value t1) {
    Value zero = b.splat(b.const_f32(0.0f), {e});
    Accs inits = fast ? acc : Accs(n_acc, zero);
    std::vector<Value> loop = b.begin_for(t0, t1, i64(b, ik), inits);
    Value gend = b.min(b.add(loop[0], i64(b, ik)), t1);
    Accs r = b.end_for(group(Accs(loop.begin() + 1, loop.end()), loop[0], gend));
    if (!fast) {
      for (size_t j = 0; j < n_acc; ++j) r[j] = b.add(acc[j], r[j]);
    }
    return r;
  };
  out.leaf = [=, &b](Value k0, Value k1) {
    Accs acc(n_acc, b.splat(b.const_f32(0.0f), {e}));
    Value len = b.sub(k1, k0);
    Value short_len = b.sub(len, b.mul(b.div(len, i64(b, step)), i64(b, step)));
    Value start = k0;
    if (short_first) {
      // Runs once when the short turn is non-empty (short_len < step).
      Value t1 = b.add(k0, short_len);
      std::vector<Value> loop = b.begin_for(k0, t1, i64(b, step), acc);
      acc = b.end_for(turn(Accs(loop.begin() + 1, loop.end()), loop[0], t1));
      start = t1;
    }
    std::vector<Value> loop = b.begin_for(start, k1, i64(b, step), acc);
    Value t1 = b.min(b.add(loop[0], i64(b, step)), k1);
    return b.end_for(turn(Accs(loop.begin() + 1, loop.end()), loop[0], t1));
  };
  return out;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

absl::Status validate(const GemmConfig& c) {
  if (!is_pow2(c.warps) || c.warps > 32) {
    return absl::InvalidArgumentError(
        absl::StrFormat("GemmConfig.warps %d is not a power of two in [1, 32].", c.warps));
  }
  if (!is_pow2(c.rows_per_thread) || c.rows_per_thread > 16) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GemmConfig.rows_per_thread %d is not a power of two in [1, 16].", c.rows_per_thread));
  }
  if (c.block_n < 1 || c.block_n > 32) {
    return absl::InvalidArgumentError(
        absl::StrFormat("GemmConfig.block_n %d is not in [1, 32].", c.block_n));
  }
  if (c.rows_per_thread * c.block_n > 64) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GemmConfig.rows_per_thread %d times block_n %d gives %d accumulators per thread; the "
        "limit is 64.",
        c.rows_per_thread, c.block_n, c.rows_per_thread * c.block_n));
  }
  if (c.warp_m_tiles < 1 || c.warp_m_tiles > 8) {
    return absl::InvalidArgumentError(
        absl::StrFormat("GemmConfig.warp_m_tiles %d is not in [1, 8].", c.warp_m_tiles));
  }
  if (c.warp_n_tiles < 1 || c.warp_n_tiles > 16) {
    return absl::InvalidArgumentError(
        absl::StrFormat("GemmConfig.warp_n_tiles %d is not in [1, 16].", c.warp_n_tiles));
  }
  if (c.warp_m_tiles * c.warp_n_tiles > 32) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GemmConfig.warp_m_tiles %d times warp_n_tiles %d gives %d 16x8 tiles (%d accumulators) "
        "per warp; the limit is 32 tiles.",
        c.warp_m_tiles, c.warp_n_tiles, c.warp_m_tiles * c.warp_n_tiles,
        4 * c.warp_m_tiles * c.warp_n_tiles));
  }
  return absl::OkStatus();
}

int64_t block_m(const GemmConfig& c) { return int64_t{32} * c.warps * c.rows_per_thread; }
int64_t mma_block_m(const GemmConfig& c) { return int64_t{16} * c.warp_m_tiles * c.warps; }
int64_t mma_block_n(const GemmConfig& c) { return int64_t{8} * c.warp_n_tiles; }

int64_t gemv_outputs_per_block(const GemmDesc& d, const GemmConfig& c) {
  // Every warp holds whole groups of S = lane_slots(lanes) slots (64: two per
  // thread), so the lane fold never crosses a warp: S and 32 * warps *
  // rows_per_thread are powers of two, so S divides the tile, and S <= 32 * (elements
  // per thread) since the tile holds at least S * warps elements.
  const int64_t slots = lane_slots(d.lanes);
  return std::max<int64_t>(block_m(c), slots * c.warps) / slots;
}

absl::StatusOr<GemmPrograms> gemm(const GemmDesc& d, const GemmConfig& cfg) {
  if (absl::Status s = check_desc(d); !s.ok()) return s;
  if (absl::Status s = validate(cfg); !s.ok()) return s;
  if (d.instruction == Instruction::kWgmma && cfg.warps % 4 != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GemmConfig.warps %d: instruction wgmma runs per warpgroup of 4 warps, so warps must "
        "be a multiple of 4.",
        cfg.warps));
  }
  if (d.instruction == Instruction::kWgmma && 256 * cfg.warp_n_tiles * cfg.warps > 48 * 1024) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GemmConfig.warp_n_tiles %d with warps %d: wgmma stages a K x %d B slot of %d bytes per "
        "warp, %d bytes in all; the shared-memory limit is 49152.",
        cfg.warp_n_tiles, cfg.warps, 8 * cfg.warp_n_tiles, 256 * cfg.warp_n_tiles,
        256 * cfg.warp_n_tiles * cfg.warps));
  }
  GemmPrograms out;
  absl::StatusOr<tile::Program> main;
  switch (d.family) {
    case GemmFamily::kPlain:
    case GemmFamily::kChainedChunks:
      main = build_plain(d, cfg);
      break;
    case GemmFamily::kGemv:
      if (has_split(d)) {  // cuBLAS's split gemv: parts by the gemv frame, then the merge
        main = build_split_parts(d, cfg);
        absl::StatusOr<tile::Program> merge = build_split_merge(d, cfg);
        if (!merge.ok()) return merge.status();
        out.merge = *std::move(merge);
        break;
      }
      main = build_gemv(d, cfg);
      break;
    case GemmFamily::kDot: {
      main = build_dot_blocks(d, cfg);
      absl::StatusOr<tile::Program> merge = build_dot_merge(d, cfg);
      if (!merge.ok()) return merge.status();
      out.merge = *std::move(merge);
      break;
    }
    case GemmFamily::kSplitK: {
      main = build_split_parts(d, cfg);
      absl::StatusOr<tile::Program> merge = build_split_merge(d, cfg);
      if (!merge.ok()) return merge.status();
      out.merge = *std::move(merge);
      break;
    }
  }
  if (!main.ok()) return main.status();
  out.main = *std::move(main);
  return out;
}

absl::StatusOr<GemmLaunchShape> gemm_launch_shape(const GemmDesc& d, const GemmConfig& cfg,
                                                  int64_t m, int64_t n, int64_t k) {
  if (absl::Status s = validate(cfg); !s.ok()) return s;
  if (m < 0 || n < 0 || k < 0 || m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GEMM shape m=%d n=%d k=%d: every extent must be in [0, 2^31).", m, n, k));
  }
  GemmLaunchShape s;
  if (m == 0 || n == 0) return s;
  const std::array<int64_t, 3> scalar_grid = {ceil_div(n, cfg.block_n), ceil_div(m, block_m(cfg)), 1};
  if (d.family == GemmFamily::kGemv) {
    s.main_grid = {ceil_div(n, gemv_outputs_per_block(d, cfg)), m, 1};
  } else if (is_matrix(d.instruction)) {
    s.main_grid = {ceil_div(n, mma_block_n(cfg)), ceil_div(m, mma_block_m(cfg)), 1};
  } else {
    s.main_grid = scalar_grid;
  }
  if (d.family == GemmFamily::kDot) {
    s.main_grid = {n, m, d.blocks};
    s.merge_grid = {n, m, 1};
    s.parts = d.blocks;
    s.workspace_elems = d.blocks * m * n;
  }
  if (has_split(d)) {
    s.parts = d.k_cuts.empty() ? 0 : cut_parts(d.k_cuts[0], k);
    s.merge_grid = scalar_grid;  // the merge is elementwise, on the scalar block shape
    s.main_grid[2] = s.parts;
    s.workspace_elems = s.parts * m * n;
  }
  if (s.main_grid[0] > 0x7fffffff || s.main_grid[1] > 65535 || s.main_grid[2] > 65535) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GEMM shape m=%d n=%d k=%d needs a grid of (%d, %d, %d) blocks; y and z are limited to "
        "65535 (raise GemmConfig.rows_per_thread or warps, or a split's span).",
        m, n, k, s.main_grid[0], s.main_grid[1], s.main_grid[2]));
  }
  return s;
}

}  // namespace fixbits::dsl
