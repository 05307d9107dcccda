// Program: printing, hashing, validation and the Builder.
// Printed form (canonical; one op per line, results then op, types after ':'):
//   program row_sum(%0: ptr<f32>, %1: ptr<f32>, %2: i32) warps=4 grid=rows {
//     %3 = program_id 0 : i32
//     %4 = arange 512 : i32<512>
//     %9 = for %5 = %6 to %2 step %7 iter(%8 = %a) : f32 { ... yield %12 }
//   }
#include "dsl/tile/Program.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "dsl/tile/TypeRules.h"

namespace fixbits::tile {

bool is_float(Elem e) { return e == Elem::kF16 || e == Elem::kBF16 || e == Elem::kF32; }
bool is_int(Elem e) { return e == Elem::kI1 || e == Elem::kI32 || e == Elem::kI64; }
bool is_fp8(Elem e) { return e == Elem::kE4M3 || e == Elem::kE5M2; }

std::string elem_name(Elem e) {
  switch (e) {
    case Elem::kI1: return "i1";
    case Elem::kI32: return "i32";
    case Elem::kI64: return "i64";
    case Elem::kF16: return "f16";
    case Elem::kBF16: return "bf16";
    case Elem::kF32: return "f32";
    case Elem::kPtr: return "ptr";
    case Elem::kE4M3: return "e4m3";
    case Elem::kE5M2: return "e5m2";
  }
  return "?";
}

std::string to_string(const Type& t) {
  if (t.elem == Elem::kPtr) return absl::StrCat("ptr<", std::string(dtype_name(t.pointee)), ">");
  if (t.shape.empty()) return elem_name(t.elem);
  return absl::StrCat(elem_name(t.elem), "<", absl::StrJoin(t.shape, "x"), ">");
}

absl::StatusOr<Elem> elem_of(DType d) {
  switch (d) {
    case DType::kF32: return Elem::kF32;
    case DType::kF16: return Elem::kF16;
    case DType::kBF16: return Elem::kBF16;
    case DType::kF8E4M3: return Elem::kE4M3;
    case DType::kF8E5M2: return Elem::kE5M2;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "pointers to ", std::string(dtype_name(d)), " cannot be loaded or stored by tile programs yet"));
  }
}

