// profile/CublasKey and profile/CublasTable on the CPU: which config attributes form
// the bit-deciding key, the table's text round trip and its parse errors, span rules,
// and lookups (cells, K runs, every error naming its field), plus the embedded table.
#include <string>

#include "gtest/gtest.h"
#include "profile/CublasKey.h"
#include "profile/CublasProfile.h"
#include "profile/CublasTable.h"

namespace fixbits::profile {
namespace {

using runtime::AlgoConfig;
using runtime::GemmShape;

bool has(const absl::Status& s, std::string_view part) {
  return std::string(s.message()).find(part) != std::string::npos;
}

TEST(CublasKey, DropsOnlySwizzleAndNormalizesNoSplit) {
  const AlgoConfig a{.id = 21, .tile_id = 18, .splitk_num = 0, .reduction_scheme = 2,
                     .cta_swizzling = 0, .custom_option = 3, .stages_id = 22,
                     .inner_shape_id = 7, .cluster_shape_id = 2, .unreadable = ""};
  AlgoConfig b = a;
  b.cta_swizzling = 1;
  b.splitk_num = 1;
  b.unreadable = "CUSTOM_OPTION";
  EXPECT_EQ(key_of(a), key_of(b));
  EXPECT_EQ(key_of(a).splitk, 1u);
  // Every other attribute separates keys.
  for (int field = 0; field < 8; ++field) {
    AlgoConfig c = a;
    switch (field) {
      case 0: c.id = 22; break;
      case 1: c.tile_id = 19; break;
      case 2: c.splitk_num = 2; break;
      case 3: c.reduction_scheme = 4; break;
      case 4: c.custom_option = 4; break;
      case 5: c.stages_id = 23; break;
      case 6: c.inner_shape_id = 8; break;
      case 7: c.cluster_shape_id = 3; break;
    }
    EXPECT_NE(key_of(a), key_of(c)) << "attribute " << field;
  }
  EXPECT_EQ(to_string(key_of(a)),
            "id=21 tile=18 splitk=1 reduction=compute_type custom=3 stages=22 inner=7 cluster=2");
}

TEST(CublasKey, TextRoundTripsAndErrorsNameTheField) {
  const CublasKey k{.id = -3, .tile = 5, .splitk = 4, .reduction = 4, .custom = 1,
                    .stages = 9, .inner = 0, .cluster = 65535};
  absl::StatusOr<CublasKey> back = parse_cublas_key(to_string(k));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, k);
  EXPECT_TRUE(has(parse_cublas_key("id=1 tile=2").status(), "8 fields"));
  EXPECT_TRUE(has(parse_cublas_key("id=1 tile=x splitk=1 reduction=none custom=0 stages=0 "
                                   "inner=0 cluster=0").status(), "CublasKey.tile"));
  EXPECT_TRUE(has(parse_cublas_key("id=1 tile=2 splitk=1 reduction=sideways custom=0 stages=0 "
                                   "inner=0 cluster=0").status(), "CublasKey.reduction"));
  EXPECT_TRUE(has(parse_cublas_key("id=1 tile=2 splitk=0 reduction=none custom=0 stages=0 "
                                   "inner=0 cluster=0").status(), "CublasKey.splitk"));
  EXPECT_TRUE(has(parse_cublas_key("id=1 tile=2 split=1 reduction=none custom=0 stages=0 "
                                   "inner=0 cluster=0").status(), "splitk="));
}

TEST(CublasKey, FamilyNamesDtypesAndLayout) {
  const GemmShape fp8{.m = 1, .n = 2, .k = 3, .a_dtype = DType::kF8E4M3,
                      .b_dtype = DType::kF8E5M2, .out_dtype = DType::kBF16,
                      .b_row_major = false};
  EXPECT_EQ(family_of(fp8), "f8e4m3/f8e5m2:bf16:nt");
  absl::StatusOr<GemmShape> back = parse_family(family_of(fp8));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, (GemmShape{.a_dtype = DType::kF8E4M3, .b_dtype = DType::kF8E5M2,
                              .out_dtype = DType::kBF16, .b_row_major = false}));
  EXPECT_EQ(family_of(GemmShape{}), "f16:f16:nn");
  EXPECT_TRUE(has(parse_family("f16:f16").status(), "three"));
  EXPECT_TRUE(has(parse_family("f17:f16:nn").status(), "f17"));
  EXPECT_TRUE(has(parse_family("f16:f16:nx").status(), "layout"));
}

