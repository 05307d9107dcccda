// Walk.cpp — program-order walk, loop summaries, data guards and shared-memory matching.
//
//   $L: ld.global.f32 %r2, [%rd4]; add.rn.f32 %r5, %r5, %r2; add.s64 %rd4, %rd4, 4;
//       @%p bra $L;
// gives %r5 = fold(add.rn.f32(~h1.0, ld.global.f32[~h1.1]), key "inc:4") and %rd4 an
// opaque loop-exit token: the pre-loop seed of %r5 is dropped (§6.2).
#include "verify/Walk.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fixbits::verify {

NodeId Walker::get(const std::string& reg) {
  auto it = regs_.find(reg);
  if (it != regs_.end()) return it->second;
  NodeId v = g_.opaque(absl::StrCat("uninitialized ", reg), {}, line_);
  regs_[reg] = v;
  return v;
}

std::optional<NodeId> Walker::current_guard() const {
  if (instr_guard_) return instr_guard_;
  if (!data_regions_.empty()) return data_regions_.back().second;
  return std::nullopt;
}

void Walker::set(const std::string& reg, NodeId v) {
  if (auto p = current_guard()) {
    auto it = regs_.find(reg);
    NodeId old = it != regs_.end() ? it->second : g_.constant("undef");
    v = g_.guard(*p, v, old, line_);
  }
  regs_[reg] = v;
}

void Walker::smem_store(NodeId addr, NodeId value) {
  if (smem_.size() > 1u << 16) smem_.erase(smem_.begin());  // bounded history
  smem_.push_back({addr, value, epoch_});
}

NodeId Walker::smem_load(NodeId addr, const std::string& type, int line) {
  const Node& a = g_.at(addr);
  const size_t from = smem_.size() > kMaxMemoryHistory ? smem_.size() - kMaxMemoryHistory : 0;
  const Store* best = nullptr;
  for (size_t i = from; i < smem_.size(); ++i) {
    if (g_.at(smem_[i].addr).hash == a.hash) best = &smem_[i];  // own slot: the value itself
  }
  if (best != nullptr) return best->value;
  if (a.kind == Kind::kInt) {
    // Another thread's slot: the store with the same shared base and the nearest lower
    // constant offset (the region it wrote), the latest on ties.
    const Affine base = a.aff.keep_prefix({"shared", "param"});
    const Store* any = nullptr;
    for (size_t i = from; i < smem_.size(); ++i) {
      const Node& sa = g_.at(smem_[i].addr);
      if (sa.kind != Kind::kInt || !(sa.aff.keep_prefix({"shared", "param"}) == base)) continue;
      any = &smem_[i];
      if (sa.aff.c0 > a.aff.c0) continue;
      if (best == nullptr || sa.aff.c0 >= g_.at(best->addr).aff.c0) best = &smem_[i];
    }
    if (best == nullptr) best = any;
  }
  if (best != nullptr) return g_.relocate(best->value, line);
  return g_.load(absl::StrCat("shared.", type), addr, line);
}

void Walker::local_store(NodeId addr, NodeId value) {
  if (local_.size() > 1u << 16) local_.erase(local_.begin());
  local_.push_back({addr, value, epoch_});
}

NodeId Walker::local_load(NodeId addr, const std::string& type, int line) {
  size_t seen = 0;
  for (auto it = local_.rbegin(); it != local_.rend() && seen < kMaxMemoryHistory; ++it, ++seen) {
    if (g_.at(it->addr).hash == g_.at(addr).hash) return it->value;
  }
  return g_.load(absl::StrCat("local.", type), addr, line);
}

void Walker::add_root(const std::string& op, NodeId value, NodeId address, int line) {
  if (auto p = current_guard()) value = g_.guard(*p, value, g_.constant("no-store"), line);
  if (roots_.size() >= (1u << 20)) return;  // bounded; a kernel never stores this often
  roots_.push_back({g_.root(op, value, address, line), line});
}

void Walker::open_loop(const Loop& l) {
  for (size_t k = 0; k < l.carried.size(); ++k) {
    auto it = regs_.find(l.carried[k]);
    if (it != regs_.end()) seeds_[absl::StrCat(l.header, ":", l.carried[k])] = it->second;
    regs_[l.carried[k]] = g_.integer(Affine::symbol(absl::StrCat("~h", l.depth, ".", k)));
  }
}

namespace {

// A body that is a chain of one MMA element over its own hole accumulates exactly
// per instruction; its summary drops the chunk count and the coordinates (§6.2).
std::optional<NodeId> mma_chain(Graph& g, NodeId body) {
  const Node* n = &g.at(body);
  if (n->kind != Kind::kMma) return std::nullopt;
  const std::string op = n->op;
  const int64_t index = n->imm;
  std::optional<std::vector<uint64_t>> operands;
  for (int guard = 0; guard < 1 << 20 && n->kind == Kind::kMma; ++guard) {
    if (n->op != op || n->imm != index || n->kids.empty()) return std::nullopt;
    std::vector<uint64_t> ab;
    for (size_t i = 0; i + 1 < n->kids.size(); ++i) ab.push_back(g.at(n->kids[i]).blank);
    if (operands && *operands != ab) return std::nullopt;
    operands = ab;
    n = &g.at(n->kids.back());
  }
  if (n->kind != Kind::kInt || n->aff.terms.size() != 1 || n->aff.c0 != 0 ||
      n->aff.terms.begin()->first[0] != '~') {
    return std::nullopt;
  }
  std::string text = absl::StrCat("mma-chain ", op, " #", index);
  for (uint64_t h : *operands) absl::StrAppend(&text, " ", hex64(h));
  return g.opaque(text, {g.integer(n->aff)});
}

}  // namespace

