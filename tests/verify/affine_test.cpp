// affine_test.cpp — the exact shift/mask/or rules of §6.1, and that inexact cases refuse.
#include "verify/Affine.h"

#include "gtest/gtest.h"

namespace fixbits::verify {
namespace {

Affine tid(int bits) { return bits_of("tid.x", bits); }

TEST(Affine, TextIsCanonical) {
  Affine a = add(Affine::symbol("b", 2), Affine::symbol("a", 3));
  a.c0 = 5;
  EXPECT_EQ(a.text(), "3*a + 2*b + 5");
  EXPECT_EQ(Affine().text(), "0");
  EXPECT_EQ(sub(a, a).text(), "0");  // zero coefficients vanish
}

TEST(Affine, BlockCoordinateTimesUniformIsOneSymbol) {
  // ctaid.x * (param2 + 1): a row offset, one exact symbol with the coordinate's coefficient.
  Affine row = Affine::symbol("param2");
  row.c0 = 1;
  auto r = mul(Affine::symbol("ctaid.x", 2), row);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->text(), "2*ctaid.x*(param2 + 1)");
  auto commuted = mul(row, Affine::symbol("ctaid.x", 2));
  ASSERT_TRUE(commuted.has_value());
  EXPECT_EQ(commuted->text(), r->text());
  // The symbol is blanked with the block coordinates, not kept as a parameter.
  EXPECT_EQ(r->keep_prefix({"param", "shared", "~"}).text(), "0");
  // Thread-dependent or hole-dependent factors of a coordinate stay refused.
  EXPECT_FALSE(mul(Affine::symbol("ctaid.x"), tid(5)).has_value());
  EXPECT_FALSE(mul(Affine::symbol("ctaid.x"), Affine::symbol("~h1.0")).has_value());
  // An offset coordinate times a parameter expands (see ParameterTimesCoordinates).
  Affine shifted = Affine::symbol("ctaid.x");
  shifted.c0 = 1;
  ASSERT_TRUE(mul(shifted, Affine::symbol("param2")).has_value());
  EXPECT_EQ(mul(shifted, Affine::symbol("param2"))->text(), "ctaid.x*(param2) + param2");
  // No bit rule applies to it: shr by a non-divisor is refused.
  EXPECT_FALSE(shr(*r, 2).has_value());
}

TEST(Affine, ParameterTimesCoordinatesExpands) {
  // a_sm * (16*ctaid.y + lane/4 + 8): the row offset of an A fragment, term by term.
  Affine row = add(Affine::symbol("ctaid.y", 16), add(Affine::symbol("tid.x.b2"), Affine::symbol("tid.x.b3", 2)));
  row.c0 = 8;
  auto r = mul(Affine::symbol("param8", 2), row);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->text(), "32*ctaid.y*(param8) + 16*param8 + 2*tid.x.b2*param8 + 4*tid.x.b3*param8");
  EXPECT_EQ(mul(row, Affine::symbol("param8", 2))->text(), r->text());  // commutes
  // Blanking keeps the buffer-like parameter terms, drops the coordinate products.
  EXPECT_EQ(r->keep_prefix({"param", "shared", "~"}).text(), "16*param8");
  // A product is not a bit: no bit rule reads it (shr by 1 of tid.x.b2*param8 is refused).
  EXPECT_FALSE(shr(*mul(Affine::symbol("param8"), Affine::symbol("tid.x.b2")), 1).has_value());
  // Two parameters multiply in name order; a parameter times a hole, a product or a whole
  // thread index stays refused.
  EXPECT_EQ(mul(Affine::symbol("param9"), Affine::symbol("param7"))->text(), "param7*param9");
  EXPECT_FALSE(mul(Affine::symbol("param8"), Affine::symbol("~h1.0")).has_value());
  EXPECT_FALSE(mul(Affine::symbol("param8"), *r).has_value());
  EXPECT_FALSE(mul(Affine::symbol("param8"), Affine::symbol("tid.x")).has_value());
}

