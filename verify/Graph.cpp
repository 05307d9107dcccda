// Graph.cpp — node construction, canonical hashing and the balanced-tree collapse.
//
// Before: add(add(ld[p+8t], ld[p+8t+4]), shfl.bfly(add(...), 1)) over tid bits.
// After:  one hash H("balanced", add.rn.f32, blank(ld.global.f32 [p]), height 2, stride 1).
#include "verify/Graph.h"

#include <functional>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "verify/Elementwise.h"
#include "verify/IndexedRoot.h"
#include "verify/Hash.h"

namespace fixbits::verify {
namespace {

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kConst: return "const";
    case Kind::kInt: return "int";
    case Kind::kOpaque: return "opaque";
    case Kind::kLoad: return "load";
    case Kind::kArith: return "arith";
    case Kind::kShfl: return "shfl";
    case Kind::kXchg: return "warp-exchange";
    case Kind::kRelocate: return "smem-exchange";
    case Kind::kFold: return "fold";
    case Kind::kGuard: return "guard";
    case Kind::kMma: return "mma";
    case Kind::kRoot: return "root";
  }
  return "?";
}

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

bool commutative(const std::string& op) {
  return starts_with(op, "add.") || starts_with(op, "mul.") || starts_with(op, "max.") ||
         starts_with(op, "min.") || starts_with(op, "v_add_f") || starts_with(op, "v_mul_f") ||
         starts_with(op, "v_max_f") || starts_with(op, "v_min_f") || starts_with(op, "v_pk_add_f");
}

int64_t elem_bytes_of(const std::string& space_type) {
  size_t p = space_type.find_last_of("fbsu");
  if (p == std::string::npos || p + 1 >= space_type.size()) return 0;
  int64_t bits = std::strtoll(space_type.c_str() + p + 1, nullptr, 10);
  return bits >= 8 ? bits / 8 : 0;
}

// Logical stride (in bytes) of swapping lanes at offset k, read from a leaf address.
std::optional<int64_t> lane_stride(const std::optional<Affine>& rep, int64_t k) {
  if (!rep || k <= 0 || !std::has_single_bit(static_cast<uint64_t>(k))) return std::nullopt;
  int b = std::countr_zero(static_cast<uint64_t>(k));
  for (const char* base : {"tid.x", "laneid"}) {
    auto it = rep->terms.find(absl::StrCat(base, ".b", b));
    if (it != rep->terms.end()) return wrap_abs(it->second);
    it = rep->terms.find(base);
    if (it != rep->terms.end()) return wrap_mul(wrap_abs(it->second), k);
  }
  return std::nullopt;
}

Balance leaf_of(const Node& n, const Graph& g) {
  Balance b;
  b.valid = true;
  b.is_leaf = true;
  b.leaf = n.blank;
  b.height = 0;
  if (n.kind == Kind::kLoad && !n.kids.empty() && g.at(n.kids[0]).kind == Kind::kInt) {
    b.rep = g.at(n.kids[0]).aff;
    b.origin = b.rep->c0;
    b.elem_bytes = elem_bytes_of(n.op);
  } else if (n.kind != Kind::kRelocate && n.kind != Kind::kLoad) {
    for (NodeId k : n.kids) {
      const Balance& kb = g.at(k).bal;
      if (kb.rep) {
        b.rep = kb.rep;
        b.origin = kb.origin;
        b.elem_bytes = kb.elem_bytes;
        break;
      }
    }
  }
  return b;
}

// The narrow combine that an exact widening `cvt` lets a combine of `op` see through:
// cvt.f32.f16(max.NaN.f16 tree) under max.NaN.f32 is the max.NaN.f32 tree over the widened
// leaves. Exact because max/min (PTX ISA 9.7.3.12 and 9.7.4.8: `(a > b) ? a : b` with
// +0.0 > -0.0, canonical NaN when .NaN sees a NaN, else the non-NaN input) pick one input
// under a total order that the exact, monotone, sign-keeping widening preserves; a NaN
// anywhere gives the outer combine's own canonical NaN either way, which is why the
// summary is only used as a side of the outer combine, never as a node's own value.
std::string narrow_combine(const std::string& op, const std::string& cvt) {
  if (op != "max.NaN.f32" && op != "min.NaN.f32" && op != "max.f32" && op != "min.f32") return "";
  if (cvt != "cvt.f32.f16" && cvt != "cvt.f32.bf16") return "";
  return op.substr(0, op.size() - 3) + cvt.substr(8);
}

uint64_t blank_of_unary(const std::string& op, uint64_t kid_blank);

