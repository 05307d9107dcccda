// Affine.h — integer values of a symbolic thread: c0 + sum c_s * s over named symbols
// (§6.1 "Addresses"). Symbols are thread/block coordinates, block extents, parameters,
// shared-variable bases and loop holes; a thread index under a launch bound 2^n is written
// in its bits "tid.x.b0".."tid.x.b{n-1}", each 0 or 1. Every operation either returns an
// exact affine result or nullopt (the caller then makes an opaque token); none guesses.
// Arithmetic is over int64 and assumes the kernel's index arithmetic does not wrap.
// Representation: a symbol is interned once (intern_symbol), a form's terms are a small
// flat vector sorted by the symbols' text, so text() — and every hash built from it — is
// what the earlier std::map<std::string, int64_t> form gave; a form of up to
// Terms::kInline terms is held without an allocation.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/inlined_vector.h"

namespace fixbits::verify {

// Two's-complement wrapping arithmetic: hostile literals must not reach signed overflow.
inline int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline int64_t wrap_abs(int64_t a) { return a < 0 ? wrap_mul(a, -1) : a; }

// An interned symbol name. Equal names intern to one `SymbolName`, so a term copies a
// pointer, not a string; the table is process-wide, guarded by a mutex, and never shrinks
// (it holds each distinct name the process has seen once: parameters, coordinate bits,
// hole names, products; tens of kilobytes for our kernels). Each thread keeps its own
// cache of it in front (no lock on a hit). `is_bit` caches the "<name>.b<i>" test the bit
// rules make on every term. Thread-safe.
struct SymbolName {
  std::string text;
  bool is_bit = false;
};
const SymbolName* intern_symbol(std::string_view name);

// The terms of an affine form: (symbol, coefficient) pairs sorted by the symbol's text
// (the order a std::map<std::string, int64_t> had, so Affine::text() and every hash built
// from it are unchanged), at most one per symbol. Iteration yields
// std::pair<const std::string&, int64_t> by value; the string lives in the symbol table.
// Small forms stay inline (no allocation up to kInline terms).
class Terms {
 public:
  struct Term {
    const SymbolName* sym;
    int64_t coef;
  };
  static constexpr size_t kInline = 4;
  using Storage = absl::InlinedVector<Term, kInline>;
  using value_type = std::pair<const std::string&, int64_t>;

  class const_iterator {
   public:
    struct Arrow {
      value_type v;
      const value_type* operator->() const { return &v; }
    };
    const_iterator() = default;
    explicit const_iterator(Storage::const_iterator it) : it_(it) {}
    value_type operator*() const { return {it_->sym->text, it_->coef}; }
    Arrow operator->() const { return Arrow{**this}; }
    const_iterator& operator++() { ++it_; return *this; }
    bool operator==(const const_iterator& o) const { return it_ == o.it_; }
    bool operator!=(const const_iterator& o) const { return it_ != o.it_; }
    const Term& term() const { return *it_; }

   private:
    Storage::const_iterator it_;
  };

  const_iterator begin() const { return const_iterator(v_.begin()); }
  const_iterator end() const { return const_iterator(v_.end()); }
  size_t size() const { return v_.size(); }
  bool empty() const { return v_.empty(); }
  const_iterator find(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != end(); }
  // Removes the term of `name`; returns how many were removed (0 or 1).
  size_t erase(std::string_view name);
  // The coefficient of `name`, inserted as 0 when absent (as std::map::operator[]; the
  // caller must not leave a 0 behind).
  int64_t& operator[](std::string_view name);
  bool operator==(const Terms& o) const;

  // Raw access for Affine.cpp's merges: `raw()` is sorted by symbol text.
  const Storage& raw() const { return v_; }
  Storage& raw() { return v_; }

 private:
  Storage v_;
};

// Orders symbols by text (pointer-equal symbols are equal without reading the text).
inline int compare_symbols(const SymbolName* a, const SymbolName* b) {
  if (a == b) return 0;
  return a->text.compare(b->text);
}

struct Affine {
  int64_t c0 = 0;
  Terms terms;  // no zero coefficients

  static Affine constant(int64_t c) { Affine a; a.c0 = c; return a; }
  static Affine symbol(std::string_view s, int64_t coef = 1);
  static Affine symbol(const SymbolName* s, int64_t coef = 1);
  bool is_const() const { return terms.empty(); }
  bool operator==(const Affine& o) const { return c0 == o.c0 && terms == o.terms; }
  // Canonical text, "4*param0 + 8*tid.x.b1 + 16"; equal forms give equal text.
  std::string text() const;
  // hash_text(text()) without building the string (Hash.h).
  uint64_t text_hash() const;
  // Only the terms whose symbol starts with one of the kept prefixes (used to blank
  // a leaf's coordinate while keeping which buffer it reads).
  Affine keep_prefix(std::initializer_list<const char*> prefixes) const;
  // hash_text of keep_prefix(prefixes) with its constant replaced by `c0` (0: none),
  // without building the form or its text.
  uint64_t kept_text_hash(std::initializer_list<const char*> prefixes, int64_t c0) const;
};

// a += b, in place (no copy of a).
void add_to(Affine& a, const Affine& b);
// a += c * s for one symbol, in place.
void add_term(Affine& a, const SymbolName* s, int64_t c);

Affine add(const Affine& a, const Affine& b);
Affine sub(const Affine& a, const Affine& b);
Affine scale(const Affine& a, int64_t k);
// a * b when one side is constant, ctaid * (block-uniform), or a sum of parameters times a
// sum of coordinate bits / block coordinates / parameters (expanded into product symbols
// "tid.x.b2*param8", "ctaid.y*(param8)", "param7*param9"; a product is never a bit).
std::optional<Affine> mul(const Affine& a, const Affine& b);
// Logical right shift by k: exact by the tz rule or the bit-renumbering rule.
std::optional<Affine> shr(const Affine& a, int k);
// a & mask: identity when the mask covers every bit a can set, bit selection on bit terms
// (a 0/1 bit symbol times c > 0 sets the bits of c; the bit terms must set disjoint bits).
std::optional<Affine> and_mask(const Affine& a, uint64_t mask, int width);
// a | b and a ^ b: an addition when the two share no possible set bit.
std::optional<Affine> or_disjoint(const Affine& a, const Affine& b);
// a | c for a constant c >= 0: (a & ~c) + c, exact when the mask rule is.
std::optional<Affine> or_const(const Affine& a, int64_t c);
// A thread index expanded into bit symbols: sum 2^i * "<name>.b<i>" for i < bits.
Affine bits_of(const std::string& name, int bits);
// Loop forms (Walk.cpp, TripCount.cpp): d * n for the loop's iteration symbol n,
// "~n<depth>" times the constant and "~n<depth>*s" per symbol s of d; a / m when m divides
// every coefficient; a / d for d a constant or one parameter stride term (below).
Affine times_iteration(const Affine& d, int depth);
std::optional<Affine> divide(const Affine& a, int64_t m);
std::optional<Affine> over(const Affine& a, const Affine& d);

}  // namespace fixbits::verify
