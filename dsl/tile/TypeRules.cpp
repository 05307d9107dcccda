// TypeRules: one function per op kind; each checks operands then names the
// result type. Example: binary(add, f32<128>, f32) -> f32<128> (scalar broadcasts);
// reduce(f32<4x128>, axis=1) -> f32<4>; reduce(f32<128>, axis=2) -> error
// "reduce #3: axis 2 is out of range for a rank-1 tile".
#include "dsl/tile/TypeRules.h"

#include <bit>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace fixbits::tile {
namespace {

bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

class Checker {
 public:
  Checker(const std::vector<Type>& values, const Op& op, int number)
      : values_(values), op_(op), prefix_(absl::StrFormat("%s #%d: ", op_name(op), number)) {}

  absl::Status fail(const std::string& msg) const {
    return absl::InvalidArgumentError(prefix_ + msg);
  }
  // Type of operand `i`, or an error if the op lacks it or its id is undefined.
  absl::Status arg(size_t i, const Type** t) const {
    if (i >= op_.args.size()) return fail(absl::StrFormat("operand %d is missing", i));
    int id = op_.args[i];
    if (id < 0 || id >= static_cast<int>(values_.size())) {
      return fail(absl::StrFormat("operand %d refers to undefined value %%%d", i, id));
    }
    *t = &values_[id];
    return absl::OkStatus();
  }
  absl::Status arity(size_t n) const {
    if (op_.args.size() != n) {
      return fail(absl::StrFormat("takes %d operands, got %d", n, op_.args.size()));
    }
    return absl::OkStatus();
  }
  // A pinned reduce's strip over an axis of `extent`: a power of two dividing it, or 0
  // for the whole extent, itself a power of two (Program.h, kReduce semantics).
  absl::Status pinned_strip(int64_t strip, int64_t extent) const {
    if (strip == 0 ? is_pow2(extent) : (is_pow2(strip) && extent % strip == 0)) return absl::OkStatus();
    return fail(absl::StrFormat(
        "strip %d must be a power of two dividing the axis extent %d (0: the extent, "
        "itself a power of two)", strip, extent));
  }
  // Broadcast shape of two operands: equal shapes, or one of them rank 0.
  absl::Status broadcast(const Type& a, const Type& b, std::vector<int64_t>* shape) const {
    if (a.rank() == 0) { *shape = b.shape; return absl::OkStatus(); }
    if (b.rank() == 0 || a.shape == b.shape) { *shape = a.shape; return absl::OkStatus(); }
    return fail(absl::StrFormat("operand shapes %s and %s differ", to_string(a), to_string(b)));
  }

 private:
  const std::vector<Type>& values_;
  const Op& op_;
  std::string prefix_;
};

#define FB_RETURN_IF_ERROR(expr)              \
  do {                                        \
    absl::Status fb_status_ = (expr);         \
    if (!fb_status_.ok()) return fb_status_;  \
  } while (0)

bool valid_shape(const std::vector<int64_t>& s) {
  for (int64_t d : s) {
    if (d <= 0 || d > (int64_t{1} << 24)) return false;
  }
  return true;
}

}  // namespace

