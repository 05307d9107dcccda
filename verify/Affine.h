// Affine.h — integer values of a symbolic thread: c0 + sum c_s * s over named symbols
// (§6.1 "Addresses"). Symbols are thread/block coordinates, block extents, parameters,
// shared-variable bases and loop holes; a thread index under a launch bound 2^n is written
// in its bits "tid.x.b0".."tid.x.b{n-1}", each 0 or 1. Every operation either returns an
// exact affine result or nullopt (the caller then makes an opaque token); none guesses.
// Arithmetic is over int64 and assumes the kernel's index arithmetic does not wrap.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace fixbits::verify {

// Two's-complement wrapping arithmetic: hostile literals must not reach signed overflow.
inline int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline int64_t wrap_abs(int64_t a) { return a < 0 ? wrap_mul(a, -1) : a; }

struct Affine {
  int64_t c0 = 0;
  std::map<std::string, int64_t> terms;  // no zero coefficients

  static Affine constant(int64_t c) { Affine a; a.c0 = c; return a; }
  static Affine symbol(const std::string& s, int64_t coef = 1);
  bool is_const() const { return terms.empty(); }
  bool operator==(const Affine& o) const { return c0 == o.c0 && terms == o.terms; }
  // Canonical text, "4*param0 + 8*tid.x.b1 + 16"; equal forms give equal text.
  std::string text() const;
  // Only the terms whose symbol starts with one of the kept prefixes (used to blank
  // a leaf's coordinate while keeping which buffer it reads).
  Affine keep_prefix(std::initializer_list<const char*> prefixes) const;
};

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

}  // namespace fixbits::verify
