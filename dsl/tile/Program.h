// Program: the tile DSL's IR — a kernel written as SSA operations on tiles
// (n-dimensional blocks of values held collectively by one thread block) and on
// uniform scalars. No LLVM here: codegen/ lowers a Program.
//
// Contract:
//   - Values are numbered 0..values.size()-1 in definition order; parameter i is
//     value i. Every op's operands are defined before it (loop bodies see the
//     values of the enclosing regions). Ops are numbered "#k" in pre-order
//     (a loop's body follows the loop op), and every error names "<op> #k".
//   - Arithmetic is IEEE: add/sub/mul/div/sqrt are one correctly rounded
//     operation each, never contracted; max/min propagate NaN (PTX max.NaN).
//     exp is fixbits_exp (dsl/reference/ExpF32.h), the same op sequence on CPU and GPU.
//     Integer div (i32/i64) truncates toward zero; x / 0 is 0 and MIN / -1 is MIN.
//   - A rank-0 operand broadcasts against a tile; otherwise shapes must match.
//   - to_string(p) is canonical: equal programs print equal text, and
//     hash(p) is FNV-1a 64 over that text (stable across runs and builds).
// Example:
//   Builder b("row_sum");
//   Value x = b.param("x", Type::ptr(DType::kF32));
//   Value i = b.arange(128);                          // (128) i32
//   Value v = b.load(x, i);                           // (128) f32
//   Value s = b.reduce(v, 0, Combine::kAdd, dsl::TreeOrder::kPinned);
//   absl::StatusOr<Program> p = b.finish();
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dsl/FloatFormat.h"
#include "dsl/ReduceDesc.h"