// The summary a child contributes to a combine of `op`.
Balance side(const Node& n, const std::string& op, const Graph& g) {
  if (n.kind == Kind::kArith && n.kids.size() == 1) {
    const std::string narrow = narrow_combine(op, n.op);
    const Balance& k = g.at(n.kids[0]).bal;
    if (!narrow.empty() && k.valid && !k.is_leaf && k.op == narrow) {
      Balance b = k;
      b.op = op;
      b.leaf = blank_of_unary(n.op, k.leaf);  // the blank of cvt(leaf), as a leaf of `op`
      return b;
    }
  }
  if (n.bal.is_leaf) return n.bal;
  if (n.bal.op == op) return n.bal;  // valid or broken tree of this same combine
  Balance b = n.bal;                 // a tree of another op is a leaf of this one
  b.valid = true;
  b.is_leaf = true;
  b.leaf = n.hash;
  b.height = 0;
  b.nearest.reset();
  b.op.clear();
  return b;
}

Balance broken(const std::string& op) {
  Balance b;
  b.valid = false;
  b.is_leaf = false;
  b.op = op;
  return b;
}

// One balanced level over children a, b whose partner stride (bytes) is `stride`.
Balance level(const std::string& op, const Balance& a, const Balance& b,
              std::optional<int64_t> stride, std::optional<Affine> rep) {
  if (!a.valid || !b.valid || a.height != b.height || a.leaf != b.leaf) return broken(op);
  int64_t eb = a.elem_bytes > 0 ? a.elem_bytes : b.elem_bytes;
  std::optional<int64_t> logical;
  if (stride && eb > 0 && *stride % eb == 0) logical = *stride / eb;
  Balance out;
  out.valid = true;
  out.is_leaf = false;
  out.op = op;
  out.leaf = a.leaf;
  out.height = a.height + 1;
  out.elem_bytes = eb;
  out.rep = std::move(rep);
  if (a.origin && b.origin) out.origin = std::min(*a.origin, *b.origin);
  if (a.height == 0) {
    if (!logical || *logical == 0) return broken(op);  // the nearest stride must be known
    out.nearest = logical;
  } else {
    if (!a.nearest || a.nearest != b.nearest) return broken(op);
    out.nearest = a.nearest;
    if (logical && *logical != wrap_mul(*a.nearest, int64_t{1} << std::min(a.height, 62))) {
      return broken(op);
    }
  }
  return out;
}

// The `blank` hash finish() gives an arith node of `op` over one kid of blank `kid_blank`.
uint64_t blank_of_unary(const std::string& op, uint64_t kid_blank) {
  uint64_t h = mix(hash_text(kind_name(Kind::kArith)), hash_text(op));
  h = mix(h, 0);
  return mix(h, kid_blank);
}

}  // namespace

uint64_t dep_of_symbol(const std::string& sym) {
  if (sym.empty()) return 0;
  if (sym[0] == '~') return kDepHole;
  struct Base {
    const char* name;
    int first, count;
  };
  static const Base kBases[] = {{"tid.x", 0, 16}, {"tid.y", 16, 16}, {"tid.z", 32, 16}, {"laneid", 48, 5}};
  for (const Base& b : kBases) {
    const size_t len = std::char_traits<char>::length(b.name);
    if (sym.compare(0, len, b.name) != 0) continue;
    if (sym.size() > len + 2 && sym[len] == '.' && sym[len + 1] == 'b') {
      char* end = nullptr;
      const long bit = std::strtol(sym.c_str() + len + 2, &end, 10);
      // "tid.x.b2*param8" (a bit times a parameter, Affine.h) varies with the bit alone.
      if (end != nullptr && (*end == '\0' || *end == '*') && bit >= 0 && bit < b.count) {
        return uint64_t{1} << (b.first + bit);
      }
    }
    return kDepUnknown;
  }
  return 0;
}

std::string hex64(uint64_t h) { return absl::StrFormat("%016x", h); }

std::string literal_bits(const Node& n) {
  if (n.kind == Kind::kInt && n.aff.is_const()) return absl::StrFormat("%x", static_cast<uint64_t>(n.aff.c0));
  const std::string& t = n.op;
  if (n.kind == Kind::kConst && t.size() > 2 && t.size() <= 18 && t[0] == '0' &&
      (t[1] == 'f' || t[1] == 'F' || t[1] == 'd' || t[1] == 'D') &&
      t.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string::npos) {
    return absl::StrFormat("%x", std::strtoull(t.c_str() + 2, nullptr, 16));  // 0f80000000 -> 80000000
  }
  return absl::StrCat("text:", t);  // another spelling may split, never merge
}

bool is_combine(const std::string& op) {
  return commutative(op) && !starts_with(op, "mul.") && !starts_with(op, "v_mul_f");
}