namespace {

const char* bin_name(BinaryOp b) {
  switch (b) {
    case BinaryOp::kAdd: return "add";
    case BinaryOp::kSub: return "sub";
    case BinaryOp::kMul: return "mul";
    case BinaryOp::kDiv: return "div";
    case BinaryOp::kMax: return "max";
    case BinaryOp::kMin: return "min";
  }
  return "?";
}
const char* un_name(UnaryOp u) {
  switch (u) {
    case UnaryOp::kNeg: return "neg";
    case UnaryOp::kSqrt: return "sqrt";
    case UnaryOp::kExp: return "exp";
    case UnaryOp::kExpNonPositive: return "exp_nonpos";
  }
  return "?";
}
const char* cmp_name(CompareOp c) {
  switch (c) {
    case CompareOp::kLt: return "lt";
    case CompareOp::kLe: return "le";
    case CompareOp::kGt: return "gt";
    case CompareOp::kGe: return "ge";
    case CompareOp::kEq: return "eq";
    case CompareOp::kNe: return "ne";
  }
  return "?";
}
const char* combine_name(Combine c) {
  switch (c) {
    case Combine::kAdd: return "add";
    case Combine::kMax: return "max";
    case Combine::kMin: return "min";
  }
  return "?";
}

std::string v(int id) { return absl::StrCat("%", id); }
std::string vs(const std::vector<int>& ids) {
  return absl::StrJoin(ids, ", ", [](std::string* o, int id) { absl::StrAppend(o, "%", id); });
}

void print_ops(const Program& p, const std::vector<Op>& ops, int indent, std::string* out) {
  std::string pad(indent * 2, ' ');
  for (const Op& op : ops) {
    absl::StrAppend(out, pad);
    if (!op.results.empty()) absl::StrAppend(out, vs(op.results), " = ");
    absl::StrAppend(out, op_name(op));
    switch (op.kind) {
      case OpKind::kProgramId:
      case OpKind::kArange:
        absl::StrAppend(out, " ", op.imm);
        break;
      case OpKind::kConst:
        if (is_float(op.type.elem) || is_fp8(op.type.elem)) {
          float f;
          std::memcpy(&f, &op.fbits, 4);
          absl::StrAppend(out, absl::StrFormat(" %a [0x%08x]", static_cast<double>(f), op.fbits));
        } else {
          absl::StrAppend(out, " ", op.imm);
        }
        break;
      case OpKind::kXorPermute:
        absl::StrAppend(out, " ", v(op.args.empty() ? -1 : op.args[0]), " xor ", op.imm);
        break;
      case OpKind::kReshape:
        absl::StrAppend(out, " ", v(op.args[0]), " to (", absl::StrJoin(op.type.shape, "x"), ")");
        break;
      case OpKind::kLoad:
        absl::StrAppend(out, " ", v(op.args[0]), "[", v(op.args[1]), "]");
        if (op.has_mask) absl::StrAppend(out, " mask ", v(op.args[2]), " other ", v(op.args[3]));
        break;
      case OpKind::kStore:
        absl::StrAppend(out, " ", v(op.args[0]), "[", v(op.args[1]), "], ", v(op.args[2]));
        if (op.has_mask) absl::StrAppend(out, " mask ", v(op.args[3]));
        break;
      case OpKind::kReduce:
        absl::StrAppend(out, " ", v(op.args[0]), " axis=", op.imm, " combine=",
                        combine_name(op.combine), " order=",
                        op.order == dsl::TreeOrder::kPinned ? "pinned" : "free",
                        " strip=", op.strip);
        if (op.args.size() > 1) absl::StrAppend(out, " init=", v(op.args[1]));
        break;
      case OpKind::kReduceGroup: {
        const size_t k = static_cast<size_t>(std::max<int64_t>(op.imm, 0));
        std::vector<int> tiles(op.args.begin(), op.args.begin() + std::min(k, op.args.size()));
        absl::StrAppend(out, " ", vs(tiles), " combine=", combine_name(op.combine),
                        " strip=", op.strip, op.chained ? " chained" : "");
        if (op.args.size() > k) absl::StrAppend(out, " init=", v(op.args[k]));
        break;
      }
      case OpKind::kFor: {
        absl::StrAppend(out, " ", v(op.body_args.empty() ? -1 : op.body_args[0]), " = ",
                        v(op.args[0]), " to ", v(op.args[1]), " step ", v(op.args[2]), " iter(");
        for (size_t i = 3; i < op.args.size(); ++i) {
          int ba = i - 2 < op.body_args.size() ? op.body_args[i - 2] : -1;
          absl::StrAppend(out, i > 3 ? ", " : "", v(ba), " = ", v(op.args[i]));
        }
        absl::StrAppend(out, ")");
        break;
      }
      default:
        if (!op.args.empty()) absl::StrAppend(out, " ", vs(op.args));
        break;
    }
    if (!op.results.empty()) {
      absl::StrAppend(out, " : ",
                      absl::StrJoin(op.results, ", ", [&](std::string* o, int id) {
                        absl::StrAppend(o, id >= 0 && id < static_cast<int>(p.values.size())
                                               ? to_string(p.values[id]) : "?");
                      }));
    }
    if (op.kind == OpKind::kFor) {
      absl::StrAppend(out, " {\n");
      print_ops(p, op.body, indent + 1, out);
      absl::StrAppend(out, pad, "  yield ", vs(op.yields), "\n", pad, "}");
    }
    absl::StrAppend(out, "\n");
  }
}

// Walks ops in pre-order checking definitions and types.
struct ValidateWalk {
  const Program& p;
  std::vector<bool> defined;
  int number = 0;
  std::vector<int> scoped_out;  // ids defined inside a finished loop body