TEST(SpanRule, AppliesAsDocumented) {
  const SpanRule split{.kind = SpanRule::Kind::kSplit, .parts = 3, .granule = 64};
  EXPECT_EQ(to_string(split), "split3/64");
  EXPECT_EQ(apply_span_rule(split, 0, 576), 192);    // ceil(576/3) = 192, a multiple of 64
  EXPECT_EQ(apply_span_rule(split, 0, 1000), 384);   // 334 -> 384
  EXPECT_EQ(apply_span_rule(split, 0, 10), 10);      // 64 > K: one part, span K
  EXPECT_EQ(apply_span_rule(SpanRule{}, 77, 1000), 77);
  EXPECT_EQ(apply_span_rule(SpanRule{.kind = SpanRule::Kind::kWhole}, 77, 1000), 1000);
  for (const char* t : {"fixed", "whole", "split3/64", "split1/1"}) {
    absl::StatusOr<SpanRule> r = parse_span_rule(t);
    ASSERT_TRUE(r.ok()) << t;
    EXPECT_EQ(to_string(*r), t);
  }
  for (const char* t : {"split0/64", "split3/0", "split3", "fixd", "split-1/2"}) {
    EXPECT_FALSE(parse_span_rule(t).ok()) << t;
  }
}

dsl::GemmDesc plain_f16() {
  dsl::GemmDesc d;  // mma_sync ik=16, fast accumulation, plain
  return d;
}

dsl::GemmDesc split_f16(int64_t span) {
  dsl::GemmDesc d;
  d.family = dsl::GemmFamily::kSplitK;
  d.k_cuts = {{span, dsl::Fold::kChain}};
  return d;
}

// f16:f16:nn over ms {1, 16}, ns {1, 64}, K in [1, 4096]:
//   cell (0, 0): K < 577 key 0 (plain), from 577 key 1 (split3/64);
//   cell (0, 1): key 0;  cell (1, 0): key 2 (no descriptor);  cell (1, 1): refused from 100.
CublasTable small_table() {
  CublasTable t;
  t.arch = "sm_90";
  t.library = "130100";
  t.command = "fixbits-cublas-scan --per-octave=2";
  TableKey k0{.family = "f16:f16:nn", .key = CublasKey{.id = 1, .tile = 2},
              .m = 1, .n = 1, .k = 2, .shapes = 10, .probed_k = {2}, .desc = plain_f16()};
  TableKey k1{.family = "f16:f16:nn", .key = CublasKey{.id = 1, .tile = 2, .splitk = 3},
              .m = 1, .n = 1, .k = 577, .shapes = 4, .probed_k = {577, 1001},
              .desc = split_f16(256),
              .rules = {SpanRule{.kind = SpanRule::Kind::kSplit, .parts = 3, .granule = 64}},
              .note = "the probes at K = 577 and K = 1001 agree"};
  TableKey k2{.family = "f16:f16:nn", .key = CublasKey{.id = 7}, .m = 16, .n = 1, .k = 8192,
              .shapes = 1, .note = "not probed: K too large"};
  t.keys = {k0, k1, k2};
  FamilyMap m{.family = "f16:f16:nn", .ms = {1, 16}, .ns = {1, 64}, .k_max = 4096,
              .refusal = "16x64x100 f16*f16->f16 NN: no algorithm"};
  m.runs = {{{1, 0}, {577, 1}}, {{1, 0}}, {{1, 2}}, {{1, 0}, {100, -1}}};
  t.maps = {m};
  return t;
}