namespace {

// What a rebuilt node starts from: n with new kids, every fact finish() derives cleared
// (hole flags, balance summary); kind, op, imm, commuting, the form, data, dep (set by the
// makers of exchanges, relocations and folds) and line are n's. A field-wise copy: the
// summary is not copied only to be thrown away.
Node rebuilt_from(const Node& n, std::vector<NodeId> kids) {
  Node c;
  c.kind = n.kind;
  c.op = n.op;
  c.imm = n.imm;
  c.kids = std::move(kids);
  c.commuting = n.commuting;
  c.aff = n.aff;
  c.data = n.data;
  c.dep = n.dep;
  c.pad_dep = n.pad_dep;
  c.line = n.line;
  return c;
}

}  // namespace

NodeId Graph::finish(Node n) {
  // Facts from children.
  for (NodeId k : n.kids) {
    n.data = n.data || at(k).data;
    n.has_hole = n.has_hole || at(k).has_hole;
  }
  if (n.kind == Kind::kLoad) n.data = true;
  if (n.kind == Kind::kInt) {
    for (const auto& [s, c] : n.aff.terms) n.has_hole = n.has_hole || s[0] == '~';
  }
  n.mentions_hole = n.has_hole;
  for (NodeId k : n.kids) n.mentions_hole = n.mentions_hole || at(k).mentions_hole;
  // Padding read through below (Graph::pad): a lane exchange of it is checked by shfl; a
  // relocation (another thread's value), an MMA (other lanes' fragments) or an unmodeled op
  // (maybe cross-lane) of a value whose padding was read through under a thread-varying
  // predicate is not trusted.
  for (NodeId k : n.kids) {
    const uint64_t d = at(k).pad_dep;
    n.pad_dep |= d;
    if ((d & ~kDepHole) != 0 && (n.kind == Kind::kRelocate || n.kind == Kind::kMma || n.kind == Kind::kOpaque)) {
      pad_lanes_unsure_ = true;
    }
  }
  // Thread dependence; exchanges, relocations and folds set theirs in their makers.
  if (n.kind != Kind::kXchg && n.kind != Kind::kRelocate && n.kind != Kind::kFold) {
    n.dep = 0;
    for (NodeId k : n.kids) n.dep |= at(k).dep;
    if (n.kind == Kind::kInt) {
      for (const auto& [sym, c] : n.aff.terms) n.dep |= dep_of_symbol(sym);
    }
    if ((n.kind == Kind::kOpaque && n.kids.empty()) || n.kind == Kind::kMma) n.dep |= kDepUnknown;
  }
  // Structural and blanked hashes; commutative children already sorted by the maker.
  uint64_t h = mix(hash_text(kind_name(n.kind)), hash_text(n.op));
  h = mix(h, static_cast<uint64_t>(n.imm));
  uint64_t bl = h, cb = h;
  if (n.kind == Kind::kInt) {
    // hash_text of text(), of keep_prefix(...).text() and of the kept form with c0, streamed.
    h = mix(h, n.aff.text_hash());
    bl = mix(bl, n.aff.kept_text_hash({"param", "shared", "~"}, 0));
    cb = mix(cb, n.aff.kept_text_hash({"param", "shared", "~", "global", "sym:", "kernarg"}, n.aff.c0));
  }
  {
    // Each flavour hashes commuting children in its own sorted order.
    std::vector<uint64_t> hs, bs, cs;
    for (NodeId k : n.kids) {
      hs.push_back(at(k).hash);
      bs.push_back(at(k).blank);
      cs.push_back(at(k).coord_blank);
    }
    const size_t c = std::min<size_t>(static_cast<size_t>(n.commuting), n.kids.size());
    std::sort(hs.begin(), hs.begin() + c);
    std::sort(bs.begin(), bs.begin() + c);
    std::sort(cs.begin(), cs.begin() + c);
    for (size_t i = 0; i < n.kids.size(); ++i) {
      h = mix(h, hs[i]);
      bl = mix(bl, bs[i]);
      cb = mix(cb, cs[i]);
    }
  }
  if (n.kind == Kind::kRoot && n.kids.size() == 2) {
    // Which buffer and which constant offset, not which thread: layouts may move stores.
    h = mix(mix(mix(hash_text("root"), hash_text(n.op)), at(n.kids[0]).hash), at(n.kids[1]).coord_blank);
  }
  if (n.kind == Kind::kFold && !n.kids.empty()) {
    h = mix(mix(hash_text("fold"), hash_text(n.op)), at(n.kids[0]).coord_blank);
    if (n.kids.size() > 1) h = mix(h, at(n.kids[1]).coord_blank);
    cb = h;
  }
  n.hash = h;
  n.blank = bl;
  n.coord_blank = cb;
  // Balance summary.
  if (n.kind == Kind::kArith && n.kids.size() == 2 && is_combine(n.op)) {
    Balance a = side(at(n.kids[0]), n.op, *this), b = side(at(n.kids[1]), n.op, *this);
    std::optional<int64_t> stride;
    std::optional<Affine> rep = a.rep;
    if (a.rep && b.rep) {
      Affine d = sub(*b.rep, *a.rep);
      if (d.is_const()) {
        stride = wrap_abs(d.c0);
        if (d.c0 < 0) rep = b.rep;
      }
    }
    n.bal = level(n.op, a, b, stride, rep);
  } else if (n.kind == Kind::kXchg) {
    Balance x = side(at(n.kids[0]), n.op, *this);
    n.bal = level(n.op, x, x, lane_stride(x.rep, n.imm), x.rep);
  } else if (n.kind == Kind::kRelocate) {
    n.bal = at(n.kids[0]).bal;
    n.bal.rep.reset();
    // The writer's leaves start origin_shift bytes after the symbolic thread's own.
    if (n.op == "from" && n.bal.origin) n.bal.origin = wrap_add(*n.bal.origin, n.imm);
  } else {
    n.bal = leaf_of(n, *this);
  }
  if (n.bal.valid && !n.bal.is_leaf) {
    uint64_t c = mix(hash_text("balanced"), hash_text(n.bal.op));
    c = mix(c, n.bal.leaf);
    c = mix(c, static_cast<uint64_t>(n.bal.height));
    c = mix(c, static_cast<uint64_t>(n.bal.nearest.value_or(-1)));
    c = mix(c, n.bal.origin ? static_cast<uint64_t>(*n.bal.origin) : 0x5bd1e995ULL);
    n.hash = c;
    n.blank = c;
    n.coord_blank = c;
  }
  nodes_.push_back(std::move(n));
  return static_cast<NodeId>(nodes_.size() - 1);
}

