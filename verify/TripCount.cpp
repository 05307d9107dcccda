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

// The trip of an exact MMA chain's loop: the chain drops its chunk count (§6.2), so its
// loop is counted by how far its counter goes, β − α (`k + BK < K` from k0: K − k0
// whatever BK is), at least one chunk when the test is at the back edge (a do-while; the
// chunks past K read zeros, the §6.2 assumption) and none when the chain is written after a
// test at the top (−α). Else (nullopt) it is keyed by its exit tests.
std::optional<Walker::Trip> Walker::mma_span(const Loop& l, const LoopLinear& lin, const std::vector<NodeId>& exits,
                                             const std::string& sides) {
  const std::vector<NodeId> norm = exits_at_last_step(l, lin, exits, 1);
  if (norm.size() != 1 || (sides != "e" && sides != "b" && sides != "a")) return std::nullopt;
  std::optional<LinearExit> e = linear_exit(norm[0], l.depth);
  if (!e || !(e->strict || divide(e->alpha, e->beta))) return std::nullopt;
  if (sides == "a") {
    const Affine span = resolve_choices(scale(e->alpha, -1), cond_);
    return make_trip(span, span, 0);
  }
  const Affine span = resolve_choices(sub(Affine::constant(e->beta), e->alpha), cond_);
  return make_trip(span, span, 1);
}

// Per exit of loop l, where a register's writes (their instruction indices) lie against it:
// 'e' past the loop's last write (its back edge, or a test before the jump back).
std::string Walker::exit_sides(const Loop& l, size_t last_write, const std::vector<size_t>& exit_at,
                               const std::vector<size_t>& writes) {
  std::string out;
  for (size_t at : exit_at) {
    if (at == l.back || at > last_write) {
      out += 'e';
      continue;
    }
    bool before = false, after = false;
    for (size_t w : writes) (w < at ? before : after) = true;
    out += before && after ? 'm' : after ? 'a' : 'b';
  }
  return out;
}

std::string Walker::at_part(const std::string& sides) {
  return sides.find_first_not_of('e') == std::string::npos ? "" : absl::StrCat(" at:", sides);
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

// One launch-uniform size P and its low bits: the values the trip rules evaluate. Every
// form read is a·P + f(P mod 2^k); past the last threshold where a comparison read can
// change, two periods of 2^k decide an equality of such forms for every larger P.
class SizeCases {
 public:
  SizeCases(const Graph& g, const absl::flat_hash_map<std::string, std::pair<Affine, int>>& low) : g_(g), low_(low) {}

  // Whether every symbol of a is P or a low-bits symbol of P; notes where comparisons of a
  // settle (a is compared with 0 after moving everything to one side).
  void read(const Affine& a, bool compared) {
    constexpr int64_t kBig = int64_t{1} << 30;  // past it the sums below could overflow
    int64_t coef_p = 0, rest = a.c0 < 0 ? -a.c0 : a.c0;
    if (rest > kBig) ok_ = false;
    for (const auto& [sym, c] : a.terms) {
      if (!ok_ || c > kBig || c < -kBig) {
        ok_ = false;
        return;
      }
      auto it = low_.find(sym);
      if (it != low_.end()) {
        const Affine& base = it->second.first;
        if (p_.empty() && base.terms.size() == 1) p_ = base.terms.begin()->first;
        if (base.c0 != 0 || base.terms.size() != 1 || !base.terms.contains(p_) || base.terms.begin()->second != 1 ||
            it->second.second > 8) {
          ok_ = false;
          return;
        }
        kmax_ = std::max(kmax_, it->second.second);
        rest += (c < 0 ? -c : c) << it->second.second;
      } else if (p_.empty() && sym[0] != '~' && sym.find_first_of("*.") == std::string::npos &&
                 sym.rfind("param", 0) == 0) {
        p_ = sym;
        coef_p = c;
      } else if (sym == p_) {
        coef_p = c;
      } else {
        ok_ = false;
        return;
      }
    }
    if (compared && coef_p != 0) threshold_ = std::max(threshold_, rest / (coef_p < 0 ? -coef_p : coef_p) + 1);
    if (compared && coef_p == 0) threshold_ = std::max<int64_t>(threshold_, 1);
  }
  // A trip's forms: its count, and its floor compared with lo.
  void read_trip(const Affine& count, const Affine& floor, int lo) {
    read(count, false);
    read(sub(floor, Affine::constant(lo)), true);
  }
  // A condition: comparisons of affine integers through not/and/or; false if it is not one.
  bool read_condition(NodeId key) {
    std::vector<NodeId> todo{key};
    absl::flat_hash_set<NodeId> seen;
    while (!todo.empty() && ok_) {
      const NodeId id = todo.back();
      todo.pop_back();
      if (!seen.insert(id).second) continue;
      if (seen.size() > 256) return false;
      const Node& n = g_.at(id);
      if (connective(n)) {
        todo.insert(todo.end(), n.kids.begin(), n.kids.end());
      } else if (n.kind == Kind::kOpaque && n.kids.size() == 2 &&
                 (n.op.rfind("setp.lt.", 0) == 0 || n.op.rfind("setp.eq.", 0) == 0 ||
                  n.op.rfind("setp.ne.", 0) == 0) &&
                 g_.at(n.kids[0]).kind == Kind::kInt && g_.at(n.kids[1]).kind == Kind::kInt) {
        read(sub(g_.at(n.kids[0]).aff, g_.at(n.kids[1]).aff), true);
      } else {
        return false;
      }
    }
    return ok_;
  }
  bool ok() const { return ok_ && threshold_ <= kMaxCaseThreshold; }
  const std::string& size() const { return p_; }
  int64_t last() const { return threshold_ + (int64_t{2} << kmax_); }

  int64_t value(const Affine& a, int64_t v) const {
    int64_t out = a.c0;
    for (const auto& [sym, c] : a.terms) {
      auto it = low_.find(sym);
      out += c * (it != low_.end() ? (v & ((int64_t{1} << it->second.second) - 1)) : v);
    }
    return out;
  }
  int64_t steps(const Affine& count, const Affine& floor, int lo, int64_t v) const {
    return value(count, v) + std::max<int64_t>(0, lo - value(floor, v));
  }
  std::optional<bool> holds(NodeId id, int64_t v) const {
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
    if (n.kids.size() != 2) return std::nullopt;
    const int64_t l = value(g_.at(n.kids[0]).aff, v), r = value(g_.at(n.kids[1]).aff, v);
    if (n.op.rfind("setp.lt.", 0) == 0) return l < r;
    if (n.op.rfind("setp.eq.", 0) == 0) return l == r;
    return l != r;
  }

 private:
  static bool connective(const Node& n) {
    return n.kind == Kind::kOpaque &&
           (n.op == "not" || n.op == "and" || n.op == "or" || n.op.rfind("and.pred", 0) == 0 ||
            n.op.rfind("or.pred", 0) == 0 || (n.op.rfind("not.pred", 0) == 0 && n.kids.size() == 1));
  }
  const Graph& g_;
  const absl::flat_hash_map<std::string, std::pair<Affine, int>>& low_;
  std::string p_;  // the size's symbol
  int kmax_ = 0;
  int64_t threshold_ = 0;  // past it every comparison is settled
  bool ok_ = true;
};

}  // namespace