TEST(CublasTable, TextRoundTrips) {
  const CublasTable t = small_table();
  const std::string text = write_table(t);
  absl::StatusOr<CublasTable> back = parse_table(text);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
  EXPECT_EQ(*back, t) << text;
  EXPECT_EQ(write_table(*back), text);
  // Comments, CRLF and a tab inside a note survive as documented.
  CublasTable tab = t;
  tab.keys[2].note = "a\tb";
  absl::StatusOr<CublasTable> tab_back = parse_table("# comment\r\n" + write_table(tab));
  ASSERT_TRUE(tab_back.ok()) << tab_back.status();
  EXPECT_EQ(tab_back->keys[2].note, "a b");
}

TEST(CublasTable, ParseErrorsNameTheLine) {
  const std::string good = write_table(small_table());
  auto replace = [&](std::string_view from, std::string_view to) {
    std::string s = good;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
  };
  EXPECT_TRUE(has(parse_table("").status(), "empty"));
  EXPECT_TRUE(has(parse_table("fixbits-cublas-table\t2\n").status(), "line 1"));
  EXPECT_TRUE(has(parse_table(replace("key\t1\t", "key\t5\t")).status(), "out of order"));
  EXPECT_TRUE(has(parse_table(replace("\t0\t0\t1:0,577:1", "\t0\t0\t1:0,577:9")).status(),
                  "key index 9"));
  EXPECT_TRUE(has(parse_table(replace("\t0\t0\t1:0,577:1", "\t0\t0\t577:0,1:1")).status(),
                  "not ascending"));
  EXPECT_TRUE(has(parse_table(replace("runs\tf16:f16:nn\t1\t1", "runs\tf16:f16:nn\t2\t1")).status(),
                  "outside the 2 x 2 grid"));
  EXPECT_TRUE(has(parse_table(replace("\tm\t1,16", "\tm\t16,1")).status(), "ascending"));
  EXPECT_TRUE(has(parse_table(replace("split3/64", "split3/0")).status(), "span rule"));
  EXPECT_TRUE(has(parse_table(replace("1x1x577", "1x1")).status(), "MxNxK"));
  EXPECT_TRUE(has(parse_table(replace("arch\tsm_90", "arc\tsm_90")).status(), "\"arc\""));
  EXPECT_TRUE(has(parse_table(replace("cuts=[256:chain]", "cuts=[256:chain,16:chain]")).status(),
                  "2 cut levels"));
}

TEST(CublasTable, LookupFollowsCellsAndRuns) {
  const CublasTable t = small_table();
  auto key = [&](int64_t m, int64_t n, int64_t k) {
    absl::StatusOr<int> r = lookup_key(t, GemmShape{.m = m, .n = n, .k = k});
    return r.ok() ? *r : -100;
  };
  EXPECT_EQ(key(1, 1, 1), 0);
  EXPECT_EQ(key(1, 1, 576), 0);
  EXPECT_EQ(key(1, 1, 577), 1);
  EXPECT_EQ(key(15, 63, 4096), 1);   // still cell (0, 0)
  EXPECT_EQ(key(15, 64, 4096), 0);   // cell (0, 1)
  EXPECT_EQ(key(16, 63, 3), 2);      // cell (1, 0)
  EXPECT_EQ(key(16, 64, 99), 0);     // cell (1, 1) before the refusal
  absl::StatusOr<dsl::GemmDesc> d = lookup(t, GemmShape{.m = 2, .n = 2, .k = 1000});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, split_f16(384));     // split3/64 at K = 1000
  d = lookup(t, GemmShape{.m = 2, .n = 2, .k = 100});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, plain_f16());
}