TEST(Affine, MultiBitTermsSetTheirOwnBits) {
  // 24*tid.x.b5 sets bits 3 and 4 when the bit is 1: disjoint from bits 0..2 below it.
  Affine a = add(Affine::symbol("tid.x.b5", 24), add(Affine::symbol("tid.x.b2"), Affine::symbol("tid.x.b3", 2)));
  a = add(a, Affine::symbol("ctaid.y", 32));
  auto masked = and_mask(a, ~uint64_t{8}, 32);  // clears bit 3 of the 24
  ASSERT_TRUE(masked.has_value());
  EXPECT_EQ(masked->text(), "32*ctaid.y + tid.x.b2 + 2*tid.x.b3 + 16*tid.x.b5");
  // (a | 8) = (a & ~8) + 8: LLVM's "row + 8" through a register that may already hold bit 3.
  auto o = or_const(a, 8);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->text(), "32*ctaid.y + tid.x.b2 + 2*tid.x.b3 + 16*tid.x.b5 + 8");
  auto sh = shr(a, 3);
  ASSERT_TRUE(sh.has_value());
  EXPECT_EQ(sh->text(), "4*ctaid.y + 3*tid.x.b5");
  // Overlapping bit terms (3*b0 and 2*b1 share bit 1) could carry: refused.
  Affine overlap = add(Affine::symbol("tid.x.b0", 3), Affine::symbol("tid.x.b1", 2));
  EXPECT_FALSE(and_mask(overlap, 1, 32).has_value());
  EXPECT_FALSE(shr(overlap, 1).has_value());
  EXPECT_FALSE(or_const(overlap, 4).has_value());
  // A constant reaching into a coarser term, or a negative one: refused.
  EXPECT_FALSE(or_const(a, 64).has_value());
  EXPECT_FALSE(or_const(a, -1).has_value());
}

TEST(Affine, ShiftRightByTrailingZeros) {
  Affine a = add(Affine::symbol("ctaid.x", 16), scale(Affine::symbol("param0"), 8));
  a.c0 = 24;
  auto r = shr(a, 3);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->text(), "2*ctaid.x + param0 + 3");
  EXPECT_FALSE(shr(a, 4).has_value());  // 8*param0 >> 4 is not exact
}

TEST(Affine, ShiftRightRenumbersThreadBits) {
  auto r = shr(tid(7), 5);  // warp index of a 128-thread block
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->text(), "tid.x.b5 + 2*tid.x.b6");
  // Bits under a multiple of 2^7: 128*ctaid + tid >> 5 = 4*ctaid + warp.
  auto s = shr(add(scale(Affine::symbol("ctaid.x"), 128), tid(7)), 5);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->text(), "4*ctaid.x + tid.x.b5 + 2*tid.x.b6");
  // Bits overlapping a coarser term could carry: refused.
  EXPECT_FALSE(shr(add(scale(Affine::symbol("ctaid.x"), 16), tid(7)), 5).has_value());
}

TEST(Affine, MaskSelectsBitsAndKeepsCoveredTerms) {
  auto lane = and_mask(tid(8), 31, 32);
  ASSERT_TRUE(lane.has_value());
  EXPECT_EQ(*lane, tid(5));
  // A mask covering every bit the value can set is the identity.
  Affine a = add(scale(Affine::symbol("ctaid.x"), 64), tid(6));
  auto id = and_mask(a, 0xffffffffu, 32);
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(*id, a);
  // A mask cutting through an unbounded term is not exact.
  EXPECT_FALSE(and_mask(a, 0xff, 32).has_value());
  EXPECT_FALSE(and_mask(Affine::symbol("param0"), 0xf0, 32).has_value());
  // 0x3ff on the packed AMD work-item id keeps x.
  Affine packed = add(tid(6), scale(bits_of("tid.y", 10), 1024));
  auto x = and_mask(packed, 0x3ff, 32);
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(*x, tid(6));
}

TEST(Affine, OrOfDisjointBitsIsAnAddition) {
  Affine hi = scale(Affine::symbol("ctaid.x"), 64);
  auto r = or_disjoint(hi, tid(6));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r, add(hi, tid(6)));
  EXPECT_FALSE(or_disjoint(tid(6), tid(6)).has_value());
  EXPECT_FALSE(or_disjoint(scale(Affine::symbol("ctaid.x"), 32), tid(6)).has_value());
  EXPECT_FALSE(or_disjoint(Affine::constant(-1), tid(2)).has_value());
}

TEST(Affine, MultiplyNeedsAConstantSide) {
  auto r = mul(Affine::symbol("a"), Affine::constant(-3));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->text(), "-3*a");
  EXPECT_FALSE(mul(Affine::symbol("a"), Affine::symbol("b")).has_value());
  EXPECT_FALSE(shr(Affine::symbol("a"), 64).has_value());
  EXPECT_FALSE(shr(Affine::symbol("a"), -1).has_value());
}

TEST(Affine, KeepPrefixBlanksCoordinates) {
  Affine a = add(Affine::symbol("param0"), scale(Affine::symbol("ctaid.x"), 512));
  a = add(a, scale(tid(3), 4));
  a.c0 = 12;
  EXPECT_EQ(a.keep_prefix({"param"}).text(), "param0");
}

}  // namespace
}  // namespace fixbits::verify