// count + max(0, lo − floor), plain when that is count at every size P >= 0 (evaluated;
// a form that reads more than one size is not plain).
Walker::Trip Walker::make_trip(const Affine& count, const Affine& floor, int lo) const {
  Trip t{count, floor, lo, false};
  SizeCases sc(g_, low_bits_);
  sc.read_trip(count, floor, lo);
  if (!sc.ok()) return t;
  t.plain = true;
  for (int64_t v = 0; v <= sc.last() && t.plain; ++v) t.plain = sc.steps(count, floor, lo, v) == sc.value(count, v);
  return t;
}

// A trip in a fold's key: its count, and what bounds it below where that is not the count.
std::string Walker::trip_part(const char* label, const Trip& t) {
  if (t.plain) return int_part(label, t.count);
  return absl::StrCat(int_part(label, t.count), int_part(" floor:", t.floor), "/", t.lo);
}

// Zero-trip guards: `key ? v : old` where v is a fold (or a chain of folds) run from old,
// or old one run from v. The threads past the loop where the key sends them there keep the
// seed, so the value runs, at each size, the fold's steps where it is reached and none
// elsewhere. That is the fold itself, or the fold with no floor (LLVM's `K > 0` around a
// rotated loop: max(1, K) steps where reached, so max(0, K) in all), when evaluation
// shows it; else the guard stays (a `K > 3` around a loop of K steps splits from the loop).
std::optional<NodeId> Walker::zero_trip(NodeId key, NodeId v, NodeId old) {
  if (auto chain = seed_chain(v, old)) return run_or_skip(key, true, *chain, old);
  if (auto chain = seed_chain(old, v)) return run_or_skip(key, false, *chain, v);
  return std::nullopt;
}