void Walker::close_loop(const Loop& l) {
  std::vector<std::string> incs;
  absl::flat_hash_set<std::string> carried(l.carried.begin(), l.carried.end());
  for (const std::string& r : l.carried) {
    const Node& n = g_.at(get(r));
    if (n.kind == Kind::kInt && n.aff.terms.size() == 1 && n.aff.terms.begin()->first[0] == '~' &&
        n.aff.terms.begin()->second == 1) {
      incs.push_back(absl::StrCat(n.aff.c0));
    }
  }
  std::sort(incs.begin(), incs.end());
  const std::string key = absl::StrCat("inc:", absl::StrJoin(incs, ","));
  std::vector<std::string> written;
  for (size_t i = l.header; i <= l.back && i < f_.body.size(); ++i) {
    std::vector<std::string> d, u;
    defs_uses(f_.body[i], &d, &u);
    written.insert(written.end(), d.begin(), d.end());
  }
  std::sort(written.begin(), written.end());
  written.erase(std::unique(written.begin(), written.end()), written.end());
  for (const std::string& r : written) {
    auto it = regs_.find(r);
    if (it == regs_.end() || !g_.at(it->second).has_hole) continue;
    const Node& n = g_.at(it->second);
    if (n.kind == Kind::kInt) {
      it->second = g_.opaque(absl::StrCat("loop-exit ", n.aff.text(), " ", key), {}, line_);
    } else {
      auto seed = seeds_.find(absl::StrCat(l.header, ":", r));
      const NodeId s = carried.contains(r) && seed != seeds_.end() ? seed->second : -1;
      if (auto chain = mma_chain(g_, it->second)) {
        it->second = g_.fold(*chain, "exact-mma", s, line_);
      } else {
        it->second = g_.fold(it->second, key, s, line_);
      }
    }
  }
}

void Walker::run() {
  const auto& body = f_.body;
  absl::flat_hash_map<std::string, size_t> label_at;
  for (size_t i = 0; i < body.size(); ++i) {
    if (!body[i].label.empty()) label_at[body[i].label] = i;
  }
  std::vector<Loop> loops;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i].opcode.empty()) continue;
    bool uncond = false;
    auto t = branch_target(body[i], &uncond);
    if (!t) continue;
    auto it = label_at.find(*t);
    if (it != label_at.end() && it->second <= i) loops.push_back({it->second, i, 0, {}});
    if (loops.size() > kMaxLoops) {
      incomplete_ = true;
      return;
    }
  }
  size_t scanned = 0;
  for (const Loop& l : loops) scanned += l.back - l.header + 1;
  if (scanned > kMaxLoopScan) {
    incomplete_ = true;
    return;
  }
  absl::flat_hash_map<size_t, std::vector<size_t>> at_header, at_back;
  for (size_t k = 0; k < loops.size(); ++k) {
    at_header[loops[k].header].push_back(k);
    at_back[loops[k].back].insert(at_back[loops[k].back].begin(), k);  // inner loops close first
  }
  for (Loop& l : loops) {
    for (const Loop& o : loops) {
      if (o.header <= l.header && o.back >= l.back && &o != &l) ++l.depth;
    }
    ++l.depth;
    absl::flat_hash_set<std::string> seen_def, in_carried;
    std::vector<std::string> first_reads;
    absl::flat_hash_set<std::string> all_defs;
    for (size_t i = l.header; i <= l.back; ++i) {
      std::vector<std::string> d, u;
      defs_uses(body[i], &d, &u);
      for (auto& r : u) {
        if (!seen_def.contains(r) && in_carried.insert(r).second) first_reads.push_back(r);
      }
      for (auto& r : d) {
        seen_def.insert(r);
        all_defs.insert(r);
      }
    }
    for (auto& r : first_reads) {
      if (all_defs.contains(r)) l.carried.push_back(r);
    }
  }
  for (size_t i = 0; i < body.size(); ++i) {
    const Instr& ins = body[i];
    line_ = ins.line;
    if (!ins.label.empty()) {
      while (!data_regions_.empty() && data_regions_.back().first == ins.label) {
        data_regions_.pop_back();
      }
      if (auto h = at_header.find(i); h != at_header.end()) {
        for (size_t k : h->second) open_loop(loops[k]);
      }
      continue;
    }
    instr_guard_.reset();
    bool uncond = false;
    auto target = branch_target(ins, &uncond);
    if (!ins.guard.empty() && !target) {
      NodeId p = get(ins.guard);
      if (g_.at(p).data) {
        instr_guard_ = ins.guard_negated ? g_.opaque("not", {p}, line_) : p;
      }
    }
    if (target) {
      auto it = label_at.find(*target);
      if (!uncond && it != label_at.end() && it->second > i) {
        auto p = branch_predicate(ins);
        if (p && g_.at(*p).data && data_regions_.size() < 1024) {
          NodeId pred = ins.guard_negated ? *p : g_.opaque("not", {*p}, line_);
          data_regions_.push_back({*target, pred});
        }
      }
    } else {
      step(ins);
    }
    instr_guard_.reset();
    if (auto b = at_back.find(i); b != at_back.end()) {
      for (size_t k : b->second) close_loop(loops[k]);
    }
    if (g_.size() > kMaxNodes) {
      incomplete_ = true;
      return;
    }
  }
}

}  // namespace fixbits::verify