  absl::Status define(const Op& op, int n, int id, const Type& t) {
    if (id < 0 || id >= static_cast<int>(p.values.size())) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s #%d: result %%%d has no entry in the value table", op_name(op), n, id));
    }
    if (defined[id] || std::find(scoped_out.begin(), scoped_out.end(), id) != scoped_out.end()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s #%d: value %%%d is defined twice", op_name(op), n, id));
    }
    if (!(p.values[id] == t)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s #%d: value %%%d is recorded as %s but the op gives %s", op_name(op), n, id,
          to_string(p.values[id]), to_string(t)));
    }
    defined[id] = true;
    return absl::OkStatus();
  }

  absl::Status walk(const std::vector<Op>& ops) {
    for (const Op& op : ops) {
      int n = number++;
      for (int a : op.args) {
        if (a < 0 || a >= static_cast<int>(defined.size()) || !defined[a]) {
          if (std::find(scoped_out.begin(), scoped_out.end(), a) != scoped_out.end()) {
            return absl::InvalidArgumentError(absl::StrFormat(
                "%s #%d: operand %%%d was defined inside a loop body and is not visible after "
                "it; carry it out of the loop instead", op_name(op), n, a));
          }
          return absl::InvalidArgumentError(absl::StrFormat(
              "%s #%d: operand %%%d is used before it is defined", op_name(op), n, a));
        }
      }
      if (op.kind == OpKind::kFor) {
        std::vector<Type> bt;
        absl::Status s = loop_body_arg_types(p.values, op, n, &bt);
        if (!s.ok()) return s;
        if (bt.size() != op.body_args.size()) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "for #%d: has %d body arguments, expected %d", n, op.body_args.size(), bt.size()));
        }
        for (size_t i = 0; i < bt.size(); ++i) {
          s = define(op, n, op.body_args[i], bt[i]);
          if (!s.ok()) return s;
        }
        std::vector<bool> outer = defined;
        s = walk(op.body);
        if (!s.ok()) return s;
        for (int y : op.yields) {
          if (y < 0 || y >= static_cast<int>(defined.size()) || !defined[y]) {
            return absl::InvalidArgumentError(
                absl::StrFormat("for #%d: yield %%%d is not defined", n, y));
          }
        }
        // Values of the body are scoped to it; ids stay taken (a redefinition is an
        // error), so remember them apart.
        for (size_t id = 0; id < defined.size(); ++id) {
          if (defined[id] && !outer[id]) scoped_out.push_back(static_cast<int>(id));
        }
        defined = outer;
      }
      std::vector<Type> rt;
      absl::Status s = infer_results(p.values, op, n, &rt);
      if (!s.ok()) return s;
      if (rt.size() != op.results.size()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s #%d: has %d results, expected %d", op_name(op), n, op.results.size(), rt.size()));
      }
      for (size_t i = 0; i < rt.size(); ++i) {
        s = define(op, n, op.results[i], rt[i]);
        if (!s.ok()) return s;
      }
    }
    return absl::OkStatus();
  }
};