// chain: the folds (outermost first) of the value the key runs where it is runs_when.
std::optional<NodeId> Walker::run_or_skip(NodeId key, bool runs_when, const std::vector<NodeId>& chain, NodeId seed) {
  const NodeId f = chain.front();
  SizeCases sc(g_, low_bits_);
  if (!sc.read_condition(key)) return std::nullopt;
  std::vector<FoldTrip> trips;
  for (NodeId x : chain) {
    auto t = trips_.find(x);
    if (t == trips_.end()) return std::nullopt;
    trips.push_back(t->second);
    sc.read_trip(t->second.trip.count, t->second.trip.floor, t->second.trip.lo);
  }
  if (!sc.ok()) return std::nullopt;
  const int64_t last = sc.last();
  auto steps = [&](const Trip& t, int64_t v) { return sc.steps(t.count, t.floor, t.lo, v); };
  if (chain.size() > 1) {
    // A chain is kept as it is where every fold of it runs no step wherever the key skips it.
    for (int64_t v = 0; v <= last; ++v) {
      std::optional<bool> c = sc.holds(key, v);
      if (!c) return std::nullopt;
      if (*c == runs_when) continue;
      for (const FoldTrip& t : trips) {
        if (steps(t.trip, v) != 0) return std::nullopt;
      }
    }
    return f;
  }
  const FoldTrip& ft = trips[0];
  const Trip& t = ft.trip;
  const Trip w = make_trip(t.count, t.floor, 0);
  bool same = true, unfloored = true;
  for (int64_t v = 0; v <= last && (same || unfloored); ++v) {
    std::optional<bool> c = sc.holds(key, v);
    if (!c) return std::nullopt;
    const int64_t want = *c == runs_when ? steps(t, v) : 0;
    same = same && want == steps(t, v);
    unfloored = unfloored && want == steps(w, v);
  }
  if (same) return f;
  if (!unfloored) return std::nullopt;
  const NodeId out = g_.fold(ft.canon, absl::StrCat(ft.key, trip_part(ft.label, w)), seed, line_, ft.loop_dep);
  trips_[out] = FoldTrip{w, ft.canon, ft.key, ft.label, ft.loop_dep};
  if (auto c = continuable_.find(f); c != continuable_.end()) {
    Continuable copy = c->second;
    copy.trip = w;
    continuable_[out] = std::move(copy);
  }
  return out;
}

// Launch-uniform choices between one fold run two ways (trip counts): `c ? x : y` where x
// and y are the same step from the same seed, running Sx and Sy steps at each size, and c
// reads only one size P and its low bits (`K & 3 == 0`, `K > 3`), is the fold of S steps
// when (c ? Sx : Sy) = S at every P >= 0 (SizeCases). S is tried as x's, y's and P.
// An unrolled loop skipped where K & 3 == 0 and its remainder, or a peeled step under
// K & 1, join this way (LLVM's K loops).
std::optional<NodeId> Walker::fold_by_cases(NodeId key, NodeId x, NodeId y) {
  auto cx = continuable_.find(x), cy = continuable_.find(y);
  if (cx == continuable_.end() || cy == continuable_.end() || x == y) return std::nullopt;
  const Continuable& a = cx->second;
  const Continuable& b = cy->second;
  if (!a.trip || !b.trip || !a.exact || !b.exact || a.key != b.key || a.depth != b.depth ||
      g_.at(a.canon_node).coord_blank != g_.at(b.canon_node).coord_blank ||
      (a.seed < 0) != (b.seed < 0) || (a.seed >= 0 && g_.at(a.seed).hash != g_.at(b.seed).hash)) {
    return std::nullopt;
  }
  SizeCases sc(g_, low_bits_);
  sc.read_trip(a.trip->count, a.trip->floor, a.trip->lo);
  sc.read_trip(b.trip->count, b.trip->floor, b.trip->lo);
  if (!sc.read_condition(key) || !sc.ok() || sc.size().empty()) return std::nullopt;
  auto steps = [&](const Trip& t, int64_t v) { return sc.steps(t.count, t.floor, t.lo, v); };
  const int64_t last = sc.last();
  std::vector<int64_t> want;
  for (int64_t v = 0; v <= last; ++v) {
    auto c = sc.holds(key, v);
    if (!c) return std::nullopt;
    want.push_back(*c ? steps(*a.trip, v) : steps(*b.trip, v));
  }
  const Affine p = Affine::symbol(sc.size());
  const Trip by_p = make_trip(p, p, 0);
  for (const Trip* cand : {&*a.trip, &*b.trip, &by_p}) {
    bool all = true;
    for (int64_t v = 0; v <= last && all; ++v) all = steps(*cand, v) == want[static_cast<size_t>(v)];
    if (!all) continue;
    if (cand == &*a.trip) return x;
    if (cand == &*b.trip) return y;
    const Continuable copy = a;  // covering_fold adds to continuable_
    return covering_fold(copy, by_p, line_);
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

NodeId Walker::covering_fold(const Continuable& main, const Trip& trip, int line) {
  const NodeId f =
      g_.fold(main.canon_node, absl::StrCat(main.key, trip_part(" steps:", trip)), main.seed, line, main.loop_dep);
  Continuable c = main;
  c.trip = trip;
  c.exact = true;
  continuable_[f] = std::move(c);
  trips_[f] = FoldTrip{trip, main.canon_node, main.key, " steps:", main.loop_dep};
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
      if (!main.trip || !main.exact || !runs_exactly(*main.trip, n)) return v;
      const Continuable copy = main;  // covering_fold adds to continuable_
      const Affine n1 = add(n, Affine::constant(1));
      return covering_fold(copy, make_trip(n1, n1, 0), line_);
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