NodeId Graph::constant(const std::string& text) {
  Node n;
  n.kind = Kind::kConst;
  n.op = text;
  return finish(std::move(n));
}

NodeId Graph::integer(const Affine& a) {
  Node n;
  n.kind = Kind::kInt;
  n.aff = a;
  return finish(std::move(n));
}

NodeId Graph::opaque(const std::string& op, std::vector<NodeId> kids, int line) {
  Node n;
  n.kind = Kind::kOpaque;
  n.op = op;
  n.kids = std::move(kids);
  n.line = line;
  return finish(std::move(n));
}

NodeId Graph::load(const std::string& space_type, NodeId addr, int line) {
  Node n;
  n.kind = Kind::kLoad;
  n.op = space_type;
  n.kids = {addr};
  n.line = line;
  return finish(std::move(n));
}

NodeId Graph::pad(NodeId pred, NodeId value, int line) {
  Node n;
  n.kind = Kind::kGuard;
  n.op = "pad";
  n.kids = {pred, value, constant("0f80000000")};
  n.line = line;
  return finish(std::move(n));
}

namespace {
bool is_pad(const Node& n) { return n.kind == Kind::kGuard && n.op == "pad" && n.kids.size() == 3; }
// An add whose -0.0 operand leaves the other unchanged for every value (+0 + -0 is +0
// except under round-down).
bool pad_absorbing_add(const std::string& op) {
  return (starts_with(op, "add.") && op.find(".rm") == std::string::npos) ||
         (starts_with(op, "v_add_f") && op.find("rm") == std::string::npos);
}
}  // namespace

