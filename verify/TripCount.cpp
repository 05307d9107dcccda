// TripCount.cpp — how many steps a loop's folds run, and the rules that join folds by it.
// Invariant: a fold's key names its step count only where that count is exact for every
// launch size the walk admits (sizes are non-negative and below 2^31); a remainder, a
// peeled step or a launch-uniform choice joins a fold only where the joined count is
// provably the sum or the choice; anything not read keeps the exit tests' hashes.
//
//   $L: ...; add.s32 %r2, %r2, 1; setp.lt.u32 %p1, %r2, %r1; @%p1 bra $L;
// goes on while ~n + 1 − K < 0 after step ~n: count 1 − (1 − K)/1 = K ("steps:<hash K>").
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
#include "verify/Walk.h"

namespace fixbits::verify {

// Trip counts. A fold's key carries how many steps its loop runs when its one exit reads
// as a count (count_of), else its exits themselves: each exit's condition to go on, with the
// pointers written at the pass's last step, hashed with coordinates blanked like the body.
// So one loop over [0, K) and one over [0, K − 1), `i < n` and `i <= n`, or two bounds,
// are two folds; a loop counting up to K and one counting K down to 0 are one; a remainder
// or a peeled step joins its main loop only where the main loop provably ran whole passes
// up to where it starts, and the two then count the sum of their steps.
std::string Walker::exit_part(const std::vector<NodeId>& exits, bool exact, int m) const {
  std::vector<std::string> parts;
  for (NodeId e : exits) parts.push_back(hex64(g_.at(e).coord_blank));
  return absl::StrCat(" exit:", parts.empty() ? "none" : absl::StrJoin(parts, ","), exact ? "" : absl::StrCat("/m", m));
}

std::string Walker::int_part(const char* label, const Affine& a) {
  return absl::StrCat(label, hex64(g_.at(g_.integer(a)).hash));
}

// A loop's exit read as E = α + β·~n (β a constant, nothing else varying) with the
// loop going on while E < 0 (`a < b`, or not `a < b` as b − a − 1 < 0; β > 0) or while
// E != 0 (`a != b`, not `a == b`). Integer widths and signedness are read as exact
// integers that do not wrap, as for every index rule.
std::optional<Walker::LinearExit> Walker::linear_exit(NodeId cont, int depth) const {
  const Node* n = &g_.at(cont);
  bool negated = false;
  if (n->kind == Kind::kOpaque && (n->op == "not" || n->op.rfind("not.pred", 0) == 0) && n->kids.size() == 1) {
    negated = true;
    n = &g_.at(n->kids[0]);
  }
  if (n->kind != Kind::kOpaque || n->kids.size() != 2) return std::nullopt;
  const Node& a = g_.at(n->kids[0]);
  const Node& b = g_.at(n->kids[1]);
  if (a.kind != Kind::kInt || b.kind != Kind::kInt) return std::nullopt;
  const bool lt = n->op.rfind("setp.lt.", 0) == 0, eq = n->op.rfind("setp.eq.", 0) == 0,
             ne = n->op.rfind("setp.ne.", 0) == 0;
  Affine e;
  LinearExit out;
  if (lt && !negated) {
    e = sub(a.aff, b.aff), out.strict = true;
  } else if (lt && negated) {
    e = sub(sub(b.aff, a.aff), Affine::constant(1)), out.strict = true;
  } else if ((eq && negated) || (ne && !negated)) {
    e = sub(a.aff, b.aff);
  } else {
    return std::nullopt;
  }
  const std::string iter = absl::StrCat("~n", depth);
  out.alpha = Affine::constant(e.c0);
  for (const auto& [sym, c] : e.terms) {
    if (sym == iter) {
      out.beta = c;
    } else if (sym[0] == '~') {
      return std::nullopt;
    } else {
      add_to(out.alpha, Affine::symbol(sym, c));
    }
  }
  if (out.beta == 0 || (out.strict && out.beta < 0)) return std::nullopt;
  return out;
}

// The steps a loop runs when it goes on while `cont` holds after step ~n (do-while: at
// least one; a count <= 0 is the zero-trip gap, docs/verify.md): either form of
// linear_exit stops after step −α/β when β divides α, so the count is 1 − α/β.
std::optional<Affine> Walker::count_of(NodeId cont, int depth) const {
  std::optional<LinearExit> e = linear_exit(cont, depth);
  if (!e) return std::nullopt;
  std::optional<Affine> q = divide(e->alpha, e->beta);
  if (!q) return std::nullopt;
  return sub(Affine::constant(1), *q);
}

// The key part of an exact MMA chain's loop (trip counts): the chain drops its chunk count
// (§6.2), so its loop is keyed by how far its counter goes, β − α (`k + BK < K` from k0:
// K − k0 whatever BK is), or else by its exit tests.
std::string Walker::mma_span(const Loop& l, const LoopLinear& lin, const std::vector<NodeId>& exits) {
  const std::vector<NodeId> norm = exits_at_last_step(l, lin, exits, 1);
  if (norm.size() == 1) {
    if (std::optional<LinearExit> e = linear_exit(norm[0], l.depth); e && (e->strict || divide(e->alpha, e->beta))) {
      return int_part(" span:", resolve_choices(sub(Affine::constant(e->beta), e->alpha), cond_));
    }
  }
  return exit_part(norm, true, 1);
}

// The loop's exits with each linear pointer written at the last step of a pass of m steps,
// seed + (D/m)·(~n + m − 1), the step after which the test runs; every register of the
// loop with the same m writes them alike, so they share one memo per m.
std::vector<NodeId> Walker::exits_at_last_step(const Loop& l, const LoopLinear& lin, const std::vector<NodeId>& exits,
                                               int m) {
  std::map<std::string, Affine> to;
  for (const auto& [name, sd] : lin.pointer) {
    if (std::optional<Affine> d = divide(sd.second, m)) {
      to[name] = add(add(sd.first, times_iteration(*d, l.depth)), scale(*d, 1 - m));
    }
  }
  std::vector<NodeId> out;
  for (NodeId e : exits) {
    std::optional<NodeId> x = to.empty() ? std::optional<NodeId>(e) : g_.substitute_holes(e, to, kMaxRename, &exit_memo_[m]);
    out.push_back(x ? *x : g_.opaque("exit unread", {e}, line_));
  }
  return out;
}

// Whether a is a multiple of m for every value of its symbols: a low-bits symbol
// `x mod 2^k` with m | 2^k is x modulo m, so it is read as x first (`K − K mod 4` is).
bool Walker::multiple(const Affine& a, int64_t m) const {
  if (m <= 1) return true;
  Affine x = a;
  for (int round = 0; round < 8; ++round) {
    bool changed = false;
    for (const auto& [sym, c] : x.terms) {
      auto it = low_bits_.find(sym);
      if (it == low_bits_.end() || it->second.second >= 62 || (int64_t{1} << it->second.second) % m != 0) continue;
      x = add(sub(x, Affine::symbol(sym, c)), scale(it->second.first, c));
      changed = true;
      break;
    }
    if (!changed) break;
  }
  if (x.c0 % m != 0) return false;
  for (const auto& [sym, c] : x.terms) {
    if (c % m != 0) return false;
  }
  return true;
}

namespace {

// One launch-uniform size P and its low bits: the values fold_by_cases evaluates.
struct OneSize {
  std::string p;                                      // the size's symbol
  const absl::flat_hash_map<std::string, std::pair<Affine, int>>* low = nullptr;
  int kmax = 0;
  int64_t threshold = 0;                              // past it every comparison is settled
  bool ok = true;

