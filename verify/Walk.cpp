// Walk.cpp — program-order walk, loop summaries, data guards and shared-memory matching.
//
//   $L: ld.global.f32 %r2, [%rd4]; add.rn.f32 %r5, %r5, %r2; add.s64 %rd4, %rd4, 4;
//       @%p bra $L;
// gives %r5 = fold(add.rn.f32(~h1.self, ld.global.f32[seed(%rd4) + 4*~n1]), key "inc: seed:0")
// and %rd4 an opaque loop-exit token: a literal pre-loop seed of %r5 is kept as its bits
// (§6.2 drops it; +0.0 and -0.0 differ), any other as a tree (a main loop's fold seeding its
// remainder loop, which continues it when its step and pointers do); a fold whose update
// reads another carried float value keys that value's update too (" rec:<hash>").
//
//   setp.lt.u32 %p2, %tid.x, %r9; @%p2 bra $L; add.rn.f32 %r4, %r2, %r3; $L: st [..], %r4
// gives %r4 = guard(setp.lt.uint(tid, param2), what %r4 held, add(..)): a thread below n
// skips the add (thread conditions, below; parameters count as fixed for the launch).
// Inside a loop, `setp.lt.s32 %p, %col, %n` on the induction is a guard key for the
// iteration (hole literals), and `%p ? ld [x + 4*col] : -0.0` a bounded load (padding).
#include "verify/Walk.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "verify/Hash.h"

