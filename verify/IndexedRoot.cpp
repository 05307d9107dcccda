// IndexedRoot.cpp — the indexed root rule (see IndexedRoot.h).
//
// Before: st.global.b32 [param2 + 16*tid.x.b0*param6 + 4*param6 + 12*ctaid.x + 4],
//         fold(fma(cvt(ld.b16 [param0 + 8*tid.x.b0*param8 + 2*param8 + 2*~n1*param9]),
//                  cvt(ld.b16 [param1 + 6*ctaid.x + 2 + 2*~n1*param10]), self))
// After:  st.global.b32 [param2 + 4*sym:@param6*param6 + 4*sym:@1],
//         fold(fma(cvt(ld.b16 [param0 + 2*sym:@param6*param8 + 2*~n1*param9]),
//                  cvt(ld.b16 [param1 + 2*sym:@1 + 2*~n1*param10]), self))
#include "verify/IndexedRoot.h"

#include <cstdlib>
#include <map>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "verify/Hash.h"

namespace fixbits::verify {
namespace {

bool is_coordinate(const std::string& s) {
  return s.rfind("tid.", 0) == 0 || s.rfind("ctaid.", 0) == 0 || s.rfind("laneid", 0) == 0;
}

bool is_param(const std::string& s) { return s.rfind("param", 0) == 0 && s.find('*') == std::string::npos; }

int64_t bytes_of(const std::string& op) {
  const size_t p = op.find_last_of("fbsu");
  if (p == std::string::npos || p + 1 >= op.size()) return 0;
  const int64_t bits = std::strtoll(op.c_str() + p + 1, nullptr, 10);
  return bits >= 8 && bits % 8 == 0 ? bits / 8 : 0;
}

// An address split by stride: group "" is the unit stride; terms that belong to no group
// (a product of two parameters, a shared base, a hole) stay in `rest`.
struct Groups {
  std::map<std::string, Affine> by_stride;  // stride -> sum of c * x (x a coordinate, or 1)
  Affine rest;
};

Groups split(const Affine& a) {
  Groups g;
  g.rest = Affine();
  if (a.c0 != 0) g.by_stride[""] = Affine::constant(a.c0);
  for (const auto& [sym, c] : a.terms) {
    const size_t star = sym.find('*');
    if (star == std::string::npos) {
      if (is_coordinate(sym)) {
        g.by_stride[""] = add(g.by_stride[""], Affine::symbol(sym, c));
      } else if (is_param(sym)) {
        g.by_stride[sym] = add(g.by_stride[sym], Affine::constant(c));
      } else {
        g.rest = add(g.rest, Affine::symbol(sym, c));
      }
      continue;
    }
    const std::string x = sym.substr(0, star);
    std::string s = sym.substr(star + 1);
    if (s.size() > 2 && s.front() == '(' && s.back() == ')') s = s.substr(1, s.size() - 2);
    if (is_coordinate(x) && is_param(s)) {
      g.by_stride[s] = add(g.by_stride[s], Affine::symbol(x, c));
    } else {
      g.rest = add(g.rest, Affine::symbol(sym, c));
    }
  }
  return g;
}

bool has_coordinate(const Affine& a) {
  for (const auto& [sym, c] : a.terms) {
    if (is_coordinate(sym)) return true;
  }
  return false;
}

struct Indices {
  std::vector<std::pair<std::string, Affine>> of;  // store group name -> index
};

// `a` with every group whose index (per `bytes`) equals a store index written as the
// index's symbol; *hits counts the groups rewritten.
Affine rename(const Affine& a, int64_t bytes, const Indices& ix, int* hits) {
  const Groups g = split(a);
  Affine out = g.rest;
  for (const auto& [stride, part] : g.by_stride) {
    std::optional<Affine> index = bytes > 0 ? divide(part, bytes) : std::nullopt;
    const std::string* name = nullptr;
    if (index && has_coordinate(*index)) {
      for (const auto& [n, want] : ix.of) {
        if (want == *index) name = &n;
      }
    }
    if (name == nullptr) {
      if (stride.empty()) {
        out = add(out, part);
      } else {
        for (const auto& [sym, c] : part.terms) out = add(out, Affine::symbol(absl::StrCat(sym, "*", stride), c));
        if (part.c0 != 0) out = add(out, Affine::symbol(stride, part.c0));
      }
      continue;
    }
    ++*hits;
    const std::string sym = absl::StrCat("sym:@", name->empty() ? "1" : *name);
    out = add(out, Affine::symbol(stride.empty() ? sym : absl::StrCat(sym, "*", stride), bytes));
  }
  return out;
}

}  // namespace

std::optional<uint64_t> indexed_root_hash(Graph& g, const std::string& op, NodeId value, NodeId address,
                                          size_t* budget) {
  const int64_t bytes = bytes_of(op);
  if (g.at(address).kind != Kind::kInt || bytes == 0) return std::nullopt;
  const Affine a = g.at(address).aff;  // a copy: rewriting grows the graph
  Indices ix;
  for (const auto& [stride, part] : split(a).by_stride) {
    std::optional<Affine> index = bytes > 0 ? divide(part, bytes) : std::nullopt;
    if (!index || !has_coordinate(*index)) continue;
    for (const auto& [n, other] : ix.of) {
      if (other == *index) return std::nullopt;  // two indices that are one value: decline
    }
    ix.of.push_back({stride, *index});
  }
  if (ix.of.empty()) return std::nullopt;
  // Thread-local values only: a lane exchange, a shared-memory relocation or a collapsed
  // tree combines other threads' (or other indices') loads, which the store's indices do
  // not name; a value that varies with the thread in an unknown way (%warpid, an MMA
  // fragment) is not a function of the indices either.
  {
    std::vector<NodeId> todo = {value};
    absl::flat_hash_set<NodeId> seen;
    while (!todo.empty()) {
      const NodeId x = todo.back();
      todo.pop_back();
      if (!seen.insert(x).second) continue;
      if (*budget == 0) return std::nullopt;
      --*budget;
      const Node& n = g.at(x);
      if (n.kind == Kind::kXchg || n.kind == Kind::kShfl || n.kind == Kind::kRelocate ||
          (n.bal.valid && !n.bal.is_leaf) || (n.dep & kDepUnknown) != 0) {
        return std::nullopt;
      }
      for (NodeId k : n.kids) todo.push_back(k);
    }
  }
  int hits = 0;
  std::optional<NodeId> v = g.rewrite_load_addresses(
      value,
      [&](const Affine& x, const std::string& load_op) -> std::optional<Affine> {
        const int64_t b = bytes_of(load_op);
        if (b == 0) return std::nullopt;
        int h = 0;
        Affine y = rename(x, b, ix, &h);
        if (h == 0) return std::nullopt;
        hits += h;
        return y;
      },
      budget);
  if (!v || hits == 0) return std::nullopt;
  int store_hits = 0;
  const Affine addr = rename(a, bytes, ix, &store_hits);
  uint64_t h = mix(hash_text("indexed-root"), hash_text(op));
  h = mix(h, g.at(*v).hash);
  return mix(h, hash_text(addr.text()));
}

}  // namespace fixbits::verify
