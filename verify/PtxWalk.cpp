// PtxWalk.cpp — PTX instruction semantics for the symbolic walk.
//
//   mov.u32 %r1, %tid.x; shl.b32 %r7, %r1, 1; mul.wide.s32 %rd5, %r7, 4; add.s64 %rd6, %rd4, %rd5
//   ld.global.v2.b32 {%r9, %r10}, [%rd6]
// under .maxntid 64: %rd6 = param0 + 8*tid.x.b0 + 16*tid.x.b1 + ... ; %r9, %r10 are data nodes
// at that address and that address + 4. An integer op the affine rules cannot express
// over parameters and literals only (K mod 64: shr.s32/shr.u32/add/and/sub of param7) is the
// launch-uniform symbol "param.u<hash of its expression>", so arithmetic over it stays affine.
#include "verify/PtxWalk.h"

#include <bit>
#include <cctype>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace fixbits::verify {
namespace {

bool starts(absl::string_view s, absl::string_view p) { return s.substr(0, p.size()) == p; }

bool is_float_type(absl::string_view t) {
  return t == "f16" || t == "f16x2" || t == "bf16" || t == "bf16x2" || t == "f32" || t == "f64" ||
         t == "tf32" || t == "f32x2" || starts(t, "e4m3") || starts(t, "e5m2");
}

int type_bits(absl::string_view t) {
  if (t.empty()) return 0;
  size_t i = 0;
  while (i < t.size() && !std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  int v = std::atoi(std::string(t.substr(i)).c_str());
  if (t.find("x2") != absl::string_view::npos) v *= 2;
  return v;
}

std::vector<std::string> parts_of(const std::string& op) { return absl::StrSplit(op, '.'); }

// The last type-looking part of an opcode ("add.rn.f32" -> "f32").
std::string type_of(const std::vector<std::string>& parts) {
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    const std::string& p = *it;
    if (is_float_type(p)) return p;  // "bf16", "tf32", "e4m3x2", ... (no digit second)
    if (p.size() >= 2 && (p[0] == 'f' || p[0] == 'b' || p[0] == 'u' || p[0] == 's' || p[0] == 'e') &&
        std::isdigit(static_cast<unsigned char>(p[1]))) {
      return p;
    }
    if (p == "pred") return p;
  }
  return "";
}

bool has_part(const std::vector<std::string>& parts, absl::string_view p) {
  for (const auto& x : parts) {
    if (x == p) return true;
  }
  return false;
}

// Registers named in an operand: "%r1", "{%r1, %r2}", "[%rd1+4]", "%r3|%p1".
std::vector<std::string> regs_in(absl::string_view s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size() && out.size() < kMaxOperands; ++i) {
    if (s[i] != '%') continue;
    size_t j = i + 1;
    while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_' || s[j] == '.')) ++j;
    std::string r(s.substr(i, j - i));
    i = j - 1;
    if (r.find('.') != std::string::npos) continue;  // %tid.x and other special registers
    if (r == "%laneid" || r == "%warpid" || r == "%clock" || r == "%clock64" || r == "%smid" ||
        r == "%lanemask_eq" || r == "%globaltimer") {
      continue;
    }
    out.push_back(r);
  }
  return out;
}

std::vector<std::string> list_items(absl::string_view s) {
  s = absl::StripAsciiWhitespace(s);
  if (!s.empty() && s.front() == '{' && s.back() == '}') s = s.substr(1, s.size() - 2);
  std::vector<std::string> out;
  for (absl::string_view p : absl::StrSplit(s, ',')) {
    std::string t(absl::StripAsciiWhitespace(p));
    if (!t.empty()) out.push_back(t);
    if (out.size() > kMaxOperands) break;
  }
  return out;
}

bool no_dest(const std::string& op) {
  return starts(op, "st.") || op == "st" || starts(op, "red.") ||
         starts(op, "bar") || starts(op, "bra") || starts(op, "ret") || starts(op, "exit") ||
         starts(op, "cp.async") || starts(op, "membar") || starts(op, "fence") ||
         starts(op, "wgmma.fence") || starts(op, "wgmma.commit") || starts(op, "wgmma.wait") ||
         starts(op, "mbarrier.init") || starts(op, "mbarrier.arrive.expect") || starts(op, "prefetch") ||
         starts(op, "call") || starts(op, "trap") || starts(op, "stmatrix");
}

class PtxWalker : public Walker {
 public:
  PtxWalker(Graph& g, const Module& m, const Function& f) : Walker(g, f), m_(m) {
    g.set_lanes_are_tid_x(f.launch_bound[0] > 0 && f.launch_bound[0] % 32 == 0);
    for (int d = 0; d < 3; ++d) {
      int64_t n = f.launch_bound[d] > 0 ? f.launch_bound[d] : (d == 2 ? 64 : 1024);
      tid_bits_[d] = std::bit_width(static_cast<uint64_t>(std::max<int64_t>(n, 1) - 1));
    }
    int idx = 0;
    for (const auto& v : m.globals) sym_[v.name] = absl::StrCat(v.space, idx++);
    for (const auto& v : f.locals) sym_[v.name] = absl::StrCat(v.space, idx++);
    for (size_t i = 0; i < f.params.size(); ++i) sym_[f.params[i]] = absl::StrCat("param", i);
  }