NodeId Graph::arith(const std::string& op, std::vector<NodeId> kids, int line) {
  if (kids.size() == 1 && (op == "cvt.f32.f16" || op == "cvt.f32.bf16") && at(kids[0]).kind == Kind::kGuard &&
      at(kids[0]).op.empty() && at(kids[0]).kids.size() == 3) {
    // A widening of a select is the select of the widenings (exact; the widened zero bits
    // are +0.0): `cvt(@p ? load : 0)` and `@p ? cvt(load) : 0.0` are one value.
    const NodeId pred = at(kids[0]).kids[0], a = at(kids[0]).kids[1], b = at(kids[0]).kids[2];
    auto widen = [&](NodeId x) {
      return literal_bits(at(x)) == "0" ? constant("0f00000000") : arith(op, {x}, line);
    };
    const NodeId wa = widen(a), wb = widen(b);
    return guard(pred, wa, wb, line);
  }
  uint64_t pad_dep = 0;
  if (kids.size() == 2 && pad_absorbing_add(op)) {
    // Padding (Graph::pad) is read as its value only by the sum that consumes it, at the
    // reading lane, or under an exchange across lane bits its predicate does not vary with
    // (the lane brought has the reading lane's predicate: exact relative to it). The
    // predicate's bits go into pad_dep: a later exchange across them is checked (shfl).
    // Decided only for predicates of thread bits and literals (pred_sensitivity); one that
    // reads a parameter, a loop hole or anything else is read through as before, unchecked
    // (docs/verify.md, Known gaps).
    for (NodeId& k : kids) {
      const Node& x = at(k);
      if (is_pad(x)) {
        if (auto sens = pred_sensitivity(x.kids[0])) pad_dep |= *sens;
        k = x.kids[1];
      } else if (x.kind == Kind::kShfl && x.kids.size() == 1 && is_pad(at(x.kids[0]))) {
        const std::string mode = x.op;
        const int64_t imm = x.imm;
        const std::optional<uint64_t> pd = pred_sensitivity(at(x.kids[0]).kids[0]);
        if (pd && lane_varies(*pd, mode, imm)) continue;  // a lane whose predicate may differ: keep the guard
        if (pd) pad_dep |= *pd;
        const NodeId inner = at(x.kids[0]).kids[1];
        k = shfl(mode, imm, inner, x.line);
      }
    }
  }
  // combine(x, shfl(x, k)) in either order is one within-warp exchange.
  if (kids.size() == 2 && is_combine(op)) {
    for (int s = 0; s < 2; ++s) {
      const Node& sh = at(kids[1 - s]);
      if (sh.kind == Kind::kShfl && sh.kids[0] == kids[s] &&
          (sh.op == "bfly" || sh.op == "row_shr" || sh.op == "row_bfly")) {
        Node n;
        n.kind = Kind::kXchg;
        n.op = op;
        n.imm = sh.imm;
        n.kids = {kids[s]};
        n.line = line;
        n.pad_dep = pad_dep;
        // op(x(t), x(t ^ 2^j)) is symmetric in lane bit j, so it no longer varies with it.
        n.dep = at(kids[s]).dep;
        if (sh.op == "bfly" && sh.imm > 0 && sh.imm < 32 && std::has_single_bit(static_cast<uint64_t>(sh.imm))) {
          const int j = std::countr_zero(static_cast<uint64_t>(sh.imm));
          n.dep &= ~(uint64_t{1} << (48 + j));
          if (lanes_are_tid_x_) n.dep &= ~(uint64_t{1} << j);
        }
        return finish(std::move(n));
      }
    }
  }
  auto by_hash = [&](NodeId x, NodeId y) {
    const Node &a = at(x), &b = at(y);
    return std::tie(a.blank, a.coord_blank, a.hash) < std::tie(b.blank, b.coord_blank, b.hash);
  };
  int commuting = 0;
  if (commutative(op) && kids.size() == 2) {
    commuting = 2;
  } else if ((starts_with(op, "fma.") || starts_with(op, "v_fma_f") || starts_with(op, "v_fmac_f")) &&
             kids.size() == 3) {
    commuting = 2;
  }
  std::sort(kids.begin(), kids.begin() + commuting, by_hash);
  Node n;
  n.commuting = commuting;
  n.kind = Kind::kArith;
  n.op = op;
  n.kids = std::move(kids);
  n.line = line;
  n.pad_dep = pad_dep;
  return finish(std::move(n));
}

bool Graph::lane_varies(uint64_t d, const std::string& mode, int64_t imm) const {
  if (d == 0) return false;
  if ((d & kDepUnknown) != 0) return true;
  // The lane bits the exchange flips: a butterfly's offset; any other mode, any lane bit.
  const uint64_t flips = mode == "bfly" && imm > 0 && imm < 64 ? static_cast<uint64_t>(imm) : 63;
  if (!lanes_are_tid_x_ && (d & ((uint64_t{1} << 48) - 1)) != 0) return true;  // lane unknown in tid
  for (int j = 0; j < 6; ++j) {
    if (((flips >> j) & 1) == 0) continue;
    if (j < 5 && (d & (uint64_t{1} << (48 + j))) != 0) return true;
    if (lanes_are_tid_x_ && (d & (uint64_t{1} << j)) != 0) return true;
  }
  return false;
}