absl::Status infer_results(const std::vector<Type>& values, const Op& op, int number,
                           std::vector<Type>* out) {
  Checker c(values, op, number);
  out->clear();
  const Type *a = nullptr, *b = nullptr, *d = nullptr, *e = nullptr;
  switch (op.kind) {
    case OpKind::kProgramId:
      FB_RETURN_IF_ERROR(c.arity(0));
      if (op.imm < 0 || op.imm > 2) {
        return c.fail(absl::StrFormat("axis %d is not 0, 1 or 2", op.imm));
      }
      out->push_back(Type::scalar(Elem::kI32));
      return absl::OkStatus();
    case OpKind::kConst: {
      FB_RETURN_IF_ERROR(c.arity(0));
      if (op.type.rank() != 0 || op.type.elem == Elem::kPtr || op.type.elem == Elem::kI1) {
        return c.fail("a constant must be a scalar float, i32 or i64");
      }
      if (is_float(op.type.elem) || is_fp8(op.type.elem)) {
        float v;
        uint32_t bits = op.fbits;
        __builtin_memcpy(&v, &bits, 4);
        DType dt = op.type.elem == Elem::kF16    ? DType::kF16
                   : op.type.elem == Elem::kBF16 ? DType::kBF16
                   : op.type.elem == Elem::kE4M3 ? DType::kF8E4M3
                   : op.type.elem == Elem::kE5M2 ? DType::kF8E5M2
                                                 : DType::kF32;
        float r = round_to(dt, v);
        if (v == v && float_bits(r) != bits) {
          return c.fail(absl::StrFormat("value %g is not exactly representable in %s", v,
                                        elem_name(op.type.elem)));
        }
      } else if (op.type.elem == Elem::kI32 &&
                 (op.imm < INT32_MIN || op.imm > INT32_MAX)) {
        return c.fail(absl::StrFormat("value %d does not fit i32", op.imm));
      }
      out->push_back(op.type);
      return absl::OkStatus();
    }
    case OpKind::kArange:
      FB_RETURN_IF_ERROR(c.arity(0));
      if (op.imm <= 0 || op.imm > (int64_t{1} << 24)) {
        return c.fail(absl::StrFormat("extent %d is not in [1, 2^24]", op.imm));
      }
      out->push_back(Type::tile(Elem::kI32, {op.imm}));
      return absl::OkStatus();
    case OpKind::kSplat:
      FB_RETURN_IF_ERROR(c.arity(1));
      FB_RETURN_IF_ERROR(c.arg(0, &a));
      if (a->rank() != 0 || a->elem == Elem::kPtr) {
        return c.fail("the operand must be a non-pointer scalar, got " + to_string(*a));
      }
      if (op.type.shape.empty() || !valid_shape(op.type.shape)) {
        return c.fail("the shape must have at least one dimension, each in [1, 2^24]");
      }
      out->push_back(Type::tile(a->elem, op.type.shape));
      return absl::OkStatus();
    case OpKind::kBinary: {
      FB_RETURN_IF_ERROR(c.arity(2));
      FB_RETURN_IF_ERROR(c.arg(0, &a));
      FB_RETURN_IF_ERROR(c.arg(1, &b));
      if (a->elem != b->elem) {
        return c.fail(absl::StrFormat("operand types %s and %s differ; cast one first",
                                      to_string(*a), to_string(*b)));
      }
      if (a->elem == Elem::kPtr || a->elem == Elem::kI1 || is_fp8(a->elem)) {
        return c.fail("operands must be numbers (fp8 is storage only), got " + to_string(*a));
      }
      std::vector<int64_t> shape;
      FB_RETURN_IF_ERROR(c.broadcast(*a, *b, &shape));
      out->push_back(Type::tile(a->elem, shape));
      return absl::OkStatus();
    }
    case OpKind::kUnary:
      FB_RETURN_IF_ERROR(c.arity(1));
      FB_RETURN_IF_ERROR(c.arg(0, &a));
      if (op.un == UnaryOp::kNeg ? !is_float(a->elem) : a->elem != Elem::kF32) {
        return c.fail("needs an f32 operand (neg: any float), got " + to_string(*a));
      }
      out->push_back(*a);
      return absl::OkStatus();
    case OpKind::kCompare: {
      FB_RETURN_IF_ERROR(c.arity(2));
      FB_RETURN_IF_ERROR(c.arg(0, &a));
      FB_RETURN_IF_ERROR(c.arg(1, &b));
      if (a->elem != b->elem || a->elem == Elem::kPtr || is_fp8(a->elem)) {
        return c.fail(absl::StrFormat("cannot compare %s with %s", to_string(*a), to_string(*b)));
      }
      std::vector<int64_t> shape;
      FB_RETURN_IF_ERROR(c.broadcast(*a, *b, &shape));
      out->push_back(Type::tile(Elem::kI1, shape));
      return absl::OkStatus();
    }
    case OpKind::kSelect: {
      FB_RETURN_IF_ERROR(c.arity(3));
      FB_RETURN_IF_ERROR(c.arg(0, &a));
      FB_RETURN_IF_ERROR(c.arg(1, &b));
      FB_RETURN_IF_ERROR(c.arg(2, &d));
      if (a->elem != Elem::kI1) return c.fail("the condition must be i1, got " + to_string(*a));
      if (b->elem != d->elem || b->elem == Elem::kPtr) {
        return c.fail(absl::StrFormat("the choices %s and %s differ in type", to_string(*b),
                                      to_string(*d)));
      }
      std::vector<int64_t> s1, s2;
      FB_RETURN_IF_ERROR(c.broadcast(*b, *d, &s1));
      FB_RETURN_IF_ERROR(c.broadcast(*a, Type::tile(b->elem, s1), &s2));
      out->push_back(Type::tile(b->elem, s2));
      return absl::OkStatus();
    }
    case OpKind::kCast:
      FB_RETURN_IF_ERROR(c.arity(1));
      FB_RETURN_IF_ERROR(c.arg(0, &a));
      if (a->elem == Elem::kPtr || op.type.elem == Elem::kPtr || op.type.elem == Elem::kI1) {
        return c.fail(absl::StrFormat("cannot cast %s to %s", to_string(*a),
                                      elem_name(op.type.elem)));
      }
      if (is_fp8(a->elem) || is_fp8(op.type.elem)) {
        return c.fail(absl::StrFormat(
            "cannot cast %s to %s: fp8 elements are storage only (load, store, select, wgmma)",
            to_string(*a), elem_name(op.type.elem)));
      }
      out->push_back(Type::tile(op.type.elem, a->shape));
      return absl::OkStatus();
    case OpKind::kReshape: {
      FB_RETURN_IF_ERROR(c.arity(1));
      FB_RETURN_IF_ERROR(c.arg(0, &a));
      int64_t from = 1, to = 1;
      for (int64_t x : a->shape) from *= x;
      for (int64_t x : op.type.shape) to *= x;
      if (a->rank() == 0 || op.type.shape.empty() || !valid_shape(op.type.shape) || from != to) {
        return c.fail(absl::StrFormat("cannot view %s as shape (%s); element counts must match",
                                      to_string(*a), absl::StrJoin(op.type.shape, "x")));
      }
      out->push_back(Type::tile(a->elem, op.type.shape));
      return absl::OkStatus();
    }
    case OpKind::kStage:
      FB_RETURN_IF_ERROR(c.arity(1));
      FB_RETURN_IF_ERROR(c.arg(0, &a));
      if (!is_float(a->elem) || a->rank() == 0) {
        return c.fail("stage holds a float tile in shared memory, got " + to_string(*a));
      }
      out->push_back(*a);
      return absl::OkStatus();
    case OpKind::kLoad:
    case OpKind::kStore: {
      bool load = op.kind == OpKind::kLoad;
      size_t n = load ? (op.has_mask ? 4 : 2) : (op.has_mask ? 4 : 3);
      FB_RETURN_IF_ERROR(c.arity(n));
      FB_RETURN_IF_ERROR(c.arg(0, &a));
      FB_RETURN_IF_ERROR(c.arg(1, &b));
      if (a->elem != Elem::kPtr) return c.fail("operand 0 must be a pointer, got " + to_string(*a));
      absl::StatusOr<Elem> pe = elem_of(a->pointee);
      if (!pe.ok()) return c.fail(std::string(pe.status().message()));
      if (b->elem != Elem::kI32 && b->elem != Elem::kI64) {
        return c.fail("offsets must be i32 or i64, got " + to_string(*b));
      }
      if (op.has_mask) {
        FB_RETURN_IF_ERROR(c.arg(load ? 2 : 3, &d));
        if (d->elem != Elem::kI1 || d->shape != b->shape) {
          return c.fail(absl::StrFormat("the mask must be i1 shaped like the offsets %s, got %s",
                                        to_string(*b), to_string(*d)));
        }
      }
      if (load) {
        if (op.has_mask) {
          FB_RETURN_IF_ERROR(c.arg(3, &e));
          if (e->rank() != 0 || e->elem != *pe) {
            return c.fail(absl::StrFormat("`other` must be a scalar %s, got %s", elem_name(*pe),
                                          to_string(*e)));
          }
        }
        out->push_back(Type::tile(*pe, b->shape));
      } else {
        FB_RETURN_IF_ERROR(c.arg(2, &e));
        if (e->elem != *pe || (e->rank() != 0 && e->shape != b->shape)) {
          return c.fail(absl::StrFormat("the value %s must be %s shaped like the offsets %s",
                                        to_string(*e), elem_name(*pe), to_string(*b)));
        }
      }
      return absl::OkStatus();
    }
    case OpKind::kReduce: {
      if (op.args.size() != 1 && op.args.size() != 2) return c.fail("takes a tile and an optional init");
      FB_RETURN_IF_ERROR(c.arg(0, &a));
      if (a->rank() == 0) return c.fail("the operand must be a tile, got scalar " + to_string(*a));
      if (a->elem != Elem::kF32) {
        return c.fail("reductions accumulate in f32; cast the " + to_string(*a) + " operand first");
      }
      if (op.imm < 0 || op.imm >= a->rank()) {
        return c.fail(absl::StrFormat("axis %d is out of range for a rank-%d tile", op.imm,
                                      a->rank()));
      }
      int64_t extent = a->shape[op.imm];
      if (op.order == dsl::TreeOrder::kFree) {
        if (op.strip != 0) return c.fail("strip must be 0 (unset) for free order");
      } else {
        FB_RETURN_IF_ERROR(c.pinned_strip(op.strip, extent));
      }
      std::vector<int64_t> rs = a->shape;
      rs.erase(rs.begin() + op.imm);
      Type r = Type::tile(Elem::kF32, rs);
      if (op.args.size() == 2) {
        FB_RETURN_IF_ERROR(c.arg(1, &b));
        if (!(*b == r)) {
          return c.fail(absl::StrFormat("init has type %s, the result is %s", to_string(*b),
                                        to_string(r)));
        }
      }
      out->push_back(r);
      return absl::OkStatus();
    }
    case OpKind::kReduceGroup: {
      if (op.imm < 2) return c.fail(absl::StrFormat("groups at least 2 tiles, got %d", op.imm));
      const size_t k = static_cast<size_t>(op.imm);
      if (op.args.size() != k && op.args.size() != k + 1) {
        return c.fail(absl::StrFormat("takes its %d tiles and an optional init, got %d operands", k,
                                      op.args.size()));
      }
      if (op.order != dsl::TreeOrder::kPinned) return c.fail("groups pinned reductions only");
      FB_RETURN_IF_ERROR(c.arg(0, &a));
      if (a->rank() != 1 || a->elem != Elem::kF32) {
        return c.fail("the tiles must be rank-1 f32, got " + to_string(*a));
      }
      for (size_t t = 1; t < k; ++t) {
        FB_RETURN_IF_ERROR(c.arg(t, &b));
        if (!(*b == *a)) {
          return c.fail(absl::StrFormat("tile %d has type %s, tile 0 %s", t, to_string(*b), to_string(*a)));
        }
      }
      FB_RETURN_IF_ERROR(c.pinned_strip(op.strip, a->shape[0]));
      if (op.args.size() == k + 1) {
        FB_RETURN_IF_ERROR(c.arg(k, &b));
        if (!(*b == Type::scalar(Elem::kF32))) {
          return c.fail(absl::StrFormat("init has type %s, the results are f32", to_string(*b)));
        }
      }
      for (size_t t = 0; t < k; ++t) out->push_back(Type::scalar(Elem::kF32));
      return absl::OkStatus();
    }
    case OpKind::kFor: {
      std::vector<Type> body_types;
      FB_RETURN_IF_ERROR(loop_body_arg_types(values, op, number, &body_types));
      if (op.yields.size() + 1 != body_types.size()) {
        return c.fail(absl::StrFormat("yields %d values for %d carried values", op.yields.size(),
                                      body_types.size() - 1));
      }
      for (size_t i = 0; i < op.yields.size(); ++i) {
        int id = op.yields[i];
        if (id < 0 || id >= static_cast<int>(values.size())) {
          return c.fail(absl::StrFormat("yield %d refers to undefined value %%%d", i, id));
        }
        if (!(values[id] == body_types[i + 1])) {
          return c.fail(absl::StrFormat("yield %d has type %s, the carried value is %s", i,
                                        to_string(values[id]), to_string(body_types[i + 1])));
        }
        out->push_back(body_types[i + 1]);
      }
      return absl::OkStatus();
    }
    case OpKind::kDot:
      FB_RETURN_IF_ERROR(c.arity(3));
      FB_RETURN_IF_ERROR(c.arg(0, &a));
      FB_RETURN_IF_ERROR(c.arg(1, &b));
      FB_RETURN_IF_ERROR(c.arg(2, &d));
      if (a->rank() != 2 || b->rank() != 2 || d->rank() != 2 || a->shape[1] != b->shape[0] ||
          d->shape[0] != a->shape[0] || d->shape[1] != b->shape[1] || d->elem != Elem::kF32 ||
          !is_float(a->elem) || a->elem != b->elem) {
        return c.fail(absl::StrFormat("needs a (M,K), b (K,N) of one float type and f32 acc "
                                      "(M,N); got %s, %s, %s",
                                      to_string(*a), to_string(*b), to_string(*d)));
      }
      out->push_back(*d);
      return absl::OkStatus();
    case OpKind::kFma: {
      FB_RETURN_IF_ERROR(c.arity(3));
      FB_RETURN_IF_ERROR(c.arg(0, &a));
      FB_RETURN_IF_ERROR(c.arg(1, &b));
      FB_RETURN_IF_ERROR(c.arg(2, &d));
      if (a->elem != Elem::kF32 || b->elem != Elem::kF32 || d->elem != Elem::kF32) {
        return c.fail(absl::StrFormat("operands must be f32; got %s, %s, %s", to_string(*a),
                                      to_string(*b), to_string(*d)));
      }
      std::vector<int64_t> ab, shape;
      FB_RETURN_IF_ERROR(c.broadcast(*a, *b, &ab));
      FB_RETURN_IF_ERROR(c.broadcast(Type::tile(Elem::kF32, ab), *d, &shape));
      out->push_back(Type::tile(Elem::kF32, shape));
      return absl::OkStatus();
    }
    case OpKind::kMmaSync:
      FB_RETURN_IF_ERROR(c.arity(3));
      FB_RETURN_IF_ERROR(c.arg(0, &a));
      FB_RETURN_IF_ERROR(c.arg(1, &b));
      FB_RETURN_IF_ERROR(c.arg(2, &d));
      if (a->rank() != 1 || b->rank() != 1 || d->rank() != 1 || a->elem != b->elem ||
          (a->elem != Elem::kF16 && a->elem != Elem::kBF16) || d->elem != Elem::kF32 ||
          a->shape[0] != 2 * d->shape[0] || b->shape[0] != d->shape[0]) {
        return c.fail(absl::StrFormat(
            "needs a (2E) and b (E) rank-1 tiles of one of f16/bf16 and c (E) f32; got %s, %s, %s",
            to_string(*a), to_string(*b), to_string(*d)));
      }
      out->push_back(*d);
      return absl::OkStatus();
    case OpKind::kWgmma: {
      FB_RETURN_IF_ERROR(c.arity(3));
      FB_RETURN_IF_ERROR(c.arg(0, &a));
      FB_RETURN_IF_ERROR(c.arg(1, &b));
      FB_RETURN_IF_ERROR(c.arg(2, &d));
      const bool half = a->elem == Elem::kF16 || a->elem == Elem::kBF16;
      const bool fp8 = is_fp8(a->elem) && is_fp8(b->elem);
      const int64_t per = fp8 ? 4 : 2;  // a values per c value of an m64n8 (b: half as many)
      // m64nN, N = 8*wide: c and b are `wide` times the m64n8 extents, a is not.
      const int64_t wide = a->rank() == 1 && d->rank() == 1 && a->shape[0] > 0
                               ? per * d->shape[0] / a->shape[0]
                               : 0;
      if (a->rank() != 1 || b->rank() != 1 || d->rank() != 1 || !(fp8 || (half && a->elem == b->elem)) ||
          d->elem != Elem::kF32 || wide < 1 || wide > 32 || a->shape[0] * wide != per * d->shape[0] ||
          b->shape[0] != per / 2 * d->shape[0]) {
        return c.fail(absl::StrFormat(
            "needs a (2E) and b (E*W) rank-1 tiles of one of f16/bf16, or a (4E) and b (2E*W) "
            "of e4m3/e5m2, and c (E*W) f32 with W in [1, 32]; got %s, %s, %s",
            to_string(*a), to_string(*b), to_string(*d)));
      }
      out->push_back(*d);
      return absl::OkStatus();
    }
    case OpKind::kXorPermute:
      FB_RETURN_IF_ERROR(c.arity(1));
      FB_RETURN_IF_ERROR(c.arg(0, &a));
      if (a->rank() != 1 || a->elem != Elem::kF32) {
        return c.fail("the operand must be a rank-1 f32 tile, got " + to_string(*a));
      }
      if (!is_pow2(op.imm) || op.imm >= a->shape[0]) {
        return c.fail(absl::StrFormat("offset %d is not a power of two below the extent %d",
                                      op.imm, a->shape[0]));
      }
      out->push_back(*a);
      return absl::OkStatus();
    case OpKind::kClusterBarrier:
      return c.arity(0);  // no result; placement is checked by validate(Program)
  }
  return c.fail("unknown op kind");
}

absl::Status loop_body_arg_types(const std::vector<Type>& values, const Op& op, int number,
                                 std::vector<Type>* out) {
  Checker c(values, op, number);
  out->clear();
  if (op.args.size() < 3) return c.fail("needs lo, hi and step operands");
  const Type *lo = nullptr, *hi = nullptr, *st = nullptr;
  FB_RETURN_IF_ERROR(c.arg(0, &lo));
  FB_RETURN_IF_ERROR(c.arg(1, &hi));
  FB_RETURN_IF_ERROR(c.arg(2, &st));
  if (lo->rank() || hi->rank() || st->rank() || (lo->elem != Elem::kI32 && lo->elem != Elem::kI64) ||
      hi->elem != lo->elem || st->elem != lo->elem) {
    return c.fail(absl::StrFormat("lo, hi and step must be scalars of one of i32/i64; got %s, %s, %s",
                                  to_string(*lo), to_string(*hi), to_string(*st)));
  }
  out->push_back(*lo);
  for (size_t i = 3; i < op.args.size(); ++i) {
    const Type* t;
    FB_RETURN_IF_ERROR(c.arg(i, &t));
    out->push_back(*t);
  }
  return absl::OkStatus();
}

}  // namespace fixbits::tile