// Where ops may stand, one walk over the ops (pre-order numbering, as errors name them;
// returns the ops counted):
//   - cluster barriers sit at the top level of a program whose cluster is > 1, so every
//     thread of the cluster reaches each one exactly once;
//   - staged values (Op.staged loads, stage) are tiles made at the top level and never
//     carried or yielded by a loop: the lowering keeps a staged value in shared slots and
//     reads it at each op that uses it, which a loop's registers cannot hold. The one
//     exception, double buffering: a top-level loop may carry a staged load whose init is
//     a top-level staged load and whose yield is a staged load made directly in that
//     loop's body; every staged load of that body is such a yield, of one carried value
//     only, and no staged load is the init of two carried values (the lowering gives
//     each carried one two slot sets that alternate).
// `staged` marks the staged values seen so far (value ids are in range: the type walk
// ran first): kStagedLoad for a staged load (may start a double buffer), kStagedOther
// for a stage op's result and a double buffer's carried value (read, never carried).
// `depth`: 0 at the top level, 1 directly in a top-level loop's body, 2 deeper.
enum StagedKind : uint8_t { kNotStaged = 0, kStagedLoad = 1, kStagedOther = 2 };
absl::StatusOr<int> check_placement(const Program& p, const std::vector<Op>& ops, int depth,
                                    std::vector<uint8_t>& staged, int number) {
  for (const Op& op : ops) {
    const int n = number++;
    if (op.kind == OpKind::kClusterBarrier) {
      if (depth > 0) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "cluster_barrier #%d: a cluster barrier must be at the top level of the program, "
            "not in a loop body.", n));
      }
      if (p.cluster < 2) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "cluster_barrier #%d: program %s has cluster %d; a cluster barrier needs "
            "Program.cluster > 1.", n, p.name, p.cluster));
      }
    }
    if (op.kind == OpKind::kLoad && op.staged) {
      if (depth > 1) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "load_staged #%d: a staged load must be at the top level of the program (or the "
            "yield of a top-level loop's double buffer), not in a nested loop body.", n));
      }
      if (op.results.size() != 1 || p.values[op.results[0]].rank() == 0) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "load_staged #%d: a staged load must load a tile (its offsets are a scalar).", n));
      }
      staged[op.results[0]] = kStagedLoad;
    }
    if (op.kind == OpKind::kStage) {
      if (depth > 0) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "stage #%d: a staged value must be made at the top level of the program, not in a "
            "loop body.", n));
      }
      staged[op.results[0]] = kStagedOther;
    }
    if (op.kind == OpKind::kFor) {
      // Carried position i - 3 is a double buffer when its init is a staged load.
      std::vector<bool> buffered(op.yields.size(), false);
      for (size_t i = 3; i < op.args.size(); ++i) {
        if (staged[op.args[i]] == kNotStaged) continue;
        if (staged[op.args[i]] != kStagedLoad || depth > 0) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "for #%d: carried value %%%d is held in shared memory (load_staged or stage); carry "
              "the value of an op that reads it instead (only a top-level loop carries a staged "
              "load, as a double buffer).", n, op.args[i]));
        }
        for (size_t j = 3; j < i; ++j) {
          if (op.args[j] == op.args[i]) {
            return absl::InvalidArgumentError(absl::StrFormat(
                "for #%d: staged load %%%d starts two double buffers; each needs slots of its own.",
                n, op.args[i]));
          }
        }
        buffered[i - 3] = true;
        staged[op.body_args[i - 2]] = kStagedOther;
      }
      absl::StatusOr<int> r = check_placement(p, op.body, depth + 1, staged, number);
      if (!r.ok()) return r.status();
      number = *r;
      // The body's own staged loads: each the yield of exactly one double buffer.
      std::vector<int> body_loads;
      for (const Op& b : op.body) {
        if (b.kind == OpKind::kLoad && b.staged) body_loads.push_back(b.results[0]);
      }
      for (size_t i = 0; i < op.yields.size(); ++i) {
        const int y = op.yields[i];
        const bool own = std::find(body_loads.begin(), body_loads.end(), y) != body_loads.end();
        if (buffered[i] ? !own : staged[y] != kNotStaged) {
          return absl::InvalidArgumentError(absl::StrFormat(
              buffered[i] ? "for #%d: yield %%%d of a carried staged load must be a staged load made "
                            "in the loop's body (the double buffer's next slots)."
                          : "for #%d: yield %%%d is held in shared memory (load_staged or stage); "
                            "yield the value of an op that reads it instead.",
              n, y));
        }
      }
      // (A staged yield at a position that is not a double buffer was refused above.)
      for (int l : body_loads) {
        const int64_t uses = std::count(op.yields.begin(), op.yields.end(), l);
        if (uses != 1) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "for #%d: staged load %%%d in the loop body must be yielded as exactly one carried "
              "staged load (a double buffer's next slots); it is yielded %d times.", n, l, uses));
        }
      }
      for (size_t i = 0; i < op.results.size(); ++i) {
        if (buffered[i]) staged[op.results[i]] = kStagedOther;
      }
    }
  }
  return number;
}

}  // namespace