std::optional<uint64_t> Graph::pred_sensitivity(NodeId p) {
  const Node& pn = at(p);
  // A loop hole may hold a thread-varying value (a carried pointer): not decided.
  if ((pn.dep & (kDepUnknown | kDepHole)) != 0) return std::nullopt;
  if (pn.dep == 0) return uint64_t{0};  // one value for every thread
  if (auto it = sensitivity_.find(pn.hash); it != sensitivity_.end()) return it->second;
  // Leaves: integer comparisons (a form D = A - B against zero) under not/and/or.
  struct Leaf {
    std::string op;  // "lt", "eq", "ne"
    int64_t c = 0;
    std::vector<std::pair<int, int64_t>> bits;  // (variable, coefficient)
    bool undecided = false;  // a term other than a thread bit: a parameter, hole or product
  };
  std::vector<Leaf> leaves;
  std::vector<uint64_t> var_bit;  // variable -> its dep bit
  bool ok = true;
  std::function<void(NodeId, int)> collect = [&](NodeId id, int depth) {
    const Node& n = at(id);
    if (!ok || depth > 16 || leaves.size() > 16) {
      ok = false;
      return;
    }
    if (n.kind == Kind::kOpaque && ((n.op == "not" && n.kids.size() == 1) || starts_with(n.op, "and.pred") ||
                                    starts_with(n.op, "or.pred"))) {
      for (NodeId k : n.kids) collect(k, depth + 1);
      return;
    }
    const bool lt = starts_with(n.op, "setp.lt."), eq = starts_with(n.op, "setp.eq."), ne = starts_with(n.op, "setp.ne.");
    if (n.kind != Kind::kOpaque || !(lt || eq || ne) || n.kids.size() != 2 || at(n.kids[0]).kind != Kind::kInt ||
        at(n.kids[1]).kind != Kind::kInt) {
      ok = false;
      return;
    }
    Leaf l;
    l.op = lt ? "lt" : eq ? "eq" : "ne";
    const Affine diff = sub(at(n.kids[0]).aff, at(n.kids[1]).aff);
    l.c = diff.c0;
    for (const auto& [sym, k] : diff.terms) {
      const uint64_t b = dep_of_symbol(sym);
      if (k == 0) continue;
      if (b == 0 || b == kDepHole || b == kDepUnknown || sym.find('*') != std::string::npos) {
        l.undecided = true;
        continue;
      }
      size_t v = 0;
      while (v < var_bit.size() && var_bit[v] != b) ++v;
      if (v == var_bit.size()) var_bit.push_back(b);
      l.bits.push_back({static_cast<int>(v), k});
    }
    leaves.push_back(std::move(l));
  };
  collect(p, 0);
  std::optional<uint64_t> sens = 0;
  for (const Leaf& l : leaves) ok = ok && !l.undecided;
  const int vars = static_cast<int>(var_bit.size());
  if (!ok || vars > 14) {
    sens = std::nullopt;
  } else {
    size_t li = 0;
    std::function<bool(NodeId, uint32_t)> eval = [&](NodeId id, uint32_t a) -> bool {
      const Node& n = at(id);
      if (n.op == "not") return !eval(n.kids[0], a);
      if (starts_with(n.op, "and.pred") || starts_with(n.op, "or.pred")) {
        const bool is_and = starts_with(n.op, "and.pred");
        bool r = is_and;
        for (NodeId k : n.kids) r = is_and ? (eval(k, a) && r) : (eval(k, a) || r);
        return r;
      }
      const Leaf& l = leaves[li++];
      int64_t v = l.c;
      for (const auto& [var, k] : l.bits) v += ((a >> var) & 1) ? k : 0;
      return l.op == "lt" ? v < 0 : l.op == "eq" ? v == 0 : v != 0;
    };
    for (size_t bi = 0; bi < var_bit.size(); ++bi) {
      for (uint32_t a = 0; a < (uint32_t{1} << vars); ++a) {
        li = 0;
        const bool x = eval(p, a);
        li = 0;
        if (x != eval(p, a ^ (uint32_t{1} << bi))) {
          *sens |= var_bit[bi];
          break;
        }
      }
    }
  }
  sensitivity_.emplace(pn.hash, sens);
  return sens;
}

NodeId Graph::shfl(const std::string& mode, int64_t offset, NodeId x, int line) {
  // An exchange of a value whose padding was read through at its own lane, across a lane
  // bit the pad predicate varies with, brings a lane where the predicate may fail.
  if (lane_varies(at(x).pad_dep, mode, offset)) pad_lanes_unsure_ = true;
  Node n;
  n.kind = Kind::kShfl;
  n.op = mode;
  n.imm = offset;
  n.kids = {x};
  n.line = line;
  return finish(std::move(n));
}

NodeId Graph::relocate(NodeId value, int line, std::optional<int64_t> origin_shift, NodeId address) {
  Node n;
  n.kind = Kind::kRelocate;
  n.kids = {value};
  n.line = line;
  // The address names the writer, so the value read varies only with what it varies with.
  n.dep = address >= 0 ? at(address).dep : (at(value).dep | kDepUnknown);
  if (origin_shift) {
    n.op = "from";
    n.imm = *origin_shift;
  }
  return finish(std::move(n));
}

