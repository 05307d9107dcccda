// affine_test.cpp — the exact shift/mask/or rules of §6.1, and that inexact cases refuse;
// the interned flat-term form gives the text (and so the hashes) the std::map form gave.
#include "verify/Affine.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "verify/Hash.h"

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


// The std::map<std::string, int64_t> form Affine had before its terms were interned (the
// model the flat form must agree with, text for text): add, sub = add(a, scale(b, -1)),
// scale, and the text with terms in string order.
struct MapForm {
  int64_t c0 = 0;
  std::map<std::string, int64_t> terms;
};

MapForm model_add(const MapForm& a, const MapForm& b) {
  MapForm out = a;
  out.c0 = wrap_add(out.c0, b.c0);
  for (const auto& [s, c] : b.terms) {
    int64_t& t = out.terms[s];
    t = wrap_add(t, c);
    if (t == 0) out.terms.erase(s);
  }
  return out;
}

MapForm model_scale(const MapForm& a, int64_t k) {
  MapForm out;
  if (k == 0) return out;
  out.c0 = wrap_mul(a.c0, k);
  for (const auto& [s, c] : a.terms) {
    if (wrap_mul(c, k) != 0) out.terms[s] = wrap_mul(c, k);
  }
  return out;
}

std::string model_text(const MapForm& a) {
  std::string out;
  for (const auto& [s, c] : a.terms) {
    if (!out.empty()) out += " + ";
    if (c == 1) {
      absl::StrAppend(&out, s);
    } else {
      absl::StrAppend(&out, c, "*", s);
    }
  }
  if (a.c0 != 0 || out.empty()) {
    if (!out.empty()) out += " + ";
    absl::StrAppend(&out, a.c0);
  }
  return out;
}

// Symbols whose string order differs from any numbering (b10 < b2, "param" < "param.u",
// '*' and '(' below letters, a hole's '~' above them) and coefficients at the int64 edges.
const std::vector<std::string> kNames = {"tid.x.b0", "tid.x.b1", "tid.x.b10", "tid.x.b2", "param1", "param10",
                                         "param.u1f", "ctaid.x", "ctaid.x*(param2)", "tid.x.b2*param8",
                                         "~h1.0", "~h1.self", "~n1*param9", "shared0", "global", "a"};
const std::vector<int64_t> kCoefs = {1, -1, 2, 3, -4, 1 << 20, std::numeric_limits<int64_t>::min(),
                                     std::numeric_limits<int64_t>::max(), -std::numeric_limits<int64_t>::max()};

TEST(Affine, FlatTermsAgreeWithTheMapFormTextForText) {
  std::mt19937_64 rng(6);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto draw = [&](Affine* a, MapForm* m) {
    *a = Affine::constant(0);
    *m = MapForm();
    const int64_t c0 = pick(3) == 0 ? 0 : kCoefs[pick(kCoefs.size())];
    a->c0 = m->c0 = c0;
    const size_t n = pick(9);  // past the inline capacity too
    for (size_t i = 0; i < n; ++i) {
      const std::string& s = kNames[pick(kNames.size())];
      const int64_t c = kCoefs[pick(kCoefs.size())];
      *a = add(*a, Affine::symbol(s, c));
      *m = model_add(*m, MapForm{0, {{s, c}}});
    }
  };
  for (int round = 0; round < 4000; ++round) {
    Affine a, b;
    MapForm ma, mb;
    draw(&a, &ma);
    draw(&b, &mb);
    ASSERT_EQ(a.text(), model_text(ma));
    const int64_t k = kCoefs[pick(kCoefs.size())];
    EXPECT_EQ(add(a, b).text(), model_text(model_add(ma, mb)));
    EXPECT_EQ(sub(a, b).text(), model_text(model_add(ma, model_scale(mb, -1))));
    EXPECT_EQ(scale(a, k).text(), model_text(model_scale(ma, k)));
    Affine in_place = a;
    add_to(in_place, b);
    EXPECT_EQ(in_place, add(a, b));
    EXPECT_EQ(in_place.text(), model_text(model_add(ma, mb)));
    // The streamed hashes are hash_text of the texts they stand for.
    EXPECT_EQ(a.text_hash(), hash_text(a.text()));
    EXPECT_EQ(a.kept_text_hash({"param", "shared", "~"}, 0), hash_text(a.keep_prefix({"param", "shared", "~"}).text()));
    Affine kept = a.keep_prefix({"param", "~", "global"});
    kept.c0 = a.c0;
    EXPECT_EQ(a.kept_text_hash({"param", "~", "global"}, a.c0), hash_text(kept.text()));
    // Equal forms compare equal however they were built; different ones do not.
    EXPECT_EQ(add(a, b), add(b, a));
    EXPECT_EQ(add(a, b) == a, model_text(model_add(ma, mb)) == model_text(ma));
    if (round == 0) continue;
    // Lookups by name, erase and insert through operator[] keep the text order.
    const std::string& s = kNames[pick(kNames.size())];
    EXPECT_EQ(a.terms.contains(s), ma.terms.contains(s));
    if (auto it = a.terms.find(s); it != a.terms.end()) {
      EXPECT_EQ(it->second, ma.terms.at(s));
    }
    a.terms.erase(s);
    ma.terms.erase(s);
    EXPECT_EQ(a.text(), model_text(ma));
    a.terms[s] = 7;
    ma.terms[s] = 7;
    EXPECT_EQ(a.text(), model_text(ma));
  }
}

TEST(Affine, TermsIterateInStringOrder) {
  Affine a = bits_of("tid.x", 12);
  a = add(a, Affine::symbol("~h1.0"));
  a = add(a, Affine::symbol("ctaid.x*(param2)", 3));
  EXPECT_EQ(a.text(),
            "3*ctaid.x*(param2) + tid.x.b0 + 2*tid.x.b1 + 1024*tid.x.b10 + 2048*tid.x.b11 + 4*tid.x.b2 + "
            "8*tid.x.b3 + 16*tid.x.b4 + 32*tid.x.b5 + 64*tid.x.b6 + 128*tid.x.b7 + 256*tid.x.b8 + "
            "512*tid.x.b9 + ~h1.0");
  std::vector<std::string> names;
  for (const auto& [s, c] : a.terms) names.push_back(s);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(names.size(), 14u);
}

TEST(Affine, InterningIsOneEntryPerNameAcrossThreads) {
  // Threads intern the same names concurrently (the table is shared, behind its lock; each
  // thread's cache is its own): every thread gets the one entry per name.
  const std::vector<std::string> names = {"param.u77", "tid.y.b3", "~h9.self", "shared.sel(shared0,shared1,3)"};
  std::vector<std::vector<const SymbolName*>> got(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < 200; ++r) {
        for (const std::string& n : names) got[t].push_back(intern_symbol(absl::StrCat(n, r % 50)));
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (size_t t = 1; t < got.size(); ++t) EXPECT_EQ(got[t], got[0]);
  EXPECT_EQ(intern_symbol("tid.y.b30")->text, "tid.y.b30");
  EXPECT_TRUE(intern_symbol("tid.y.b30")->is_bit);
  EXPECT_FALSE(intern_symbol("tid.x.b2*param8")->is_bit);
}

}  // namespace
}  // namespace fixbits::verify