std::string op_name(const Op& op) {
  switch (op.kind) {
    case OpKind::kProgramId: return "program_id";
    case OpKind::kConst: return "const";
    case OpKind::kArange: return "arange";
    case OpKind::kSplat: return "splat";
    case OpKind::kBinary: return bin_name(op.bin);
    case OpKind::kUnary: return un_name(op.un);
    case OpKind::kCompare: return absl::StrCat("cmp_", cmp_name(op.cmp));
    case OpKind::kSelect: return "select";
    case OpKind::kReshape: return "reshape";
    case OpKind::kCast: return absl::StrCat("cast_", elem_name(op.type.elem));
    case OpKind::kLoad: return op.staged ? "load_staged" : "load";
    case OpKind::kStage: return "stage";
    case OpKind::kStore: return "store";
    case OpKind::kReduce: return "reduce";
    case OpKind::kReduceGroup: return "reduce_group";
    case OpKind::kFor: return "for";
    case OpKind::kDot: return "dot";
    case OpKind::kFma: return "fma";
    case OpKind::kXorPermute: return "xor_permute";
    case OpKind::kMmaSync: return "mma_sync";
    case OpKind::kWgmma: return "wgmma";
    case OpKind::kClusterBarrier: return "cluster_barrier";
  }
  return "unknown";
}

std::string to_string(const Program& p) {
  std::string out = absl::StrCat("program ", p.name, "(");
  for (size_t i = 0; i < p.params.size(); ++i) {
    absl::StrAppend(&out, i ? ", " : "", "%", i, " ", p.params[i].name, ": ",
                    to_string(p.params[i].type));
  }
  absl::StrAppend(&out, ") warps=", p.num_warps, " grid=", p.grid);
  if (p.cluster != 1) absl::StrAppend(&out, " cluster=", p.cluster);  // old texts unchanged
  if (p.min_blocks_per_sm != 0) absl::StrAppend(&out, " min_blocks_per_sm=", p.min_blocks_per_sm);
  if (p.divide_by_reciprocal) absl::StrAppend(&out, " divide_by_reciprocal");
  absl::StrAppend(&out, " {\n");
  print_ops(p, p.body, 1, &out);
  absl::StrAppend(&out, "}\n");
  return out;
}

uint64_t hash(const Program& p) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char ch : to_string(p)) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}

bool Program::operator==(const Program& o) const { return to_string(*this) == to_string(o); }

absl::Status validate(const Program& p) {
  if (p.name.empty()) return absl::InvalidArgumentError("program: the name is empty.");
  if (p.num_warps < 1 || p.num_warps > 32 || (p.num_warps & (p.num_warps - 1))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "program %s: num_warps %d is not a power of two in [1, 32]", p.name, p.num_warps));
  }
  if (p.values.size() < p.params.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "program %s: the value table is shorter than the parameter list", p.name));
  }
  ValidateWalk w{p, std::vector<bool>(p.values.size(), false), 0, {}};
  for (size_t i = 0; i < p.params.size(); ++i) {
    const Type& t = p.params[i].type;
    if (t.rank() != 0 || (t.elem != Elem::kPtr && t.elem != Elem::kI32 && t.elem != Elem::kI64 &&
                          t.elem != Elem::kF32)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "param %s: type %s is not a pointer, i32, i64 or f32 scalar", p.params[i].name,
          to_string(t)));
    }
    if (!(p.values[i] == t)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "param %s: value %%%d is recorded as %s", p.params[i].name, i, to_string(p.values[i])));
    }
    w.defined[i] = true;
  }
  if (p.min_blocks_per_sm < 0 || p.min_blocks_per_sm > 32) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "program %s: min_blocks_per_sm %d is not in [0, 32] (0: no request).", p.name,
        p.min_blocks_per_sm));
  }
  if (p.cluster < 1 || p.cluster > 8) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "program %s: cluster %d is not in [1, 8] (blocks per thread-block cluster; 8 is the "
        "portable limit).", p.name, p.cluster));
  }
  if (absl::Status s = w.walk(p.body); !s.ok()) return s;
  std::vector<uint8_t> staged(p.values.size(), kNotStaged);
  return check_placement(p, p.body, /*depth=*/0, staged, 0).status();
}