NodeId Graph::fold(NodeId body, const std::string& key, NodeId seed, int line, uint64_t loop_dep) {
  Node n;
  n.kind = Kind::kFold;
  n.op = key;
  n.kids = {body};
  const bool nested = seed >= 0 && at(seed).has_hole;
  // Only a literal seed (the accumulator's initial constant) is dropped (§6.2); any other
  // seed (a main loop's fold before its remainder loop, a value read from memory) is
  // part of the value, so it stays.
  const bool literal = seed >= 0 && (at(seed).kind == Kind::kConst ||
                                     (at(seed).kind == Kind::kInt && at(seed).aff.is_const()));
  if (nested || (seed >= 0 && !literal)) n.kids.push_back(seed);
  // A literal seed is still the first operand of the chain: +0.0 and -0.0 give other bits
  // when every step adds -0.0, so its bits stay in the key (equal bits, one key).
  if (literal) n.op = absl::StrCat(key, " seed:", literal_bits(at(seed)));
  // Every iteration's holes are functions of the seeds and the body's inputs: when the
  // loop's seeds and carried updates vary with no thread bit, neither do its holes.
  n.dep = (at(body).dep & ~kDepHole) | loop_dep | (nested ? kDepHole : 0);
  n.line = line;
  NodeId id = finish(std::move(n));
  nodes_[static_cast<size_t>(id)].has_hole = nested;  // the fold closes its own holes
  return id;
}

std::optional<NodeId> Graph::rename_holes(NodeId id, const std::map<std::string, std::string>& names,
                                          size_t budget) {
  std::map<std::string, Affine> to;
  for (const auto& [from, name] : names) to[from] = Affine::symbol(name);
  return substitute_holes(id, to, budget);
}

std::optional<NodeId> Graph::substitute_holes(NodeId id, const std::map<std::string, Affine>& to, size_t budget,
                                              absl::flat_hash_map<NodeId, NodeId>* shared) {
  absl::flat_hash_map<NodeId, NodeId> own;
  absl::flat_hash_map<NodeId, NodeId>& memo = shared != nullptr ? *shared : own;
  size_t rebuilt = 0;
  bool over = false;
  std::function<NodeId(NodeId)> go = [&](NodeId x) -> NodeId {
    if (over || !at(x).mentions_hole) return x;
    if (auto it = memo.find(x); it != memo.end()) return it->second;
    if (++rebuilt > budget) {
      over = true;
      return x;
    }
    std::vector<NodeId> kids = at(x).kids;  // a copy: nodes_ may grow below
    bool changed = false;
    for (NodeId& k : kids) {
      const NodeId y = go(k);
      changed = changed || y != k;
      k = y;
    }
    if (at(x).kind == Kind::kInt) {
      for (const auto& [sym, c] : at(x).aff.terms) changed = changed || to.contains(sym);
    }
    if (!changed) {  // nothing below names a substituted hole: the node itself
      memo[x] = x;
      return x;
    }
    Node n = rebuilt_from(at(x), std::move(kids));
    if (n.kind == Kind::kInt) {
      Affine a = Affine::constant(n.aff.c0);
      for (const Terms::Term& t : n.aff.terms.raw()) {
        auto it = to.find(t.sym->text);
        if (it != to.end()) {
          add_to(a, scale(it->second, t.coef));
        } else {
          add_term(a, t.sym, t.coef);
        }
      }
      n.aff = std::move(a);
    }
    const bool fold = n.kind == Kind::kFold;
    NodeId y = finish(std::move(n));
    if (fold) {  // a fold closes its own holes (see fold())
      Node& f = nodes_[static_cast<size_t>(y)];
      f.has_hole = f.kids.size() > 1 && at(f.kids[1]).has_hole;
    }
    memo[x] = y;
    return y;
  };
  NodeId r = go(id);
  if (over) return std::nullopt;
  return r;
}