namespace fixbits::verify {

namespace {

// Whether `ok` holds for every node reachable from p through kids (each visited once);
// false past 4096 nodes, so a huge predicate counts as not fixed rather than costing
// a walk of the graph. `ok` sees each node once, in no particular order.
template <typename Ok>
bool every_reachable(const Graph& g, NodeId p, Ok ok) {
  std::vector<NodeId> stack{p};
  absl::flat_hash_set<NodeId> seen;
  while (!stack.empty()) {
    const NodeId id = stack.back();
    stack.pop_back();
    if (!seen.insert(id).second) continue;
    if (seen.size() > 4096) return false;
    const Node& n = g.at(id);
    if (!ok(n)) return false;
    for (NodeId k : n.kids) stack.push_back(k);
  }
  return true;
}

}  // namespace

NodeId Walker::get(const std::string& reg) {
  auto it = regs_.find(reg);
  if (it != regs_.end()) {
    const NodeId v = cond_keys_.empty() ? it->second : peel(it->second);
    if (auto u = undef_under_.find(reg); u != undef_under_.end()) {
      // Written only under u's condition (no earlier write): a read whose own condition
      // does not contain every literal of it may be by a thread that never wrote it, so the
      // value is `cond ? v : undef` (split from v), not v.
      Cond now = thread_part(cond_);
      for (const CondLoop& cl : cond_loops_) now.insert(cl.base.begin(), cl.base.end());  // its threads only
      for (const auto& [h, lit] : u->second) {
        if (!now.contains(h)) return g_.guard(key_of(u->second), v, g_.constant("undef"), line_);
      }
    }
    return v;
  }
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
  if (!continuable_.empty() && g_.at(v).kind == Kind::kArith) v = peeled(v);
  if (auto p = current_guard()) {
    auto it = regs_.find(reg);
    NodeId old = it != regs_.end() ? it->second : g_.constant("undef");
    v = g_.guard(*p, v, old, line_);
  }
  if (const Cond tc = thread_part(cond_); !tc.empty()) {
    // Written only where cond_ holds: guard(cond, new, what the others keep). A second
    // write under the same condition replaces the first (its else side is the same).
    auto it = regs_.find(reg);
    // No earlier write: the guard is v (make_guard), and reads outside tc are checked (get);
    // a later write under another condition widens that to the "or" of both.
    if (it == regs_.end()) {
      undef_under_[reg] = tc;
    } else if (auto u = undef_under_.find(reg); u != undef_under_.end()) {
      Cond both = join(u->second, tc);
      if (both.empty()) {
        undef_under_.erase(u);
      } else {
        u->second = std::move(both);
      }
    }
    v = guarded(key_of(tc), v, it != regs_.end() ? it->second : g_.constant("undef"));
  } else if (!current_guard()) {
    undef_under_.erase(reg);
  }
  regs_[reg] = v;
}

// Thread conditions. The walk takes each statement once, in program order, so a register
// written in a block that only some threads reach, or by an instruction guarded by a
// predicate, would otherwise keep that write for every thread. For predicates that are
// fixed per thread for the launch (thread_fixed: coordinates, parameters and literals, no
// load and no loop hole; bounds such as `tid + 256*ctaid < n` and LLVM's versioning tests
// included), each block's condition
// is the "or" over its forward in-edges of (the source's condition and the edge's
// literal), built as the walk reaches the block (every forward predecessor lies above
// it); back edges add nothing (a loop's latch is reached through its header, and the
// predicates do not change), which the walk checks: a back edge from another condition
// than its header's ends the walk (text fallback); a loop whose header is conditional is
// walked as the loop of the threads that run it and its registers are guarded when it
// closes. A write under a non-empty condition is guard(cond, new, old); a read whose
// own condition implies the guard's (every literal present) takes the new side, one that
// contains a literal's negation the old side, exactly.

// A node a thread-fixed (holes = false) or iteration-fixed (holes = true: plain loop
// holes "~h..." allowed too) predicate may read: no data; integers over coordinates,
// parameters and their products (launch-uniform values), never a shared base or a data
// symbol; constants; %warpid and %lanemask*.
namespace {
bool one_value_node(const Node& n, bool holes) {
  if (n.data) return false;
  switch (n.kind) {
    case Kind::kConst: return true;
    case Kind::kInt:
      for (const auto& [sym, c] : n.aff.terms) {
        if (holes && sym.rfind("~h", 0) == 0 && sym.find('*') == std::string::npos) continue;
        const bool fixed = sym.rfind("tid.", 0) == 0 || sym.rfind("ctaid.", 0) == 0 ||
                           sym.rfind("laneid", 0) == 0 || sym.rfind("nctaid.", 0) == 0 ||
                           sym.rfind("ntid.", 0) == 0 || sym.rfind("cluster", 0) == 0 ||
                           sym.rfind("param", 0) == 0;
        if (!fixed || sym.find('~') != std::string::npos || sym.find("shared") != std::string::npos) return false;
      }
      return true;
    case Kind::kOpaque:
      return !n.kids.empty() || n.op == "%warpid" || n.op.rfind("%lanemask", 0) == 0;
    default: return false;
  }
}
}  // namespace

bool Walker::thread_fixed(NodeId p) const {
  return every_reachable(g_, p, [](const Node& n) {
    return !n.has_hole && !n.mentions_hole && one_value_node(n, /*holes=*/false);
  });
}

// Hole literals. A predicate that reads a loop hole and otherwise only what a thread-fixed
// one may read (the strip loop's `col + k < n`, LLVM's versioning of a loop body on its
// induction) has one value per thread for one iteration: the holes stand for the
// iteration's entry values and every value in the body is a function of them. Inside the
// loop it is a guard key like a thread-fixed literal, so the body's writes under it are
// guard(C, new, old) and the fold is over that guarded body; a branch that leaves the loop
// (its exit test, a break) or goes back to a header adds nothing (how many iterations run
// is not read: Known gaps, trip counts), and when the loop closes its literals leave every
// pending condition (drop_hole_literals).
bool Walker::iteration_fixed(NodeId p) const {
  if (!g_.at(p).mentions_hole) return false;
  return every_reachable(g_, p, [](const Node& n) { return one_value_node(n, /*holes=*/true); });
}

int Walker::literal_kind(uint64_t h, NodeId id) {
  auto it = thread_lit_.find(h);
  if (it == thread_lit_.end()) it = thread_lit_.emplace(h, thread_fixed(id) ? 1 : iteration_fixed(id) ? 2 : 0).first;
  return it->second;
}

Walker::Cond Walker::thread_part(const Cond& c) {
  Cond out;
  for (const auto& [h, id] : c) {
    if (literal_kind(h, id) == 0) continue;
    bool base = false;  // a literal of an enclosing conditional loop's header (run_loop_under)
    for (const CondLoop& cl : cond_loops_) base = base || cl.base.contains(h);
    if (!base) out[h] = id;
  }
  return out;
}

Walker::Cond Walker::launch_part(const Cond& c) {
  Cond out = thread_part(c);
  for (auto it = out.begin(); it != out.end();) {
    it = literal_kind(it->first, it->second) == 2 ? out.erase(it) : std::next(it);
  }
  return out;
}

void Walker::drop_hole_literals(int depth) {
  auto stale = [&](NodeId id) {
    if (!g_.at(id).mentions_hole) return false;
    std::vector<NodeId> stack{id};
    absl::flat_hash_set<NodeId> seen;
    while (!stack.empty()) {
      const NodeId x = stack.back();
      stack.pop_back();
      if (!seen.insert(x).second || !g_.at(x).mentions_hole) continue;
      if (seen.size() > 4096) return false;  // unsure: keep (a stale key only splits)
      const Node& n = g_.at(x);
      if (n.kind == Kind::kInt) {
        for (const auto& [sym, c] : n.aff.terms) {
          if (sym.rfind("~h", 0) == 0 && std::strtol(sym.c_str() + 2, nullptr, 10) >= depth) return true;
        }
      }
      for (NodeId k : n.kids) stack.push_back(k);
    }
    return false;
  };
  auto clean = [&](Cond& c) {
    for (auto it = c.begin(); it != c.end();) it = stale(it->second) ? c.erase(it) : std::next(it);
  };
  clean(block_cond_);
  clean(cond_);
  for (auto& [label, conds] : incoming_) {
    for (Cond& c : conds) clean(c);
  }
}

// The literals a predicate states where it holds (positive) or fails: conjuncts of and,
// negated disjuncts of or, through not.
void Walker::facts_of(NodeId p, bool positive, std::vector<std::pair<NodeId, bool>>* out, int depth) const {
  const Node& n = g_.at(p);
  if (depth > 16 || out->size() > 64) return;
  if (n.kind == Kind::kOpaque && n.op == "not" && n.kids.size() == 1) return facts_of(n.kids[0], !positive, out, depth + 1);
  if (n.kind == Kind::kOpaque && ((positive && (n.op == "and" || n.op.rfind("and.pred", 0) == 0)) ||
                                  (!positive && n.op.rfind("or.pred", 0) == 0))) {
    for (NodeId k : n.kids) facts_of(k, positive, out, depth + 1);
    return;
  }
  out->push_back({p, positive});
}

// Whether the facts decide q: 1 true, -1 false, 0 unknown. `a < n` follows from `b < n`
// when b - a is a constant >= 0, for signed orderings (setp.lt.sint, the form PtxWalk
// writes them in; unsigned: a = b - 1 may wrap below zero).
int Walker::decide(NodeId q, const std::vector<std::pair<NodeId, bool>>& facts) const {
  const Node& qn = g_.at(q);
  for (const auto& [f, pos] : facts) {
    const Node& fn = g_.at(f);
    if (fn.hash == qn.hash) return pos ? 1 : -1;
    if (pos && fn.kind == Kind::kOpaque && fn.op == qn.op && qn.op == "setp.lt.sint" && fn.kids.size() == 2 &&
        qn.kids.size() == 2 && g_.at(fn.kids[1]).hash == g_.at(qn.kids[1]).hash &&
        g_.at(fn.kids[0]).kind == Kind::kInt && g_.at(qn.kids[0]).kind == Kind::kInt) {
      const Affine d = sub(g_.at(fn.kids[0]).aff, g_.at(qn.kids[0]).aff);
      if (d.is_const() && d.c0 >= 0) return 1;
    }
    if (pos && fn.kind == Kind::kOpaque && fn.op == qn.op && qn.op == "setp.lt.sint" && fn.kids.size() == 2 &&
        qn.kids.size() == 2 && g_.at(fn.kids[1]).hash == g_.at(qn.kids[1]).hash &&
        g_.at(qn.kids[0]).kind == Kind::kInt) {
      // max(b_1, ..., b_k) < n (signed max, signed test: LLVM's versioning of a padded
      // strip tests the largest index) states every b_i < n, so a < n when some b_i - a
      // is a constant >= 0.
      std::vector<NodeId> todo{fn.kids[0]};
      for (size_t seen = 0; !todo.empty() && seen < 256; ++seen) {
        const Node& b = g_.at(todo.back());
        todo.pop_back();
        if (b.kind == Kind::kOpaque && (b.op == "max.s32" || b.op == "max.s64") && b.kids.size() == 2) {
          todo.insert(todo.end(), b.kids.begin(), b.kids.end());
        } else if (b.kind == Kind::kInt && fn.kids[0] != qn.kids[0]) {
          const Affine d = sub(b.aff, g_.at(qn.kids[0]).aff);
          if (d.is_const() && d.c0 >= 0) return 1;
        }
      }
    }
  }
  return 0;
}

// v where the facts hold: guards they decide take their side (through or-keys' literals).
NodeId Walker::assume(NodeId v, const std::vector<std::pair<NodeId, bool>>& facts, int depth) {
  if (facts.empty() || depth > 32) return v;
  const Node n = g_.at(v);
  if (auto b = bounded_.find(n.hash); b != bounded_.end()) {
    const Bounded bl = b->second;  // a copy: decide() does not grow the map, but be safe
    const int d = decide(bl.pred, facts);
    return d > 0 ? bl.load : d < 0 && bl.pad >= 0 ? bl.pad : v;
  }
  if (n.kind != Kind::kGuard || n.kids.size() != 3) return v;
  std::vector<std::pair<NodeId, bool>> lits;
  facts_of(n.kids[0], true, &lits, 0);
  bool all = !lits.empty();
  for (const auto& [l, pos] : lits) all = all && decide(l, facts) == (pos ? 1 : -1);
  if (all) return assume(n.kids[1], facts, depth + 1);
  if (lits.size() == 1 && decide(lits[0].first, facts) == (lits[0].second ? -1 : 1)) {
    return assume(n.kids[2], facts, depth + 1);
  }
  return v;
}

// Whether x and y are one value where every zero form in `eqs` is zero: equal trees whose
// integers (load addresses included) differ by an integer multiple of one such form (LLVM
// versions a loop body on `row_{j+1} == row_j + 1`, so its vector loads read the scalar
// arm's addresses there). Exact; false past the budget.
bool Walker::same_under(NodeId x, NodeId y, const std::vector<Affine>& eqs, int depth, size_t* budget) const {
  const Node &a = g_.at(x), &b = g_.at(y);
  if (a.hash == b.hash) return true;
  if (eqs.empty() || depth > 32 || *budget == 0) return false;
  --*budget;
  if (a.kind != b.kind || a.op != b.op || a.imm != b.imm || a.kids.size() != b.kids.size()) return false;
  if (a.kind == Kind::kInt) {
    const Affine diff = sub(a.aff, b.aff);
    for (const Affine& d : eqs) {
      if (d.terms.empty()) continue;
      const auto& [sym, c] = *d.terms.begin();
      auto it = diff.terms.find(sym);
      const int64_t dc = it == diff.terms.end() ? 0 : it->second;
      if (c == 0 || dc % c != 0) continue;
      if (sub(diff, scale(d, dc / c)) == Affine()) return true;
    }
    return false;
  }
  // Only ops whose value in this thread is a function of this thread's inputs: the facts
  // hold for this thread, not for the lanes an exchange, an MMA or a vote reads.
  if (a.kids.empty() || (a.kind != Kind::kArith && a.kind != Kind::kLoad && a.kind != Kind::kGuard &&
                         a.kind != Kind::kOpaque)) {
    return false;
  }
  if (a.kind == Kind::kOpaque) {
    for (const char* lanes : {"shfl", "vote", "match", "redux", "activemask", "ldmatrix", "mma", "wgmma", "bar", "atom",
                              "red", "elect", "%"}) {
      if (a.op.rfind(lanes, 0) == 0) return false;
    }
  }
  auto pairwise = [&](bool swap) {
    for (size_t i = 0; i < a.kids.size(); ++i) {
      size_t j = i;
      if (swap && i < 2) j = 1 - i;
      if (!same_under(a.kids[i], b.kids[j], eqs, depth + 1, budget)) return false;
    }
    return true;
  };
  return pairwise(false) || (a.commuting >= 2 && a.kids.size() >= 2 && pairwise(true));
}

// A predicate of parameters and literals only: one value for the whole launch.
bool Walker::launch_uniform(NodeId p) const {
  return every_reachable(g_, p, [](const Node& n) {
    if (n.data || n.has_hole || n.mentions_hole || n.dep != 0) return false;
    if (n.kind == Kind::kInt) {
      for (const auto& [sym, c] : n.aff.terms) {
        // Parameters, their products and launch-uniform values ("param.u<hash>"), the
        // launch extents; no coordinate factor.
        const bool uniform = sym.rfind("param", 0) == 0 || sym.rfind("ntid.", 0) == 0 || sym.rfind("nctaid.", 0) == 0;
        if (!uniform || sym.find("tid.") != std::string::npos || sym.find("ctaid.") != std::string::npos ||
            sym.find("lane") != std::string::npos || sym.find('~') != std::string::npos) {
          if (!(sym.rfind("ntid.", 0) == 0 || sym.rfind("nctaid.", 0) == 0) || sym.find('*') != std::string::npos) {
            return false;
          }
        }
      }
    } else if (n.kind == Kind::kOpaque) {
      if (n.kids.empty()) return false;
    } else if (n.kind != Kind::kConst) {
      return false;
    }
    return true;
  });
}

// The folds of a chain (f, the fold seeding it, ...; each seeding the next) started from
// `seed`, outermost first, or nullopt when f is no such chain.
std::optional<std::vector<NodeId>> Walker::seed_chain(NodeId f, NodeId seed) const {
  const Node& s = g_.at(seed);
  std::vector<NodeId> chain;
  for (int depth = 0; depth < 8; ++depth) {
    const Node& n = g_.at(f);
    if (n.kind != Kind::kFold || n.kids.empty()) return std::nullopt;
    chain.push_back(f);
    if (n.kids.size() > 1) {
      if (g_.at(n.kids[1]).hash == s.hash) return chain;
      f = n.kids[1];
      continue;
    }
    const bool literal = s.kind == Kind::kConst || (s.kind == Kind::kInt && s.aff.is_const());
    const std::string tail = absl::StrCat(" seed:", literal_bits(s));
    if (literal && n.op.size() >= tail.size() && n.op.compare(n.op.size() - tail.size(), tail.size(), tail) == 0) {
      return chain;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// guard(key, v, old) in one canonical form: a write under the condition an earlier write
// was made under replaces it (its else side is the same threads' value); a write under
// the negation of a one-literal condition keeps the earlier write's new side as the other
// side (if/else in either layout order); a negated literal is stored as its positive with
// the sides swapped; equal sides are one value. Exact case splits on the key.
NodeId Walker::guarded(NodeId key, NodeId v, NodeId old) {
  if (auto f = fold_by_cases(key, v, old)) return *f;
  // Copies: negate() and key_of() grow the arena (and cond_keys_), so no reference into
  // either is held across them.
  const Node o = g_.at(old);
  const Node kn = g_.at(key);
  if (o.kind == Kind::kGuard && o.kids.size() == 3) {
    const uint64_t q = g_.at(o.kids[0]).hash, k = kn.hash;
    std::vector<std::pair<uint64_t, uint64_t>> lits_c, lits_k;  // (literal, negation)
    if (auto it = cond_keys_.find(k); it != cond_keys_.end()) lits_c = it->second;
    if (auto it = cond_keys_.find(q); it != cond_keys_.end()) lits_k = it->second;
    if (q == k) {
      old = o.kids[2];
    } else if (g_.at(negate(key)).hash == q || g_.at(negate(o.kids[0])).hash == k) {
      old = o.kids[1];  // the threads outside key are those inside o's key
    } else if (o.op.empty() && lits_c.size() > 1 && kn.kind == Kind::kOpaque && kn.op == "and" &&
               std::any_of(lits_c.begin(), lits_c.end(), [&](const auto& lit) { return lit.second == q; })) {
      // A write under C = not(K) and R after one under the literal K: K's threads keep
      // what they held, guard(K, a, guard(R, v, e)).
      Cond rest;
      for (NodeId l : kn.kids) {
        if (g_.at(negate(l)).hash != q) rest[g_.at(l).hash] = l;
      }
      if (rest.size() + 1 == lits_c.size()) {
        const NodeId inner = guarded(key_of(rest), v, o.kids[2]);
        return make_guard(o.kids[0], o.kids[1], inner);
      }
    } else if (o.op.empty() && !lits_k.empty() && lits_k.size() < lits_c.size() && kn.kind == Kind::kOpaque &&
               kn.op == "and") {
      // A write under C = K and R after one under K (a load under a bounds test inside a
      // block that K guards): guard(K, guard(R, v, what K's threads held), what the others
      // held), so a read under K sees guard(R, ...) as an unconditional block would.
      bool nested = true;
      for (const auto& lit : lits_k) nested = nested && std::find(lits_c.begin(), lits_c.end(), lit) != lits_c.end();
      Cond rest;
      if (nested) {
        for (NodeId l : kn.kids) {
          bool in_k = false;
          for (const auto& lit : lits_k) in_k = in_k || lit.first == g_.at(l).hash;
          if (!in_k) rest[g_.at(l).hash] = l;
        }
      }
      if (nested && !rest.empty() && rest.size() + lits_k.size() == lits_c.size()) {
        const NodeId inner = guarded(key_of(rest), v, o.kids[1]);
        return make_guard(o.kids[0], inner, o.kids[2]);
      }
    }
  }
  return make_guard(key, v, old);
}

// key ? v : old, after guarded's case split on what old was: equal sides, no earlier
// write, versioning, trip-count facts, orientation, launch-uniform integers.
NodeId Walker::make_guard(NodeId key, NodeId v, NodeId old) {
  const Node kn = g_.at(key);
  if (g_.at(v).hash == g_.at(old).hash) return v;
  // No earlier write: the threads outside key never read this register (the producer's
  // SSA form defines a register on every path that reads it), so the value is v.
  if (const Node& on = g_.at(old); on.kind == Kind::kConst && on.op == "undef") return v;
  {
    // LLVM's versioning: `V ? vector form : scalar form` where the scalar form, read under
    // V's facts (every conjunct of V, and the bounds they imply), is the vector form, is
    // the scalar form (`V = idx + 31 < n && aligned` makes each `idx + k < n` of the
    // scalar loads true). Exact: both sides agree where V holds.
    std::vector<std::pair<NodeId, bool>> holds, fails;
    facts_of(key, true, &holds, 0);
    std::vector<Affine> eqs;  // V's equalities: the vector arm's addresses are the scalar ones
    equalities(key, true, &eqs, 0);
    size_t budget = 4096;
    if (same_under(assume(old, holds, 0), v, eqs, 0, &budget)) return old;  // old is v where key holds
    facts_of(key, false, &fails, 0);
    std::vector<Affine> neqs;  // the equalities where key fails (an `or` of `setp.ne` tests)
    equalities(key, false, &neqs, 0);
    budget = 4096;
    if (same_under(assume(v, fails, 0), old, neqs, 0, &budget)) return v;  // v is old where key fails
  }
  if (launch_uniform(key)) {
    // Trip-count facts (`K < 1` around a loop, `K > 3` choosing the unrolled loop, `K & 3`
    // before a remainder): a launch-uniform key choosing between a fold and that fold's
    // seed (the loop run or not) is the fold with the steps it runs at each size, where
    // that reads as a trip (TripCount.cpp, zero_trip); else the guard stays.
    if (auto f = zero_trip(key, v, old)) return *f;
  }
  if (kn.mentions_hole) {
    const bool neg = kn.kind == Kind::kOpaque && kn.op == "not" && kn.kids.size() == 1;
    if (auto b = neg ? bounded_load(kn.kids[0], old, v) : bounded_load(key, v, old)) return *b;
    if (kn.kind == Kind::kOpaque && kn.op == "and" && kn.kids.size() >= 2) {
      // (K ∧ R) ? v : old = K ? (R ? v : old) : old, exactly: a bound R among the literals
      // (a padded load inside a versioned body's scalar arm) makes the inner guard a
      // bounded load, and the rest of the key guards that.
      for (NodeId l : kn.kids) {
        if (auto b = bounded_load(l, v, old)) {
          Cond rest;
          for (NodeId o : kn.kids) {
            if (o != l) rest[g_.at(o).hash] = o;
          }
          return guarded(key_of(rest), *b, old);
        }
      }
    }
  }
  NodeId out;
  if (kn.kind == Kind::kOpaque && kn.op == "not" && kn.kids.size() == 1) {
    const NodeId p = kn.kids[0];
    out = g_.guard(key_of(Cond{{g_.at(p).hash, p}}), old, v, line_);
  } else {
    out = g_.guard(key, v, old, line_);
  }
  // An integer chosen between launch-uniform integers by a launch-uniform key (a loop
  // bound that is `K & -4` on one path and 0 on another) is itself one value per launch:
  // the launch-uniform symbol of its expression, as for any other integer op over
  // parameters (PtxWalk.cpp), so pointers built from it stay affine. Exact.
  auto uniform_int = [&](NodeId x) { return g_.at(x).kind == Kind::kInt && launch_uniform(x); };
  if (g_.at(v).kind == Kind::kInt && uniform_int(v) && uniform_int(old) && launch_uniform(key)) {
    std::string name = absl::StrCat("param.u", hex64(g_.at(out).hash));
    if (choices_.size() < 4096) choices_.try_emplace(name, out);
    return g_.integer(Affine::symbol(name));
  }
  return out;
}

// Bounded loads (padding inside loops). `a < N ? T : c` where `a` reads a loop hole, c is
// a literal and T is computed from the row's element `a` alone — a global load at
// X = B + s * a (s the element's bytes, B and N reading no hole and B no thread bit: the
// bound is the load's own index in a row that starts at B), or a widening, product, sum or
// difference of such loads — is T over *bounded loads*: load nodes whose op names the
// comparison, B, N and the padding, at address X. A bounded load is a leaf like the plain
// one, so the balanced-tree, strip-pass, unrolled-chain and root rules read it as they read
// the plain load, and two loops that pad the same row under the same bound agree wherever
// their strips and unrolling put each element; another bound, row start or comparison is
// another op (split). The padding is exact bits, so +0.0 and -0.0 are two classes: a load's
// own literal `a < N ? ld : c` is its bits; a widening of a load padded with c is the
// widened load padded with the narrow c (exact: -inf and ±0 narrow exactly); a sum padded
// with ±0 is the sum of loads padded with that zero (+0 + +0 = +0, -0 + -0 = -0), a
// difference the difference of loads padded with it and its negation, a product padded with
// +0 the product of +0-padded loads and padded with -0 the product of a -0-padded first
// operand and a +0-padded second (exact in every rounding mode; a product written the other
// way round splits). One merge reads the sign of a zero up to equality, the square rule:
// `a < N ? x·x : ±0` (x the element or its widening) is `(a < N ? x : +0)²`, whose padding
// is +0, and so is `(a < N ? x : -0)²` (exact: (-0)² = +0, `Walker::square`). For the -0.0
// padding of a square that is exact wherever the padded square reaches the result only
// through sums and max with at least one in-bounds square (RMSNorm: every term is >= +0, so
// a zero's sign never reaches the sum of a row with one element), which the rule does not
// check (docs/verify.md, Known gaps). `assume` and `add_root` read a bounded load back as
// the plain load (or its padding) where the facts decide the bound (LLVM's vector arm next
// to the padded scalar arm; a store under the same bound).
namespace {

// The float width of an arith op's type suffix (`add.rn.f32` -> 32), 0 if none.
int float_width(const std::string& op) {
  const size_t dot = op.rfind('.');
  if (dot == std::string::npos) return 0;
  const std::string t = op.substr(dot + 1);
  return t == "f16" ? 16 : t == "f32" ? 32 : t == "f64" ? 64 : 0;
}

// +1 for the bits of +0.0, -1 for those of -0.0 at `width` bits, 0 for any other class.
int zero_sign(const std::string& cls, int width) {
  if (cls == "0") return 1;
  if (width == 16 && cls == "8000") return -1;
  if (width == 32 && cls == "80000000") return -1;
  if (width == 64 && cls == "8000000000000000") return -1;
  return 0;
}

std::string zero_class(int sign, int width) {
  if (sign > 0) return "0";
  return width == 16 ? "8000" : width == 32 ? "80000000" : "8000000000000000";
}

// The class of c narrowed by the inverse of a widening `cvt.f32.<from>`: the narrow bits
// whose widening is c, for the values that narrow exactly here (±0, ±inf).
std::optional<std::string> narrow_class(const std::string& cls, const std::string& cvt) {
  const bool f16 = cvt == "cvt.f32.f16", bf16 = cvt == "cvt.f32.bf16";
  if (!f16 && !bf16) return std::nullopt;
  if (cls == "0") return cls;
  if (cls == "80000000") return std::string("8000");
  if (cls == "ff800000") return std::string(f16 ? "fc00" : "ff80");
  if (cls == "7f800000") return std::string(f16 ? "7c00" : "7f80");
  return std::nullopt;
}

}  // namespace

std::optional<NodeId> Walker::bounded_load(NodeId pred, NodeId v, NodeId other) {
  const Node p = g_.at(pred), c = g_.at(other);
  if (p.kind != Kind::kOpaque || p.op.rfind("setp.lt.", 0) != 0 || p.kids.size() != 2) return std::nullopt;
  const bool literal = c.kind == Kind::kConst || (c.kind == Kind::kInt && c.aff.is_const());
  if (!literal || !g_.at(v).data) return std::nullopt;
  const Node &a = g_.at(p.kids[0]), &nb = g_.at(p.kids[1]);
  if (a.kind != Kind::kInt || nb.mentions_hole || !a.has_hole) return std::nullopt;
  const Affine index = a.aff;
  const std::string bound = absl::StrCat(p.op, " ", hex64(nb.hash));
  size_t budget = 64;
  bool squared_minus_zero = false;  // the square rule read a -0.0 padding as +0.0
  // The bounded load of the plain load x padded with `cls`, or nullopt.
  auto leaf = [&](const Node& x, NodeId t, const std::string& cls) -> std::optional<NodeId> {
    // The element's bytes from the load's type (the digits after its last type letter).
    const size_t tl = x.op.find_last_of("fbsu");
    const int64_t bits = tl == std::string::npos ? 0 : std::strtoll(x.op.c_str() + tl + 1, nullptr, 10);
    if (bits < 8 || bits % 8 != 0) return std::nullopt;
    const Affine base = sub(g_.at(x.kids[0]).aff, scale(index, bits / 8));
    for (const auto& [sym, k] : base.terms) {
      if (sym.find('~') != std::string::npos || sym.rfind("tid.", 0) == 0 || sym.rfind("laneid", 0) == 0 ||
          sym.find("*tid.") != std::string::npos || sym.find("%warpid") != std::string::npos) {
        return std::nullopt;
      }
    }
    auto make = [&](const std::string& k) {
      const std::string what = absl::StrCat(bound, " ", base.text(), " pad:", k);
      return g_.load(absl::StrCat("global.bnd.", hex64(hash_text(what)), x.op.substr(6)), x.kids[0], line_);
    };
    const NodeId id = make(cls);
    // A load padded with -0.0 knows its +0.0 twin: the square rule (Walker::square) reads
    // a product of it with itself as the product of the twin with itself, (-0)² = (+0)².
    NodeId twin = -1;
    if (zero_sign(cls, static_cast<int>(bits)) < 0) {
      twin = make("0");
      bounded_.emplace(g_.at(twin).hash, Bounded{pred, t, -1, -1});
    }
    bounded_.emplace(g_.at(id).hash, Bounded{pred, t, -1, twin});
    return id;
  };
  // T over bounded loads padded with `cls`, or nullopt when T is not of the row's element.
  std::function<std::optional<NodeId>(NodeId, const std::string&)> element =
      [&](NodeId t, const std::string& cls) -> std::optional<NodeId> {
    if (budget == 0) return std::nullopt;
    --budget;
    const Node x = g_.at(t);  // a copy: building nodes grows the arena
    if (x.kind == Kind::kLoad) {
      if (x.op.rfind("global.", 0) != 0 || x.kids.size() != 1 || g_.at(x.kids[0]).kind != Kind::kInt) {
        return std::nullopt;
      }
      if (x.op.rfind("global.bnd.", 0) == 0) {
        // Padded again under its own bound (a padded strip's element padded once more where
        // it is combined): the plain load padded with the new class, exactly. Under another
        // bound: keep the guard.
        const auto b = bounded_.find(x.hash);
        if (b == bounded_.end() || g_.at(b->second.pred).hash != p.hash) return std::nullopt;
        const NodeId plain = b->second.load;
        const Node pl = g_.at(plain);
        if (pl.kind != Kind::kLoad || pl.op.rfind("global.bnd.", 0) == 0) return std::nullopt;
        return leaf(pl, plain, cls);
      }
      return leaf(x, t, cls);
    }
    if (x.kind != Kind::kArith) return std::nullopt;
    if (x.kids.size() == 1 && (x.op == "cvt.f32.f16" || x.op == "cvt.f32.bf16")) {
      const std::optional<std::string> narrow = narrow_class(cls, x.op);
      if (!narrow) return std::nullopt;
      const std::optional<NodeId> k = element(x.kids[0], *narrow);
      if (!k) return std::nullopt;
      return g_.arith(x.op, {*k}, x.line);
    }
    const bool add = x.op.rfind("add.", 0) == 0, sub = x.op.rfind("sub.", 0) == 0, mul = x.op.rfind("mul.", 0) == 0;
    const int width = float_width(x.op);
    const int sign = width == 0 ? 0 : zero_sign(cls, width);
    if (sign == 0 || !(add || sub || mul) || x.kids.size() != 2 || x.op.find(".rm") != std::string::npos) {
      return std::nullopt;
    }
    std::string first = cls, second = cls;  // add: c + c = c
    if (sub) second = zero_class(-sign, width);  // c - (-c) = c
    if (mul) {
      first = cls;  // (+0)(+0) = +0, (-0)(+0) = -0
      second = zero_class(1, width);
      if (g_.at(x.kids[0]).hash == g_.at(x.kids[1]).hash) {
        // The square rule: x·x padded with ±0 is (x padded with +0)², whose padding is +0.
        squared_minus_zero = squared_minus_zero || sign < 0;
        first = second;
      }
    }
    const std::optional<NodeId> e0 = element(x.kids[0], first);
    if (!e0) return std::nullopt;
    const std::optional<NodeId> e1 = first == second && x.kids[0] == x.kids[1] ? e0 : element(x.kids[1], second);
    if (!e1) return std::nullopt;
    return g_.arith(x.op, {*e0, *e1}, x.line);
  };
  const std::string cls = literal_bits(c);
  const std::optional<NodeId> out = element(v, cls);
  // Where the bound fails the value is c, except where the square rule read a -0.0 as +0.0
  // (that side is then not read back: kept as the bounded load).
  if (out) bounded_.emplace(g_.at(*out).hash, Bounded{pred, v, squared_minus_zero ? -1 : other, -1});
  return out;
}

// `p ? v : -0.0` in a loop (a padded strip's element padded again where it is summed, RMSNorm's
// `col + k < n ? x·x : -0.0`): when p is a row bound and v what the bounded-load rule reads
// (the row's element, its widening, sum or product, or a bounded load padded again under its
// own bound), the bounded form; else nullopt (the pad rule, Graph::pad).
std::optional<NodeId> Walker::padded_element(NodeId p, NodeId v, NodeId neg_zero) {
  const Node& pn = g_.at(p);
  if (!pn.mentions_hole || pn.kind != Kind::kOpaque || pn.op.rfind("setp.lt.", 0) != 0) return std::nullopt;
  return bounded_load(p, v, neg_zero);
}

// The square rule's other half (Walker::bounded_load): a product of a bounded load padded
// with -0.0 (or its widening) with itself is the product of its +0.0 twin (or the twin's
// widening) with itself, exactly: (-0)² = (+0)², so `(a < N ? x : -0)²` and
// `(a < N ? x : +0)²` are one value. Anything else: the product as it is.
NodeId Walker::square(const std::string& op, const std::vector<NodeId>& kids) {
  if (bounded_.empty() || op.rfind("mul.", 0) != 0 || kids.size() != 2 || float_width(op) == 0) return -1;
  const Node& x = g_.at(kids[0]);
  if (x.hash != g_.at(kids[1]).hash) return -1;
  const bool widened = x.kind == Kind::kArith && x.kids.size() == 1 && (x.op == "cvt.f32.f16" || x.op == "cvt.f32.bf16");
  const NodeId l = widened ? x.kids[0] : kids[0];
  auto b = bounded_.find(g_.at(l).hash);
  if (b == bounded_.end() || b->second.twin < 0) return -1;
  const std::string cvt = widened ? x.op : "";
  const NodeId twin = b->second.twin;
  const NodeId t = widened ? g_.arith(cvt, {twin}, line_) : twin;
  return g_.arith(op, {t, t}, line_);
}

// Equalities of affine integers a launch literal states (setp.eq, not setp.ne, through
// and.pred), each as a form that is zero where the literal holds.
void Walker::equalities(NodeId lit, bool positive, std::vector<Affine>* out, int depth) const {
  const Node& n = g_.at(lit);
  if (depth > 16 || out->size() > 64 || n.kind != Kind::kOpaque) return;
  if (n.op == "not" && n.kids.size() == 1) return equalities(n.kids[0], !positive, out, depth + 1);
  if (positive && n.op.rfind("and.pred", 0) == 0) {
    for (NodeId k : n.kids) equalities(k, true, out, depth + 1);
    return;
  }
  if (!positive && n.op.rfind("or.pred", 0) == 0) {
    for (NodeId k : n.kids) equalities(k, false, out, depth + 1);
    return;
  }
  const bool eq = n.op.rfind("setp.eq.", 0) == 0, ne = n.op.rfind("setp.ne.", 0) == 0;
  if ((positive ? eq : ne) && n.kids.size() == 2 && g_.at(n.kids[0]).kind == Kind::kInt &&
      g_.at(n.kids[1]).kind == Kind::kInt) {
    Affine d = sub(g_.at(n.kids[0]).aff, g_.at(n.kids[1]).aff);
    if (!d.is_const()) out->push_back(std::move(d));
  }
}

NodeId Walker::negate(NodeId p) {
  const Node& n = g_.at(p);
  if (n.kind == Kind::kOpaque && n.op == "not" && n.kids.size() == 1) return n.kids[0];
  return g_.opaque("not", {p}, line_);
}

std::optional<Walker::Cond> Walker::join_exact(const Cond& a, const Cond& b) {
  Cond common, ra, rb;
  for (const auto& [h, id] : a) (b.contains(h) ? common : ra)[h] = id;
  for (const auto& [h, id] : b) {
    if (!a.contains(h)) rb[h] = id;
  }
  if (ra.empty() || rb.empty()) return common;
  if (ra.size() == 1 && rb.size() == 1 && g_.at(negate(ra.begin()->second)).hash == rb.begin()->first) {
    return common;
  }
  return std::nullopt;
}

Walker::Cond Walker::join(const Cond& a, const Cond& b) {
  Cond common, ra, rb;
  for (const auto& [h, id] : a) (b.contains(h) ? common : ra)[h] = id;
  for (const auto& [h, id] : b) {
    if (!a.contains(h)) rb[h] = id;
  }
  if (ra.empty() || rb.empty()) return common;  // c or (c and x) = c
  if (ra.size() == 1 && rb.size() == 1 && g_.at(negate(ra.begin()->second)).hash == rb.begin()->first) {
    return common;  // (c and l) or (c and not l) = c
  }
  NodeId x = key_of(ra), y = key_of(rb);
  if (g_.at(y).hash < g_.at(x).hash) std::swap(x, y);
  const NodeId o = g_.opaque("or", {x, y}, line_);
  common[g_.at(o).hash] = o;
  return common;
}

NodeId Walker::key_of(const Cond& c) {
  std::vector<NodeId> lits;
  for (const auto& [h, id] : c) lits.push_back(id);
  const NodeId key = lits.size() == 1 ? lits[0] : g_.opaque("and", lits, line_);
  auto& entry = cond_keys_[g_.at(key).hash];
  if (entry.empty()) {
    for (NodeId l : lits) entry.push_back({g_.at(l).hash, g_.at(negate(l)).hash});
  }
  return key;
}

NodeId Walker::thread_condition_key(NodeId p) { return key_of(Cond{{g_.at(p).hash, p}}); }

NodeId Walker::peel(NodeId v) {
  for (int guard = 0; guard < 64; ++guard) {
    const Node& n = g_.at(v);
    if (n.kind != Kind::kGuard || n.kids.size() != 3) return v;
    auto it = cond_keys_.find(g_.at(n.kids[0]).hash);
    if (it == cond_keys_.end()) return v;
    bool all = true, none = false;
    size_t known = 0;
    for (const auto& [lit, neg] : it->second) {
      all = all && cond_.contains(lit);
      none = none || cond_.contains(neg);
      known += cond_.contains(lit) ? 1 : 0;
    }
    if (all) {
      v = n.kids[1];
    } else if (none) {
      v = n.kids[2];
    } else if (known > 0 && n.op.empty()) {
      // Some literals hold where the read is: for these threads the key is the rest.
      const Node& kn = g_.at(n.kids[0]);
      if (kn.kind != Kind::kOpaque || kn.op != "and") return v;
      Cond rest;
      for (NodeId l : kn.kids) {
        if (!cond_.contains(g_.at(l).hash)) rest[g_.at(l).hash] = l;
      }
      const NodeId x = n.kids[1], y = n.kids[2];
      return guarded(key_of(rest), x, y);
    } else {
      return v;
    }
  }
  return v;
}

void Walker::smem_store(NodeId addr, NodeId value) {
  stored_shared_ = true;
  if (smem_.size() > 1u << 16) smem_.erase(smem_.begin());  // bounded history
  // Not guarded by a thread condition: a slot every thread names (thread 0's broadcast) is
  // read by threads that did not write it (docs/verify.md, Known gaps).
  smem_.push_back({addr, value, epoch_, value});
}

// Whether a shared-memory data leaf (a read smem_load matched to no store) is in some
// root's tree; true past the visit budget (unsure counts as reached).
bool Walker::shared_leaf_reaches_root() const {
  absl::flat_hash_set<NodeId> seen;
  std::vector<NodeId> todo;
  for (const Root& r : roots_) todo.push_back(r.node);
  while (!todo.empty()) {
    const NodeId id = todo.back();
    todo.pop_back();
    if (!seen.insert(id).second) continue;
    if (seen.size() > kMaxNodes) return true;
    const Node& n = g_.at(id);
    if (n.kind == Kind::kLoad && n.op.rfind("shared.", 0) == 0) return true;
    todo.insert(todo.end(), n.kids.begin(), n.kids.end());
  }
  return false;
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
  if (best != nullptr) return g_.relocate(best->raw, line, writer_shift(best->addr, addr, best->raw), addr);
  unmatched_shared_load_ = true;
  return g_.load(absl::StrCat("shared.", type), addr, line);
}

bool Walker::smem_has_base(const Affine& base) const {
  for (const Store& st : smem_) {
    const Node& sa = g_.at(st.addr);
    if (sa.kind == Kind::kInt && sa.aff.keep_prefix({"shared", "param"}) == base) return true;
  }
  return false;
}

// The store wrote base + sum a_i * bit_i + c_s (bit_i thread-index bits); the load reads
// base + c_l. When the a_i are positive and each exceeds the sum of the smaller ones, one
// assignment of the bits gives c_l, so the writer is known: its leaves lie
// sum rep_i * bit_i bytes after the symbolic thread's, rep_i the bit's coefficient in the
// stored tree's representative leaf address. Unknown otherwise (nullopt).
std::optional<int64_t> Walker::writer_shift(NodeId store_addr, NodeId load_addr, NodeId value) const {
  const Node &s = g_.at(store_addr), &l = g_.at(load_addr);
  if (s.kind != Kind::kInt || l.kind != Kind::kInt) return std::nullopt;
  const Affine base = l.aff.keep_prefix({"shared", "param"});
  if (!(sub(l.aff, base).is_const())) return std::nullopt;
  const Affine var = sub(s.aff, s.aff.keep_prefix({"shared", "param"}));
  const Balance& vb = g_.at(value).bal;
  if (!vb.rep) return std::nullopt;
  std::vector<std::pair<int64_t, std::string>> bits;
  for (const auto& [sym, c] : var.terms) {
    if (sym.rfind("tid.", 0) != 0 || sym.find(".b") == std::string::npos || sym.find('*') != std::string::npos ||
        c <= 0) {
      return std::nullopt;  // a product "tid.x.b2*param8" is not one bit
    }
    bits.push_back({c, sym});
  }
  std::sort(bits.begin(), bits.end());
  int64_t below = 0;
  for (const auto& [c, sym] : bits) {
    if (c <= below) return std::nullopt;  // not superincreasing: the writer may not be unique
    below = wrap_add(below, c);
  }
  int64_t rest = wrap_add(l.aff.c0, -var.c0);
  int64_t shift = 0;
  for (auto it = bits.rbegin(); it != bits.rend(); ++it) {
    if (rest >= it->first) {
      rest -= it->first;
      auto r = vb.rep->terms.find(it->second);
      if (r == vb.rep->terms.end()) return std::nullopt;
      shift = wrap_add(shift, r->second);
    }
  }
  if (rest != 0) return std::nullopt;
  return shift;
}

void Walker::local_store(NodeId addr, NodeId value) {
  if (local_.size() > 1u << 16) local_.erase(local_.begin());
  if (const Cond tc = thread_part(cond_); !tc.empty()) {
    // Thread-private: the threads outside the condition keep what the slot held.
    const NodeId before = local_load(addr, "before", line_);
    value = g_.guard(key_of(tc), value, before, line_);
  }
  local_.push_back({addr, value, epoch_, value});
}

NodeId Walker::local_load(NodeId addr, const std::string& type, int line) {
  size_t seen = 0;
  for (auto it = local_.rbegin(); it != local_.rend() && seen < kMaxMemoryHistory; ++it, ++seen) {
    if (g_.at(it->addr).hash == g_.at(addr).hash) return peel(it->value);
  }
  return g_.load(absl::StrCat("local.", type), addr, line);
}

// v with every bounded load whose bound the facts decide replaced by the plain load (or
// its padding constant); folds are kept whole. nullopt-free: past the budget, v as it is.
NodeId Walker::assume_tree(NodeId v, const std::vector<std::pair<NodeId, bool>>& facts,
                           absl::flat_hash_map<NodeId, NodeId>* memo, size_t* budget) {
  if (auto it = memo->find(v); it != memo->end()) return it->second;
  const Node& n = g_.at(v);
  if (!n.data || n.kind == Kind::kFold || *budget == 0) return v;
  --*budget;
  NodeId out = v;
  if (auto b = bounded_.find(n.hash); b != bounded_.end()) {
    const Bounded bl = b->second;
    const int d = decide(bl.pred, facts);
    out = d > 0 ? bl.load : d < 0 && bl.pad >= 0 ? bl.pad : v;
  } else {
    const std::vector<NodeId> kids = n.kids;  // a copy: rebuilding grows the arena
    for (NodeId k : kids) {
      const NodeId nk = assume_tree(k, facts, memo, budget);
      if (nk != k) out = g_.with_kid(out, k, nk);
    }
  }
  (*memo)[v] = out;
  return out;
}

void Walker::add_root(const std::string& op, NodeId value, NodeId address, int line) {
  if (!bounded_.empty() && !cond_.empty()) {
    // A store under `a < n` writes only where the bound holds: there a bounded load with
    // that bound (or one the condition implies) is the plain load, exactly (a padded strip
    // loop's elementwise pass stores under the same bounds it padded its loads with).
    std::vector<std::pair<NodeId, bool>> facts;
    for (const auto& [h, lit] : cond_) facts_of(lit, true, &facts, 0);
    absl::flat_hash_map<NodeId, NodeId> memo;
    size_t budget = kMaxRename;
    value = assume_tree(value, facts, &memo, &budget);
  }
  if (auto p = current_guard()) value = g_.guard(*p, value, g_.constant("no-store"), line);
  if (roots_.size() >= (1u << 20)) return;  // bounded; a kernel never stores this often
  std::vector<Affine> facts;
  for (const auto& [h, lit] : cond_) equalities(lit, true, &facts, 0);
  roots_.push_back({g_.root(op, value, address, line), line});
  root_facts_.push_back(std::move(facts));
}

// A store in a block that a launch equality guards (LLVM's vector path: `ldc == 1` and the
// scalar addresses equal to the vector ones), whose value and address equal, where that
// equality holds, another root's (address difference k * d, d the equality's zero form),
// writes what that root writes: it is dropped, so the guarded copy does not keep its own
// (coordinate-bearing) hash. A root is kept when its twin was dropped itself.
void Walker::drop_guarded_twins() {
  std::vector<bool> drop(roots_.size(), false);
  absl::flat_hash_map<uint64_t, std::vector<size_t>> by_value;  // value hash -> roots
  for (size_t r = 0; r < roots_.size(); ++r) {
    const Node& x = g_.at(roots_[r].node);
    if (x.kids.size() == 2) by_value[g_.at(x.kids[0]).hash].push_back(r);
  }
  for (size_t r = 0; r < roots_.size(); ++r) {
    if (root_facts_[r].empty()) continue;
    const Node& x = g_.at(roots_[r].node);
    if (x.kids.size() != 2 || g_.at(x.kids[1]).kind != Kind::kInt) continue;
    const uint64_t vh = g_.at(x.kids[0]).hash;
    const Affine& ax = g_.at(x.kids[1]).aff;
    for (size_t t : by_value[vh]) {
      if (drop[r]) break;
      if (t == r || drop[t]) continue;
      const Node& y = g_.at(roots_[t].node);
      if (y.op != x.op || y.kids.size() != 2 || g_.at(y.kids[0]).hash != vh ||
          g_.at(y.kids[1]).kind != Kind::kInt) {
        continue;
      }
      const Affine diff = sub(ax, g_.at(y.kids[1]).aff);
      for (const Affine& d : root_facts_[r]) {
        // diff == k * d for one integer k: read k off d's first term.
        const auto& [sym, c] = *d.terms.begin();
        auto it = diff.terms.find(sym);
        const int64_t dc = it == diff.terms.end() ? 0 : it->second;
        if (c == 0 || dc % c != 0) continue;
        if (sub(diff, scale(d, dc / c)) == Affine()) {
          drop[r] = true;
          break;
        }
      }
    }
  }
  std::vector<Root> kept;
  for (size_t r = 0; r < roots_.size(); ++r) {
    if (!drop[r]) kept.push_back(roots_[r]);
  }
  roots_ = std::move(kept);
}

void Walker::open_loop(const Loop& l) {
  for (size_t k = 0; k < l.carried.size(); ++k) {
    auto it = regs_.find(l.carried[k]);
    // Read as the threads that run the loop see it (a conditional loop's header peels).
    if (it != regs_.end()) seeds_[absl::StrCat(l.header, ":", l.carried[k])] = peel(it->second);
    regs_[l.carried[k]] = g_.integer(Affine::symbol(absl::StrCat("~h", l.depth, ".", k)));
    hole_reg_[l.carried[k]] = absl::StrCat("~h", l.depth, ".", k);
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

// A pinned pass wider than its strip: body = ((self ⊕ T_0) ⊕ T_1) ... ⊕ T_{m-1}, m >= 2,
// where every T_j is one balanced ⊕ tree of the same shape (height, leaf, nearest stride)
// over a contiguous strip of E = 2^height * nearest elements, and T_j starts E elements
// after T_{j-1} (origins read from the leaf addresses). Such a loop chains the same strips
// in the same order as the loop whose body is self ⊕ T_0 and whose inductions advance m
// times less, so it is that fold: returns the smaller body and sets *m.
std::optional<NodeId> unrolled_strips(Graph& g, NodeId body, int* m) {
  std::vector<NodeId> trees;  // outermost first
  NodeId n = body;
  std::string op;
  for (int guard = 0; guard < 4096; ++guard) {
    const Node& x = g.at(n);
    if (x.kind == Kind::kInt) break;
    if (x.kind != Kind::kArith || x.kids.size() != 2 || !is_combine(x.op)) return std::nullopt;
    if (!op.empty() && x.op != op) return std::nullopt;
    op = x.op;
    auto tree = [&](NodeId k) { return g.at(k).bal.valid && !g.at(k).bal.is_leaf && g.at(k).bal.op == op; };
    const bool t0 = tree(x.kids[0]), t1 = tree(x.kids[1]);
    if (t0 == t1) return std::nullopt;
    trees.push_back(t0 ? x.kids[0] : x.kids[1]);
    n = t0 ? x.kids[1] : x.kids[0];
  }
  const Node& self = g.at(n);
  if (self.kind != Kind::kInt || self.aff.terms.size() != 1 || self.aff.c0 != 0 ||
      self.aff.terms.begin()->second != 1 || self.aff.terms.begin()->first.find(".self") == std::string::npos ||
      trees.size() < 2) {
    return std::nullopt;
  }
  const Balance& b0 = g.at(trees.back()).bal;  // the strip chained first
  if (!b0.origin || !b0.nearest || b0.elem_bytes <= 0 || b0.height > 30) return std::nullopt;
  const int64_t extent = (int64_t{1} << b0.height) * *b0.nearest * b0.elem_bytes;  // bytes
  for (size_t j = 0; j < trees.size(); ++j) {
    const Balance& b = g.at(trees[trees.size() - 1 - j]).bal;  // j-th strip chained
    if (b.height != b0.height || b.leaf != b0.leaf || b.nearest != b0.nearest || b.elem_bytes != b0.elem_bytes ||
        !b.origin || *b.origin != *b0.origin + static_cast<int64_t>(j) * extent) {
      return std::nullopt;
    }
  }
  *m = static_cast<int>(trees.size());
  return g.arith(op, {n, trees.back()}, g.at(trees.back()).line);
}

// The hole symbols ("~h<depth>.<k>", any depth) that `id` reads; nullopt past `budget` nodes.
std::optional<std::set<std::string>> holes_read(const Graph& g, NodeId id, size_t budget) {
  std::set<std::string> out;
  absl::flat_hash_set<NodeId> seen;
  std::vector<NodeId> todo = {id};
  while (!todo.empty()) {
    const NodeId x = todo.back();
    todo.pop_back();
    if (!g.at(x).mentions_hole || !seen.insert(x).second) continue;
    if (seen.size() > budget) return std::nullopt;
    const Node& n = g.at(x);
    if (n.kind == Kind::kInt) {
      for (const auto& [sym, c] : n.aff.terms) {
        if (sym.rfind("~h", 0) == 0) out.insert(sym);
      }
    }
    for (NodeId k : n.kids) todo.push_back(k);
  }
  return out;
}

// Whether `id` reads hole symbol `sym` (memoized over one call site; budgeted).
bool reads_symbol(const Graph& g, NodeId id, const std::string& sym, absl::flat_hash_map<NodeId, bool>* memo,
                  size_t* budget) {
  if (!g.at(id).mentions_hole) return false;
  if (auto it = memo->find(id); it != memo->end()) return it->second;
  if (*budget == 0) return true;  // unsure: treat as a read (the rule then declines)
  --*budget;
  const Node& n = g.at(id);
  bool r = n.kind == Kind::kInt && n.aff.terms.contains(sym);
  for (NodeId k : n.kids) r = r || reads_symbol(g, k, sym, memo, budget);
  (*memo)[id] = r;
  return r;
}

// An unrolled loop body: body = S_{m-1}(... S_1(S_0(self))), m >= 2, where each step S_j is
// p float operations along the one path from the body down to `self` (every other input of
// them reads no `self`), S_0 reads no hole but `self` and the linear ones in `inc` (a
// register advanced by inc[h] per iteration), and S_j is S_0 with every such hole h read
// at h + j * inc[h] / m (compared as trees, exactly). The loop then applies S_0 at
// consecutive offsets inc/m apart, which is the loop whose body is S_0 and whose linear
// registers advance inc/m: returns S_0 (over `self`) and sets *m.
std::optional<NodeId> unrolled_chain(Graph& g, NodeId body, const std::string& self,
                                     const std::map<std::string, Affine>& inc, int* m_out) {
  absl::flat_hash_map<NodeId, bool> memo;
  size_t budget = kMaxRename;
  std::vector<NodeId> down;  // root first
  NodeId x = body;
  for (int guard = 0;; ++guard) {
    if (guard > 4096) return std::nullopt;
    const Node& n = g.at(x);
    if (n.kind == Kind::kInt) break;
    if (n.kind != Kind::kArith) return std::nullopt;
    int found = -1;
    for (size_t i = 0; i < n.kids.size(); ++i) {
      if (!reads_symbol(g, n.kids[i], self, &memo, &budget)) continue;
      if (found >= 0) return std::nullopt;  // self read twice: not a chain
      found = static_cast<int>(i);
    }
    if (found < 0) return std::nullopt;
    down.push_back(x);
    x = n.kids[static_cast<size_t>(found)];
  }
  const NodeId self_node = x;
  const Node& sn = g.at(self_node);
  if (sn.aff.c0 != 0 || sn.aff.terms.size() != 1 || sn.aff.terms.begin()->first != self ||
      sn.aff.terms.begin()->second != 1) {
    return std::nullopt;
  }
  std::vector<NodeId> up(down.rbegin(), down.rend());  // up[0] reads self
  const size_t len = up.size();
  for (size_t p = 1; p * 2 <= len; ++p) {
    if (len % p != 0) continue;
    const int m = static_cast<int>(len / p);
    const NodeId s0 = up[p - 1];
    // S_0 reads only self and linear holes, each of whose increments m divides.
    std::optional<std::set<std::string>> holes = holes_read(g, s0, kMaxRename);
    if (!holes) return std::nullopt;
    bool ok = true;
    std::map<std::string, Affine> step;  // hole -> inc / m
    for (const std::string& h : *holes) {
      if (h == self) continue;
      auto it = inc.find(h);
      if (it == inc.end() || it->second.c0 % m != 0) {
        ok = false;
        break;
      }
      Affine d = Affine::constant(it->second.c0 / m);
      for (const auto& [sym, c] : it->second.terms.raw()) {
        if (c % m != 0) ok = false;
        add_term(d, sym, c / m);
      }
      step[h] = d;
    }
    for (int j = 1; ok && j < m; ++j) {
      NodeId cur = self_node;
      for (size_t i = static_cast<size_t>(j) * p; i < static_cast<size_t>(j + 1) * p; ++i) {
        cur = g.with_kid(up[i], i == 0 ? self_node : up[i - 1], cur);
      }
      std::map<std::string, Affine> shift;
      for (const auto& [h, d] : step) shift[h] = add(Affine::symbol(h), scale(d, j));
      std::optional<NodeId> want = g.substitute_holes(s0, shift, kMaxRename);
      ok = want.has_value() && g.at(*want).hash == g.at(cur).hash;
    }
    if (ok) {
      *m_out = m;
      return s0;
    }
  }
  return std::nullopt;
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
  // Hole names by role, not by the order the body first reads them: the inductions (a
  // register that is its own hole plus a constant at the back edge) are "i0", "i1", ...
  // by increasing step (ties in first-read order; the steps themselves are the key), and
  // below each fold's own hole is "self". Both maps are injective on this loop's holes,
  // so distinct carried registers keep distinct names.
  std::map<std::string, std::string> role;
  {
    std::vector<std::pair<int64_t, size_t>> steps;
    for (size_t k = 0; k < l.carried.size(); ++k) {
      const std::string hole = absl::StrCat("~h", l.depth, ".", k);
      const Node& n = g_.at(get(l.carried[k]));
      if (n.kind == Kind::kInt && n.aff.terms.size() == 1 && n.aff.terms.begin()->first == hole &&
          n.aff.terms.begin()->second == 1) {
        steps.push_back({n.aff.c0, k});
      }
    }
    std::sort(steps.begin(), steps.end());
    for (size_t i = 0; i < steps.size(); ++i) {
      role[absl::StrCat("~h", l.depth, ".", steps[i].second)] = absl::StrCat("~h", l.depth, ".i", i);
    }
  }
  const std::string key = absl::StrCat("inc:", absl::StrJoin(incs, ","));
  // What the loop's holes may vary with: its seeds' and its carried updates' thread bits
  // (a hole is a function of the seeds and of every earlier iteration's updates). A nested
  // loop's body may read an enclosing loop's holes, so its folds keep "hole".
  uint64_t loop_dep = l.depth > 1 ? kDepHole : 0;
  for (const std::string& r : l.carried) {
    if (auto seed = seeds_.find(absl::StrCat(l.header, ":", r)); seed != seeds_.end()) {
      loop_dep |= g_.at(seed->second).dep;
    } else {
      loop_dep |= kDepUnknown;  // read before any write: an uninitialized register
    }
    loop_dep |= g_.at(get(r)).dep & ~kDepHole;
  }
  std::vector<std::string> written;
  absl::flat_hash_map<std::string, std::vector<size_t>> write_at;  // register -> its writes' indices
  size_t last_write = l.header;
  for (size_t i = l.header; i <= l.back && i < body_->size(); ++i) {
    std::vector<std::string> d, u;
    defs_uses((*body_)[i], &d, &u);
    written.insert(written.end(), d.begin(), d.end());
    for (const std::string& r : d) write_at[r].push_back(i);
    if (!d.empty()) last_write = i;
  }
  std::sort(written.begin(), written.end());
  written.erase(std::unique(written.begin(), written.end()), written.end());
  // The loop's other carried values: a fold's body reads their holes (a second accumulator,
  // an operand loaded one iteration ahead), so what they are updated to is part of the
  // recurrence; snapshot their one-iteration values before any of them becomes a fold.
  std::vector<NodeId> update(l.carried.size(), -1);
  for (size_t k = 0; k < l.carried.size(); ++k) {
    auto c = regs_.find(l.carried[k]);
    if (c != regs_.end() && g_.at(c->second).kind != Kind::kInt && g_.at(c->second).has_hole) update[k] = c->second;
  }
  const Recurrences recs = recurrences(l, update, role);
  const LoopLinear lin = linear_registers(l, role);
  subst_memo_.clear();  // per loop: the substituted forms depend on its seeds
  exit_memo_.clear();
  closing_cond_.reset();
  // Renaming by role is the same map for every register of the loop: one memo, so a
  // subtree several registers read (a guard's key inside the body) is renamed once; each
  // register's own hole (never a role name, and "self" is no role's image) is renamed after.
  std::map<std::string, Affine> role_to;
  for (const auto& [from, name] : role) role_to[from] = Affine::symbol(name);
  absl::flat_hash_map<NodeId, NodeId> role_memo;
  // The loop's exits (trip counts), renamed by role like its registers.
  std::vector<NodeId> exits;
  std::vector<size_t> exit_at;  // each exit's instruction index
  std::map<std::string, std::optional<Trip>> mma_trips;  // exit sides -> an MMA chain's trip
  if (auto e = exits_.find(l.back); e != exits_.end()) {
    for (const auto& [x, at] : e->second) {
      std::optional<NodeId> r =
          role_to.empty() ? std::optional<NodeId>(x) : g_.substitute_holes(x, role_to, kMaxRename, &role_memo);
      exits.push_back(r ? *r : g_.opaque("exit unread", {x}, line_));
      exit_at.push_back(at);
    }
    exits_.erase(e);
  }
  for (const std::string& r : written) {
    auto it = regs_.find(r);
    if (it == regs_.end() || !g_.at(it->second).has_hole) continue;
    const Node& n = g_.at(it->second);
    if (n.kind == Kind::kInt) {
      it->second = g_.opaque(absl::StrCat("loop-exit ", n.aff.text(), " ", key), {}, line_);
    } else {
      auto seed = seeds_.find(absl::StrCat(l.header, ":", r));
      const NodeId s = carried.contains(r) && seed != seeds_.end() ? seed->second : -1;
      std::map<std::string, std::string> names = role, own;
      for (size_t k = 0; k < l.carried.size(); ++k) {
        if (l.carried[k] == r) {
          names[absl::StrCat("~h", l.depth, ".", k)] = absl::StrCat("~h", l.depth, ".self");
          own[absl::StrCat("~h", l.depth, ".", k)] = absl::StrCat("~h", l.depth, ".self");
        }
      }
      const std::string rec = recurrence(l, r, it->second, recs);
      bool split = !own.empty() && role.contains(own.begin()->first) ? false : true;
      std::optional<NodeId> renamed;
      if (split) {
        // Role names first (shared memo), then the register's own hole: the two maps have
        // disjoint domains and neither's images are in the other's domain, so this is the
        // one simultaneous renaming.
        renamed = role_to.empty() ? std::optional<NodeId>(it->second)
                                  : g_.substitute_holes(it->second, role_to, kMaxRename, &role_memo);
        if (renamed && !own.empty()) renamed = g_.rename_holes(*renamed, own, kMaxRename);
      }
      if (!renamed) renamed = g_.rename_holes(it->second, names, kMaxRename);
      if (renamed) it->second = *renamed;
      const std::string sides = exit_sides(l, last_write, exit_at, write_at[r]);
      if (auto chain = mma_chain(g_, it->second)) {
        // An exact MMA chain's trip is its counter's span (TripCount.cpp).
        const std::string key = absl::StrCat("exact-mma", rec);
        // The trip depends on the loop and the register's sides only: once per sides.
        auto span = mma_trips.find(sides);
        if (span == mma_trips.end()) span = mma_trips.emplace(sides, mma_span(l, lin, exits, sides)).first;
        if (const std::optional<Trip>& t = span->second) {
          it->second = g_.fold(*chain, absl::StrCat(key, trip_part(" span:", *t)), s, line_, loop_dep);
          trips_[it->second] = FoldTrip{*t, *chain, key, " span:", loop_dep};
        } else {
          it->second = g_.fold(*chain, absl::StrCat(key, exit_part(exits_at_last_step(l, lin, exits, 1), true, 1),
                                                    at_part(sides)),
                               s, line_, loop_dep);
        }
      } else {
        int m = 1;
        std::vector<int64_t> steps;
        for (const std::string& inc : incs) steps.push_back(std::strtoll(inc.c_str(), nullptr, 10));
        auto strip = unrolled_strips(g_, it->second, &m);
        bool divides = strip.has_value() && !steps.empty();
        for (int64_t st : steps) divides = divides && st % m == 0 && st != 0;
        // A strip pass is the one-strip loop with every increment divided by m; the linear
        // registers are then written with those increments, as for any other loop.
        it->second = divides ? linear_fold(l, *strip, rec, s, loop_dep, lin, m, exits, sides)
                             : linear_fold(l, it->second, rec, s, loop_dep, lin, 1, exits, sides);
      }
    }
  }
}


// The loop's linear carried registers: an integer register whose back-edge value is its
// own hole plus an increment D without holes (loop-invariant) holds seed + D * n in
// iteration n. Each is written as seed + D * n when its seed is affine (a pointer that LLVM
// advances by a parameter stride, an index from 0): a loop over a[i] and one over b[i]
// differ by their seeds. An induction whose seed is not affine keeps its role name and
// its constant step in the key.
Walker::LoopLinear Walker::linear_registers(const Loop& l, const std::map<std::string, std::string>& role) {
  LoopLinear out;
  for (size_t k = 0; k < l.carried.size(); ++k) {
    const std::string hole = absl::StrCat("~h", l.depth, ".", k);
    auto v = regs_.find(l.carried[k]);
    if (v == regs_.end()) continue;
    const Node& n = g_.at(v->second);
    if (n.kind != Kind::kInt) continue;
    auto own = n.aff.terms.find(hole);
    if (own == n.aff.terms.end() || own->second != 1) continue;
    const Affine d = sub(n.aff, Affine::symbol(hole));
    bool invariant = true;
    for (const auto& [sym, c] : d.terms) invariant = invariant && sym[0] != '~';
    if (!invariant) continue;
    auto r = role.find(hole);
    const std::string name = r != role.end() ? r->second : hole;
    out.inc[name] = d;
    if (d.is_const()) out.induction[name] = d.c0;
    auto seed = seeds_.find(absl::StrCat(l.header, ":", l.carried[k]));
    if (seed == seeds_.end() || g_.at(seed->second).kind != Kind::kInt) continue;
    out.pointer[name] = {g_.at(seed->second).aff, d};
  }
  return out;
}


// A float register's fold unless it is an MMA chain (`strips` > 1: body is a strip pass's
// one-strip body, unrolled_strips): an unrolled chain of one
// step is that step with every linear increment divided by m (unrolled_chain); pointer holes
// become seed + (increment / m) * n, so the loop's pointers are named by where they start
// and how far they move, not by register; the key keeps the constant increments of the
// inductions the body still reads. A remainder loop with the same step and key whose
// pointers start N steps after its seed fold's (for one N, every pointer) continues that
// fold: the result is the seed fold itself.
NodeId Walker::linear_fold(const Loop& l, NodeId body, const std::string& rec, NodeId seed, uint64_t loop_dep,
                           const LoopLinear& lin, int strips, const std::vector<NodeId>& exits,
                           const std::string& sides) {
  int m = strips;
  NodeId step = body;
  const std::string self = absl::StrCat("~h", l.depth, ".self");
  if (m == 1) {
    if (auto chain = unrolled_chain(g_, body, self, lin.inc, &m)) step = *chain;
  }
  std::map<std::string, Affine> to;
  std::vector<std::pair<std::string, std::pair<Affine, Affine>>> pointers;  // name, (seed, inc / m)
  for (const auto& [name, sd] : lin.pointer) {
    std::optional<Affine> d = divide(sd.second, m);
    if (!d) continue;
    to[name] = add(sd.first, times_iteration(*d, l.depth));
    pointers.push_back({name, {sd.first, *d}});
  }
  // The exits in step terms (trip counts): a pass of m steps that goes on while E(last
  // step) holds covers the one-step loop's steps when its range is whole passes, which a
  // strip pass assumes (its overrun strips are padding) and an unrolled chain must show.
  // A register written before its loop's one exit (or the exit is the back edge) has been
  // updated at every pass that reached the test: max(m, count) steps, the loop being
  // entered (a do-while of passes of m steps); one written after it misses the last pass,
  // max(0, count − 1) (a loop tested at its top). A pass of m > 1 steps is read at its back
  // edge only.
  const std::vector<NodeId> norm = exits_at_last_step(l, lin, exits, m);
  std::optional<Affine> count = norm.size() == 1 && (sides == "e" || (m == 1 && (sides == "b" || sides == "a")))
                                    ? count_of(norm[0], l.depth)
                                    : std::nullopt;
  if (count) count = resolve_choices(*count, cond_);
  const bool exact = m == 1 || strips > 1 || (count && multiple(*count, m));
  std::optional<Trip> trip;
  if (count) {
    // A do-while runs one whole pass: m steps (strips) at least.
    trip = sides == "a" ? make_trip(sub(*count, Affine::constant(1)), sub(*count, Affine::constant(1)), 0)
                        : make_trip(*count, *count, m);
  }
  NodeId canon = step;
  if (!to.empty()) {
    // Every register of this loop with the same m substitutes the same forms: share the memo.
    auto& memo = subst_memo_[m];
    if (auto sub = g_.substitute_holes(step, to, kMaxRename, &memo)) canon = *sub;
  }
  std::vector<std::string> incs;
  std::optional<std::set<std::string>> reads = holes_read(g_, canon, kMaxRename);
  for (const auto& [name, c] : lin.induction) {
    if (reads && !reads->contains(name)) continue;  // a counter the body never reads
    incs.push_back(absl::StrCat(m > 1 && c % m == 0 ? c / m : c, m > 1 && c % m != 0 ? absl::StrCat("/", m) : ""));
  }
  // Increments of registers that are some other hole plus a constant (not linear): kept.
  for (size_t k = 0; k < l.carried.size(); ++k) {
    auto v = regs_.find(l.carried[k]);
    if (v == regs_.end()) continue;
    const Node& n = g_.at(v->second);
    if (n.kind == Kind::kInt && n.aff.terms.size() == 1 && n.aff.terms.begin()->first[0] == '~' &&
        n.aff.terms.begin()->second == 1 && n.aff.terms.begin()->first != absl::StrCat("~h", l.depth, ".", k)) {
      incs.push_back(absl::StrCat("x", n.aff.c0));
    }
  }
  std::sort(incs.begin(), incs.end());
  const std::string key = absl::StrCat("inc:", absl::StrJoin(incs, ","), rec);
  if (seed >= 0) {
    if (auto c = continuable_.find(seed); c != continuable_.end() && c->second.key == key &&
                                          c->second.depth == l.depth) {
      const Continuable main = c->second;  // a copy: covering_fold adds to continuable_
      std::optional<Affine> n = continues(main, canon, pointers, l.depth);
      if (n) n = resolve_choices(*n, main.cond ? *main.cond : Cond{});
      // It continues main only where main ran exactly n steps (its count, whole passes);
      // then the two are one fold of n + this loop's count steps.
      // n + this loop's steps = n + count + max(0, lo − floor).
      if (n && trip && exact && main.trip && main.exact && runs_exactly(*main.trip, *n)) {
        return covering_fold(main, make_trip(add(*n, trip->count), trip->floor, trip->lo), line_);
      }
    }
  }
  const std::string part = trip && exact ? trip_part(" steps:", *trip) : absl::StrCat(exit_part(norm, exact, m), at_part(sides));
  const NodeId f = g_.fold(canon, absl::StrCat(key, part), seed, line_, loop_dep);
  if (trip && exact) trips_[f] = FoldTrip{*trip, canon, key, " steps:", loop_dep};
  if (!pointers.empty()) {
    if (!closing_cond_) closing_cond_ = std::make_shared<const Cond>(cond_);
    continuable_[f] = {step, pointers, key, l.depth, g_.at(canon).coord_blank, canon, seed, loop_dep, trip, exact,
                       closing_cond_};
  }
  return f;
}


// Per loop: for each carried value k with a float update, the carried values its update
// reads (through the registers their holes stand for) and the update's hash with the
// loop's inductions renamed by role and its seed unless literal. Computed once per loop,
// so a loop of n carried values costs n walks of the body, not n^2.
Walker::Recurrences Walker::recurrences(const Loop& l, const std::vector<NodeId>& update,
                                        const std::map<std::string, std::string>& role) {
  Recurrences out;
  out.reads.resize(update.size());
  out.hash.resize(update.size(), 0);
  absl::flat_hash_map<std::string, size_t> index_of_hole;
  for (size_t k = 0; k < l.carried.size(); ++k) {
    if (update[k] < 0) continue;
    // This loop's own hole for the register, and the latest one opened for it (another
    // loop at the same header opens after this one and its holes are what the body reads).
    index_of_hole[absl::StrCat("~h", l.depth, ".", k)] = k;
    if (auto h = hole_reg_.find(l.carried[k]); h != hole_reg_.end()) index_of_hole[h->second] = k;
  }
  out.index_of_hole = index_of_hole;
  for (size_t k = 0; k < update.size(); ++k) {
    if (update[k] < 0) continue;
    out.reads[k] = reads_of(update[k], out);
    auto renamed = g_.rename_holes(update[k], role, kMaxRename);
    uint64_t h = renamed ? g_.at(*renamed).coord_blank : g_.at(update[k]).hash;
    if (auto seed = seeds_.find(absl::StrCat(l.header, ":", l.carried[k])); seed != seeds_.end()) {
      const Node& sn = g_.at(seed->second);
      // A literal seed by its bits (+0.0 and -0.0 differ), any other by its tree.
      const bool literal = sn.kind == Kind::kConst || (sn.kind == Kind::kInt && sn.aff.is_const());
      h = (h ^ (literal ? hash_text(literal_bits(sn)) : sn.coord_blank)) * 0x100000001b3ULL;
    }
    out.hash[k] = (h ^ k) * 0x100000001b3ULL;
  }
  return out;
}

// The carried values (indices with a float update) whose holes `x` reads; every one of
// them when x is too large to read.
std::set<size_t> Walker::reads_of(NodeId x, const Recurrences& rec) const {
  std::set<size_t> out;
  std::optional<std::set<std::string>> holes = holes_read(g_, x, kMaxRename);
  if (!holes) {
    for (const auto& [hole, k] : rec.index_of_hole) out.insert(k);
    return out;
  }
  for (const std::string& h : *holes) {
    if (auto it = rec.index_of_hole.find(h); it != rec.index_of_hole.end()) out.insert(it->second);
  }
  return out;
}

// The other carried values that register r's update `body` reads, transitively, as
// " rec:<hash>" of their updates (see recurrences), or "" when it reads none. Without it,
// two loops whose second accumulator (or operand loaded one iteration ahead) is updated
// differently would give r one fold.
std::string Walker::recurrence(const Loop& l, const std::string& r, NodeId body, const Recurrences& rec) const {
  if (rec.hash.size() > kMaxRecurrenceClosure) {
    // Too many carried values to close over per register: every one of them counts.
    uint64_t h = 0;
    for (uint64_t x : rec.hash) h = (h ^ x) * 0x100000001b3ULL;
    return absl::StrCat(" rec:all:", hex64(h));
  }
  std::vector<char> done(rec.hash.size(), 0);
  std::set<size_t> first = reads_of(body, rec);
  std::vector<size_t> todo(first.begin(), first.end());
  bool any = false;
  while (!todo.empty()) {
    const size_t k = todo.back();
    todo.pop_back();
    if (done[k] || l.carried[k] == r) continue;
    done[k] = 1;
    any = true;
    for (size_t j : rec.reads[k]) todo.push_back(j);
  }
  if (!any) return "";
  uint64_t h = 0;
  for (size_t k = 0; k < done.size(); ++k) {
    if (done[k]) h = (h ^ rec.hash[k]) * 0x100000001b3ULL;
  }
  return absl::StrCat(" rec:", hex64(h));
}

std::vector<Instr> Walker::lay_out() const {
  // A moved run may free the run above it (its predecessor moved below it): repeat.
  std::vector<Instr> body = f_.body;
  for (int round = 0; round < kMaxLayoutRounds; ++round) {
    bool changed = false;
    std::vector<Instr> next = lay_out_once(body, &changed);
    if (!changed) break;
    body = std::move(next);
  }
  return body;
}

std::vector<Instr> Walker::lay_out_once(const std::vector<Instr>& body, bool* changed) const {
  struct Block {
    size_t begin = 0, end = 0;  // [begin, end)
  };
  std::vector<Block> blocks;
  for (size_t i = 0; i < body.size(); ++i) {
    if (i == 0 || !body[i].label.empty()) blocks.push_back({i, i});
    blocks.back().end = i + 1;
  }
  const size_t nb = blocks.size();
  // A block whose last statement is an unguarded branch: control never falls out of it.
  auto ends_uncond = [&](size_t b) {
    const Instr& last = body[blocks[b].end - 1];
    if (!last.label.empty()) return false;
    bool uncond = false;
    auto t = branch_target(last, &uncond);
    return t.has_value() && uncond;
  };
  absl::flat_hash_map<std::string, size_t> block_of_label;
  for (size_t b = 0; b < nb; ++b) {
    if (!body[blocks[b].begin].label.empty()) block_of_label[body[blocks[b].begin].label] = b;
  }
  // Move a run of blocks s..e below p, the last block that branches into it, when nothing
  // falls into s or out of e (so the run is entered and left only by branches), every
  // branch into the run from outside it lies below e, and p ends in an unguarded branch
  // (so nothing fell from p into the block after it). Every edge of the control-flow
  // graph stays as written; only the order the walk meets the blocks in changes.
  std::vector<bool> moved(nb, false), is_target(nb, false);
  std::vector<std::vector<size_t>> after(nb);
  std::vector<std::vector<size_t>> preds(nb);
  for (size_t b = 0; b < nb; ++b) {
    for (size_t i = blocks[b].begin; i < blocks[b].end; ++i) {
      if (body[i].opcode.empty()) continue;
      bool uncond = false;
      auto t = branch_target(body[i], &uncond);
      if (!t) continue;
      if (auto it = block_of_label.find(*t); it != block_of_label.end()) preds[it->second].push_back(b);
    }
  }
  // A jump to `label` in this ISA's spelling (nullopt when neither spelling is a branch).
  auto jump = [&](const std::string& label, int line) -> std::optional<Instr> {
    for (const char* op : {"bra.uni", "s_branch"}) {
      Instr j;
      j.line = line;
      j.opcode = op;
      j.operands = {label};
      j.text = absl::StrCat(op, " ", label, " (the fall-through, made explicit)");
      bool uncond = false;
      if (branch_target(j, &uncond) && uncond) return j;
    }
    return std::nullopt;
  };
  absl::flat_hash_map<size_t, Instr> jump_after;  // moved block -> the jump that replaces its fall-through
  std::vector<std::vector<size_t>> succs(nb);  // the blocks each block branches to
  for (size_t b = 0; b < nb; ++b) {
    for (size_t q : preds[b]) succs[q].push_back(b);
  }
  // The run s..e of blocks that starts at s (which nothing falls into) and is entered only
  // by branches from above s, the last from p, that ends in an unguarded branch and that
  // branches to a block between p and s: (p, e) for the shortest such run, nullopt when none
  // (or a block of it has been moved or is a move's target this round).
  auto run_below_its_exit = [&](size_t s) -> std::optional<std::pair<size_t, size_t>> {
    size_t p = 0, far = s;  // far: the last block at or below s that branches into the run
    bool any = false;
    std::optional<size_t> back;  // the last block above s that the run branches to
    for (size_t e = s; e < nb; ++e) {
      if (moved[e] || is_target[e]) return std::nullopt;
      for (size_t q : preds[e]) {
        if (q < s) {
          any = true;
          p = std::max(p, q);
        } else {
          far = std::max(far, q);
        }
      }
      for (size_t t : succs[e]) {
        if (t < s) back = back ? std::max(*back, t) : t;
      }
      if (far <= e && ends_uncond(e) && any && back && *back > p) return std::make_pair(p, e);
    }
    return std::nullopt;
  };
  // Lay blocks s..e out right after block p (which ends in an unguarded branch).
  auto move_run = [&](size_t s, size_t e, size_t p) {
    *changed = true;
    for (size_t b = s; b <= e; ++b) {
      moved[b] = true;
      after[p].push_back(b);
    }
    is_target[p] = true;
  };
  for (size_t s = 1; s < nb; ++s) {
    if (!ends_uncond(s - 1)) continue;
    size_t e = s;
    while (e + 1 < nb && !ends_uncond(e)) ++e;
    bool ok = ends_uncond(e), any = false;
    size_t p = 0;
    for (size_t b = s; b <= e && ok; ++b) {
      if (is_target[b]) ok = false;
      for (size_t q : preds[b]) {
        if (q >= s && q <= e) continue;
        if (q < s) ok = false;
        any = true;
        p = std::max(p, q);
      }
    }
    if (ok && any && !moved[p] && ends_uncond(p)) {
      move_run(s, e, p);
      s = e;
      continue;
    }
    if (!ends_uncond(s) && s + 1 < nb && !moved[s] && !is_target[s]) {
      // A rotated loop's latch: block s is entered only by branches from below (nothing
      // falls into it) and falls through into s + 1, the loop header. Move it below its last
      // predecessor p (which ends in an unguarded branch) and end it with an explicit jump
      // to s + 1: every edge stays, the two back edges into s become forward branches and
      // the jump back to s + 1 is the one back edge of one loop.
      bool ok = true, any = false;
      size_t p = 0;
      for (size_t q : preds[s]) {
        if (q <= s) ok = false;
        any = true;
        p = std::max(p, q);
      }
      const std::string& next = body[blocks[s + 1].begin].label;
      std::optional<Instr> j = next.empty() ? std::nullopt : jump(next, body[blocks[s].end - 1].line);
      if (ok && any && j && !moved[p] && ends_uncond(p)) {
        *changed = true;
        moved[s] = true;
        after[p].push_back(s);
        jump_after[s] = *j;
        is_target[p] = true;
        continue;
      }
    }
    // A loop laid out below the block its exit goes to: the run s..e (nothing falls into
    // s; e ends in an unguarded branch) is entered only by branches from above s, the last
    // from p (which ends in an unguarded branch), and some branch of the run goes back to
    // a block between p and s (LLVM's masked tail loop of a row, entered from the top and
    // leaving to the code laid out above it). Move it up below p: the branches into it stay
    // forward, that exit becomes one, and no other edge turns (nothing between p and s
    // branches into the run).
    if (auto up = run_below_its_exit(s); up && !moved[up->first] && ends_uncond(up->first)) {
      move_run(s, up->second, up->first);
      s = up->second;
      continue;
    }
    if (e + 1 >= nb && !ends_uncond(e)) break;
    s = e;
  }
  std::vector<Instr> out;
  out.reserve(body.size());
  for (size_t b = 0; b < nb; ++b) {
    if (moved[b]) continue;
    out.insert(out.end(), body.begin() + blocks[b].begin, body.begin() + blocks[b].end);
    for (size_t m : after[b]) {
      out.insert(out.end(), body.begin() + blocks[m].begin, body.begin() + blocks[m].end);
      if (auto j = jump_after.find(m); j != jump_after.end()) out.push_back(j->second);
    }
  }
  return out;
}

void Walker::run() {
  laid_out_ = lay_out();
  body_ = &laid_out_;
  const auto& body = *body_;
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
  const bool threads = tracks_thread_branches();
  // Trip counts: at a branch (or return) inside open loops, the condition under which
  // each loop goes on past it: its back edge's predicate, or the negation of a branch
  // leaving it. Read before the instruction is stepped (a branch writes nothing).
  auto record_exit = [&](size_t i, std::optional<size_t> to, bool always, const Instr& ins) {
    for (const auto& [hd, bk] : open_loops_) {
      if (i < hd || i > bk) continue;
      const bool back = to && *to == hd && i == bk;
      if (!back && to && *to >= hd && *to <= bk) continue;  // stays inside the loop
      if (back && always) continue;                         // an unconditional back edge
      NodeId taken;
      if (always) {
        taken = g_.constant("always");
      } else if (auto p = branch_predicate(ins)) {
        taken = branch_negated(ins) ? negate(*p) : *p;
      } else {
        taken = g_.opaque(absl::StrCat("exit test ", ins.opcode), {}, line_);
      }
      exits_[bk].push_back({back ? taken : negate(taken), i});
    }
  };
  for (size_t i = 0; i < body.size(); ++i) {
    const Instr& ins = body[i];
    line_ = ins.line;
    if (!ins.label.empty()) {
      while (!data_regions_.empty() && data_regions_.back().first == ins.label) {
        data_regions_.pop_back();
      }
      if (threads) {
        // The block's condition: the "or" of its forward in-edges and the fall-through.
        std::vector<Cond> in;
        if (auto e = incoming_.find(ins.label); e != incoming_.end()) {
          in = std::move(e->second);
          incoming_.erase(e);
        }
        if (falls_through_) in.push_back(block_cond_);
        block_cond_.clear();
        // Pairs that join without an "or" first (c ∧ l ∨ c ∧ ¬l = c, c ∨ (c ∧ x) = c), in
        // any order: a versioned body's vector arm {V} and its scalar arm's two exits
        // {¬V, ¬b} and {¬V, b} are {} whichever edge comes first.
        for (bool merged = true; merged && in.size() > 1 && in.size() <= 64;) {
          merged = false;
          for (size_t a = 0; a < in.size() && !merged; ++a) {
            for (size_t b = a + 1; b < in.size() && !merged; ++b) {
              if (auto j = join_exact(in[a], in[b])) {
                in[a] = std::move(*j);
                in.erase(in.begin() + static_cast<std::ptrdiff_t>(b));
                merged = true;
              }
            }
          }
        }
        if (!in.empty()) {
          block_cond_ = in[0];
          for (size_t k = 1; k < in.size(); ++k) block_cond_ = join(block_cond_, in[k]);
        }
        falls_through_ = true;
        label_cond_[ins.label] = block_cond_;
        cond_ = block_cond_;
      }
      if (auto h = at_header.find(i); h != at_header.end()) {
        if (const Cond hc = thread_part(block_cond_); !hc.empty()) {
          // A loop only the threads in hc run (a bounds test around it, `n > 0`): walked
          // as a loop of those threads (hc's literals are facts inside it), and every
          // register it writes is guard(hc, after, before) when it closes (run, below).
          const Loop& outer = loops[h->second.back()];
          CondLoop cl{outer.back, hc, {}};
          absl::flat_hash_set<std::string> defs;
          for (size_t j = outer.header; j <= outer.back; ++j) {
            std::vector<std::string> d, u;
            defs_uses(body[j], &d, &u);
            for (auto& r : d) {
              if (defs.insert(r).second) {
                auto it = regs_.find(r);
                cl.before.push_back({r, it != regs_.end() ? std::optional<NodeId>(it->second) : std::nullopt});
              }
            }
          }
          cond_loops_.push_back(std::move(cl));
        }
        for (size_t k : h->second) {
          open_loop(loops[k]);
          open_loops_.push_back({loops[k].header, loops[k].back});
        }
      }
      continue;
    }
    instr_guard_.reset();  // cond_ is block_cond_ here (an instruction's literal is undone below)
    bool uncond = false;
    auto target = branch_target(ins, &uncond);
    // A branch some lanes of a wave take and others not (GCN's execz/vccz: the skipped
    // block runs with those lanes masked off, which the ISA's exec tracking models): no
    // block condition, only the loop structure.
    const bool tracked = threads && (!target || uniform_branch(ins));
    std::optional<NodeId> lit;  // the thread-fixed literal guarding this instruction
    if (!ins.guard.empty() || (target && !uncond && tracked)) {
      NodeId p = !target ? get(ins.guard) : tracked ? branch_predicate(ins).value_or(-1) : -1;
      const bool negated = target ? branch_negated(ins) : ins.guard_negated;
      // Neither data, thread-fixed nor hole-fixed (it reads an unset register, a loop-exit
      // value, a float computed without a load): guarded like a data predicate, split.
      const bool neither = p >= 0 && threads && !g_.at(p).data && literal_kind(g_.at(p).hash, p) == 0;
      if (p >= 0 && (g_.at(p).data || neither) && !target) {
        instr_guard_ = negated ? negate(p) : p;
      } else if (p >= 0 && threads && !neither && !g_.at(p).data && !g_.at(p).mentions_hole) {
        lit = negated ? negate(p) : p;  // thread-fixed or a launch fact
      } else if (p >= 0 && threads && !g_.at(p).data && !open_loops_.empty() &&
                 literal_kind(g_.at(p).hash, p) == 2) {
        // A hole literal: a guard key inside the innermost open loop, unless the branch
        // leaves that loop or goes back to a header (trip counts are not read).
        size_t header = 0, back = body.size();
        for (const auto& [hd, bk] : open_loops_) {
          if (hd <= i && i <= bk && bk - hd <= back - header) header = hd, back = bk;
        }
        bool leaves = ins.opcode.rfind("ret", 0) == 0 || ins.opcode.rfind("exit", 0) == 0;
        if (target) {
          auto t = label_at.find(*target);
          leaves = leaves || t == label_at.end() || t->second <= i || t->second > back || t->second < header;
        }
        if (!leaves) lit = negated ? negate(p) : p;
      }
    }
    const bool ends = ins.opcode.rfind("ret", 0) == 0 || ins.opcode.rfind("exit", 0) == 0 || ins.opcode == "s_endpgm";
    if (target || ends) {
      auto to = target ? label_at.find(*target) : label_at.end();
      record_exit(i, to != label_at.end() ? std::optional<size_t>(to->second) : std::nullopt,
                  target ? uncond : ins.guard.empty(), ins);
    }
    if (target) {
      auto it = label_at.find(*target);
      if (!uncond && it != label_at.end() && it->second > i && (!threads || tracked)) {
        auto p = branch_predicate(ins);
        const bool neither = p && threads && !g_.at(*p).data && literal_kind(g_.at(*p).hash, *p) == 0;
        if (p && (g_.at(*p).data || neither) && data_regions_.size() < 1024) {
          NodeId pred = branch_negated(ins) ? *p : negate(*p);
          data_regions_.push_back({*target, pred});
        }
      }
      // An untracked branch (no literal) still carries its block's condition forward.
      if (threads && it != label_at.end()) {
        Cond taken = block_cond_;
        if (lit) taken[g_.at(*lit).hash] = *lit;
        if (it->second > i) {
          auto& in = incoming_[*target];
          if (in.size() >= 256) {
            incomplete_ = true;
            return;
          }
          in.push_back(std::move(taken));
        } else {
          auto h = label_cond_.find(*target);
          if (tracked && (h == label_cond_.end() || launch_part(h->second) != launch_part(taken))) {
            incomplete_ = true;
            return;
          }
        }
      }
      if (uncond) {
        falls_through_ = false;
      } else if (lit) {
        const NodeId n = negate(*lit);
        block_cond_[g_.at(n).hash] = n;
        cond_ = block_cond_;
      }
    } else if (ends && threads) {
      if (ins.guard.empty()) {
        falls_through_ = false;
      } else if (lit) {
        const NodeId n = negate(*lit);
        block_cond_[g_.at(n).hash] = n;
        cond_ = block_cond_;
      }
      step(ins);
    } else if (lit) {
      const uint64_t h = g_.at(*lit).hash;
      const bool added = cond_.emplace(h, *lit).second;
      step(ins);
      if (added) cond_.erase(h);
    } else {
      step(ins);
    }
    instr_guard_.reset();
    if (auto b = at_back.find(i); b != at_back.end()) {
      for (size_t k : b->second) {
        close_loop(loops[k]);
        for (auto it = open_loops_.begin(); it != open_loops_.end(); ++it) {
          if (it->first == loops[k].header && it->second == loops[k].back) {
            open_loops_.erase(it);
            break;
          }
        }
        drop_hole_literals(loops[k].depth);
      }
      while (!cond_loops_.empty() && cond_loops_.back().back == i) {
        CondLoop cl = std::move(cond_loops_.back());
        cond_loops_.pop_back();
        const NodeId key = key_of(cl.base);
        for (const auto& [r, before] : cl.before) {
          auto it = regs_.find(r);
          if (it == regs_.end()) continue;
          if (!before) undef_under_[r] = cl.base;  // set only by the threads that ran the loop
          it->second = guarded(key, it->second, before ? *before : g_.constant("undef"));
        }
      }
    }
    if (g_.size() > kMaxNodes) {
      incomplete_ = true;
      return;
    }
  }
  drop_guarded_twins();
  // A shared-memory read that matched no store the walk had met reads as a data leaf,
  // named by its address only: sound for memory nothing in the kernel writes, but in a
  // kernel that writes shared memory it may read a value the kernel made (a rotated loop
  // reading what the previous iteration wrote, a store whose address did not read as a
  // slot), which the leaf would drop. When such a leaf reaches a stored value, the kernel
  // keeps its text (2026-12-05); a read a selection discards (the other buffer of a
  // double-buffered slot) does not count.
  if (unmatched_shared_load_ && stored_shared_ && shared_leaf_reaches_root()) incomplete_ = true;
}

}  // namespace fixbits::verify