// ---- Builder ----

Builder::Builder(std::string name) { prog_.name = std::move(name); }

std::vector<Op>& Builder::current() {
  return open_loops_.empty() ? prog_.body : open_loops_.back().body;
}

Type Builder::type_of(Value v) const {
  if (v.id < 0 || v.id >= static_cast<int>(prog_.values.size())) return Type::scalar(Elem::kI1);
  return prog_.values[v.id];
}

Value Builder::emit(Op op) {
  int number = ops_emitted_++;
  if (!error_.ok()) return Value{};
  std::vector<Type> rt;
  absl::Status s = infer_results(prog_.values, op, number, &rt);
  if (!s.ok()) {
    error_ = s;
    return Value{};
  }
  Value first;
  for (const Type& t : rt) {
    int id = static_cast<int>(prog_.values.size());
    prog_.values.push_back(t);
    op.results.push_back(id);
    if (first.id < 0) first.id = id;
  }
  current().push_back(std::move(op));
  return first;
}

Value Builder::param(std::string name, Type type) {
  if (!error_.ok()) return Value{};
  if (!prog_.body.empty() || !open_loops_.empty()) {
    error_ = absl::InvalidArgumentError(
        absl::StrFormat("param %s: parameters must be declared before the first op", name));
    return Value{};
  }
  int id = static_cast<int>(prog_.values.size());
  prog_.values.push_back(type);
  prog_.params.push_back(Param{std::move(name), std::move(type)});
  return Value{id};
}

Value Builder::program_id(int axis) {
  Op op;
  op.kind = OpKind::kProgramId;
  op.imm = axis;
  return emit(std::move(op));
}

Value Builder::const_float(Elem e, float v) {
  Op op;
  op.kind = OpKind::kConst;
  op.type = Type::scalar(e);
  op.fbits = float_bits(v);
  return emit(std::move(op));
}
Value Builder::const_f32(float v) { return const_float(Elem::kF32, v); }

Value Builder::const_int(Elem e, int64_t v) {
  Op op;
  op.kind = OpKind::kConst;
  op.type = Type::scalar(e);
  op.imm = v;
  return emit(std::move(op));
}

Value Builder::arange(int64_t extent) {
  Op op;
  op.kind = OpKind::kArange;
  op.imm = extent;
  return emit(std::move(op));
}

Value Builder::splat(Value scalar, std::vector<int64_t> shape) {
  Op op;
  op.kind = OpKind::kSplat;
  op.args = {scalar.id};
  op.type = Type::tile(Elem::kF32, std::move(shape));
  return emit(std::move(op));
}

Value Builder::binary(BinaryOp b, Value x, Value y) {
  Op op;
  op.kind = OpKind::kBinary;
  op.bin = b;
  op.args = {x.id, y.id};
  return emit(std::move(op));
}

Value Builder::unary(UnaryOp u, Value x) {
  Op op;
  op.kind = OpKind::kUnary;
  op.un = u;
  op.args = {x.id};
  return emit(std::move(op));
}