std::optional<NodeId> Graph::rewrite_load_addresses(
    NodeId id, const std::function<std::optional<Affine>(const Affine&, const std::string&)>& f, size_t* budget) {
  absl::flat_hash_map<NodeId, NodeId> memo;
  bool over = false;
  std::function<NodeId(NodeId)> go = [&](NodeId x) -> NodeId {
    if (over) return x;
    if (auto it = memo.find(x); it != memo.end()) return it->second;
    if (*budget == 0) {
      over = true;
      return x;
    }
    --*budget;
    const Node& src = at(x);
    NodeId y = x;
    if (src.kind == Kind::kLoad && starts_with(src.op, "global.") && !src.kids.empty() &&
        at(src.kids[0]).kind == Kind::kInt) {
      if (std::optional<Affine> a = f(at(src.kids[0]).aff, src.op)) {
        Node n = src;  // copy before integer() grows nodes_
        n.kids[0] = integer(*a);
        n.bal = Balance();
        y = finish(std::move(n));
      }
    } else if (!src.kids.empty() && src.kind != Kind::kInt) {
      const std::vector<NodeId> old_kids = src.kids;  // a copy: go() grows nodes_
      // An integer comparison (a bounds test guarding a load) compares indices: its
      // integer operands are offered as addresses of one-byte elements ("index.b8").
      const bool compare = src.kind == Kind::kOpaque && starts_with(src.op, "setp.");
      std::vector<NodeId> kids;
      bool changed = false;
      for (NodeId k : old_kids) {
        if (compare && at(k).kind == Kind::kInt) {
          std::optional<Affine> a = f(at(k).aff, "index.b8");
          kids.push_back(a ? integer(*a) : k);
        } else {
          kids.push_back(go(k));
        }
        changed = changed || kids.back() != k;
      }
      if (changed && !over) {
        Node n = rebuilt_from(at(x), std::move(kids));
        const bool fold = n.kind == Kind::kFold;
        y = finish(std::move(n));
        if (fold) {
          Node& fn = nodes_[static_cast<size_t>(y)];
          fn.has_hole = fn.kids.size() > 1 && at(fn.kids[1]).has_hole;
        }
      }
    }
    memo[x] = y;
    return y;
  };
  NodeId r = go(id);
  if (over) return std::nullopt;
  return r;
}

NodeId Graph::with_kid(NodeId x, NodeId old_kid, NodeId new_kid) {
  std::vector<NodeId> kids = at(x).kids;
  for (NodeId& k : kids) {
    if (k == old_kid) k = new_kid;
  }
  Node n = rebuilt_from(at(x), std::move(kids));
  if (n.kind == Kind::kArith && n.commuting > 0) {
    // arith() sorts commuting kids; keep the same canonical order.
    return arith(n.op, n.kids, n.line);
  }
  return finish(std::move(n));
}

NodeId Graph::guard(NodeId pred, NodeId value, NodeId other, int line) {
  Node n;
  n.kind = Kind::kGuard;
  n.kids = {pred, value, other};
  n.line = line;
  return finish(std::move(n));
}

NodeId Graph::mma(const std::string& op, int64_t index, std::vector<NodeId> kids, int line) {
  Node n;
  n.kind = Kind::kMma;
  n.op = op;
  n.imm = index;
  n.kids = std::move(kids);
  n.line = line;
  return finish(std::move(n));
}

NodeId Graph::root(const std::string& op, NodeId value, NodeId address, int line) {
  Node n;
  n.kind = Kind::kRoot;
  n.op = op;
  n.kids = {value, address};
  n.line = line;
  const NodeId id = finish(std::move(n));
  // A store whose value reads its own element (Elementwise.h) is named by that relation;
  // else one whose loads read at the store's own indices (IndexedRoot.h) by those.
  if (auto h = elementwise_root_hash(*this, op, value, address, &elementwise_budget_)) {
    nodes_[static_cast<size_t>(id)].hash = *h;
  } else if (auto x = indexed_root_hash(*this, op, value, address, &elementwise_budget_)) {
    nodes_[static_cast<size_t>(id)].hash = *x;
  }
  return id;
}

std::string Graph::describe(NodeId id, int depth) const {
  const Node& n = at(id);
  std::string s = kind_name(n.kind);
  if (n.bal.valid && !n.bal.is_leaf) {
    absl::StrAppend(&s, " balanced ", n.bal.op, " height ", n.bal.height,
                    " leaf-nearest stride ", n.bal.nearest.value_or(-1), " origin ",
                    n.bal.origin ? absl::StrCat(*n.bal.origin) : std::string("?"));
  } else {
    if (!n.op.empty()) absl::StrAppend(&s, " ", n.op);
    if (n.kind == Kind::kShfl || n.kind == Kind::kXchg || n.kind == Kind::kMma) {
      absl::StrAppend(&s, " #", n.imm);
    }
    if (n.kind == Kind::kInt) absl::StrAppend(&s, " [", n.aff.text(), "]");
  }
  if (n.line > 0) absl::StrAppend(&s, " (line ", n.line, ")");
  if (depth > 0 && !n.kids.empty() && !(n.bal.valid && !n.bal.is_leaf)) {
    s += "(";
    for (size_t i = 0; i < n.kids.size() && i < 6; ++i) {
      if (i) s += ", ";
      s += describe(n.kids[i], depth - 1);
    }
    if (n.kids.size() > 6) absl::StrAppend(&s, ", ... ", n.kids.size() - 6, " more");
    s += ")";
  }
  return s;
}

}  // namespace fixbits::verify