 protected:
  void defs_uses(const Instr& ins, std::vector<std::string>* defs,
                 std::vector<std::string>* uses) const override {
    if (ins.opcode.empty()) return;
    for (size_t i = 0; i < ins.operands.size(); ++i) {
      bool dest = i == 0 && !no_dest(ins.opcode) && !ins.operands[0].empty() && ins.operands[0][0] != '[';
      auto r = regs_in(ins.operands[i]);
      (dest ? defs : uses)->insert((dest ? defs : uses)->end(), r.begin(), r.end());
      if (dest && starts(ins.opcode, "wgmma.mma_async")) uses->insert(uses->end(), r.begin(), r.end());
    }
    if (!ins.guard.empty()) uses->push_back(ins.guard);
  }

  std::optional<std::string> branch_target(const Instr& ins, bool* uncond) const override {
    if (!starts(ins.opcode, "bra") || ins.operands.empty()) return std::nullopt;
    *uncond = ins.guard.empty();
    return ins.operands[0];
  }

  std::optional<NodeId> branch_predicate(const Instr& ins) override {
    if (ins.guard.empty()) return std::nullopt;
    return get(ins.guard);
  }

  // Value of a source operand.
  NodeId val(const std::string& s) {
    if (s.empty()) return g_.opaque("empty operand", {}, line_);
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'd' || s[1] == 'F' || s[1] == 'D')) {
      return g_.constant(s);
    }
    if (s[0] == '-' || std::isdigit(static_cast<unsigned char>(s[0]))) {
      int64_t v = 0;
      if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        v = static_cast<int64_t>(std::strtoull(s.c_str(), nullptr, 16));
        return g_.integer(Affine::constant(v));
      }
      if (absl::SimpleAtoi(s, &v)) return g_.integer(Affine::constant(v));
      double d = 0;
      if (absl::SimpleAtod(s, &d)) return g_.constant(s);
      return g_.opaque(absl::StrCat("literal ", s), {}, line_);
    }
    if (s[0] == '%') {
      if (auto sp = special(s)) return *sp;
      return get(s);
    }
    if (s[0] == '[') return g_.integer(Affine());  // not expected as a value
    if (s[0] == '{') return g_.opaque("vector", {}, line_);
    // A symbol, possibly with +offset.
    return address_expr(s);
  }

  std::optional<NodeId> special(const std::string& s) {
    static const char* dims = "xyz";
    for (int d = 0; d < 3; ++d) {
      std::string suf = absl::StrCat(".", std::string(1, dims[d]));
      if (s == "%tid" + suf) return g_.integer(bits_of(absl::StrCat("tid.", std::string(1, dims[d])), tid_bits_[d]));
      for (const char* nm : {"ntid", "ctaid", "nctaid", "clusterid", "nclusterid", "cluster_ctaid"}) {
        if (s == absl::StrCat("%", nm, suf)) {
          if (std::string_view(nm) == "ntid" && f_.launch_bound_exact) {
            return g_.integer(Affine::constant(std::max<int64_t>(f_.launch_bound[d], 1)));
          }
          return g_.integer(Affine::symbol(absl::StrCat(nm, suf)));
        }
      }
    }
    if (s == "%laneid") {
      if (f_.launch_bound[0] > 0 && f_.launch_bound[0] % 32 == 0) return g_.integer(bits_of("tid.x", 5));
      return g_.integer(bits_of("laneid", 5));
    }
    if (s == "%warpid" || s == "%smid" || s == "%clock" || s == "%clock64" || s == "%globaltimer" ||
        starts(s, "%lanemask") || starts(s, "%envreg") || s == "%nsmid" || s == "%dynamic_smem_size") {
      return g_.opaque(s, {}, line_);
    }
    if (s.find('.') != std::string::npos) return g_.opaque(s, {}, line_);
    return std::nullopt;
  }

  // Unpacking a w-bit load at address a into k pieces: piece i is the (w/k)-bit load at
  // a + i*w/(8k) (PTX is little-endian and the first vector item is the low part), so the
  // pieces are leaves exactly as if loaded one by one. nullopt unless the load's address
  // is affine and the pieces are whole bytes.
  std::optional<std::vector<NodeId>> split_load(NodeId s, size_t k) {
    const Node& x = g_.at(s);
    if (x.kind != Kind::kLoad || x.kids.empty() || g_.at(x.kids[0]).kind != Kind::kInt || k < 2) return std::nullopt;
    const size_t dot = x.op.rfind('.');
    if (dot == std::string::npos || dot + 2 > x.op.size()) return std::nullopt;
    const int bits = type_bits(x.op.substr(dot + 1));
    if (bits <= 0 || bits % static_cast<int>(k) != 0 || (bits / static_cast<int>(k)) % 8 != 0) return std::nullopt;
    const int piece = bits / static_cast<int>(k);
    const Affine a = g_.at(x.kids[0]).aff;
    const std::string space = x.op.substr(0, dot);
    const int line = x.line;  // x dangles once the graph grows below
    std::vector<NodeId> out;
    for (size_t i = 0; i < k; ++i) {
      const NodeId addr = g_.integer(add(a, Affine::constant(static_cast<int64_t>(i) * piece / 8)));
      out.push_back(g_.load(absl::StrCat(space, ".b", piece), addr, line));
    }
    return out;
  }

  // The symbol of a shared-variable base plus a constant (one shared symbol, coefficient 1).
  std::optional<std::string> shared_base(NodeId n) const {
    const Node& x = g_.at(n);
    if (x.kind == Kind::kInt && x.aff.terms.size() == 1 && x.aff.terms.begin()->second == 1 &&
        starts(x.aff.terms.begin()->first, "shared")) {
      return x.aff.terms.begin()->first;
    }
    return std::nullopt;
  }

  // A shared load. When the address names buffer k directly and a double-buffer selection
  // sel = p ? k : other (or p ? other : k) stored into the same offsets, the value is
  // guard(p, what sel's stores left, what k held before) by cases on p; selp on the same
  // p then picks one side exactly. Only when no store named k directly and no other
  // selection naming k stored (else which store k holds last would matter).
  NodeId shared_load(NodeId addr, const std::string& type) {
    const Node& x = g_.at(addr);
    if (x.kind == Kind::kInt) {
      for (auto it = sels_.rbegin(); it != sels_.rend(); ++it) {
        for (const std::string& k : {it->a, it->b}) {
          auto t = x.aff.terms.find(k);
          if (t == x.aff.terms.end() || t->second != 1 || smem_has_base(Affine::symbol(k))) continue;
          // Another selection naming k may also have stored there: unsure, so a data leaf.
          bool other = false;
          for (const Sel& o : sels_) {
            other = other || (o.name != it->name && (o.a == k || o.b == k) && smem_has_base(Affine::symbol(o.name)));
          }
          if (other) return smem_load(addr, type, line_);
          Affine alt = x.aff;
          alt.terms.erase(k);
          alt = add(alt, Affine::symbol(it->name));
          const NodeId sel_v = smem_load(g_.integer(alt), type, line_);
          const NodeId stale = smem_load(addr, type, line_);
          return k == it->a ? g_.guard(it->p, sel_v, stale, line_) : g_.guard(it->p, stale, sel_v, line_);
        }
      }
    }
    return smem_load(addr, type, line_);
  }

  // "[%rd1+16]", "[%rd1+-32]" (LLVM's form of a negative offset), "sm+4", "[k_param_0]"
  // -> integer node.
  NodeId address_expr(std::string s) {
    s = std::string(absl::StripAsciiWhitespace(s));
    if (!s.empty() && s.front() == '[' && s.back() == ']') s = s.substr(1, s.size() - 2);
    std::string base = s;
    int64_t off = 0;
    size_t p = s.find_last_of("+-");
    if (p != std::string::npos && p > 0) {
      int64_t v = 0;
      std::string num(absl::StripAsciiWhitespace(s.substr(p + 1)));
      if (absl::SimpleAtoi(num, &v) ||
          (num.size() > 2 && num[1] == 'x' && (v = static_cast<int64_t>(std::strtoull(num.c_str(), nullptr, 16)), true))) {
        off = s[p] == '-' ? wrap_mul(v, -1) : v;
        base = std::string(absl::StripAsciiWhitespace(s.substr(0, p)));
        // "+-32": the '+' joins base and a negative offset; it is no part of the base
        // (read as one, the base was a register never written: an opaque unknown named
        // by its register number).
        if (s[p] == '-' && !base.empty() && base.back() == '+') {
          base = std::string(absl::StripAsciiWhitespace(base.substr(0, base.size() - 1)));
        }
      }
    }
    NodeId b;
    if (!base.empty() && base[0] == '%') {
      b = val(base);
    } else if (auto it = sym_.find(base); it != sym_.end()) {
      b = g_.integer(Affine::symbol(it->second));
    } else if (!base.empty() && (std::isdigit(static_cast<unsigned char>(base[0])))) {
      b = val(base);
    } else {
      b = g_.integer(Affine::symbol(absl::StrCat("sym:", base)));
    }
    if (off == 0) return b;
    return int_add(b, g_.integer(Affine::constant(off)));
  }

  NodeId int_add(NodeId a, NodeId b) {
    const Node &x = g_.at(a), &y = g_.at(b);
    if (x.kind == Kind::kInt && y.kind == Kind::kInt) return g_.integer(add(x.aff, y.aff));
    return g_.opaque("add.int", {a, b}, line_);
  }

  NodeId int_op(const Instr& ins, const std::string& base, const std::string& type,
                const std::vector<NodeId>& in) {
    auto all_int = [&] {
      for (NodeId n : in) {
        if (g_.at(n).kind != Kind::kInt) return false;
      }
      return true;
    };
    const int width = type_bits(type) > 0 ? type_bits(type) : 32;
    std::optional<Affine> r;
    if (all_int()) {
      auto A = [&](size_t i) -> const Affine& { return g_.at(in[i]).aff; };
      auto cst = [&](size_t i) -> std::optional<int64_t> {
        if (i < in.size() && A(i).is_const()) return A(i).c0;
        return std::nullopt;
      };
      const bool is_signed = !type.empty() && type[0] == 's';
      if (base == "add" && in.size() == 2) r = add(A(0), A(1));
      else if (base == "sub" && in.size() == 2) r = sub(A(0), A(1));
      else if (base == "neg" && in.size() == 1) r = scale(A(0), -1);
      else if (base == "mul" && in.size() == 2 && !has_part(parts_, "hi")) r = mul(A(0), A(1));
      else if (base == "mad" && in.size() == 3 && !has_part(parts_, "hi")) {
        if (auto m = mul(A(0), A(1))) r = add(*m, A(2));
      } else if (base == "shl" && in.size() == 2 && cst(1) && *cst(1) >= 0 && *cst(1) < 63) {
        r = scale(A(0), int64_t{1} << *cst(1));
      } else if (base == "shr" && in.size() == 2 && cst(1)) {  // logical and arithmetic agree: indices are non-negative
        r = shr(A(0), static_cast<int>(*cst(1)));
      } else if (base == "and" && in.size() == 2 && (cst(1) || cst(0))) {
        size_t ci = cst(1) ? 1 : 0;
        r = and_mask(A(1 - ci), static_cast<uint64_t>(*cst(ci)), width);
        if (!r && launch_uniform(in)) r = low_bits_form(A(1 - ci), static_cast<uint64_t>(*cst(ci)), width);
      } else if ((base == "or" || base == "xor") && in.size() == 2) {
        r = or_disjoint(A(0), A(1));
        // or with a constant whose bits the value may share: (a & ~c) + c.
        if (!r && base == "or" && cst(1)) r = or_const(A(0), *cst(1));
        if (!r && base == "or" && cst(0)) r = or_const(A(1), *cst(0));
      } else if (base == "div" && in.size() == 2 && !is_signed && cst(1) && *cst(1) > 0 &&
                 std::has_single_bit(static_cast<uint64_t>(*cst(1)))) {
        r = shr(A(0), std::countr_zero(static_cast<uint64_t>(*cst(1))));
      } else if (base == "rem" && in.size() == 2 && !is_signed && cst(1) && *cst(1) > 0 &&
                 std::has_single_bit(static_cast<uint64_t>(*cst(1)))) {
        r = and_mask(A(0), static_cast<uint64_t>(*cst(1) - 1), width);
      } else if (base == "bfe" && in.size() == 3 && !is_signed && cst(1) && cst(2) && *cst(1) >= 0 &&
                 *cst(1) < width && *cst(2) >= 1 && *cst(2) < 64) {
        // bfe.u32 d, a, pos, len = (a >> pos) & (2^len - 1): zero-extended, so the shift and
        // mask rules decide exactness (PTX ISA "bfe"; pos + len past the width reads zeros,
        // which the mask keeps as the value's own zero high bits).
        if (auto sh = shr(A(0), static_cast<int>(*cst(1)))) {
          r = and_mask(*sh, (uint64_t{1} << *cst(2)) - 1, width);
        }
      } else if ((base == "min" || base == "max") && cst(0) && cst(1)) {
        r = Affine::constant(base == "min" ? std::min(*cst(0), *cst(1)) : std::max(*cst(0), *cst(1)));
      }
    }
    if (r) return g_.integer(*r);
    const NodeId op_node = g_.opaque(ins.opcode, in, line_);
    if (all_int() && launch_uniform(in)) {
      // A value every thread of every block computes alike from parameters and literals
      // (K mod 64 for a short turn): one exact symbol named by its expression, so later
      // index arithmetic over it stays affine. Another expression gets another name.
      return g_.integer(Affine::symbol(absl::StrCat("param.u", hex64(g_.at(op_node).hash))));
    }
    return op_node;
  }

  // A launch-uniform x under a mask of its low k bits (`K & 3`: the symbol x mod 2^k) or of
  // every bit from k up (`K & -4`: x minus that symbol), so the two add up to x (trip
  // counts, Walk.cpp). Bits from 31 up may be clear in the mask (`K & 0x7ffffffc` on a
  // 64-bit K): sizes are read as non-negative 32-bit values, as every index rule does.
  std::optional<Affine> low_bits_form(const Affine& x, uint64_t mask, int width) {
    const uint64_t all = width >= 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
    mask &= all;
    if (mask == 0) return std::nullopt;
    const int k = std::countr_zero(mask);
    if (k == 0) {  // low bits: 2^j - 1
      const int j = std::countr_one(mask);
      if (j > 30 || (mask >> j) != 0) return std::nullopt;
      return g_.at(low_bits(x, j)).aff;
    }
    const uint64_t high = mask >> k;
    const int j = std::countr_one(high);
    if ((high >> j) != 0 || k + j < 31 || k > 30) return std::nullopt;
    return sub(x, g_.at(low_bits(x, k)).aff);
  }

  // Integer inputs built from parameters, earlier uniform symbols and literals only (no
  // thread or block coordinate, no loop hole, no product symbol).
  bool launch_uniform(const std::vector<NodeId>& in) const {
    for (NodeId n : in) {
      for (const auto& [sym, c] : g_.at(n).aff.terms) {
        if (sym.rfind("param", 0) != 0 || sym.find_first_of("*(") != std::string::npos) return false;
      }
    }
    return true;
  }

  std::vector<std::string> dests(const Instr& ins) {
    if (ins.operands.empty()) return {};
    std::vector<std::string> out;
    for (const std::string& item : list_items(ins.operands[0])) {
      for (absl::string_view part : absl::StrSplit(item, '|')) out.emplace_back(absl::StripAsciiWhitespace(part));
    }
    return out;
  }

  std::string space_of(const std::vector<std::string>& parts) {
    for (const char* sp : {"global", "shared", "local", "param", "const", "tex"}) {
      for (const auto& p : parts) {
        if (p == sp || starts(p, std::string(sp) + "::")) return sp;
      }
    }
    return "generic";
  }

  void do_load(const Instr& ins, const std::vector<std::string>& parts, const std::string& type) {
    if (ins.operands.size() < 2) return generic(ins);
    const std::string space = space_of(parts);
    auto ds = list_items(ins.operands[0]);
    int64_t eb = std::max(1, type_bits(type) / 8);
    if (space == "param") {
      NodeId a = address_expr(ins.operands[1]);
      for (size_t i = 0; i < ds.size(); ++i) set(ds[i], ds.size() == 1 ? a : g_.opaque(absl::StrCat("param-elem", i), {a}, line_));
      return;
    }
    NodeId base = address_expr(ins.operands[1]);
    for (size_t i = 0; i < ds.size(); ++i) {
      NodeId addr = i == 0 ? base : int_add(base, g_.integer(Affine::constant(static_cast<int64_t>(i) * eb)));
      NodeId v;
      if (space == "shared") v = shared_load(addr, type);
      else if (space == "local") v = local_load(addr, type, line_);
      else v = g_.load(absl::StrCat(space == "generic" ? "global" : space, ".", type), addr, line_);
      set(ds[i], v);
    }
  }

  void do_store(const Instr& ins, const std::vector<std::string>& parts, const std::string& type) {
    if (ins.operands.size() < 2) return generic(ins);
    const std::string space = space_of(parts);
    if (space == "param") return;  // call arguments
    auto vs = list_items(ins.operands[1]);
    int64_t eb = std::max(1, type_bits(type) / 8);
    NodeId base = address_expr(ins.operands[0]);
    for (size_t i = 0; i < vs.size(); ++i) {
      NodeId addr = i == 0 ? base : int_add(base, g_.integer(Affine::constant(static_cast<int64_t>(i) * eb)));
      NodeId v = val(vs[i]);
      if (space == "shared") smem_store(addr, v);
      else if (space == "local") local_store(addr, v);
      else store_pieces(absl::StrCat("st.", space == "generic" ? "global" : space), type, v, addr);
    }
  }

  // A global store of `pack(v_0, ..., v_{k-1})` (mov.b32 %r, {%rs0, %rs1}) writes v_i's
  // w/k bits at addr + i*w/(8k) (little-endian, first item lowest): exactly the k narrow
  // stores, so it gives their k roots, the mirror of split_load.
  void store_pieces(const std::string& op, const std::string& type, NodeId v, NodeId addr) {
    const Node& x = g_.at(v);
    const int bits = type_bits(type);
    const size_t k = x.kids.size();
    if (x.kind == Kind::kOpaque && x.op == "pack" && k >= 2 && bits > 0 && bits % static_cast<int>(k) == 0 &&
        (bits / static_cast<int>(k)) % 8 == 0) {
      const int piece = bits / static_cast<int>(k);
      const std::vector<NodeId> kids = x.kids;  // copy: the graph may grow below
      for (size_t i = 0; i < k; ++i) {
        const NodeId a = i == 0 ? addr : int_add(addr, g_.integer(Affine::constant(static_cast<int64_t>(i) * piece / 8)));
        add_root(absl::StrCat(op, ".b", piece), kids[i], a, line_);
      }
      return;
    }
    add_root(absl::StrCat(op, ".", type), v, addr, line_);
  }

  void generic(const Instr& ins) {
    std::vector<NodeId> in;
    const bool has_dest = !no_dest(ins.opcode) && !ins.operands.empty() && !ins.operands[0].empty() &&
                          ins.operands[0][0] != '[';
    for (size_t i = has_dest ? 1 : 0; i < ins.operands.size(); ++i) {
      for (const std::string& it : list_items(ins.operands[i])) {
        if (it[0] == '[') in.push_back(address_expr(it));
        else in.push_back(val(it));
        if (in.size() > kMaxOperands) break;
      }
    }
    if (has_dest) {
      auto ds = dests(ins);
      for (size_t i = 0; i < ds.size(); ++i) set(ds[i], g_.opaque(absl::StrCat(ins.opcode, " #", i), in, line_));
    } else if (ins.opcode.find("global") != std::string::npos || starts(ins.opcode, "red") ||
               starts(ins.opcode, "st")) {
      add_root(ins.opcode, g_.opaque(ins.opcode, in, line_), g_.constant("address in operands"), line_);
    }
  }

  void step(const Instr& ins) override {
    const std::string& op = ins.opcode;
    parts_ = parts_of(op);
    const std::string base = parts_[0];
    const std::string type = type_of(parts_);
    auto srcs = [&](size_t from) {
      std::vector<NodeId> v;
      for (size_t i = from; i < ins.operands.size(); ++i) v.push_back(val(ins.operands[i]));
      return v;
    };
    if (base == "bar" || base == "barrier" || op == "bar.warp.sync") {
      if (op != "bar.warp.sync") barrier();
      return;
    }
    if (base == "ret" || base == "exit" || base == "membar" || base == "fence" || base == "prefetch" ||
        base == "pragma" || op == "wgmma.fence.sync.aligned" || starts(op, "wgmma.commit_group") ||
        starts(op, "wgmma.wait_group") || starts(op, "cp.async.commit_group") ||
        starts(op, "cp.async.wait")) {
      return;
    }
    if (base == "ld" || base == "ldu") return do_load(ins, parts_, type);
    if (base == "st") return do_store(ins, parts_, type);
    if (base == "cp" && parts_.size() > 1 && parts_[1] == "async" && !has_part(parts_, "bulk") &&
        ins.operands.size() >= 2) {
      NodeId s = address_expr(ins.operands[0]);
      NodeId gsrc = g_.load(absl::StrCat("global.cp", ins.operands.size() > 2 ? ins.operands[2] : ""),
                            address_expr(ins.operands[1]), line_);
      smem_store(s, gsrc);
      return;
    }
    if (ins.operands.empty()) return generic(ins);
    if (base == "mov" || base == "cvta") {
      auto ds = list_items(ins.operands[0]);
      if (ins.operands.size() < 2) return generic(ins);
      auto ss = list_items(ins.operands[1]);
      if (ds.size() == 1 && ss.size() == 1) return set(ds[0], val(ss[0]));
      if (ds.size() == 1) {  // pack
        std::vector<NodeId> v;
        for (auto& s : ss) v.push_back(val(s));
        return set(ds[0], g_.opaque("pack", v, line_));
      }
      NodeId s = val(ss[0]);  // unpack
      if (auto parts = split_load(s, ds.size())) {
        for (size_t i = 0; i < ds.size(); ++i) set(ds[i], (*parts)[i]);
        return;
      }
      for (size_t i = 0; i < ds.size(); ++i) set(ds[i], g_.opaque(absl::StrCat("unpack#", i), {s}, line_));
      return;
    }
    if (base == "prmt" && parts_.size() == 2 && parts_[1] == "b32" && ins.operands.size() == 4) {
      // prmt.b32 d, a, 0, 0x777k (k < 4): byte k of a, zero-extended (bytes 1-3 take byte
      // 7, the high byte of the zero operand; PTX ISA "prmt", default mode). Of a 32-bit
      // load at x that is the byte load at x + k, as the unpack rule names it (an LLVM
      // vector arm that loads 16 bytes as v4.b32 and picks them apart).
      const Node& b = g_.at(val(ins.operands[2]));
      const Node& c = g_.at(val(ins.operands[3]));
      if (b.kind == Kind::kInt && b.aff.is_const() && b.aff.c0 == 0 && c.kind == Kind::kInt && c.aff.is_const() &&
          c.aff.c0 >= 0x7770 && c.aff.c0 <= 0x7773) {
        if (auto parts = split_load(val(ins.operands[1]), 4)) {
          return set(ins.operands[0], (*parts)[static_cast<size_t>(c.aff.c0 - 0x7770)]);
        }
      }
    }
    if (base == "cvt") {
      std::vector<std::string> types;
      for (const auto& p : parts_) {
        if (p.size() >= 2 && std::isdigit(static_cast<unsigned char>(p[1])) &&
            (p[0] == 'f' || p[0] == 'b' || p[0] == 'u' || p[0] == 's' || p[0] == 'e')) {
          types.push_back(p);
        }
      }
      if (ins.operands.size() < 2) return generic(ins);
      NodeId s = val(ins.operands[1]);
      bool any_float = false;
      for (auto& t : types) any_float = any_float || is_float_type(t);
      if (!any_float && g_.at(s).kind == Kind::kInt) return set(ins.operands[0], s);
      if (!any_float && g_.at(s).kind == Kind::kLoad && types.size() == 2 && type_bits(types[0]) >= 8 &&
          type_bits(types[1]) >= 8 && (types[0][0] != 's' || type_bits(types[0]) > 8) &&
          (absl::EndsWith(g_.at(s).op, ".b8") || absl::EndsWith(g_.at(s).op, ".u8"))) {
        // An integer conversion of a zero-extended byte (a `.b8`/`.u8` load) to a type that
        // holds 0..255 keeps its value: the byte itself.
        return set(ins.operands[0], s);
      }
      return set(ins.operands[0], g_.arith(op, {s}, line_));
    }
    if (base == "shfl" && ins.operands.size() >= 3) {
      auto ds = dests(ins);
      std::string mode = parts_.size() > 2 ? parts_[2] : "idx";
      NodeId x = val(ins.operands[1]);
      NodeId lane = val(ins.operands[2]);
      NodeId r;
      if (g_.at(lane).kind == Kind::kInt && g_.at(lane).aff.is_const()) {
        r = g_.shfl(mode, g_.at(lane).aff.c0, x, line_);
      } else {
        r = g_.opaque(op, srcs(1), line_);
      }
      if (!ds.empty()) set(ds[0], r);
      if (ds.size() > 1) set(ds[1], g_.opaque("shfl-valid", {lane}, line_));
      return;
    }
    if (base == "mma" || base == "wgmma") {
      if (base == "wgmma" && (parts_.size() < 2 || parts_[1] != "mma_async")) return generic(ins);
      auto ds = list_items(ins.operands[0]);
      std::vector<NodeId> ab;
      std::vector<NodeId> c;
      size_t last = ins.operands.size();
      if (base == "mma" && ins.operands.size() >= 4) {
        for (size_t i = 1; i + 1 < last; ++i) {
          for (auto& it : list_items(ins.operands[i])) ab.push_back(val(it));
        }
        for (auto& it : list_items(ins.operands[last - 1])) c.push_back(val(it));
      } else {
        for (size_t i = 1; i < last; ++i) {
          for (auto& it : list_items(ins.operands[i])) ab.push_back(val(it));
        }
        for (auto& d : ds) c.push_back(get(d));
      }
      if (ds.size() * (ab.size() + 1) > (1u << 18)) return generic(ins);  // bounded work
      std::vector<NodeId> outs;
      for (size_t i = 0; i < ds.size(); ++i) {
        std::vector<NodeId> k = ab;
        k.push_back(i < c.size() ? c[i] : g_.constant("0"));
        outs.push_back(g_.mma(op, static_cast<int64_t>(i), std::move(k), line_));
      }
      for (size_t i = 0; i < ds.size(); ++i) set(ds[i], outs[i]);
      return;
    }
    if (base == "ldmatrix" && ins.operands.size() >= 2) {
      auto ds = list_items(ins.operands[0]);
      NodeId a = address_expr(ins.operands[1]);
      NodeId v = smem_load(a, "b16", line_);
      for (size_t i = 0; i < ds.size(); ++i) set(ds[i], g_.opaque(absl::StrCat(op, " #", i), {v}, line_));
      return;
    }
    if (base == "atom" || base == "red") {
      std::vector<NodeId> in;
      size_t first = base == "atom" ? 1 : 0;
      for (size_t i = first; i < ins.operands.size(); ++i) {
        in.push_back(ins.operands[i][0] == '[' ? address_expr(ins.operands[i]) : val(ins.operands[i]));
      }
      NodeId v = g_.opaque(op, in, line_);
      if (space_of(parts_) != "shared" && space_of(parts_) != "local") add_root(op, v, in.empty() ? g_.constant("none") : in[0], line_);
      if (base == "atom") set(ins.operands[0], g_.opaque(absl::StrCat(op, " old"), in, line_));
      return;
    }
    if (base == "setp") {
      auto ds = dests(ins);
      std::vector<NodeId> in = srcs(1);
      // Integer orderings in one form, so a bounds test written `ge` by one loop and `lt` by
      // another is one literal: a < b stays, a >= b is not(a < b), a > b is b < a and
      // a <= b is not(b < a); exact on integers (no NaN), signedness kept in the opcode.
      const std::vector<std::string> part = absl::StrSplit(op, '.');
      bool negated = false;
      std::string canon = op;
      // The width goes too (setp.lt.s32 on an index, setp.lt.s64 on its sign extension):
      // index arithmetic is read as exact integers that do not wrap (docs/verify.md).
      if (part.size() == 3 && in.size() == 2 && part[2].size() >= 2 && (part[2][0] == 's' || part[2][0] == 'u')) {
        const std::string& c = part[1];
        const bool swap = c == "gt" || c == "le" || c == "hi" || c == "ls";
        negated = c == "ge" || c == "le" || c == "hs" || c == "ls";
        if (swap || negated || c == "lo" || c == "lt") {
          if (swap) std::swap(in[0], in[1]);
          canon = absl::StrCat("setp.lt.", part[2].substr(0, 1), "int");
        }
      }
      NodeId p = g_.opaque(canon, in, line_);
      if (negated) p = g_.opaque("not", {p}, line_);
      auto neg = [&](NodeId x) {
        const Node& n = g_.at(x);
        return n.kind == Kind::kOpaque && n.op == "not" && n.kids.size() == 1 ? n.kids[0] : g_.opaque("not", {x}, line_);
      };
      for (size_t i = 0; i < ds.size(); ++i) set(ds[i], i == 0 ? p : neg(p));
      return;
    }
    if (base == "selp" && ins.operands.size() == 4) {
      NodeId a = val(ins.operands[1]), b = val(ins.operands[2]), p = val(ins.operands[3]);
      if (!g_.at(p).data && is_float_type(type)) {
        // A thread-coordinate predicate picks lanes; padding with the identity -0.0 of
        // a sum: a pad node, which only an add reads as the selected partial (Graph::pad);
        // stored or fed to max it stays a guard.
        auto neg_zero = [&](NodeId n) {
          const Node& x = g_.at(n);
          return x.kind == Kind::kConst && (x.op == "0f80000000" || x.op == "0d8000000000000000");
        };
        if (neg_zero(b)) {
          if (auto e = padded_element(p, a, b)) return set(ins.operands[0], *e);
          return set(ins.operands[0], g_.pad(p, a, line_));
        }
        if (neg_zero(a)) return set(ins.operands[0], g_.pad(g_.opaque("not", {p}, line_), b, line_));
      }
      if (g_.at(p).data) return set(ins.operands[0], g_.guard(p, a, b, line_));
      // p ? guard(p, x, _) : guard(p, _, y) is p ? x : y, exactly; equal sides are one value.
      auto under = [&](NodeId v, bool taken) {
        const Node& x = g_.at(v);
        if (x.kind == Kind::kGuard && x.kids.size() == 3 && g_.at(x.kids[0]).hash == g_.at(p).hash) {
          return x.kids[taken ? 1 : 2];
        }
        return v;
      };
      const NodeId ta = under(a, true), tb = under(b, false);
      if (g_.at(ta).hash == g_.at(tb).hash) return set(ins.operands[0], ta);
      if (is_float_type(type) && thread_fixed(p)) {
        // Any other select on a predicate of coordinates and literals only: p ? a : b per
        // thread, a guard that reads under p (or not p) decide (Walker::peel).
        const NodeId key = thread_condition_key(p);
        return set(ins.operands[0], guarded(key, ta, tb));
      }
      if (auto sa = shared_base(a), sb = shared_base(b); sa && sb && g_.at(a).aff.c0 == g_.at(b).aff.c0) {
        // A thread predicate picking one of two shared buffers (double buffering): one
        // fixed base for every use of this value, named by the two bases and the predicate,
        // so stores and loads through it match by offset as through a declared variable.
        if (*sa == *sb) return set(ins.operands[0], a);
        const std::string name = absl::StrCat("shared.sel(", *sa, ",", *sb, ",", hex64(g_.at(p).hash), ")");
        sels_.push_back({name, *sa, *sb, p});
        Affine r = Affine::symbol(name);
        r.c0 = g_.at(a).aff.c0;
        return set(ins.operands[0], g_.integer(r));
      }
      return set(ins.operands[0], g_.opaque(op, {a, b, p}, line_));
    }
    const bool fl = is_float_type(type);
    if (fl) {
      auto in = srcs(1);
      if (const NodeId sq = square(op, in); sq >= 0) return set(ins.operands[0], sq);
      return set(ins.operands[0], g_.arith(op, std::move(in), line_));
    }
    static const char* kInt[] = {"add", "sub", "mul", "mad", "shl", "shr", "and", "or", "xor",
                                 "neg", "div", "rem", "min", "max", "bfe"};
    for (const char* k : kInt) {
      if (base == k) {
        auto ds = dests(ins);
        if (ds.empty()) return generic(ins);
        return set(ds[0], int_op(ins, base, type, srcs(1)));
      }
    }
    generic(ins);
  }

 private:
  const Module& m_;
  struct Sel {
    std::string name, a, b;  // the selection symbol, and p ? a : b
    NodeId p;
  };
  std::vector<Sel> sels_;
  int tid_bits_[3] = {10, 10, 6};
  absl::flat_hash_map<std::string, std::string> sym_;
  std::vector<std::string> parts_;
};

}  // namespace

std::vector<Root> walk_ptx(const Module& m, const Function& f, Graph& g, bool* complete) {
  PtxWalker w(g, m, f);
  w.run();
  if (complete != nullptr) *complete = !w.incomplete() && !g.pad_lanes_unsure();
  return w.roots();
}

}  // namespace fixbits::verify