namespace fixbits::tile {

// Element types. kPtr is a global pointer to `pointee` elements (always rank 0).
// kE4M3 and kE5M2 are fp8 storage elements: they can be loaded, stored, selected,
// made constant (exactly representable values) and fed to wgmma, which gives them
// their meaning; tile arithmetic and casts on them are rejected.
enum class Elem : uint8_t { kI1, kI32, kI64, kF16, kBF16, kF32, kPtr, kE4M3, kE5M2 };

struct Type {
  Elem elem = Elem::kF32;
  DType pointee = DType::kF32;   // meaningful for kPtr only
  std::vector<int64_t> shape;    // empty: a uniform scalar
  static Type scalar(Elem e) { return Type{e, DType::kF32, {}}; }
  static Type tile(Elem e, std::vector<int64_t> s) { return Type{e, DType::kF32, std::move(s)}; }
  static Type ptr(DType d) { return Type{Elem::kPtr, d, {}}; }
  int rank() const { return static_cast<int>(shape.size()); }
  bool operator==(const Type& o) const {
    return elem == o.elem && shape == o.shape && (elem != Elem::kPtr || pointee == o.pointee);
  }
};

bool is_float(Elem e);                     // f16, bf16, f32: the elements with arithmetic
bool is_int(Elem e);                       // i1, i32, i64
bool is_fp8(Elem e);                       // e4m3, e5m2 (storage only)
std::string elem_name(Elem e);             // "f32", "i32", "ptr"
std::string to_string(const Type& t);      // "f32", "i32<128>", "f32<8x128>", "ptr<f16>"
// The element type a pointer to `d` loads (fp8 dtypes load fp8 storage elements);
// tf32 gives an error.
absl::StatusOr<Elem> elem_of(DType d);

enum class OpKind : uint8_t {
  kProgramId,  // i32 index of this block along `axis` (0..2).
  kConst,      // a scalar constant of `type` (float kept as its f32 bits, exact).
  kArange,     // i32<extent>: 0, 1, ..., extent-1.
  kSplat,      // a tile of `shape` whose every element is the scalar operand.
  kBinary,     // elementwise `bin` of two operands of one element type.
  kUnary,      // elementwise `un` of a float operand.
  kCompare,    // elementwise `cmp` giving i1.
  kSelect,     // select(cond, a, b) elementwise.
  kCast,       // elementwise conversion to `type.elem` (floats: RNE; int->float RNE).
  kReshape,    // the same elements (row-major order) viewed with shape `type.shape`.
  kLoad,       // load(ptr, offsets [, mask, other]) of ptr's pointee, one per offset.
               // A staged load (Op.staged, Builder::load_staged) gives the same values
               // held in shared memory: each thread copies its elements into shared
               // slots only it reads (cp.async on NVIDIA: no register holds them), and
               // every op that reads the result reads them from those slots at that op.
               // A tile, at the top level, with one exception: a top-level loop may
               // carry a staged load (double buffering) when its init is a top-level
               // staged load and its yield a staged load of the loop's own body (not
               // nested deeper); every staged load of such a body is the yield of one
               // such carried value, and no other staged value is carried or yielded
               // (validate(Program)). The body's load then fills the slots its carried
               // value does not hold (two slot sets alternate), so the next iteration's
               // copies are in flight while this one reads its own.
  kStore,      // store(ptr, offsets, value [, mask]); no result.
  kReduce,     // reduce(tile [, init]) along `axis` with `combine` in `order`, see below.
  kReduceGroup,  // reduce_group(t_0, ..., t_{K-1} [, init]): K = imm >= 2 rank-1 f32 tiles
               // of one type, each reduced along axis 0 with `combine`, pinned, `strip`;
               // K scalar results. Result j is exactly reduce(t_j, init_j), where init_j
               // is `init` (absent: the identity), or with `chained`, for j > 0, result
               // j - 1. The same combines as K kReduce ops; the lowering passes every
               // tile's per-warp partials through shared memory together, one barrier
               // for the group instead of one a tile.
  kFor,        // for iv = lo; iv < hi; iv += step, carrying values; results = final carries.
  kDot,        // dot(a, b, acc): a (M,K), b (K,N) of one float type, acc (M,N) f32 ->
               // (M,N) f32. Pinned: d[i][j] = fma(a[i][K-1], b[K-1][j], ... fma(a[i][0],
               // b[0][j], acc[i][j]) ...), a count-up chain over k = 0..K-1 of single-
               // rounding f32 fmas (fma.rn.f32) with a, b widened exactly to f32 — the
               // scalar_fma leaf of GemmDesc.h seeded with acc, whatever the layout,
               // warps or target. (A -0.0 a and +0.0 b pad K without changing a bit.)
  kFma,        // fma(a, b, c): elementwise a*b+c of f32 with one rounding (fma.rn.f32).
  kXorPermute, // xor_permute(t, d): rank-1 f32 tile, result[i] = t[i ^ d]; d = imm, a power
               // of two below the extent (lowered to register moves / shfl.sync.bfly).
  kMmaSync,    // mma_sync(a, b, c): each warp runs one mma.sync.m16n8k16.row.col f32 +=
               // f16/bf16 on its lanes' registers; a, b, c are rank-1 tiles holding the
               // PTX fragments: per thread 8 a, 4 b, 4 c values (i = tid*R + r, r in
               // fragment order). Result: the d fragment, shaped like c.
  kWgmma,      // wgmma(a, b, c): each warpgroup (4 warps) runs one
               // wgmma.mma_async.m64nNk{16,32} f32 += a x b, N = 8W, with a from registers
               // and b staged through shared memory. a, b, c are rank-1 tiles holding, per
               // warp, the mma.sync m16n8k16 (f16/bf16: 8 a, 4W b values per thread) or
               // m16n8k32 (e4m3/e5m2: 16 a, 8W b) fragments of its 16 rows, b value
               // 4j + r (8j + r) being fragment value r of column tile j; every warp of a
               // warpgroup holds the same b. c: 4W f32 per thread (the m64nN D layout).
               // W = c's extent / (a's / 2 or 4) in [1, 32]. Needs warps % 4 == 0.
  kClusterBarrier,  // cluster_barrier(): no operands, no result. Every thread of every block
               // of this block's cluster (Program.cluster consecutive blocks along x)
               // arrives with release semantics and waits with acquire semantics, so the
               // global writes of any of them before it are visible to all of them after
               // it; it is also a block-wide barrier. Top level only (never in a loop
               // body), in a program whose cluster is > 1. NVIDIA sm_90
               // (barrier.cluster.arrive / barrier.cluster.wait); no AMDGPU lowering.
  kStage,      // stage(t): the same values as the float tile t, held in shared memory as a
               // staged load's are (see kLoad): each thread stores its elements into shared
               // slots only it reads, and every op that reads the result reads them from
               // those slots at that op, so no register holds them in between (softmax's
               // kept e_i between its sum and its outputs). Top level only; never a loop's
               // carried value or yield (validate(Program)).
};

enum class BinaryOp : uint8_t { kAdd, kSub, kMul, kDiv, kMax, kMin };
// kExp is dsl/reference/ExpF32.h's fixbits_exp. kExpNonPositive is the same function for
// an argument the program guarantees is <= 0 or NaN (softmax's x - max(row)), so codegen
// may leave out the overflow branch; a positive argument gives an unspecified value,
// which the program must not use (a masked-off lane's may be computed and dropped).
enum class UnaryOp : uint8_t { kNeg, kSqrt, kExp, kExpNonPositive };
enum class CompareOp : uint8_t { kLt, kLe, kGt, kGe, kEq, kNe };
enum class Combine : uint8_t { kAdd, kMax, kMin };

// kReduce semantics (ReduceDesc's): the axis is cut into strips of `strip`
// elements (a power of two dividing the extent; 0 means the whole extent, which
// must then be a power of two). kPinned: each strip is the balanced tree over its
// logical index (level j combines index blocks differing in bit j); strips are
// chained in index order starting from `init` (the combine's identity if absent).
// kFree: the codegen's natural order — each thread folds its registers in index
// order starting from `init` (if given), lanes fold by butterfly counting down,
// warps fold in order; `strip` must be 0 and the bits depend on the layout.
struct Op {
  OpKind kind = OpKind::kConst;
  std::vector<int> args;     // operand value ids
  std::vector<int> results;  // result value ids
  Type type;                 // kConst/kCast/kSplat/kReshape: the result type
  int64_t imm = 0;           // kProgramId axis, kArange extent, kReduce axis, int const,
                             // kReduceGroup tile count
  uint32_t fbits = 0;        // kConst float: binary32 bits of the value
  BinaryOp bin = BinaryOp::kAdd;
  UnaryOp un = UnaryOp::kNeg;
  CompareOp cmp = CompareOp::kLt;
  Combine combine = Combine::kAdd;
  dsl::TreeOrder order = dsl::TreeOrder::kPinned;
  int64_t strip = 0;
  bool has_mask = false;     // kLoad: args = ptr, off, mask, other; kStore: ptr, off, val, mask
  bool staged = false;       // kLoad: the result is held in shared memory (see kLoad)
  bool chained = false;      // kReduceGroup: tile j's init is result j - 1 (see kReduceGroup)
  // kFor: args = lo, hi, step, inits...; body_args = iv, carried...; yields in body order.
  std::vector<Op> body;
  std::vector<int> body_args;
  std::vector<int> yields;
};

struct Param {
  std::string name;
  Type type;  // rank 0: a pointer, i32, i64 or f32
};

struct Program {
  std::string name;
  std::vector<Param> params;
  std::vector<Type> values;  // type of every value id
  std::vector<Op> body;
  int num_warps = 4;         // speed knob: threads per block = 32 * num_warps (wave: 64)
  std::string grid = "rows"; // grid.x = the named problem size (one block per row);
                             // "cols/128": ceil(cols / 128) blocks (dsl::grid_blocks)
  int min_blocks_per_sm = 0; // speed knob, in [0, 32]: ask the compiler to fit this many
                             // blocks on one SM / CU (NVIDIA .minnctapersm: registers are
                             // capped to fit, spilling if need be); 0: no request
                             // (printed only when > 0)
  int cluster = 1;           // blocks per thread-block cluster along x, in [1, 8]; > 1: the
                             // kernel declares cluster dims (cluster, 1, 1) and the grid
                             // must be a multiple of it (printed only when > 1)
  bool divide_by_reciprocal = false;  // speed knob: an f32 tile divided by one value in
                             // every register lowers to one reciprocal and two fmas a
                             // register, with the IEEE division in a branch outside their
                             // range (codegen/LowerDivide.h; the same bits); NVPTX only
                             // (printed only when set)
  bool operator==(const Program& o) const;
};

std::string op_name(const Op& op);         // "reduce", "add", "load", ...
// Tile j's reduce of a kReduceGroup op `g`, as the kReduce op it means: operands
// (t_j [, init_j]) with init_j g's init or, chained and j > 0, g's result j - 1;
// result g's result j.
Op group_member(const Op& g, size_t j);
std::string to_string(const Program& p);   // canonical text
uint64_t hash(const Program& p);           // FNV-1a 64 over to_string(p)
// Type and shape checks; the first error names the op and its number, e.g.
// "reduce #3: axis 2 is out of range for a rank-2 tile".
absl::Status validate(const Program& p);

struct Value {
  int id = -1;
};

// Builds a Program op by op. Calls never fail on their own: the first error is
// recorded, later calls are ignored, and finish() returns it.
class Builder {
 public:
  explicit Builder(std::string name);
  Value param(std::string name, Type type);
  Value program_id(int axis = 0);
  Value const_f32(float v);
  Value const_float(Elem e, float v);  // exact in e (f16/bf16/f32)
  Value const_int(Elem e, int64_t v);
  Value arange(int64_t extent);
  Value splat(Value scalar, std::vector<int64_t> shape);
  Value binary(BinaryOp op, Value a, Value b);
  Value add(Value a, Value b) { return binary(BinaryOp::kAdd, a, b); }
  Value sub(Value a, Value b) { return binary(BinaryOp::kSub, a, b); }
  Value mul(Value a, Value b) { return binary(BinaryOp::kMul, a, b); }
  Value div(Value a, Value b) { return binary(BinaryOp::kDiv, a, b); }
  Value max(Value a, Value b) { return binary(BinaryOp::kMax, a, b); }
  Value min(Value a, Value b) { return binary(BinaryOp::kMin, a, b); }
  Value unary(UnaryOp op, Value a);
  Value compare(CompareOp op, Value a, Value b);
  Value select(Value cond, Value a, Value b);
  Value cast(Value a, Elem to);
  Value reshape(Value a, std::vector<int64_t> shape);
  Value load(Value ptr, Value offsets);
  Value load(Value ptr, Value offsets, Value mask, Value other);
  // The same values as load(ptr, offsets, mask, other), held in shared memory until
  // each op that reads them (see OpKind::kLoad).
  Value load_staged(Value ptr, Value offsets, Value mask, Value other);
  // The same values as `tile`, held in shared memory until each op that reads them (see
  // OpKind::kStage).
  Value stage(Value tile);
  void store(Value ptr, Value offsets, Value value);
  void store(Value ptr, Value offsets, Value value, Value mask);
  Value reduce(Value tile, int axis, Combine combine, dsl::TreeOrder order, int64_t strip = 0,
               std::optional<Value> init = std::nullopt);
  // K = tiles.size() >= 2 pinned reductions as one op (OpKind::kReduceGroup); returns
  // the K results.
  std::vector<Value> reduce_group(const std::vector<Value>& tiles, Combine combine, int64_t strip,
                                  std::optional<Value> init, bool chained);
  Value dot(Value a, Value b, Value acc);
  Value fma(Value a, Value b, Value c);
  Value xor_permute(Value t, int64_t d);
  Value mma_sync(Value a, Value b, Value c);
  Value wgmma(Value a, Value b, Value c);
  void cluster_barrier();
  // Loops: begin_for returns [iv, carried...]; end_for takes the yields and
  // returns the loop's results (the final carried values).
  std::vector<Value> begin_for(Value lo, Value hi, Value step, const std::vector<Value>& inits);
  std::vector<Value> end_for(const std::vector<Value>& yields);
  void set_num_warps(int w) { prog_.num_warps = w; }
  void set_grid(std::string g) { prog_.grid = std::move(g); }
  void set_cluster(int blocks) { prog_.cluster = blocks; }
  void set_min_blocks_per_sm(int blocks) { prog_.min_blocks_per_sm = blocks; }
  Type type_of(Value v) const;
  absl::StatusOr<Program> finish();

 private:
  Value emit(Op op);
  std::vector<Op>& current();
  Program prog_;
  std::vector<Op> open_loops_;  // loops whose body is being built, innermost last
  int ops_emitted_ = 0;
  absl::Status error_;
};

}  // namespace fixbits::tile