Value Builder::compare(CompareOp c, Value x, Value y) {
  Op op;
  op.kind = OpKind::kCompare;
  op.cmp = c;
  op.args = {x.id, y.id};
  return emit(std::move(op));
}

Value Builder::select(Value c, Value x, Value y) {
  Op op;
  op.kind = OpKind::kSelect;
  op.args = {c.id, x.id, y.id};
  return emit(std::move(op));
}

Value Builder::cast(Value x, Elem to) {
  Op op;
  op.kind = OpKind::kCast;
  op.type = Type::scalar(to);
  op.args = {x.id};
  return emit(std::move(op));
}

Value Builder::reshape(Value x, std::vector<int64_t> shape) {
  Op op;
  op.kind = OpKind::kReshape;
  op.type = Type::tile(Elem::kF32, std::move(shape));
  op.args = {x.id};
  return emit(std::move(op));
}

Value Builder::load(Value ptr, Value off) {
  Op op;
  op.kind = OpKind::kLoad;
  op.args = {ptr.id, off.id};
  return emit(std::move(op));
}

Value Builder::load(Value ptr, Value off, Value mask, Value other) {
  Op op;
  op.kind = OpKind::kLoad;
  op.has_mask = true;
  op.args = {ptr.id, off.id, mask.id, other.id};
  return emit(std::move(op));
}

Value Builder::load_staged(Value ptr, Value off, Value mask, Value other) {
  Op op;
  op.kind = OpKind::kLoad;
  op.has_mask = true;
  op.staged = true;
  op.args = {ptr.id, off.id, mask.id, other.id};
  return emit(std::move(op));
}

Value Builder::stage(Value t) {
  Op op;
  op.kind = OpKind::kStage;
  op.args = {t.id};
  return emit(std::move(op));
}

void Builder::store(Value ptr, Value off, Value val) {
  Op op;
  op.kind = OpKind::kStore;
  op.args = {ptr.id, off.id, val.id};
  emit(std::move(op));
}

void Builder::store(Value ptr, Value off, Value val, Value mask) {
  Op op;
  op.kind = OpKind::kStore;
  op.has_mask = true;
  op.args = {ptr.id, off.id, val.id, mask.id};
  emit(std::move(op));
}

Value Builder::reduce(Value t, int axis, Combine c, dsl::TreeOrder order, int64_t strip,
                      std::optional<Value> init) {
  Op op;
  op.kind = OpKind::kReduce;
  op.imm = axis;
  op.combine = c;
  op.order = order;
  op.strip = strip;
  op.args = {t.id};
  if (init) op.args.push_back(init->id);
  return emit(std::move(op));
}

Op group_member(const Op& g, size_t j) {
  const size_t k = static_cast<size_t>(g.imm);
  Op r;
  r.kind = OpKind::kReduce;
  r.imm = 0;
  r.combine = g.combine;
  r.order = g.order;
  r.strip = g.strip;
  r.args = {g.args[j]};
  if (g.chained && j > 0) {
    r.args.push_back(g.results[j - 1]);
  } else if (g.args.size() > k) {
    r.args.push_back(g.args[k]);
  }
  if (j < g.results.size()) r.results = {g.results[j]};
  return r;
}

std::vector<Value> Builder::reduce_group(const std::vector<Value>& tiles, Combine c, int64_t strip,
                                         std::optional<Value> init, bool chained) {
  Op op;
  op.kind = OpKind::kReduceGroup;
  op.imm = static_cast<int64_t>(tiles.size());
  op.combine = c;
  op.order = dsl::TreeOrder::kPinned;
  op.strip = strip;
  op.chained = chained;
  for (Value t : tiles) op.args.push_back(t.id);
  if (init) op.args.push_back(init->id);
  std::vector<Value> out(tiles.size());
  const Value first = emit(std::move(op));
  if (first.id < 0) return out;
  for (size_t j = 0; j < out.size(); ++j) out[j].id = first.id + static_cast<int>(j);  // emit's ids are consecutive
  return out;
}

