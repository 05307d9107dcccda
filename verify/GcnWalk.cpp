// GcnWalk.cpp — AMDGCN instruction semantics for the symbolic walk.
//
//   v_and_b32_e32 v0, 0x3ff, v0; v_lshl_or_b32 v0, s8, 6, v0   (s8 = workgroup id x)
//   -> v0 = 64*ctaid.x + tid.x.b0 + ... + 32*tid.x.b5 under max_flat_workgroup_size 64
//   v_mov_b32_dpp v4, v2 row_shr:1 ...; v_add_f32_e32 v2, v2, v4
//   -> v2 = warp-exchange(v_add_f32, row_shr 1, v2)
#include "verify/GcnWalk.h"

#include <bit>
#include <cctype>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fixbits::verify {
namespace {

bool starts(absl::string_view s, absl::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(absl::string_view s, absl::string_view p) { return s.find(p) != absl::string_view::npos; }

// "v[0:3]" -> v0..v3; "s5" -> s5; "vcc" -> vcc_lo, vcc_hi; others as themselves.
std::vector<std::string> components(const std::string& op) {
  std::string s = op;
  while (!s.empty() && (s[0] == '-' || s[0] == '|')) s = s.substr(1);
  while (!s.empty() && s.back() == '|') s.pop_back();
  if (s.size() > 3 && (s[0] == 'v' || s[0] == 's' || s[0] == 'a') && s[1] == '[') {
    size_t c = s.find(':');
    size_t e = s.find(']');
    if (c == std::string::npos || e == std::string::npos || e < c) return {s};
    int lo = std::atoi(s.substr(2, c - 2).c_str()), hi = std::atoi(s.substr(c + 1, e - c - 1).c_str());
    std::vector<std::string> out;
    for (int i = lo; i <= hi && i - lo < 1024; ++i) out.push_back(absl::StrCat(std::string(1, s[0]), i));
    return out;
  }
  if (s == "vcc") return {"vcc_lo", "vcc_hi"};
  if (s == "exec") return {"exec_lo", "exec_hi"};
  return {s};
}

bool is_reg(const std::string& s) {
  if (s.empty()) return false;
  if ((s[0] == 'v' || s[0] == 's' || s[0] == 'a') && s.size() > 1 &&
      (std::isdigit(static_cast<unsigned char>(s[1])) || s[1] == '[')) {
    return true;
  }
  return s == "vcc" || s == "vcc_lo" || s == "vcc_hi" || s == "exec" || s == "exec_lo" ||
         s == "exec_hi" || s == "m0" || s == "scc";
}

std::string norm(const std::string& op) {
  std::string s = op;
  for (const char* suf : {"_e32", "_e64", "_sdwa", "_dpp", "_e64_dpp"}) {
    if (s.size() > absl::string_view(suf).size() && s.ends_with(suf)) s = s.substr(0, s.size() - absl::string_view(suf).size());
  }
  return s;
}

bool is_store(const std::string& op) {
  return (starts(op, "global_") || starts(op, "buffer_") || starts(op, "flat_") || starts(op, "scratch_")) &&
         (contains(op, "store") || contains(op, "atomic"));
}

bool no_def(const std::string& op) {
  return is_store(op) || starts(op, "ds_write") || starts(op, "ds_store") || starts(op, "s_waitcnt") ||
         starts(op, "s_barrier") || starts(op, "s_branch") || starts(op, "s_cbranch") || starts(op, "s_nop") ||
         starts(op, "s_endpgm") || starts(op, "s_setprio") || starts(op, "s_sleep") || starts(op, "buffer_wbl2") ||
         starts(op, "buffer_inv") || starts(op, "s_dcache");
}

class GcnWalker : public Walker {
 public:
  GcnWalker(Graph& g, const Function& f) : Walker(g, f) {
    int64_t n = f.launch_bound[0] > 0 ? f.launch_bound[0] : 1024;
    int bits = std::bit_width(static_cast<uint64_t>(std::max<int64_t>(n, 1) - 1));
    Affine v0 = bits_of("tid.x", bits);
    v0 = add(v0, scale(bits_of("tid.y", 10), 1024));
    v0 = add(v0, scale(bits_of("tid.z", 10), 1 << 20));
    set("v0", g_.integer(v0));
    if (f.gcn_workgroup_id_x_sgpr >= 0) {
      set(absl::StrCat("s", f.gcn_workgroup_id_x_sgpr), g_.integer(Affine::symbol("ctaid.x")));
    }
    kernarg_ = absl::StrCat("s", f.gcn_kernarg_sgpr);
    set(kernarg_, g_.integer(Affine::symbol("kernarg")));
    set(absl::StrCat("s", f.gcn_kernarg_sgpr + 1), hi_of(g_.integer(Affine::symbol("kernarg"))));
    lane_bits_ = f.launch_bound[0] > 0 && f.launch_bound[0] % 64 == 0;
  }

 protected:
  // Scalar branches (`s_cbranch_scc0/1` on an `s_cmp` of uniform values, `s_branch`) are
  // control flow like PTX's: the walker's block conditions join what they skip. Lanes that
  // skip a block under execz/vccz are tracked through the exec mask (s_and_saveexec), not
  // by the walker's conditions (uniform_branch). Before 2026-12-05 no GCN branch was
  // tracked, so a value joined after a scalar branch was the last write in layout order.
  bool tracks_thread_branches() const override { return true; }
  bool uniform_branch(const Instr& ins) const override {
    return !contains(ins.opcode, "exec") && !contains(ins.opcode, "vcc");
  }

  NodeId hi_of(NodeId lo) { return g_.opaque("hi", {lo}); }

  void defs_uses(const Instr& ins, std::vector<std::string>* defs,
                 std::vector<std::string>* uses) const override {
    if (ins.opcode.empty()) return;
    for (size_t i = 0; i < ins.operands.size(); ++i) {
      if (!is_reg(ins.operands[i]) && !(ins.operands[i].size() > 1 && (ins.operands[i][0] == '-' || ins.operands[i][0] == '|'))) continue;
      auto c = components(ins.operands[i]);
      bool d = i == 0 && !no_def(ins.opcode);
      (d ? defs : uses)->insert((d ? defs : uses)->end(), c.begin(), c.end());
      if (d && (contains(ins.opcode, "fmac") || contains(ins.opcode, "_mac_"))) uses->insert(uses->end(), c.begin(), c.end());
    }
  }

  std::optional<std::string> branch_target(const Instr& ins, bool* uncond) const override {
    if (!starts(ins.opcode, "s_branch") && !starts(ins.opcode, "s_cbranch")) return std::nullopt;
    if (ins.operands.empty()) return std::nullopt;
    *uncond = starts(ins.opcode, "s_branch");
    return ins.operands[0];
  }

  // s_cbranch_scc0 / vccz / execz branch when the flag is clear.
  bool branch_negated(const Instr& ins) const override {
    return contains(ins.opcode, "scc0") || contains(ins.opcode, "vccz") || contains(ins.opcode, "execz");
  }

  std::optional<NodeId> branch_predicate(const Instr& ins) override {
    if (contains(ins.opcode, "scc")) return get("scc");
    if (contains(ins.opcode, "vcc")) return get("vcc_lo");
    if (contains(ins.opcode, "exec")) return get("exec_lo");
    return std::nullopt;
  }

  // s_cmp_<cc>_<type> a, b in the form PtxWalk writes `setp` in (a < b as setp.lt.sint or
  // .uint, >= and <= as its negation, > and <= with the operands swapped; eq and lg as
  // setp.eq / setp.ne), so trip counts and launch-uniform facts read a GCN loop's scalar
  // exit test as they read PTX's. Exact on integers.
  std::optional<NodeId> scalar_compare(const std::string& op, const std::vector<NodeId>& in) {
    const std::vector<std::string> part = absl::StrSplit(op, '_');  // s, cmp, cc, type
    if (part.size() != 4 || in.size() != 2 || part[3].size() < 2 || (part[3][0] != 'i' && part[3][0] != 'u')) {
      return std::nullopt;
    }
    const std::string& cc = part[2];
    const std::string sign = part[3][0] == 'i' ? "s" : "u";
    if (cc == "eq" || cc == "lg") return g_.opaque(absl::StrCat(cc == "eq" ? "setp.eq." : "setp.ne.", part[3]), in, line_);
    const bool swap = cc == "gt" || cc == "le", negated = cc == "ge" || cc == "le";
    if (!swap && !negated && cc != "lt") return std::nullopt;
    std::vector<NodeId> ab = in;
    if (swap) std::swap(ab[0], ab[1]);
    const NodeId lt = g_.opaque(absl::StrCat("setp.lt.", sign, "int"), ab, line_);
    return negated ? g_.opaque("not", {lt}, line_) : lt;
  }

  // One 32-bit source value.
  NodeId val(const std::string& s0) {
    std::string s = s0;
    if (s.empty()) return g_.opaque("empty operand", {});
    if (s[0] == '-' && !std::isdigit(static_cast<unsigned char>(s.size() > 1 ? s[1] : '0'))) {
      return g_.arith("neg", {val(s.substr(1))}, line_);
    }
    if (s[0] == '|' && s.back() == '|' && s.size() > 2) return g_.arith("abs", {val(s.substr(1, s.size() - 2))}, line_);
    if (is_reg(s)) {
      auto c = components(s);
      if (c.size() == 1) return get(c[0]);
      return pair(c);
    }
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
      return g_.integer(Affine::constant(static_cast<int64_t>(std::strtoull(s.c_str(), nullptr, 16))));
    }
    int64_t v = 0;
    if (absl::SimpleAtoi(s, &v)) return g_.integer(Affine::constant(v));
    return g_.constant(s);  // 1.0, 0.5, off, ...
  }

  // A 64-bit (or wider) register read: the low half when the high half belongs to it.
  NodeId pair(const std::vector<std::string>& c) {
    if (c.size() == 2 && has(c[0]) && has(c[1])) {
      NodeId lo = get(c[0]), hi = get(c[1]);
      const Node& h = g_.at(hi);
      if (h.kind == Kind::kOpaque && h.op == "hi") return lo;
      const Node& l = g_.at(lo);
      if (l.kind == Kind::kInt && h.kind == Kind::kInt && l.aff.terms.size() == 1 && h.aff.terms.size() == 1) {
        const std::string& ls = l.aff.terms.begin()->first;
        if (starts(ls, "param@") && h.aff.terms.begin()->first == absl::StrCat("param@", std::atoi(ls.c_str() + 6) + 4)) {
          return lo;  // a 64-bit kernel argument loaded as two dwords
        }
      }
    }
    std::vector<NodeId> v;
    for (auto& x : c) v.push_back(get(x));
    return g_.opaque("pack", v, line_);
  }

  void set_wide(const std::string& dst, NodeId v) {
    auto c = components(dst);
    if (c.empty()) return;
    set(c[0], v);
    for (size_t i = 1; i < c.size(); ++i) set(c[i], i == 1 && c.size() == 2 ? hi_of(v) : g_.opaque(absl::StrCat("part#", i), {v}, line_));
  }

  std::optional<Affine> aff(NodeId n) {
    if (g_.at(n).kind == Kind::kInt) return g_.at(n).aff;
    return std::nullopt;
  }
  std::optional<int64_t> cst(NodeId n) {
    auto a = aff(n);
    if (a && a->is_const()) return a->c0;
    return std::nullopt;
  }

  NodeId int_result(const std::string& op, std::optional<Affine> r, const std::vector<NodeId>& in) {
    if (r) return g_.integer(*r);
    return g_.opaque(op, in, line_);
  }

  std::optional<Affine> shl(NodeId x, NodeId s) {
    auto a = aff(x);
    auto k = cst(s);
    if (!a || !k || *k < 0 || *k > 62) return std::nullopt;
    return scale(*a, int64_t{1} << *k);
  }

  std::optional<NodeId> dpp_shuffle(const Instr& ins, NodeId src) {
    for (const std::string& m : ins.modifiers) {
      for (const char* mode : {"row_shr", "row_shl", "row_ror", "row_xmask", "row_mirror", "row_half_mirror",
                               "row_bcast", "quad_perm", "wave_shr", "wave_ror", "row_newbcast", "row_share"}) {
        if (starts(m, mode)) {
          size_t c = m.find(':');
          int64_t k = c == std::string::npos ? 0 : std::strtoll(m.c_str() + c + 1, nullptr, 0);
          std::string md = mode;
          if (md == "row_xmask") md = "row_bfly";
          if (md == "row_shr" || md == "row_bfly") return g_.shfl(md, k, src, line_);
          return g_.opaque(absl::StrCat("dpp ", m), {src}, line_);
        }
      }
    }
    return std::nullopt;
  }

  void step(const Instr& ins) override {
    const std::string op = norm(ins.opcode);
    const auto& o = ins.operands;
    auto src = [&](size_t i) { return i < o.size() ? val(o[i]) : g_.opaque("missing operand", {}, line_); };
    if (op == "s_barrier") return barrier();
    if (starts(op, "s_waitcnt") || starts(op, "s_nop") || op == "s_endpgm" || starts(op, "s_setprio") ||
        starts(op, "s_sleep") || starts(op, "buffer_wbl2") || starts(op, "buffer_inv") || starts(op, "s_dcache")) {
      return;
    }
    if (o.empty()) return generic(ins, op);
    const std::string& d = o[0];
    // Kernel-argument loads.
    if (starts(op, "s_load_dword") && o.size() >= 3 && components(o[1]).size() >= 1 &&
        components(o[1])[0] == kernarg_) {
      int64_t off = std::strtoll(o[2].c_str(), nullptr, 0);
      auto c = components(d);
      for (size_t i = 0; i < c.size(); ++i) {
        set(c[i], g_.integer(Affine::symbol(absl::StrCat("param@", off + 4 * static_cast<int64_t>(i)))));
      }
      return;
    }
    if (contains(op, "_load_") && (starts(op, "global_") || starts(op, "flat_") || starts(op, "buffer_") ||
                                   starts(op, "s_load") || starts(op, "s_buffer"))) {
      NodeId a = address(ins, 1);
      auto c = components(d);
      for (size_t i = 0; i < c.size(); ++i) {
        NodeId ai = i == 0 ? a : offset(a, 4 * static_cast<int64_t>(i));
        set(c[i], g_.load("global.b32", ai, line_));
      }
      return;
    }
    if (is_store(op)) {
      NodeId a = address(ins, 0);
      if (o.size() < 2) return generic(ins, op);
      auto c = components(o[1]);
      for (size_t i = 0; i < c.size(); ++i) add_root(op, get(c[i]), offset(a, 4 * static_cast<int64_t>(i)), line_);
      return;
    }
    if (starts(op, "ds_write") || starts(op, "ds_store")) {
      if (o.size() < 2) return generic(ins, op);
      NodeId a = val(o[0]);
      int64_t off = mod_int(ins, "offset:"), off0 = mod_int(ins, "offset0:"), off1 = mod_int(ins, "offset1:");
      bool two = contains(op, "write2") || contains(op, "store2");
      int64_t eb = contains(op, "b64") ? 8 : 4;
      if (two) {
        if (o.size() >= 3) {
          smem_store(offset(a, wrap_mul(off0, eb)), val(o[1]));
          smem_store(offset(a, wrap_mul(off1, eb)), val(o[2]));
        }
        return;
      }
      auto c = components(o[1]);
      for (size_t i = 0; i < c.size(); ++i) smem_store(offset(a, off + 4 * static_cast<int64_t>(i)), get(c[i]));
      return;
    }
    if (starts(op, "ds_read") || starts(op, "ds_load")) {
      if (o.size() < 2) return generic(ins, op);
      NodeId a = val(o[1]);
      int64_t off = mod_int(ins, "offset:"), off0 = mod_int(ins, "offset0:"), off1 = mod_int(ins, "offset1:");
      auto c = components(d);
      if (contains(op, "read2") || contains(op, "load2")) {
        int64_t eb = contains(op, "b64") ? 8 : 4;
        size_t half = c.size() / 2;
        for (size_t i = 0; i < c.size(); ++i) {
          int64_t base = wrap_mul(i < half ? off0 : off1, eb);
          set(c[i], smem_load(offset(a, base + 4 * static_cast<int64_t>(i % std::max<size_t>(half, 1))), "b32", line_));
        }
        return;
      }
      for (size_t i = 0; i < c.size(); ++i) set(c[i], smem_load(offset(a, off + 4 * static_cast<int64_t>(i)), "b32", line_));
      return;
    }
    if (op == "ds_bpermute_b32" || op == "ds_permute_b32" || op == "ds_swizzle_b32") {
      std::vector<NodeId> in;
      for (size_t i = 1; i < o.size(); ++i) in.push_back(val(o[i]));
      std::string t = op;
      for (auto& m : ins.modifiers) absl::StrAppend(&t, " ", m);
      return set(d, g_.opaque(t, in, line_));
    }
    if (starts(op, "v_mfma") || starts(op, "v_smfma")) {
      if (o.size() < 4) return generic(ins, op);
      auto dc = components(d);
      std::vector<NodeId> ab;
      for (size_t i = 1; i <= 2; ++i) {
        for (auto& c : components(o[i])) ab.push_back(get(c));
      }
      auto cc = components(o[3]);
      if (dc.size() * (ab.size() + 1) > (1u << 18)) return generic(ins, op);  // bounded work
      std::vector<NodeId> outs;
      for (size_t i = 0; i < dc.size(); ++i) {
        std::vector<NodeId> k = ab;
        k.push_back(i < cc.size() && is_reg(o[3]) ? get(cc[i]) : val(o[3]));
        outs.push_back(g_.mma(op, static_cast<int64_t>(i), std::move(k), line_));
      }
      for (size_t i = 0; i < dc.size(); ++i) set(dc[i], outs[i]);
      return;
    }
    // Moves (with DPP they are lane exchanges).
    if (op == "v_mov_b32" || op == "s_mov_b32" || op == "v_readfirstlane_b32" || op == "v_accvgpr_write_b32" ||
        op == "v_accvgpr_read_b32" || op == "v_accvgpr_mov_b32" || op == "s_mov_b64" || op == "v_mov_b64" ||
        op == "v_pk_mov_b32" || op == "s_cselect_b32") {
      if (o.size() < 2) return generic(ins, op);
      if (op == "s_mov_b64" || op == "v_mov_b64") {
        auto dc = components(d), sc = components(o[1]);
        if (sc.size() == dc.size()) {
          for (size_t i = 0; i < dc.size(); ++i) set(dc[i], get(sc[i]));
        } else {
          set_wide(d, val(o[1]));
        }
        return;
      }
      NodeId s = val(o[1]);
      if (auto sh = dpp_shuffle(ins, s)) s = *sh;
      return set(d, s);
    }
    if (op == "v_bfrev_b32" || op == "s_brev_b32") {
      if (auto c = cst(src(1))) {
        uint32_t x = static_cast<uint32_t>(*c), r = 0;
        for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
        return set(d, r == 0x80000000u ? g_.constant("0f80000000") : g_.integer(Affine::constant(r)));
      }
      return set(d, g_.opaque(op, {src(1)}, line_));
    }
    if (op == "v_mbcnt_lo_u32_b32" || op == "v_mbcnt_hi_u32_b32") {
      auto m = cst(src(1));
      auto b = aff(src(2));
      if (m && (*m == -1 || *m == 0xffffffff) && b) {
        const char* nm = lane_bits_ ? "tid.x" : "laneid";
        Affine lane;
        if (op == "v_mbcnt_lo_u32_b32") lane = bits_of(nm, 5);
        else lane = Affine::symbol(absl::StrCat(nm, ".b5"), 32);
        return set(d, g_.integer(add(*b, lane)));
      }
      return set(d, g_.opaque(op, {src(1), src(2)}, line_));
    }
    // Comparisons write a lane mask.
    if (starts(op, "v_cmp") || starts(op, "s_cmp")) {
      std::vector<NodeId> in;
      size_t first = starts(op, "s_cmp") || o.size() == 2 ? 0 : 1;
      for (size_t i = first; i < o.size(); ++i) in.push_back(val(o[i]));
      NodeId p = g_.opaque(op, in, line_);
      if (starts(op, "s_cmp")) {
        if (auto c = scalar_compare(op, in)) p = *c;
        return set("scc", p);
      }
      if (o.size() == 2 || first == 0) return set("vcc_lo", p);
      return set_wide(d, p);
    }
    if (op == "v_cndmask_b32") {
      if (o.size() < 3) return generic(ins, op);
      NodeId f = src(1), t = src(2);
      NodeId p = o.size() >= 4 ? val(o[3]) : get("vcc_lo");
      auto negz = [&](NodeId n) { return g_.at(n).kind == Kind::kConst && g_.at(n).op == "0f80000000"; };
      if (!g_.at(p).data) {
        if (negz(f)) return set(d, g_.pad(p, t, line_));  // read as t only by an add
        if (negz(t)) return set(d, g_.pad(g_.opaque("not", {p}, line_), f, line_));
        return set(d, g_.opaque(op, {f, t, p}, line_));
      }
      return set(d, g_.guard(p, t, f, line_));
    }
    if (starts(op, "s_and_saveexec") || starts(op, "s_or_saveexec") || starts(op, "s_andn2_saveexec")) {
      set_wide(d, get("exec_lo"));
      NodeId m = val(o.size() > 1 ? o[1] : d);
      set("exec_lo", m);
      return;
    }
    if ((op == "s_or_b64" || op == "s_or_b32") && o.size() >= 2 && (d == "exec" || d == "exec_lo")) {
      set("exec_lo", g_.constant("exec-restored"));
      return;
    }
    // Floating-point arithmetic.
    const bool fl = (contains(op, "_f32") || contains(op, "_f16") || contains(op, "_f64") || contains(op, "_bf16")) &&
                    !starts(op, "v_cvt_u") && !starts(op, "v_cvt_i");
    if (fl && starts(op, "v_")) {
      std::vector<NodeId> in;
      for (size_t i = 1; i < o.size(); ++i) in.push_back(val(o[i]));
      if (!in.empty()) {
        if (auto sh = dpp_shuffle(ins, in[0])) in[0] = *sh;
      }
      std::string a = op;
      if (contains(op, "fmac") || contains(op, "_mac_")) {
        in.push_back(val(d));
        a = contains(op, "f64") ? "v_fma_f64" : contains(op, "f16") ? "v_fma_f16" : "v_fma_f32";
      }
      std::string mods;
      for (const auto& m : ins.modifiers) {
        if (m == "clamp" || starts(m, "mul:") || starts(m, "div:") || starts(m, "op_sel")) absl::StrAppend(&mods, " ", m);
      }
      auto dc = components(d);
      NodeId r = g_.arith(a + mods, std::move(in), line_);
      if (dc.size() == 1) return set(dc[0], r);
      for (size_t i = 0; i < dc.size(); ++i) set(dc[i], g_.opaque(absl::StrCat("lane#", i), {r}, line_));
      return;
    }
    // Integer arithmetic over affine forms.
    std::vector<NodeId> in;
    size_t first = 1;
    if (op == "v_add_co_u32" || op == "v_sub_co_u32" || op == "v_addc_co_u32" || op == "v_subb_co_u32" ||
        op == "v_mad_u64_u32" || op == "v_mad_i64_i32" || op == "v_subrev_co_u32") {
      first = 2;  // carry-out destination
    }
    // s_addk_i32 / s_mulk_i32 d, k: d = d op k (SOPK reads its destination).
    if ((op == "s_addk_i32" || op == "s_mulk_i32") && o.size() == 2) in.push_back(val(d));
    for (size_t i = first; i < o.size(); ++i) in.push_back(val(o[i]));
    auto A = [&](size_t i) { return i < in.size() ? aff(in[i]) : std::nullopt; };
    std::optional<Affine> r;
    const bool wide = contains(op, "_b64") || contains(op, "_u64") || contains(op, "_i64");
    if ((op == "v_add_u32" || op == "v_add_nc_u32" || op == "s_add_u32" || op == "s_add_i32" || op == "s_addk_i32" ||
         op == "v_add_co_u32" || op == "v_add_i32" || op == "v_add_co_ci_u32") && A(0) && A(1)) {
      r = add(*A(0), *A(1));
    } else if ((op == "v_sub_u32" || op == "s_sub_u32" || op == "s_sub_i32" || op == "v_sub_co_u32") && A(0) && A(1)) {
      r = sub(*A(0), *A(1));
    } else if ((op == "v_subrev_u32" || op == "v_subrev_co_u32") && A(0) && A(1)) {
      r = sub(*A(1), *A(0));
    } else if ((op == "v_addc_co_u32" || op == "s_addc_u32" || op == "v_subb_co_u32" || op == "s_subb_u32" ||
                op == "v_ashrrev_i32" || op == "s_ashr_i32") && !in.empty()) {
      NodeId lo = in.size() > 1 ? in[1] : in[0];
      return set(d, hi_of(lo));
    } else if ((op == "v_mul_lo_u32" || op == "s_mul_i32" || op == "s_mulk_i32" || op == "v_mul_u32_u24" || op == "v_mul_i32_i24") && A(0) && A(1)) {
      r = mul(*A(0), *A(1));
    } else if ((op == "v_mad_u32_u24" || op == "v_mad_i32_i24" || op == "v_mad_u64_u32" || op == "v_mad_i64_i32") &&
               A(0) && A(1) && A(2)) {
      if (auto m = mul(*A(0), *A(1))) r = add(*m, *A(2));
    } else if ((op == "v_lshlrev_b32" || op == "v_lshlrev_b64") && in.size() == 2) {
      r = shl(in[1], in[0]);
    } else if ((op == "s_lshl_b32" || op == "s_lshl_b64") && in.size() == 2) {
      r = shl(in[0], in[1]);
    } else if ((op == "v_lshrrev_b32" || op == "v_lshrrev_b64") && A(1) && cst(in[0])) {
      r = shr(*A(1), static_cast<int>(*cst(in[0])));
    } else if ((op == "s_lshr_b32" || op == "s_lshr_b64") && A(0) && cst(in[1])) {
      r = shr(*A(0), static_cast<int>(*cst(in[1])));
    } else if ((op == "v_lshl_add_u32" || op == "v_lshl_add_u64") && in.size() == 3 && A(2)) {
      if (auto s = shl(in[0], in[1])) r = add(*s, *A(2));
    } else if (op == "v_add_lshl_u32" && A(0) && A(1) && in.size() == 3) {
      NodeId sum = g_.integer(add(*A(0), *A(1)));
      r = shl(sum, in[2]);
    } else if (op == "v_lshl_or_b32" && in.size() == 3 && A(2)) {
      if (auto s = shl(in[0], in[1])) r = or_disjoint(*s, *A(2));
    } else if ((op == "v_and_b32" || op == "s_and_b32" || op == "s_and_b64") && A(0) && A(1)) {
      if (cst(in[0])) r = and_mask(*A(1), static_cast<uint64_t>(*cst(in[0])), wide ? 64 : 32);
      else if (cst(in[1])) r = and_mask(*A(0), static_cast<uint64_t>(*cst(in[1])), wide ? 64 : 32);
    } else if ((op == "v_or_b32" || op == "s_or_b32" || op == "v_xor_b32" || op == "v_add3_u32" || op == "v_or3_b32") &&
               A(0) && A(1)) {
      if (op == "v_add3_u32" && A(2)) r = add(add(*A(0), *A(1)), *A(2));
      else if (op == "v_or3_b32" && A(2)) {
        if (auto t = or_disjoint(*A(0), *A(1))) r = or_disjoint(*t, *A(2));
      } else if (in.size() == 2) {
        r = or_disjoint(*A(0), *A(1));
      }
    } else if (op == "v_and_or_b32" && in.size() == 3 && A(0) && cst(in[1]) && A(2)) {
      if (auto t = and_mask(*A(0), static_cast<uint64_t>(*cst(in[1])), 32)) r = or_disjoint(*t, *A(2));
    } else if (op == "v_lshl_add_u64" || op == "v_lshlrev_b64" || wide) {
      r.reset();
    } else if (!starts(op, "v_") && !starts(op, "s_")) {
      return generic(ins, op);
    }
    NodeId res = int_result(ins.opcode, r, in);
    if (wide || op == "v_mad_u64_u32" || op == "v_mad_i64_i32") return set_wide(d, res);
    if (!r && no_def(op)) return generic(ins, op);
    auto dc = components(d);
    if (dc.size() == 1) return set(dc[0], res);
    set_wide(d, res);
  }

  int64_t mod_int(const Instr& ins, absl::string_view key) {
    for (const auto& m : ins.modifiers) {
      if (starts(m, key)) return std::strtoll(m.c_str() + key.size(), nullptr, 0);
    }
    for (const auto& o : ins.operands) {
      if (starts(o, key)) return std::strtoll(o.c_str() + key.size(), nullptr, 0);
    }
    return 0;
  }

  NodeId offset(NodeId a, int64_t off) {
    if (off == 0) return a;
    if (auto x = aff(a)) return g_.integer(add(*x, Affine::constant(off)));
    return g_.opaque("offset", {a, g_.integer(Affine::constant(off))}, line_);
  }

  // global_load vdst, vaddr, saddr|off offset:N  /  global_store vaddr, vdata, saddr|off
  NodeId address(const Instr& ins, size_t vaddr_index) {
    const auto& o = ins.operands;
    if (vaddr_index >= o.size()) return g_.opaque("no address", {}, line_);
    NodeId v = val(o[vaddr_index]);
    size_t saddr = vaddr_index + (vaddr_index == 0 ? 2 : 1);
    NodeId a = v;
    if (saddr < o.size() && o[saddr] != "off" && is_reg(o[saddr])) {
      NodeId s = val(o[saddr]);
      if (aff(s) && aff(v)) a = g_.integer(add(*aff(s), *aff(v)));
      else a = g_.opaque("saddr+vaddr", {s, v}, line_);
    }
    return offset(a, mod_int(ins, "offset:"));
  }

  void generic(const Instr& ins, const std::string& op) {
    std::vector<NodeId> in;
    const bool def = !no_def(op) && !ins.operands.empty() && is_reg(ins.operands[0]);
    for (size_t i = def ? 1 : 0; i < ins.operands.size(); ++i) in.push_back(val(ins.operands[i]));
    std::string t = op;
    for (auto& m : ins.modifiers) absl::StrAppend(&t, " ", m);
    if (def) {
      auto c = components(ins.operands[0]);
      for (size_t i = 0; i < c.size(); ++i) set(c[i], g_.opaque(absl::StrCat(t, " #", i), in, line_));
    } else if (is_store(op)) {
      add_root(t, g_.opaque(t, in, line_), g_.constant("address in operands"), line_);
    }
  }

 private:
  std::string kernarg_;
  bool lane_bits_ = false;
};

}  // namespace

std::vector<Root> walk_gcn(const Module& m, const Function& f, Graph& g, bool* complete) {
  (void)m;
  GcnWalker w(g, f);
  w.run();
  if (complete != nullptr) *complete = !w.incomplete() && !g.pad_lanes_unsure();
  return w.roots();
}

}  // namespace fixbits::verify