TEST(CublasTable, LookupErrorsNameTheField) {
  const CublasTable t = small_table();
  auto err = [&](GemmShape s) { return lookup(t, s).status(); };
  absl::Status s = err(GemmShape{.m = 0, .n = 1, .k = 1});
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(has(s, "GemmShape.m = 0")) << s;
  s = err(GemmShape{.m = 17, .n = 1, .k = 1});
  EXPECT_TRUE(has(s, "GemmShape.m = 17") && has(s, "[1, 16]")) << s;
  s = err(GemmShape{.m = 1, .n = 65, .k = 1});
  EXPECT_TRUE(has(s, "GemmShape.n = 65")) << s;
  s = err(GemmShape{.m = 1, .n = 1, .k = 4097});
  EXPECT_TRUE(has(s, "GemmShape.k = 4097")) << s;
  s = err(GemmShape{.m = 1, .n = 1, .k = 8, .a_dtype = DType::kBF16, .b_dtype = DType::kBF16,
                    .out_dtype = DType::kBF16});
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(has(s, "bf16:bf16:nn") && has(s, "f16:f16:nn")) << s;
  s = err(GemmShape{.m = 16, .n = 1, .k = 8});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(has(s, "not probed: K too large")) << s;
  s = err(GemmShape{.m = 16, .n = 64, .k = 100});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(has(s, "refused") && has(s, "no algorithm")) << s;
}

TEST(CublasTable, InnerFixedLevelsAreClampedToTheSplit) {
  TableKey k{.family = "f16:f16:nn", .key = CublasKey{.splitk = 3},
             .desc = split_f16(256),
             .rules = {SpanRule{.kind = SpanRule::Kind::kSplit, .parts = 3, .granule = 64},
                       SpanRule{}}};
  k.desc->k_cuts.push_back({128, dsl::Fold::kTreeUp});
  absl::StatusOr<dsl::GemmDesc> d = desc_for(k, GemmShape{.m = 1, .n = 1, .k = 100});
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->k_cuts.size(), 2u);
  EXPECT_EQ(d->k_cuts[0].span, 64);  // ceil(100/3) = 34 -> 64
  EXPECT_EQ(d->k_cuts[1].span, 64);  // 128 clamped to the part it cuts
  d = desc_for(k, GemmShape{.m = 1, .n = 1, .k = 3000});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->k_cuts[0].span, 1024);
  EXPECT_EQ(d->k_cuts[1].span, 128);
}

TEST(CublasProfile, UsualShapesAndTheEmbeddedTable) {
  absl::StatusOr<GemmShape> s = usual_shape({64, 128, 256}, DType::kF8E4M3);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(family_of(*s), "f8e4m3:f16:nt");
  EXPECT_TRUE(runtime::validate_for_cublaslt(*s).ok());
  EXPECT_EQ(family_of(*usual_shape({1, 1, 1}, DType::kBF16)), "bf16:bf16:nn");
  absl::Status bad = cublas(sm90, {1, 1, 1}, DType::kF32).status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(has(bad, "dtype f32")) << bad;
  EXPECT_TRUE(has(cublas(static_cast<Arch>(7), {1, 1, 1}, DType::kF16).status(), "arch 7"));
  absl::StatusOr<const CublasTable*> t = cublas_table(sm90);
  if (!t.ok()) {
    // The committed table is still the placeholder: the error says what to run.
    EXPECT_EQ(t.status().code(), absl::StatusCode::kFailedPrecondition) << t.status();
    EXPECT_TRUE(has(t.status(), "fixbits-cublas-scan")) << t.status();
    EXPECT_EQ(cublas(sm90, {1, 1, 1}, DType::kF16).status(), t.status());
    return;
  }
  EXPECT_EQ((*t)->arch, "sm_90");
  absl::Status out = cublas(sm90, {0, 1, 1}, DType::kF16).status();
  EXPECT_EQ(out.code(), absl::StatusCode::kOutOfRange) << out;
  EXPECT_TRUE(has(out, "GemmShape.m = 0")) << out;
}

}  // namespace
}  // namespace fixbits::profile
