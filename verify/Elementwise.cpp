// Elementwise.cpp — the elementwise root rule (see Elementwise.h).
//
// Before: st.global.f32 [param2 + 4*ctaid.x*(param3) + 128*tid.x.b0 + ... + 4*~h1.0 + 8],
//         mul(ld.global.f32 [param0 + 4*ctaid.x*(param3) + 128*tid.x.b0 + ... + 4*~h1.0 + 8], r)
//         — one root per element a thread stores, each naming the thread's layout.
// After:  H(elementwise, st.global.f32, [param2 + 4*ctaid.x*(param3)],
//           mul(rel-load global.f32 [param0 + 4*ctaid.x*(param3) + 0], H(r)))
//         — the same hash for every store of every layout that computes out[q] = x[q] * r.
#include "verify/Elementwise.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "verify/Hash.h"

namespace fixbits::verify {
namespace {

bool is_position(const std::string& sym) { return dep_of_symbol(sym) != 0; }

// The position part of an affine form (thread-index and hole terms).
Affine position_of(const Affine& a) {
  Affine p;
  for (const auto& [sym, c] : a.terms) {
    if (is_position(sym)) p.terms[sym] = c;
  }
  return p;
}

// a without its position terms and without its constant.
Affine base_of(const Affine& a) {
  Affine b;
  for (const auto& [sym, c] : a.terms) {
    if (!is_position(sym)) b.terms[sym] = c;
  }
  return b;
}

class Relative {
 public:
  Relative(const Graph& g, Affine position, int64_t store_c0, int64_t bytes, size_t* budget)
      : g_(g), position_(std::move(position)), store_c0_(store_c0), bytes_(bytes), budget_(budget) {}

  std::optional<uint64_t> of(NodeId id) {
    if (auto it = memo_.find(id); it != memo_.end()) return it->second;
    if (++visits_ > kMaxElementwiseVisits || *budget_ == 0) return std::nullopt;
    --*budget_;
    std::optional<uint64_t> h = compute(id);
    if (h) memo_[id] = *h;
    return h;
  }
  bool used_relative() const { return used_relative_; }

 private:
  std::optional<uint64_t> compute(NodeId id) {
    const Node& n = g_.at(id);
    if (n.dep == 0) return n.hash;  // the same value for every thread and iteration
    switch (n.kind) {
      case Kind::kLoad: {
        const Node& a = g_.at(n.kids[0]);
        if (a.kind != Kind::kInt || n.op.rfind("global.", 0) != 0) return std::nullopt;
        if (!(position_of(a.aff) == position_)) return std::nullopt;
        used_relative_ = true;
        Affine rel = base_of(a.aff);
        rel.c0 = wrap_add(a.aff.c0, wrap_mul(store_c0_, -1));
        return mix(mix(hash_text("rel-load"), hash_text(n.op)), hash_text(rel.text()));
      }
      case Kind::kInt: {
        // An index (a bounds test's operand): the store's element index plus a constant.
        if (bytes_ <= 0 || store_c0_ % bytes_ != 0) return std::nullopt;
        const Affine pos = position_of(n.aff);
        Affine scaled;
        for (const auto& [sym, c] : pos.terms) scaled.terms[sym] = wrap_mul(c, bytes_);
        if (!(scaled == position_)) return std::nullopt;
        Affine rel = base_of(n.aff);
        rel.c0 = wrap_add(n.aff.c0, -(store_c0_ / bytes_));
        return mix(hash_text("rel-index"), hash_text(rel.text()));
      }
      case Kind::kArith:
        if (n.bal.valid && !n.bal.is_leaf) return std::nullopt;  // a partial reduction
        [[fallthrough]];
      case Kind::kGuard:
      case Kind::kOpaque:
      case Kind::kConst: {
        if (n.kids.empty()) return std::nullopt;  // a thread-varying input we cannot relate
        std::vector<uint64_t> kids;
        for (NodeId k : n.kids) {
          std::optional<uint64_t> h = of(k);
          if (!h) return std::nullopt;
          kids.push_back(*h);
        }
        const size_t c = std::min<size_t>(static_cast<size_t>(n.commuting), kids.size());
        std::sort(kids.begin(), kids.begin() + c);
        uint64_t h = mix(mix(hash_text("rel-node"), static_cast<uint64_t>(n.kind)), hash_text(n.op));
        h = mix(h, static_cast<uint64_t>(n.imm));
        for (uint64_t k : kids) h = mix(h, k);
        return h;
      }
      default:
        return std::nullopt;  // a thread-varying exchange, relocation, fold, MMA or integer
    }
  }

  const Graph& g_;
  Affine position_;
  int64_t store_c0_;
  int64_t bytes_;  // the stored element's bytes (0: unknown)
  size_t* budget_;
  absl::flat_hash_map<NodeId, uint64_t> memo_;
  size_t visits_ = 0;
  bool used_relative_ = false;
};

}  // namespace

std::optional<uint64_t> elementwise_root_hash(const Graph& g, const std::string& op, NodeId value,
                                              NodeId address, size_t* budget) {
  const Node& a = g.at(address);
  if (a.kind != Kind::kInt) return std::nullopt;
  Affine position = position_of(a.aff);
  if (position.terms.empty()) return std::nullopt;
  int64_t bytes = 0;
  if (const size_t p = op.find_last_of("fbsu"); p != std::string::npos && p + 1 < op.size()) {
    const int64_t bits = std::strtoll(op.c_str() + p + 1, nullptr, 10);
    bytes = bits >= 8 && bits % 8 == 0 ? bits / 8 : 0;
  }
  Relative rel(g, position, a.aff.c0, bytes, budget);
  std::optional<uint64_t> v = rel.of(value);
  if (!v || !rel.used_relative()) return std::nullopt;
  uint64_t h = mix(hash_text("elementwise-root"), hash_text(op));
  h = mix(h, hash_text(base_of(a.aff).text()));
  return mix(h, *v);
}

}  // namespace fixbits::verify