Value Builder::dot(Value a, Value b, Value acc) {
  Op op;
  op.kind = OpKind::kDot;
  op.args = {a.id, b.id, acc.id};
  return emit(std::move(op));
}

Value Builder::fma(Value a, Value b, Value c) {
  Op op;
  op.kind = OpKind::kFma;
  op.args = {a.id, b.id, c.id};
  return emit(std::move(op));
}

Value Builder::mma_sync(Value a, Value b, Value c) {
  Op op;
  op.kind = OpKind::kMmaSync;
  op.args = {a.id, b.id, c.id};
  return emit(std::move(op));
}

Value Builder::wgmma(Value a, Value b, Value c) {
  Op op;
  op.kind = OpKind::kWgmma;
  op.args = {a.id, b.id, c.id};
  return emit(std::move(op));
}

void Builder::cluster_barrier() {
  Op op;
  op.kind = OpKind::kClusterBarrier;
  if (!open_loops_.empty() && error_.ok()) {
    error_ = absl::InvalidArgumentError(absl::StrFormat(
        "cluster_barrier #%d: a cluster barrier must be at the top level of the program, not "
        "in a loop body (every thread of the cluster must reach it once).", ops_emitted_));
  }
  emit(std::move(op));
}

Value Builder::xor_permute(Value t, int64_t d) {
  Op op;
  op.kind = OpKind::kXorPermute;
  op.imm = d;
  op.args = {t.id};
  return emit(std::move(op));
}

std::vector<Value> Builder::begin_for(Value lo, Value hi, Value step,
                                      const std::vector<Value>& inits) {
  Op op;
  op.kind = OpKind::kFor;
  op.args = {lo.id, hi.id, step.id};
  for (Value v : inits) op.args.push_back(v.id);
  int number = ops_emitted_++;
  std::vector<Value> out;
  if (error_.ok()) {
    std::vector<Type> bt;
    absl::Status s = loop_body_arg_types(prog_.values, op, number, &bt);
    if (!s.ok()) {
      error_ = s;
    } else {
      for (const Type& t : bt) {
        int id = static_cast<int>(prog_.values.size());
        prog_.values.push_back(t);
        op.body_args.push_back(id);
        out.push_back(Value{id});
      }
    }
  }
  op.imm = number;  // remembered so end_for reports under the loop's number
  open_loops_.push_back(std::move(op));
  if (out.size() != inits.size() + 1) out.assign(inits.size() + 1, Value{});
  return out;
}

std::vector<Value> Builder::end_for(const std::vector<Value>& yields) {
  std::vector<Value> out(yields.size());
  if (open_loops_.empty()) {
    if (error_.ok()) error_ = absl::InvalidArgumentError("for: end_for without a matching begin_for");
    return out;
  }
  Op op = std::move(open_loops_.back());
  open_loops_.pop_back();
  int number = static_cast<int>(op.imm);
  op.imm = 0;
  for (Value v : yields) op.yields.push_back(v.id);
  if (!error_.ok()) return out;
  std::vector<Type> rt;
  absl::Status s = infer_results(prog_.values, op, number, &rt);
  if (!s.ok()) {
    error_ = s;
    return out;
  }
  for (size_t i = 0; i < rt.size(); ++i) {
    int id = static_cast<int>(prog_.values.size());
    prog_.values.push_back(rt[i]);
    op.results.push_back(id);
    out[i] = Value{id};
  }
  current().push_back(std::move(op));
  return out;
}

absl::StatusOr<Program> Builder::finish() {
  if (!error_.ok()) return error_;
  if (!open_loops_.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "for #%d: the loop was never closed with end_for", open_loops_.back().imm));
  }
  absl::Status s = validate(prog_);
  if (!s.ok()) return s;
  return prog_;
}

}  // namespace fixbits::tile
