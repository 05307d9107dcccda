// Affine.cpp — the exact shift/mask/or rules of §6.1.
//   shr(16*ctaid + 4*tid.x.b2 + 2*tid.x.b1, 1) = 8*ctaid + 2*tid.x.b2 + tid.x.b1   (tz rule)
//   shr(4*tid.x.b2 + 2*tid.x.b1 + tid.x.b0, 1) = 2*tid.x.b2 + tid.x.b1             (renumber)
//   and(32*ctaid + 2*tid.x.b1 + tid.x.b0, 1)   = tid.x.b0                          (select)
//   or(24*tid.x.b5 + tid.x.b2, 8)             = 16*tid.x.b5 + tid.x.b2 + 8        ((a & ~8) + 8)
//   mul(param8, 16*ctaid.y + tid.x.b2 + 8)    = 16*ctaid.y*(param8) + tid.x.b2*param8 + 8*param8
// Terms are interned symbols in text order (Affine.h); the merges below keep that order,
// so text() is the text the std::map form had and every hash built from it is unchanged.
#include "verify/Affine.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "verify/Hash.h"

namespace fixbits::verify {
namespace {

bool is_bit_symbol(const std::string& s) {
  size_t p = s.rfind(".b");
  if (p == std::string::npos || p + 2 >= s.size()) return false;
  for (size_t i = p + 2; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

int tz64(int64_t v) { return v == 0 ? 64 : std::countr_zero(static_cast<uint64_t>(v)); }

// Splits a into bit terms B (+ c0) and the rest R; reports whether B's set bits are
// provably disjoint, their union mask, and tz(R) (64 when R is empty).
struct Split {
  bool bits_ok = true;
  uint64_t bit_mask = 0;  // positions B can set
  int r_tz = 64;
  bool r_nonneg = true;
};

Split split(const Affine& a) {
  Split s;
  // A 0/1 symbol times c > 0 is 0 or c: it can set exactly the bits of c.
  auto is_bit_term = [](const SymbolName* sym, int64_t c) { return sym->is_bit && c > 0; };
  for (const auto& [sym, c] : a.terms.raw()) {
    if (!is_bit_term(sym, c)) {
      s.r_tz = std::min(s.r_tz, tz64(c));
      if (c < 0) s.r_nonneg = false;
    }
  }
  if (a.c0 < 0) s.bits_ok = false;
  uint64_t low = s.r_tz >= 64 ? ~uint64_t{0} : ((uint64_t{1} << s.r_tz) - 1);
  s.bit_mask = static_cast<uint64_t>(a.c0 < 0 ? 0 : a.c0) & low;  // c0's high part joins R
  for (const auto& [sym, c] : a.terms.raw()) {
    if (!is_bit_term(sym, c)) continue;
    uint64_t m = static_cast<uint64_t>(c);
    if (s.bit_mask & m) s.bits_ok = false;
    s.bit_mask |= m;
  }
  // B must sit entirely below R's lowest possible bit, or carries could mix them.
  if (s.bit_mask & ~low) s.bits_ok = false;
  return s;
}

}  // namespace

namespace {

// The process-wide symbol table: a name maps to one SymbolName for the process's life, so
// a term's pointer never dangles. Entries are boxed (stable addresses) and never removed.
struct SymbolTable {
  absl::Mutex mu;
  absl::flat_hash_map<std::string_view, std::unique_ptr<SymbolName>> names ABSL_GUARDED_BY(mu);
};

SymbolTable& symbol_table() {
  static SymbolTable* table = new SymbolTable;  // never destroyed: terms may outlive main()
  return *table;
}

// The table lookup itself, under its lock.
const SymbolName* intern_symbol_locked(std::string_view name) {
  SymbolTable& t = symbol_table();
  absl::MutexLock lock(&t.mu);
  auto it = t.names.find(name);
  if (it != t.names.end()) return it->second.get();
  auto box = std::make_unique<SymbolName>();
  box->text = std::string(name);
  box->is_bit = is_bit_symbol(box->text);
  const SymbolName* p = box.get();
  t.names.emplace(std::string_view(box->text), std::move(box));
  return p;
}

bool starts_with_any(const std::string& s, std::initializer_list<const char*> prefixes) {
  for (const char* p : prefixes) {
    if (s.rfind(p, 0) == 0) return true;
  }
  return false;
}

// out = a + k * b over sorted terms: a's terms first where equal symbols meet, a zero sum
// dropped, as the std::map form's add did (a's own terms are kept as they are).
Terms::Storage merge(const Terms::Storage& a, const Terms::Storage& b, int64_t k) {
  Terms::Storage out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const int cmp = i == a.size()   ? 1
                    : j == b.size() ? -1
                                    : compare_symbols(a[i].sym, b[j].sym);
    if (cmp < 0) {
      out.push_back(a[i++]);
    } else if (cmp > 0) {
      const int64_t v = wrap_mul(b[j].coef, k);
      if (v != 0) out.push_back({b[j].sym, v});
      ++j;
    } else if (k != 1 && wrap_mul(b[j].coef, k) == 0) {
      out.push_back(a[i++]);  // sub = add(a, scale(b, -1)): scale dropped b's zero term
      ++j;
    } else {
      const int64_t v = wrap_add(a[i].coef, wrap_mul(b[j].coef, k));
      if (v != 0) out.push_back({a[i].sym, v});
      ++i;
      ++j;
    }
  }
  return out;
}

// The decimal text absl::StrAppend writes for v.
std::string_view decimal(int64_t v, char (&buf)[24]) {
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string_view(buf, static_cast<size_t>(r.ptr - buf));
}

// hash_text of the text() of a form whose terms are those of `terms` that `keep` accepts,
// with constant c0: the same bytes text() appends, streamed.
template <typename Keep>
uint64_t form_text_hash(const Terms::Storage& terms, int64_t c0, Keep keep) {
  TextHasher h;
  bool any = false;
  char buf[24];
  for (const Terms::Term& t : terms) {
    if (!keep(t)) continue;
    if (any) h.add(" + ");
    any = true;
    if (t.coef != 1) {
      h.add(decimal(t.coef, buf));
      h.add("*");
    }
    h.add(t.sym->text);
  }
  if (c0 != 0 || !any) {
    if (any) h.add(" + ");
    h.add(decimal(c0, buf));
  }
  return h.value();
}

}  // namespace

const SymbolName* intern_symbol(std::string_view name) {
  // A per-thread view of the table (its entries are never removed, so the pointers stay
  // valid): most lookups take no lock.
  thread_local absl::flat_hash_map<std::string_view, const SymbolName*> seen;
  if (auto hit = seen.find(name); hit != seen.end()) return hit->second;
  const SymbolName* p = intern_symbol_locked(name);
  seen.emplace(std::string_view(p->text), p);
  return p;
}


namespace {

// First term whose symbol text is not below `name`.
Terms::Storage::const_iterator lower(const Terms::Storage& v, std::string_view name) {
  return std::lower_bound(v.begin(), v.end(), name,
                          [](const Terms::Term& t, std::string_view n) { return std::string_view(t.sym->text) < n; });
}

}  // namespace

Terms::const_iterator Terms::find(std::string_view name) const {
  auto it = lower(v_, name);
  if (it != v_.end() && it->sym->text == name) return const_iterator(it);
  return end();
}

size_t Terms::erase(std::string_view name) {
  auto it = lower(v_, name);
  if (it == v_.end() || it->sym->text != name) return 0;
  v_.erase(it);
  return 1;
}

int64_t& Terms::operator[](std::string_view name) {
  auto it = lower(v_, name);
  const size_t at = static_cast<size_t>(it - v_.begin());
  if (it != v_.end() && it->sym->text == name) return v_[at].coef;
  v_.insert(v_.begin() + static_cast<std::ptrdiff_t>(at), Term{intern_symbol(name), 0});
  return v_[at].coef;
}

bool Terms::operator==(const Terms& o) const {
  if (v_.size() != o.v_.size()) return false;
  for (size_t i = 0; i < v_.size(); ++i) {
    if (v_[i].coef != o.v_[i].coef || compare_symbols(v_[i].sym, o.v_[i].sym) != 0) return false;
  }
  return true;
}

Affine Affine::symbol(std::string_view s, int64_t coef) {
  Affine a;
  if (coef != 0) a.terms.raw().push_back({intern_symbol(s), coef});
  return a;
}

Affine Affine::symbol(const SymbolName* s, int64_t coef) {
  Affine a;
  if (coef != 0) a.terms.raw().push_back({s, coef});
  return a;
}

std::string Affine::text() const {
  std::string out;
  for (const auto& [s, c] : terms.raw()) {
    if (!out.empty()) out += " + ";
    if (c == 1) {
      absl::StrAppend(&out, s->text);
    } else {
      absl::StrAppend(&out, c, "*", s->text);
    }
  }
  if (c0 != 0 || out.empty()) {
    if (!out.empty()) out += " + ";
    absl::StrAppend(&out, c0);
  }
  return out;
}

uint64_t Affine::text_hash() const {
  return form_text_hash(terms.raw(), c0, [](const Terms::Term&) { return true; });
}

Affine Affine::keep_prefix(std::initializer_list<const char*> prefixes) const {
  Affine out;
  for (const Terms::Term& t : terms.raw()) {
    if (starts_with_any(t.sym->text, prefixes)) out.terms.raw().push_back(t);
  }
  return out;
}

uint64_t Affine::kept_text_hash(std::initializer_list<const char*> prefixes, int64_t c) const {
  return form_text_hash(terms.raw(), c,
                        [&](const Terms::Term& t) { return starts_with_any(t.sym->text, prefixes); });
}

void add_term(Affine& a, const SymbolName* s, int64_t c) {
  if (c == 0) return;  // add(a, symbol(s, 0)): symbol() of a zero coefficient is empty
  Terms::Storage& v = a.terms.raw();
  auto it = std::lower_bound(v.begin(), v.end(), s,
                             [](const Terms::Term& t, const SymbolName* x) { return compare_symbols(t.sym, x) < 0; });
  if (it != v.end() && it->sym == s) {
    it->coef = wrap_add(it->coef, c);
    if (it->coef == 0) v.erase(it);
  } else if (it != v.end() && compare_symbols(it->sym, s) == 0) {
    it->coef = wrap_add(it->coef, c);
    if (it->coef == 0) v.erase(it);
  } else {
    v.insert(it, Terms::Term{s, c});
  }
}

void add_to(Affine& a, const Affine& b) {
  a.c0 = wrap_add(a.c0, b.c0);
  const Terms::Storage& bt = b.terms.raw();
  if (bt.empty()) return;
  if (bt.size() <= 2) {
    for (const Terms::Term& t : bt) add_term(a, t.sym, t.coef);
    return;
  }
  a.terms.raw() = merge(a.terms.raw(), bt, 1);
}

Affine add(const Affine& a, const Affine& b) {
  Affine out;
  out.c0 = wrap_add(a.c0, b.c0);
  out.terms.raw() = merge(a.terms.raw(), b.terms.raw(), 1);
  return out;
}

Affine scale(const Affine& a, int64_t k) {
  Affine out;
  if (k == 0) return out;
  out.c0 = wrap_mul(a.c0, k);
  for (const Terms::Term& t : a.terms.raw()) {
    const int64_t v = wrap_mul(t.coef, k);
    if (v != 0) out.terms.raw().push_back({t.sym, v});
  }
  return out;
}

Affine sub(const Affine& a, const Affine& b) {
  // a + scale(b, -1): scale drops b's terms that wrap to 0, so merge's drop of them agrees.
  Affine out;
  out.c0 = wrap_add(a.c0, wrap_mul(b.c0, -1));
  out.terms.raw() = merge(a.terms.raw(), b.terms.raw(), -1);
  return out;
}

namespace {

// c * ctaid.<d>: the block coordinate symbol and its coefficient.
std::optional<std::pair<std::string, int64_t>> block_coordinate(const Affine& a) {
  if (a.c0 != 0 || a.terms.size() != 1 || a.terms.begin()->first.rfind("ctaid.", 0) != 0 ||
      a.terms.begin()->first.find('*') != std::string::npos) {
    return std::nullopt;
  }
  return *a.terms.begin();
}

// No thread coordinate or loop hole: a value every thread of a block shares per launch.
bool block_uniform(const Affine& a) {
  for (const auto& [s, c] : a.terms) {
    if (s.rfind("tid.", 0) == 0 || s.rfind("laneid", 0) == 0 || s[0] == '~') return false;
  }
  return true;
}

}  // namespace

namespace {

// One kernel parameter (or a launch-uniform value named "param.u<hash>"), not a product.
bool is_param(const std::string& s) { return s.rfind("param", 0) == 0 && s.find_first_of("*(") == std::string::npos; }

// A sum of kernel parameters and a constant, nothing else (a stride such as a_sm).
bool params_only(const Affine& a) {
  if (a.terms.empty()) return false;
  for (const auto& [s, c] : a.terms) {
    if (!is_param(s)) return false;
  }
  return true;
}

// A coordinate factor a parameter may multiply: a thread-index bit or a block coordinate.
bool coordinate_factor(const std::string& s) {
  if (s.find_first_of("*(") != std::string::npos) return false;
  if (s.rfind("ctaid.", 0) == 0) return s.size() == 7;
  return (s.rfind("tid.", 0) == 0 || s.rfind("laneid.", 0) == 0) && is_bit_symbol(s);
}

// (sum_p u_p * p + u0) * (sum_s v_s * s + v0) with p parameters and s coordinate factors
// or parameters, expanded term by term: exact ring arithmetic. A product p*s is one
// monomial symbol named coordinate first ("tid.x.b2*param8", "ctaid.y*(param8)" as the
// block-coordinate rule names it), so blanking and thread dependence read it as a
// coordinate term and no bit rule reads it as a bit; two parameters multiply in name order
// ("param7*param9", launch-uniform); p*v0 stays the parameter p.
std::optional<Affine> param_times_coordinates(const Affine& u, const Affine& v) {
  if (!params_only(u) || v.terms.empty()) return std::nullopt;
  for (const auto& [s, c] : v.terms) {
    if (!coordinate_factor(s) && !is_param(s)) return std::nullopt;
  }
  Affine out = scale(v, u.c0);  // u0 * v
  for (const auto& [psym, cp] : u.terms.raw()) {
    const std::string& p = psym->text;
    add_term(out, psym, wrap_mul(cp, v.c0));
    for (const auto& [s, cs] : v.terms) {
      const std::string name = s.rfind("ctaid.", 0) == 0 ? absl::StrCat(s, "*(", p, ")")
                               : is_param(s)              ? absl::StrCat(std::min(s, p), "*", std::max(s, p))
                                                          : absl::StrCat(s, "*", p);
      add_term(out, intern_symbol(name), wrap_mul(cp, cs));
    }
  }
  return out;
}

}  // namespace

std::optional<Affine> mul(const Affine& a, const Affine& b) {
  if (b.is_const()) return scale(a, b.c0);
  if (a.is_const()) return scale(b, a.c0);
  // ctaid * e, e block-uniform (a row offset "block * row length"): one new symbol for the
  // exact product, named from the coordinate so it is blanked wherever block coordinates
  // are; no bit rule ever applies to it (it is not a "<name>.b<i>" bit symbol).
  for (int side = 0; side < 2; ++side) {
    const Affine& x = side == 0 ? a : b;
    const Affine& y = side == 0 ? b : a;
    if (auto bc = block_coordinate(x); bc && block_uniform(y)) {
      return Affine::symbol(absl::StrCat(bc->first, "*(", y.text(), ")"), bc->second);
    }
  }
  // A parameter stride times a coordinate index (a[row * a_sm + k * a_sk]): expanded.
  if (auto r = param_times_coordinates(a, b)) return r;
  if (auto r = param_times_coordinates(b, a)) return r;
  return std::nullopt;
}

std::optional<Affine> shr(const Affine& a, int k) {
  if (k < 0 || k > 63) return std::nullopt;
  if (k == 0) return a;
  // tz rule: every term a multiple of 2^k.
  bool all = tz64(a.c0) >= k;
  for (const auto& [s, c] : a.terms) all = all && tz64(c) >= k;
  if (all && a.c0 >= 0) {
    Affine out;
    out.c0 = a.c0 >> k;
    for (const auto& [s, c] : a.terms.raw()) out.terms.raw().push_back({s, c / (int64_t{1} << k)});
    return out;
  }
  // Renumbering rule: bit terms below R, R a multiple of 2^k.
  Split sp = split(a);
  if (!sp.bits_ok || sp.r_tz < k || !sp.r_nonneg) return std::nullopt;
  Affine out;
  out.c0 = a.c0 >> k;
  for (const auto& [s, c] : a.terms.raw()) {
    if (s->is_bit && c > 0 && (sp.r_tz == 64 || static_cast<uint64_t>(c) < (uint64_t{1} << sp.r_tz))) {
      // The bit terms set disjoint bits, so the shift moves each term's own bits.
      if ((c >> k) != 0) out.terms.raw().push_back({s, c >> k});
    } else {
      out.terms.raw().push_back({s, c / (int64_t{1} << k)});
    }
  }
  return out;
}

std::optional<Affine> and_mask(const Affine& a, uint64_t mask, int width) {
  uint64_t all = width >= 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
  mask &= all;
  Split sp = split(a);
  if (!sp.bits_ok || !sp.r_nonneg) return std::nullopt;
  // R part: kept whole when the mask covers every bit from tz(R) up, dropped when none.
  bool keep_r = true;
  if (sp.r_tz < 64) {
    uint64_t high = all & ~((uint64_t{1} << sp.r_tz) - 1);
    if ((mask & high) == high) {
      keep_r = true;
    } else if ((mask & high) == 0) {
      keep_r = false;
    } else {
      return std::nullopt;
    }
  }
  Affine out;
  out.c0 = static_cast<int64_t>(static_cast<uint64_t>(a.c0) & mask);
  for (const auto& [s, c] : a.terms.raw()) {
    bool bit = s->is_bit && c > 0 && (sp.r_tz == 64 || static_cast<uint64_t>(c) < (uint64_t{1} << sp.r_tz));
    if (bit) {
      // Disjoint bit terms: the mask keeps each term's own selected bits.
      if (static_cast<uint64_t>(c) & mask) {
        out.terms.raw().push_back({s, static_cast<int64_t>(static_cast<uint64_t>(c) & mask)});
      }
    } else if (keep_r) {
      out.terms.raw().push_back({s, c});
    }
  }
  return out;
}

std::optional<Affine> or_disjoint(const Affine& a, const Affine& b) {
  auto possible = [](const Affine& x) -> std::optional<uint64_t> {
    Split sp = split(x);
    if (!sp.bits_ok || !sp.r_nonneg) return std::nullopt;
    uint64_t m = sp.bit_mask;
    if (sp.r_tz < 64) m |= ~((uint64_t{1} << sp.r_tz) - 1);
    return m;
  };
  auto ma = possible(a), mb = possible(b);
  if (!ma || !mb || (*ma & *mb) != 0) return std::nullopt;
  return add(a, b);
}

std::optional<Affine> or_const(const Affine& a, int64_t c) {
  if (c < 0) return std::nullopt;
  if (auto d = or_disjoint(a, Affine::constant(c))) return d;
  // a | c = (a & ~c) + c: the two parts share no bit.
  auto cleared = and_mask(a, ~static_cast<uint64_t>(c), 64);
  if (!cleared) return std::nullopt;
  return add(*cleared, Affine::constant(c));
}

Affine bits_of(const std::string& name, int bits) {
  Affine a;
  for (int i = 0; i < bits && i < 62; ++i) add_term(a, intern_symbol(absl::StrCat(name, ".b", i)), int64_t{1} << i);
  return a;
}

// d * n for the loop's iteration symbol n: "~n<depth>" times the constant, "~n<depth>*s"
// per symbol s of d. Exact: the names are only ever made here, from d's own terms.
Affine times_iteration(const Affine& d, int depth) {
  const std::string n = absl::StrCat("~n", depth);
  Affine out;
  if (d.c0 != 0) out = Affine::symbol(n, d.c0);
  for (const auto& [sym, c] : d.terms) add_term(out, intern_symbol(absl::StrCat(n, "*", sym)), c);
  return out;
}

std::optional<Affine> divide(const Affine& a, int64_t m) {
  if (m == 0 || a.c0 % m != 0) return std::nullopt;
  Affine out = Affine::constant(a.c0 / m);
  for (const auto& [sym, c] : a.terms.raw()) {
    if (c % m != 0) return std::nullopt;
    add_term(out, sym, c / m);
  }
  return out;
}

// a / d for d a constant or one term c·s (a parameter stride), every term of a a multiple
// of c·s (s itself, or a product of two parameters one of which is s): the N of a pointer
// N strides on, when N is a sum (`K − K mod 4`) and not one symbol. Exact.
std::optional<Affine> over(const Affine& a, const Affine& d) {
  if (d.is_const()) return divide(a, d.c0);
  if (d.c0 != 0 || d.terms.size() != 1 || a.c0 != 0) return std::nullopt;
  const auto& [s, c] = *d.terms.begin();
  Affine out;
  for (const auto& [t, k] : a.terms) {
    if (c == 0 || k % c != 0) return std::nullopt;
    if (t == s) {
      out.c0 += k / c;
      continue;
    }
    const size_t star = t.find('*');
    if (star == std::string::npos || t.find('*', star + 1) != std::string::npos) return std::nullopt;
    const std::string x = t.substr(0, star), y = t.substr(star + 1);
    const std::string rest = x == s ? y : y == s ? x : "";
    if (rest.empty() || rest.find_first_of("()") != std::string::npos) return std::nullopt;
    add_to(out, Affine::symbol(rest, k / c));
  }
  return out;
}

}  // namespace fixbits::verify