  // Whether every symbol of a is P or a low-bits symbol of P; notes where comparisons of a
  // settle (a is compared with 0 after moving everything to one side).
  void read(const Affine& a, bool compared) {
    constexpr int64_t kBig = int64_t{1} << 30;  // past it the sums below could overflow
    int64_t coef_p = 0, rest = a.c0 < 0 ? -a.c0 : a.c0;
    if (rest > kBig) ok = false;
    for (const auto& [sym, c] : a.terms) {
      if (!ok || c > kBig || c < -kBig) {
        ok = false;
        return;
      }
      auto it = low->find(sym);
      if (it != low->end()) {
        const Affine& base = it->second.first;
        if (p.empty() && base.terms.size() == 1) p = base.terms.begin()->first;
        if (base.c0 != 0 || base.terms.size() != 1 || !base.terms.contains(p) || base.terms.begin()->second != 1 ||
            it->second.second > 8) {
          ok = false;
          return;
        }
        kmax = std::max(kmax, it->second.second);
        rest += (c < 0 ? -c : c) << it->second.second;
      } else if (p.empty() && sym[0] != '~' && sym.find_first_of("*.") == std::string::npos &&
                 sym.rfind("param", 0) == 0) {
        p = sym;
        coef_p = c;
      } else if (sym == p) {
        coef_p = c;
      } else {
        ok = false;
        return;
      }
    }
    if (compared && coef_p != 0) threshold = std::max(threshold, rest / (coef_p < 0 ? -coef_p : coef_p) + 1);
    if (compared && coef_p == 0) threshold = std::max<int64_t>(threshold, 1);
  }
  int64_t value(const Affine& a, int64_t v) const {
    int64_t out = a.c0;
    for (const auto& [sym, c] : a.terms) {
      auto it = low->find(sym);
      out += c * (it != low->end() ? (v & ((int64_t{1} << it->second.second) - 1)) : v);
    }
    return out;
  }
};

}  // namespace

// Launch-uniform choices between one fold run two ways (trip counts): `c ? x : y` where x
// and y are the same step from the same seed, counting steps Cx and Cy, and c reads only
// one size P and its low bits (`K & 3 == 0`, `K > 3`), is the fold of C steps when
// (c ? Cx : Cy) = C at every P >= 0. Decided exactly by evaluation: every comparison in c
// and every count is a·P + f(P mod 2^k), so past the last threshold where a comparison
// can change, two periods of 2^k decide it for every larger P. C is tried as Cx, Cy and P.
// An unrolled loop skipped where K & 3 == 0 and its remainder, or a peeled step under
// K & 1, join this way (LLVM's K loops).
std::optional<NodeId> Walker::fold_by_cases(NodeId key, NodeId x, NodeId y) {
  auto cx = continuable_.find(x), cy = continuable_.find(y);
  if (cx == continuable_.end() || cy == continuable_.end() || x == y) return std::nullopt;
  const Continuable& a = cx->second;
  const Continuable& b = cy->second;
  if (!a.count || !b.count || !a.exact || !b.exact || a.key != b.key || a.depth != b.depth ||
      g_.at(a.canon_node).coord_blank != g_.at(b.canon_node).coord_blank ||
      (a.seed < 0) != (b.seed < 0) || (a.seed >= 0 && g_.at(a.seed).hash != g_.at(b.seed).hash)) {
    return std::nullopt;
  }
  OneSize one;
  one.low = &low_bits_;
  one.read(*a.count, false);
  one.read(*b.count, false);
  // The condition's nodes: comparisons of affine integers through not/and/or.
  std::vector<NodeId> todo{key};
  absl::flat_hash_set<NodeId> seen;
  while (!todo.empty() && one.ok) {
    const NodeId id = todo.back();
    todo.pop_back();
    if (!seen.insert(id).second) continue;
    if (seen.size() > 256) return std::nullopt;
    const Node& n = g_.at(id);
    if (n.kind == Kind::kOpaque && (n.op == "not" || n.op == "and" || n.op == "or" || n.op.rfind("and.pred", 0) == 0 ||
                                    n.op.rfind("or.pred", 0) == 0 || (n.op.rfind("not.pred", 0) == 0 && n.kids.size() == 1))) {
      todo.insert(todo.end(), n.kids.begin(), n.kids.end());
    } else if (n.kind == Kind::kOpaque && n.kids.size() == 2 &&
               (n.op.rfind("setp.lt.", 0) == 0 || n.op.rfind("setp.eq.", 0) == 0 || n.op.rfind("setp.ne.", 0) == 0) &&
               g_.at(n.kids[0]).kind == Kind::kInt && g_.at(n.kids[1]).kind == Kind::kInt) {
      one.read(sub(g_.at(n.kids[0]).aff, g_.at(n.kids[1]).aff), true);
    } else {
      return std::nullopt;
    }
  }
  if (!one.ok || one.p.empty() || one.threshold > kMaxCaseThreshold) return std::nullopt;
  std::function<std::optional<bool>(NodeId, int64_t)> holds = [&](NodeId id, int64_t v) -> std::optional<bool> {
    const Node& n = g_.at(id);
    if (n.op == "not" || n.op.rfind("not.pred", 0) == 0) {
      auto r = holds(n.kids[0], v);
      return r ? std::optional<bool>(!*r) : std::nullopt;
    }
    const bool conj = n.op == "and" || n.op.rfind("and.pred", 0) == 0, disj = n.op == "or" || n.op.rfind("or.pred", 0) == 0;
    if (conj || disj) {
      bool out = conj;
      for (NodeId k : n.kids) {
        auto r = holds(k, v);
        if (!r) return std::nullopt;
        out = conj ? out && *r : out || *r;
      }
      return out;
    }
    const int64_t l = one.value(g_.at(n.kids[0]).aff, v), r = one.value(g_.at(n.kids[1]).aff, v);
    if (n.op.rfind("setp.lt.", 0) == 0) return l < r;
    if (n.op.rfind("setp.eq.", 0) == 0) return l == r;
    return l != r;
  };
  const int64_t last = one.threshold + (int64_t{2} << one.kmax);
  std::vector<int64_t> want;
  for (int64_t v = 0; v <= last; ++v) {
    auto c = holds(key, v);
    if (!c) return std::nullopt;
    want.push_back(one.value(*c ? *a.count : *b.count, v));
  }
  for (const Affine& cand : {*a.count, *b.count, Affine::symbol(one.p)}) {
    bool all = true;
    for (int64_t v = 0; v <= last && all; ++v) all = one.value(cand, v) == want[static_cast<size_t>(v)];
    if (!all) continue;
    if (cand == *a.count) return x;
    if (cand == *b.count) return y;
    const Continuable copy = a;  // covering_fold adds to continuable_
    return covering_fold(copy, cand, line_);
  }
  return std::nullopt;
}

// a with each launch-uniform choice symbol (guarded: `K > 3 ? K & -4 : 0` as one value)
// that condition c decides replaced by the integer it chooses there. Exact where c holds.
Affine Walker::resolve_choices(const Affine& a, const Cond& c) {
  bool any = false;
  for (const auto& [sym, coef] : a.terms) any = any || choices_.contains(sym);
  if (!any) return a;
  Affine out = a;
  const Cond saved = cond_;
  cond_ = c;
  for (int round = 0; round < 8; ++round) {
    bool changed = false;
    for (const auto& [sym, coef] : out.terms) {
      auto it = choices_.find(sym);
      if (it == choices_.end()) continue;
      const NodeId r = peel(it->second);
      if (r == it->second || g_.at(r).kind != Kind::kInt) continue;
      out = add(sub(out, Affine::symbol(sym, coef)), scale(g_.at(r).aff, coef));
      changed = true;
      break;
    }
    if (!changed) break;
  }
  cond_ = saved;
  return out;
}

NodeId Walker::low_bits(const Affine& x, int k) {
  const std::string name = absl::StrCat("param.low", k, ".", hex64(g_.at(g_.integer(x)).hash));
  low_bits_.try_emplace(name, x, k);
  return g_.integer(Affine::symbol(name));
}

NodeId Walker::covering_fold(const Continuable& main, const Affine& count, int line) {
  const NodeId f = g_.fold(main.canon_node, absl::StrCat(main.key, int_part(" steps:", count)), main.seed, line, main.loop_dep);
  Continuable c = main;
  c.count = count;
  c.exact = true;
  continuable_[f] = std::move(c);
  return f;
}

// A step peeled after a loop: v = S(φ) where φ is a fold whose one step S it is, with the
// fold's pointers at seed + inc * N for one N (tried as each symbol factor of v's
// addresses, and their constants divided by constant increments), compared exactly (as
// trees, coordinates included). Then v continues φ, so it is φ.
NodeId Walker::peeled(NodeId v) {
  const std::vector<NodeId> kids = g_.at(v).kids;
  for (NodeId k : kids) {
    auto c = continuable_.find(k);
    if (c == continuable_.end()) continue;
    const Continuable& main = c->second;
    const NodeId self = g_.integer(Affine::symbol(absl::StrCat("~h", main.depth, ".self")));
    const NodeId want = g_.with_kid(v, k, self);
    // Candidate N: the symbol factors of the addresses v reads (besides φ).
    std::vector<Affine> candidates;
    std::vector<NodeId> todo;
    absl::flat_hash_set<NodeId> seen;
    for (NodeId x : kids) {
      if (x != k) todo.push_back(x);
    }
    while (!todo.empty() && seen.size() < 256 && candidates.size() < 16) {
      const NodeId x = todo.back();
      todo.pop_back();
      if (!seen.insert(x).second) continue;
      const Node& n = g_.at(x);
      if (n.kind == Kind::kFold) continue;
      if (n.kind == Kind::kInt) {
        for (const auto& [name, sd] : main.pointers) {  // N strides on from a pointer's seed
          if (sd.second.is_const()) continue;  // only parameter strides: a constant's N is among the symbols below
          if (auto q = over(sub(n.aff, sd.first), sd.second)) candidates.push_back(*q);
        }
        for (const auto& [sym, coef] : n.aff.terms) {
          size_t from = 0;
          for (size_t star = sym.find('*');; star = sym.find('*', from)) {
            const size_t end = star == std::string::npos ? sym.size() : star;
            const std::string f = sym.substr(from, end - from);
            if (f.rfind("param", 0) == 0 && f.find('.') != std::string::npos) candidates.push_back(Affine::symbol(f));
            if (star == std::string::npos) break;
            from = star + 1;
          }
        }
      }
      for (NodeId y : n.kids) todo.push_back(y);
    }
    for (const Affine& n_steps : candidates) {
      std::map<std::string, Affine> to;
      bool ok = true;
      for (const auto& [name, sd] : main.pointers) {
        std::optional<Affine> shift = mul(sd.second, n_steps);
        if (!shift) {
          ok = false;
          break;
        }
        to[name] = add(sd.first, *shift);
      }
      if (!ok) continue;
      std::optional<NodeId> at_n = g_.substitute_holes(main.step, to, kMaxRename);
      if (!at_n || g_.at(*at_n).hash != g_.at(want).hash) continue;
      // v is step N of φ's loop; it extends φ only where φ ran exactly N steps (trip
      // counts): then the two are the fold of N + 1 steps.
      const Affine n = resolve_choices(n_steps, main.cond ? *main.cond : Cond{});
      if (!main.count || !main.exact || !(*main.count == n)) return v;
      const Continuable copy = main;  // covering_fold adds to continuable_
      return covering_fold(copy, add(n, Affine::constant(1)), line_);
    }
  }
  return v;
}

// Whether the loop whose canonical body is `canon` and whose pointers are `pointers` runs
// the step of `main` from N steps on, for one N: main's step with every pointer started
// at seed + inc * N gives the same tree. N is tried from the seeds' differences (divided
// by a constant increment, or each symbol factor of a difference).
std::optional<Affine> Walker::continues(const Continuable& main, NodeId canon,
                                        const std::vector<std::pair<std::string, std::pair<Affine, Affine>>>& pointers,
                                        int depth) {
  std::vector<Affine> candidates;
  for (const auto& [n1, sd1] : main.pointers) {
    for (const auto& [n2, sd2] : pointers) {
      if (!(sd1.second == sd2.second)) continue;
      const Affine diff = sub(sd2.first, sd1.first);
      if (diff.is_const() && diff.c0 == 0) continue;
      if (auto q = over(diff, sd1.second)) candidates.push_back(*q);  // a constant step divides
      if (sd1.second.is_const()) continue;
      for (const auto& [sym, c] : diff.terms) {
        size_t from = 0;
        for (size_t star = sym.find('*'); from <= sym.size(); star = sym.find('*', from)) {
          const size_t end = star == std::string::npos ? sym.size() : star;
          candidates.push_back(Affine::symbol(sym.substr(from, end - from)));
          if (star == std::string::npos) break;
          from = star + 1;
        }
      }
    }
    if (candidates.size() > 16) break;
  }
  const uint64_t want = g_.at(canon).coord_blank;
  for (size_t i = 0; i < candidates.size() && i < 16; ++i) {
    std::map<std::string, Affine> to;
    bool ok = true;
    for (const auto& [name, sd] : main.pointers) {
      std::optional<Affine> shift = mul(sd.second, candidates[i]);
      if (!shift) {
        ok = false;
        break;
      }
      to[name] = add(add(sd.first, *shift), times_iteration(sd.second, depth));
    }
    if (!ok) continue;
    std::optional<NodeId> moved = g_.substitute_holes(main.step, to, kMaxRename);
    if (moved && g_.at(*moved).coord_blank == want) return candidates[i];
  }
  return std::nullopt;
}

}  // namespace fixbits::verify
