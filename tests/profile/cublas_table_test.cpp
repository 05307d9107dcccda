// profile/CublasKey, CublasClass and CublasTable on the CPU: which config attributes
// form a variant and which a class, the split count as a per-shape value, the table's
// text round trip and its parse errors (version 1 refused), span rules in (K, split
// count), and lookups (cells, K runs, every error naming its field), plus the
// embedded table.
#include <string>
#include <tuple>

#include "gtest/gtest.h"
#include "profile/CublasClass.h"
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

const AlgoConfig kAlgo{.id = 66, .tile_id = 393, .splitk_num = 3, .reduction_scheme = 2,
                       .cta_swizzling = 0, .custom_option = 3, .stages_id = 22,
                       .inner_shape_id = 7, .cluster_shape_id = 2, .unreadable = ""};

TEST(CublasKey, DropsSwizzleAndKeepsTheSplitCountOutside) {
  AlgoConfig b = kAlgo;
  b.cta_swizzling = 1;
  b.unreadable = "CUSTOM_OPTION";
  EXPECT_EQ(answer_of(kAlgo), answer_of(b));
  EXPECT_EQ(answer_of(kAlgo).splitk, 3u);
  EXPECT_TRUE(answer_of(kAlgo).key.split);
  // Another split count: the same variant, another answer.
  AlgoConfig c = kAlgo;
  c.splitk_num = 144;
  EXPECT_EQ(answer_of(c).key, answer_of(kAlgo).key);
  EXPECT_NE(answer_of(c), answer_of(kAlgo));
  // 0 and 1 both mean no split.
  AlgoConfig none = kAlgo;
  none.splitk_num = 0;
  AlgoConfig one = kAlgo;
  one.splitk_num = 1;
  EXPECT_EQ(answer_of(none), answer_of(one));
  EXPECT_EQ(answer_of(none).splitk, 1u);
  EXPECT_FALSE(answer_of(none).key.split);
  // Every other attribute separates variants.
  for (int field = 0; field < 7; ++field) {
    AlgoConfig d = kAlgo;
    switch (field) {
      case 0: d.id = 13; break;
      case 1: d.tile_id = 19; break;
      case 2: d.reduction_scheme = 4; break;
      case 3: d.custom_option = 4; break;
      case 4: d.stages_id = 23; break;
      case 5: d.inner_shape_id = 8; break;
      case 6: d.cluster_shape_id = 3; break;
    }
    EXPECT_NE(answer_of(kAlgo).key, answer_of(d).key) << "attribute " << field;
  }
  EXPECT_EQ(to_string(answer_of(kAlgo).key),
            "id=66 tile=393 split=1 reduction=compute_type custom=3 stages=22 inner=7 cluster=2");
}

TEST(CublasKey, TextRoundTripsAndErrorsNameTheField) {
  const CublasKey k{.id = -3, .tile = 5, .split = true, .reduction = 4, .custom = 1,
                    .stages = 9, .inner = 0, .cluster = 65535};
  absl::StatusOr<CublasKey> back = parse_cublas_key(to_string(k));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, k);
  absl::Status s = parse_cublas_key("id=1 tile=2").status();
  EXPECT_TRUE(has(s, "8 fields") && has(s, "split, reduction")) << s;
  EXPECT_TRUE(has(parse_cublas_key("id=1 tile=x split=0 reduction=none custom=0 stages=0 "
                                   "inner=0 cluster=0").status(), "CublasKey.tile"));
  EXPECT_TRUE(has(parse_cublas_key("id=1 tile=2 split=0 reduction=sideways custom=0 stages=0 "
                                   "inner=0 cluster=0").status(), "CublasKey.reduction"));
  EXPECT_TRUE(has(parse_cublas_key("id=1 tile=2 split=3 reduction=none custom=0 stages=0 "
                                   "inner=0 cluster=0").status(), "CublasKey.split"));
  EXPECT_TRUE(has(parse_cublas_key("id=1 tile=2 splitk=1 reduction=none custom=0 stages=0 "
                                   "inner=0 cluster=0").status(), "splitk=1"));
  EXPECT_TRUE(has(parse_cublas_key("tile=2 id=1 split=0 reduction=none custom=0 stages=0 "
                                   "inner=0 cluster=0").status(), "CublasKey.id is out of order"));
}

TEST(CublasClass, CoarseFieldsMaskTheSpeedKnobs) {
  const CublasKey a = answer_of(kAlgo).key;
  const CublasClass c = class_of(a);
  EXPECT_EQ(to_string(c), "id=66 split=1 reduction=compute_type custom=3 inner=7");
  // Tile, stages and cluster do not leave the class; a coarse field does.
  CublasKey b = a;
  b.tile = 1, b.stages = 2, b.cluster = 0;
  EXPECT_TRUE(contains(c, b));
  EXPECT_EQ(class_of(b), c);
  for (int f : {0, 2, 3, 4, 6}) {  // id, split, reduction, custom, inner
    CublasKey d = a;
    if (f == 0) d.id = 13;
    if (f == 2) d.split = false;
    if (f == 3) d.reduction = 1;
    if (f == 4) d.custom = 0;
    if (f == 6) d.inner = 0;
    EXPECT_FALSE(contains(c, d)) << key_field_name(static_cast<KeyField>(f));
  }
  EXPECT_EQ(differing_fields(a, b),
            field_bit(KeyField::kTile) | field_bit(KeyField::kStages) |
                field_bit(KeyField::kCluster));
  // A refined class fixes a fine field too.
  const CublasClass fine = class_of(a, kCoarseFields | field_bit(KeyField::kStages));
  EXPECT_EQ(to_string(fine), "id=66 split=1 reduction=compute_type custom=3 stages=22 inner=7");
  EXPECT_FALSE(contains(fine, b));
  // Ids 13, 23 and 24 fix tile and stages from the start (the H200 probes split ids 23
  // and 24 by them); cluster stays out, and nvjet (66) stays coarse.
  const uint32_t tile_stages = field_bit(KeyField::kTile) | field_bit(KeyField::kStages);
  for (int32_t id : {13, 23, 24, 66, 14, 11}) {
    CublasKey k = a;
    k.id = id;
    const bool fixes = id == 13 || id == 23 || id == 24;
    EXPECT_EQ(key_mask(k), kCoarseFields | (fixes ? tile_stages : 0u)) << id;
    EXPECT_EQ(class_of(k).mask, key_mask(k)) << id;
    CublasKey other = k;
    other.tile = 1, other.cluster = 0;
    EXPECT_EQ(contains(class_of(k), other), !fixes) << id;
    other = k;
    other.cluster = 0;
    EXPECT_TRUE(contains(class_of(k), other)) << id;
  }
  CublasKey k23 = a;
  k23.id = 23;
  const CublasClass c23 = class_of(k23);
  EXPECT_EQ(to_string(c23), "id=23 tile=393 split=1 reduction=compute_type custom=3 stages=22 "
                            "inner=7");
  for (const CublasClass& x : {c, fine, c23}) {
    absl::StatusOr<CublasClass> back = parse_cublas_class(to_string(x));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, x);
  }
  absl::Status s = parse_cublas_class("id=66 split=1 custom=0 inner=0").status();
  EXPECT_TRUE(has(s, "lacks the coarse field(s) reduction")) << s;
  EXPECT_TRUE(has(parse_cublas_class("id=66 split=1 reduction=none custom=z inner=0").status(),
                  "CublasClass.custom"));
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

TEST(SpanRule, AppliesInKAndTheSplitCount) {
  const SpanRule split{.kind = SpanRule::Kind::kSplit, .granule = 64};
  EXPECT_EQ(to_string(split), "split/64");
  // The H200 probe: 1x4096x4096 f16 with splitk 3 split at 1408.
  EXPECT_EQ(apply_span_rule(split, 0, 4096, 3), 1408);
  EXPECT_EQ(apply_span_rule(split, 0, 576, 3), 192);    // ceil(576/3) = 192, a multiple of 64
  EXPECT_EQ(apply_span_rule(split, 0, 1000, 3), 384);   // 334 -> 384
  EXPECT_EQ(apply_span_rule(split, 0, 1000, 4), 256);   // 250 -> 256
  EXPECT_EQ(apply_span_rule(split, 0, 16384, 6), 2752); // 2731 -> 2752
  EXPECT_EQ(apply_span_rule(split, 0, 10, 3), 10);      // 64 > K: one part, span K
  EXPECT_EQ(apply_span_rule(SpanRule{}, 77, 1000, 3), 77);
  EXPECT_EQ(apply_span_rule(SpanRule{.kind = SpanRule::Kind::kWhole}, 77, 1000, 3), 1000);
  for (const char* t : {"fixed", "whole", "split/64", "split/1", "split/8/64", "parts/4"}) {
    absl::StatusOr<SpanRule> r = parse_span_rule(t);
    ASSERT_TRUE(r.ok()) << t;
    EXPECT_EQ(to_string(*r), t);
  }
  for (const char* t : {"split/0", "split3/64", "split", "fixd", "split/-2", "split/64/8",
                        "split/8/8", "split/8/", "split//64", "split/8/64/128"}) {
    EXPECT_FALSE(parse_span_rule(t).ok()) << t;
  }
  // split/8/64: granule 64 where K is a multiple of 64, 8 elsewhere (session 8's id 24
  // tile 11 split class: spans 80 at 289/4, 293/4, 297/4 and 128 at 2240/33).
  const SpanRule aligned{.kind = SpanRule::Kind::kSplit, .granule = 8, .aligned = 64};
  EXPECT_EQ(apply_span_rule(aligned, 0, 289, 4), 80);     // ceil = 73 -> 80
  EXPECT_EQ(apply_span_rule(aligned, 0, 2240, 33), 128);  // 68 -> 128 (2240 = 35 * 64)
  EXPECT_EQ(apply_span_rule(aligned, 0, 4264, 33), 136);  // 130 -> 136 (4264 = 66.6 * 64)
  EXPECT_EQ(apply_span_rule(aligned, 0, 4096, 5), 832);   // 820 -> 832
  EXPECT_EQ(apply_span_rule(aligned, 0, 4096, 132), 64);  // 32 -> 64
  EXPECT_EQ(apply_span_rule(aligned, 0, 40, 3), 16);      // 14 -> 16
  // The list the fit walks: plain granules first, coarsest first, then the aligned ones.
  const std::vector<SpanRule>& rules = split_rules();
  ASSERT_GE(rules.size(), 11u);
  EXPECT_EQ(to_string(rules[0]), "split/1024");
  EXPECT_EQ(to_string(rules[10]), "split/1");
  EXPECT_EQ(to_string(rules[11]), "split/1/2");
  EXPECT_EQ(to_string(rules.back()), "split/1/1024");
  for (size_t i = 11; i < rules.size(); ++i) {
    EXPECT_GT(rules[i].aligned, rules[i].granule) << to_string(rules[i]);
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

// f16:f16:nn over ms {1, 16}, ns {1, 64}, K in [1, 4096]; classes: 0 plain (variants 0
// and 1, tiles 2 and 3), 1 split/64 (variant 2), 2 no descriptor (variant 3):
//   cell (0, 0): variant 0 below 577, variant 2 with split 3 from 577, with split 4 from 2000;
//   cell (0, 1): variant 1;  cell (1, 0): variant 3;  cell (1, 1): refused from 100.
CublasTable small_table() {
  CublasTable t;
  t.arch = "sm_90";
  t.library = "130100";
  t.command = "fixbits-cublas-scan --per-octave=2";
  const CublasKey v0{.id = 66, .tile = 2}, v1{.id = 66, .tile = 3};
  const CublasKey v2{.id = 66, .tile = 2, .split = true, .reduction = 2};
  const CublasKey v3{.id = 13};
  TableClass c0{.family = "f16:f16:nn", .cls = class_of(v0),
                .probes = {{.variant = 0, .m = 1, .n = 1, .k = 577},
                           {.variant = 1, .m = 1, .n = 64, .k = 1023}},
                .desc = plain_f16()};
  TableClass c1{.family = "f16:f16:nn", .cls = class_of(v2),
                .probes = {{.variant = 2, .m = 1, .n = 1, .k = 577, .splitk = 3},
                           {.variant = 2, .m = 1, .n = 1, .k = 2047, .splitk = 4}},
                .desc = split_f16(256),
                .rules = {SpanRule{.kind = SpanRule::Kind::kSplit, .granule = 64}},
                .note = "2 probe(s) agree"};
  TableClass c2{.family = "f16:f16:nn", .cls = class_of(v3), .note = "not probed: K too large"};
  t.classes = {c0, c1, c2};
  t.variants = {{"f16:f16:nn", v0, 0, 10}, {"f16:f16:nn", v1, 0, 5},
                {"f16:f16:nn", v2, 1, 4}, {"f16:f16:nn", v3, 2, 1}};
  FamilyMap m{.family = "f16:f16:nn", .ms = {1, 16}, .ns = {1, 64}, .k_max = 4096,
              .refusal = "16x64x100 f16*f16->f16 NN: no algorithm"};
  m.runs = {{{1, 0, 1}, {577, 2, 3}, {2000, 2, 4}},
            {{1, 1, 1}},
            {{1, 3, 1}},
            {{1, 0, 1}, {100, -1, 1}}};
  t.maps = {m};
  return t;
}

// `text` with its first `from` replaced by `to` (a failed expectation when it has none).
std::string replaced(std::string text, std::string_view from, std::string_view to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(CublasTable, TextRoundTrips) {
  const CublasTable t = small_table();
  const std::string text = write_table(t);
  absl::StatusOr<CublasTable> back = parse_table(text);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
  EXPECT_EQ(*back, t) << text;
  EXPECT_EQ(write_table(*back), text);
  EXPECT_NE(text.find("\t0\t0\t1:0,577:2/3,2000:2/4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("2@1x1x577/3,2@1x1x2047/4\tsplit/64\t"), std::string::npos) << text;
  // Comments, CRLF and a tab inside a note survive as documented.
  CublasTable tab = t;
  tab.classes[2].note = "a\tb";
  absl::StatusOr<CublasTable> tab_back = parse_table("# comment\r\n" + write_table(tab));
  ASSERT_TRUE(tab_back.ok()) << tab_back.status();
  EXPECT_EQ(tab_back->classes[2].note, "a b");
}

TEST(CublasTable, ParseErrorsNameTheLine) {
  const std::string good = write_table(small_table());
  auto replace = [&](std::string_view from, std::string_view to) { return replaced(good, from, to); };
  EXPECT_TRUE(has(parse_table("").status(), "empty"));
  // A version 1 table is refused with what to do.
  absl::Status v1 = parse_table(replace("fixbits-cublas-table\t2", "fixbits-cublas-table\t1")).status();
  EXPECT_EQ(v1.code(), absl::StatusCode::kFailedPrecondition) << v1;
  EXPECT_TRUE(has(v1, "version 1") && has(v1, "rescan")) << v1;
  EXPECT_TRUE(has(parse_table("fixbits-cubl\t2\n").status(), "line 1"));
  EXPECT_TRUE(has(parse_table(replace("class\t1\t", "class\t5\t")).status(), "out of order"));
  EXPECT_TRUE(has(parse_table(replace("variant\t1\t", "variant\t7\t")).status(), "out of order"));
  EXPECT_TRUE(has(parse_table(replace("577:2/3,2000", "577:9/3,2000")).status(), "variant index 9"));
  EXPECT_TRUE(has(parse_table(replace("577:2/3,2000", "577:2,2000")).status(),
                  "split count 1 for variant 2"));
  EXPECT_TRUE(has(parse_table(replace("\t0\t0\t1:0,", "\t0\t0\t1:0/2,")).status(),
                  "split count 2 for variant 0"));
  EXPECT_TRUE(has(parse_table(replace("1:0,577:2/3,2000:2/4", "577:0,1:2/3,2000:2/4")).status(),
                  "not ascending"));
  EXPECT_TRUE(has(parse_table(replace("577:2/3,2000", "577:2/x,2000")).status(),
                  "<k0>:<variant>[/<split count>]"));
  EXPECT_TRUE(has(parse_table(replace("runs\tf16:f16:nn\t1\t1", "runs\tf16:f16:nn\t2\t1")).status(),
                  "outside the 2 x 2 grid"));
  EXPECT_TRUE(has(parse_table(replace("\tm\t1,16", "\tm\t16,1")).status(), "ascending"));
  EXPECT_TRUE(has(parse_table(replace("split/64", "split/0")).status(), "span rule"));
  EXPECT_TRUE(has(parse_table(replace("2@1x1x577/3", "2@1x1/3")).status(), "the probe"));
  EXPECT_TRUE(has(parse_table(replace("2@1x1x577/3", "0@1x1x577/3")).status(),
                  "not a variant of that class"));
  EXPECT_TRUE(has(parse_table(replace("arch\tsm_90", "arc\tsm_90")).status(), "\"arc\""));
  EXPECT_TRUE(has(parse_table(replace("cuts=[256:chain]", "cuts=[256:chain,16:chain]")).status(),
                  "2 cut levels"));
  // A variant outside its class, and a split rule on a class without split.
  EXPECT_TRUE(has(parse_table(replace("tile=3 split=0 reduction=none custom=0 stages=0 inner=0 "
                                      "cluster=0\t0", "tile=3 split=0 reduction=none custom=0 "
                                      "stages=0 inner=0 cluster=0\t2")).status(),
                  "variant 1"));
  CublasTable bad_rule = small_table();
  bad_rule.classes[0].desc = split_f16(128);
  bad_rule.classes[0].rules = {SpanRule{.kind = SpanRule::Kind::kSplit, .granule = 64}};
  EXPECT_TRUE(has(parse_table(write_table(bad_rule)).status(), "split rule at cut level 0"));
  EXPECT_TRUE(has(parse_table(replace("id=66 split=1 reduction=compute_type custom=0 inner=0",
                                      "id=66 split=1 custom=0 inner=0")).status(),
                  "coarse field(s) reduction"));
}

// A class without a descriptor keeps the probes a stopped visit finished, one probed
// line each after its class line; the parser checks each like a class's own probe.
TEST(CublasTable, OpenProbesRoundTripAndAreChecked) {
  CublasTable t = small_table();
  dsl::GemmDesc fma = plain_f16();
  fma.instruction = dsl::Instruction::kScalarFma;
  fma.instruction_k = 1;
  t.classes[2].open_probes = {{.at = {.variant = 3, .m = 16, .n = 1, .k = 300}, .desc = plain_f16()},
                              {.at = {.variant = 3, .m = 16, .n = 1, .k = 900}, .desc = fma}};
  const std::string text = write_table(t);
  absl::StatusOr<CublasTable> back = parse_table(text);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
  EXPECT_EQ(*back, t) << text;
  EXPECT_EQ(write_table(*back), text);
  const std::string line = "\nprobed\t2\t3@16x1x300/1\t" + dsl::to_string(plain_f16()) + "\n";
  const size_t at = text.find(line);
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_LT(text.find("\nclass\t2\t"), at) << "after its class line";
  auto replace = [&](std::string_view from, std::string_view to) { return replaced(text, from, to); };
  EXPECT_TRUE(has(parse_table(replace("probed\t2\t3@16x1x300", "probed\t0\t0@16x1x300")).status(),
                  "class 0, which has a descriptor"));
  EXPECT_TRUE(has(parse_table(replace("probed\t2\t3@16x1x300", "probed\t7\t3@16x1x300")).status(),
                  "names class 7 before its class line"));
  EXPECT_TRUE(has(parse_table(replace("probed\t2\t3@16x1x300", "probed\t2\t0@16x1x300")).status(),
                  "not a variant of that class"));
  EXPECT_TRUE(has(parse_table(replace("probed\t2\t3@16x1x300", "probed\t2\t3@16x1/1")).status(),
                  "the probe"));
  EXPECT_TRUE(has(parse_table(replace("\tgemm{", "\tgemm{nonsense ")).status(), "line"));
  EXPECT_TRUE(has(parse_table(replace("probed\t2\t3@16x1x300/1\t", "probed\t2\t3@16x1x300/1\tx\t")).status(),
                  "a probed line has 4 fields, not 5"));
  // A class with a descriptor keeps none: the parser refuses what write_table wrote.
  CublasTable both = t;
  both.classes[0].open_probes = {{.at = {.variant = 0, .m = 1, .n = 1, .k = 5}, .desc = plain_f16()}};
  EXPECT_TRUE(has(parse_table(write_table(both)).status(), "class 0, which has a descriptor"));
}

TEST(CublasTable, SeenPointsRoundTripAndAreChecked) {
  CublasTable t = small_table();
  t.variants[2].seen = {{.variant = 2, .m = 4, .n = 1, .k = 900, .splitk = 3},
                        {.variant = 2, .m = 1, .n = 2, .k = 3000, .splitk = 5}};
  const std::string text = write_table(t);
  absl::StatusOr<CublasTable> back = parse_table(text);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
  EXPECT_EQ(*back, t) << text;
  EXPECT_EQ(write_table(*back), text);
  const size_t at = text.find("\nseen\t2\t2@4x1x900/3,2@1x2x3000/5\n");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_LT(text.find("\nvariant\t2\t"), at) << "after its variant line";
  EXPECT_GT(text.find("\nvariant\t3\t"), at) << "before the next variant";
  auto replace = [&](std::string_view from, std::string_view to) { return replaced(text, from, to); };
  EXPECT_TRUE(has(parse_table(replace("seen\t2\t2@4x1", "seen\t2\t1@4x1")).status(),
                  "the seen point 1@4x1x900/3 of variant 2 names variant 1"));
  EXPECT_TRUE(has(parse_table(replace("seen\t2\t2@4x1", "seen\t9\t2@4x1")).status(),
                  "names variant 9 before its variant line"));
  EXPECT_TRUE(has(parse_table(replace("900/3,", "900/1,")).status(),
                  "variant 2 (split=1) has a seen point with split count 1"));
  EXPECT_TRUE(has(parse_table(replace("x900/3,", "/3,")).status(), "the probe"));
  EXPECT_TRUE(has(parse_table(replace("\nseen\t2\t", "\nseen\t2\t2@1x1x5/3\nseen\t2\t")).status(),
                  "variant 2 has a second seen line"));
  EXPECT_TRUE(has(parse_table(replace("\nseen\t2\t", "\nseen\t2\tx\t")).status(),
                  "a seen line has 3 fields, not 4"));
}

TEST(CublasTable, LookupFollowsCellsRunsAndSplitCounts) {
  const CublasTable t = small_table();
  auto run = [&](int64_t m, int64_t n, int64_t k) {
    absl::StatusOr<MapRun> r = lookup_run(t, GemmShape{.m = m, .n = n, .k = k});
    return r.ok() ? std::make_pair(r->variant, r->splitk) : std::make_pair(-100, 0u);
  };
  EXPECT_EQ(run(1, 1, 1), std::make_pair(0, 1u));
  EXPECT_EQ(run(1, 1, 576), std::make_pair(0, 1u));
  EXPECT_EQ(run(1, 1, 577), std::make_pair(2, 3u));
  EXPECT_EQ(run(15, 63, 1999), std::make_pair(2, 3u));  // still cell (0, 0)
  EXPECT_EQ(run(15, 63, 2000), std::make_pair(2, 4u));
  EXPECT_EQ(run(15, 64, 4096), std::make_pair(1, 1u));  // cell (0, 1)
  EXPECT_EQ(run(16, 63, 3), std::make_pair(3, 1u));     // cell (1, 0)
  EXPECT_EQ(run(16, 64, 99), std::make_pair(0, 1u));    // cell (1, 1) before the refusal
  // One class, the span from each shape's own split count.
  absl::StatusOr<dsl::GemmDesc> d = lookup(t, GemmShape{.m = 2, .n = 2, .k = 1000});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, split_f16(384));  // split 3: ceil(1000/3) = 334 -> 384
  d = lookup(t, GemmShape{.m = 2, .n = 2, .k = 4096});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, split_f16(1024));  // split 4: 1024
  d = lookup(t, GemmShape{.m = 2, .n = 2, .k = 2001});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, split_f16(512));  // split 4: ceil(2001/4) = 501 -> 512
  d = lookup(t, GemmShape{.m = 2, .n = 64, .k = 100});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, plain_f16());
  // desc_for refuses a split count that does not fit the class.
  absl::Status s = desc_for(t.classes[1], GemmShape{.m = 1, .n = 1, .k = 100}, 1).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(has(s, "split count 1")) << s;
  EXPECT_EQ(class_shapes(t, 0), 15);
  EXPECT_EQ(find_variant(t, "f16:f16:nn", CublasKey{.id = 13}), 3);
  EXPECT_EQ(find_variant(t, "bf16:bf16:nn", CublasKey{.id = 13}), -1);
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
  EXPECT_TRUE(has(s, "not probed: K too large") && has(s, "class id=13 tile=0 split=0")) << s;
  s = err(GemmShape{.m = 16, .n = 64, .k = 100});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(has(s, "refused") && has(s, "no algorithm")) << s;
}

// cuBLASLt's own answer instead of the map: its variant's class, or the one class
// that contains an answer the scan never saw, carried to the answer's split count.
TEST(CublasTable, LookupAnswerTakesTheAnswersClassWithoutTheMap) {
  CublasTable t = small_table();
  const GemmShape off_grid{.m = 9, .n = 40, .k = 500};  // the map says variant 0 (plain)
  absl::StatusOr<dsl::GemmDesc> d =
      lookup_answer(t, off_grid, CublasAnswer{t.variants[2].key, 3});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, split_f16(192));  // ceil(500/3) = 167 -> 192
  EXPECT_EQ(*lookup(t, off_grid), plain_f16());
  // A tile the scan never saw: class 0 holds every id 66 plain tile.
  d = lookup_answer(t, off_grid, CublasAnswer{CublasKey{.id = 66, .tile = 77}, 1});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, plain_f16());
  EXPECT_EQ(*class_of_answer(t, off_grid, CublasKey{.id = 66, .tile = 77}), 0);
  // Beyond the scanned grid too (the answer needs no cell).
  d = lookup_answer(t, GemmShape{.m = 100000, .n = 3, .k = 100000},
                    CublasAnswer{t.variants[2].key, 4});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, split_f16(25024));  // ceil(100000/4) = 25000 -> 25024
  // An answer in no class, a class without a descriptor, a wrong split count.
  absl::Status s = lookup_answer(t, off_grid, CublasAnswer{CublasKey{.id = 99}, 1}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(has(s, "id=99") && has(s, "f16:f16:nn")) << s;
  s = lookup_answer(t, off_grid, CublasAnswer{CublasKey{.id = 13}, 1}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(has(s, "not probed")) << s;
  s = lookup_answer(t, off_grid, CublasAnswer{t.variants[2].key, 1}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  // Another family's answer.
  GemmShape bf = off_grid;
  bf.a_dtype = bf.b_dtype = bf.out_dtype = DType::kBF16;
  EXPECT_EQ(lookup_answer(t, bf, CublasAnswer{t.variants[0].key, 1}).status().code(),
            absl::StatusCode::kNotFound);
  // Two classes that both contain an unseen answer: which one runs it is not known.
  TableClass part = t.classes[0];
  part.cls = class_of(CublasKey{.id = 66, .tile = 5}, t.classes[0].cls.mask | field_bit(KeyField::kTile));
  t.classes.push_back(part);
  s = lookup_answer(t, off_grid, CublasAnswer{CublasKey{.id = 66, .tile = 5}, 1}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(has(s, "two of its classes")) << s;
  // A scanned variant still goes to its own class.
  EXPECT_EQ(*class_of_answer(t, off_grid, t.variants[1].key), 0);
}

TEST(CublasTable, InnerFixedLevelsAreClampedToTheSplit) {
  TableClass c{.family = "f16:f16:nn", .cls = class_of(CublasKey{.split = true}),
               .probes = {{.variant = 0, .k = 600, .splitk = 3}},
               .desc = split_f16(256),
               .rules = {SpanRule{.kind = SpanRule::Kind::kSplit, .granule = 64}, SpanRule{}}};
  c.desc->k_cuts.push_back({128, dsl::Fold::kTreeUp});
  absl::StatusOr<dsl::GemmDesc> d = desc_for(c, GemmShape{.m = 1, .n = 1, .k = 100}, 3);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->k_cuts.size(), 2u);
  EXPECT_EQ(d->k_cuts[0].span, 64);  // ceil(100/3) = 34 -> 64
  EXPECT_EQ(d->k_cuts[1].span, 64);  // 128 clamped to the part it cuts
  d = desc_for(c, GemmShape{.m = 1, .n = 1, .k = 3000}, 3);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->k_cuts[0].span, 1024);
  EXPECT_EQ(d->k_cuts[1].span, 128);
}

// gemvNSP's 32 strided lanes of 4-element tiles (classes 3 and 80 of the H200 table).
dsl::GemmDesc gemv32() {
  dsl::GemmDesc d;
  d.family = dsl::GemmFamily::kGemv;
  d.instruction = dsl::Instruction::kScalarFma;
  d.instruction_k = 1;
  d.k_loop_step = {};
  d.lane_layout = dsl::LaneLayout::kStrided;
  d.lanes = 32;
  d.lane_tile = 4;
  d.lane_fold = {16, 8, 4, 2, 1};
  return d;
}

TEST(CublasTable, LaneRuleGivesTheLaneCountByN) {
  TableClass c{.family = "f16:f16:nn", .cls = class_of(CublasKey{.id = 13, .custom = 10}),
               .probes = {{.variant = 0, .m = 1, .n = 4096, .k = 200}},
               .desc = gemv32(),
               .lanes_by_n = {{1, 32}, {8449, 26}, {10561, 20}, {12673, 12}, {14785, 8}}};
  for (const auto& [n, lanes, fold] :
       {std::tuple{int64_t{1}, 32, std::vector<int>{16, 8, 4, 2, 1}},
        std::tuple{int64_t{8448}, 32, std::vector<int>{16, 8, 4, 2, 1}},
        // 26 and 20 lanes fold over 32 slots, the absent partners skipped (GemmDesc.h).
        std::tuple{int64_t{8449}, 26, std::vector<int>{16, 8, 4, 2, 1}},
        std::tuple{int64_t{10560}, 26, std::vector<int>{16, 8, 4, 2, 1}},
        std::tuple{int64_t{10561}, 20, std::vector<int>{16, 8, 4, 2, 1}},
        std::tuple{int64_t{12673}, 12, std::vector<int>{8, 4, 2, 1}},
        std::tuple{int64_t{14785}, 8, std::vector<int>{4, 2, 1}},
        std::tuple{int64_t{1} << 20, 8, std::vector<int>{4, 2, 1}}}) {
    absl::StatusOr<dsl::GemmDesc> d = desc_for(c, GemmShape{.m = 1, .n = n, .k = 87}, 1);
    ASSERT_TRUE(d.ok()) << n << ": " << d.status();
    EXPECT_EQ(d->lanes, lanes) << n;
    EXPECT_EQ(d->lane_fold, fold) << n;
    EXPECT_EQ(d->lane_tile, 4) << n;
  }
  EXPECT_EQ(lanes_at(c.lanes_by_n, 9000), 26);
  EXPECT_EQ(lanes_at({}, 9000), 0);
  // The text form: in the rules column, round-tripping with the table.
  EXPECT_EQ(to_string(c.lanes_by_n), "lanes@1:32,8449:26,10561:20,12673:12,14785:8");
  CublasTable t = small_table();
  t.classes[2].desc = gemv32();
  t.classes[2].probes = {{.variant = 3, .m = 1, .n = 64, .k = 200}};
  t.classes[2].lanes_by_n = c.lanes_by_n;
  const std::string text = write_table(t);
  EXPECT_NE(text.find("\tlanes@1:32,8449:26,10561:20,12673:12,14785:8\tgemm{family=gemv"),
            std::string::npos)
      << text;
  absl::StatusOr<CublasTable> back = parse_table(text);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
  EXPECT_EQ(*back, t);
  // Malformed rules are named; a lane rule on a non-gemv descriptor is refused.
  for (const char* bad : {"lanes@2:32", "lanes@1:32,1:16", "lanes@1:0", "lanes@1:65",
                          "lanes@1-32", "lanes@"}) {
    absl::StatusOr<std::vector<LaneStep>> r = parse_lane_rule(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(has(r.status(), "lane rule")) << r.status();
  }
  t.classes[0].lanes_by_n = c.lanes_by_n;
  absl::StatusOr<CublasTable> wrong = parse_table(write_table(t));
  ASSERT_FALSE(wrong.ok());
  EXPECT_TRUE(has(wrong.status(), "class 0") && has(wrong.status(), "lane rule")) << wrong.status();
}

TEST(CublasTable, TileCapGivesStridedTilesThatFollowKUpToTheCap) {
  TableClass c{.family = "f16:f16:nn", .cls = class_of(CublasKey{.id = 13, .custom = 92}),
               .probes = {{.variant = 0, .m = 1, .n = 2074, .k = 451}},
               .desc = gemv32(),
               .lane_tile_cap = 64};
  c.desc->lane_layout = dsl::LaneLayout::kContiguous;
  c.desc->lane_tile = 1;
  for (const auto& [k, tile] : {std::pair{int64_t{1}, 1}, std::pair{int64_t{341}, 11},
                                std::pair{int64_t{1430}, 45}, std::pair{int64_t{2048}, 64},
                                std::pair{int64_t{4097}, 64}}) {
    absl::StatusOr<dsl::GemmDesc> d = desc_for(c, GemmShape{.m = 1, .n = 64, .k = k}, 1);
    ASSERT_TRUE(d.ok()) << k << ": " << d.status();
    EXPECT_EQ(d->lane_layout, dsl::LaneLayout::kStrided) << k;
    EXPECT_EQ(d->lane_tile, tile) << k;
  }
  // Both gemv rules in one rules column, and what is refused.
  CublasTable t = small_table();
  t.classes[2].desc = gemv32();
  t.classes[2].probes = {{.variant = 3, .m = 1, .n = 64, .k = 200}};
  t.classes[2].lanes_by_n = {{1, 32}, {8449, 26}};
  t.classes[2].lane_tile_cap = 64;
  std::string text = write_table(t);
  EXPECT_NE(text.find("\tlanes@1:32,8449:26;tile@64\t"), std::string::npos) << text;
  absl::StatusOr<CublasTable> back = parse_table(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, t);
  for (const char* bad : {"tile@0", "tile@x", "tile@64;tile@32", "tile@64;split/8"}) {
    std::string b = text;
    b.replace(b.find("lanes@1:32,8449:26;tile@64"), 26, bad);
    absl::StatusOr<CublasTable> r = parse_table(b);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(has(r.status(), "line")) << r.status();
  }
}

// A split gemv class carries span rules and gemv rules in one column (session 15's
// device run 1 wrote "split/1,tile@1", which the parser then refused).
TEST(CublasTable, SplitGemvClassKeepsSpanAndGemvRules) {
  CublasTable t = small_table();
  dsl::GemmDesc d = gemv32();
  d.k_cuts = {dsl::KCut{.span = 1649, .fold = dsl::Fold::kChain}};
  t.classes[1].desc = d;  // class 1 is a split class (split=1)
  for (const auto& [lanes, cap, want] :
       {std::tuple{std::vector<LaneStep>{}, int64_t{1}, "\tsplit/1,tile@1\t"},
        std::tuple{std::vector<LaneStep>{{1, 32}, {8449, 26}}, int64_t{0},
                   "\tsplit/1,lanes@1:32,8449:26\t"},
        std::tuple{std::vector<LaneStep>{{1, 32}, {8449, 26}}, int64_t{64},
                   "\tsplit/1,lanes@1:32,8449:26;tile@64\t"}}) {
    t.classes[1].rules = {SpanRule{.kind = SpanRule::Kind::kSplit, .granule = 1}};
    t.classes[1].lanes_by_n = lanes;
    t.classes[1].lane_tile_cap = cap;
    const std::string text = write_table(t);
    EXPECT_NE(text.find(want), std::string::npos) << text;
    absl::StatusOr<CublasTable> back = parse_table(text);
    ASSERT_TRUE(back.ok()) << want << ": " << back.status();
    EXPECT_EQ(*back, t) << want;
  }
  // A span rule after the gemv group is refused, naming the line.
  std::string bad = write_table(t);
  bad.replace(bad.find("split/1,lanes@1:32,8449:26;tile@64"), 34, "lanes@1:32;tile@64;split/1");
  absl::StatusOr<CublasTable> r = parse_table(bad);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(has(r.status(), "line")) << r.status();
}

// A class bounded to one layout of the K vectors (KLayout, session 38's class 114):
// its text, the parse's checks, and desc_for at the other layout.
TEST(CublasTable, ALayoutBoundClassServesOnlyItsLayout) {
  CublasTable t = small_table();
  t.classes[2].desc = gemv32();
  t.classes[2].probes = {{.variant = 3, .m = 1, .n = 64, .k = 200}};  // B strided (nn)
  t.classes[2].lane_tile_cap = 64;
  t.classes[2].layout = KLayout::kStrided;
  const std::string text = write_table(t);
  EXPECT_NE(text.find("\ttile@64;layout@strided\t"), std::string::npos) << text;
  absl::StatusOr<CublasTable> back = parse_table(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, t);
  EXPECT_TRUE(desc_for(t.classes[2], GemmShape{.m = 1, .n = 300, .k = 500}, 1).ok());
  absl::Status other = desc_for(t.classes[2], GemmShape{.m = 7, .n = 1, .k = 500}, 1).status();
  EXPECT_EQ(other.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(has(other, "only where the K vectors are strided") && has(other, "7x1") &&
              has(other, "they are contiguous"))
      << other;
  // A layout its probe is not at, one that is no layout, twice, or without a descriptor.
  for (const char* bad : {"tile@64;layout@contiguous", "tile@64;layout@sideways",
                          "tile@64;layout@strided;layout@strided"}) {
    std::string b = text;
    b.replace(b.find("tile@64;layout@strided"), 22, bad);
    absl::StatusOr<CublasTable> r = parse_table(b);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(has(r.status(), "line") || has(r.status(), "class 2")) << r.status();
  }
  // A class a visit left without a descriptor keeps its layout with its open probes,
  // which must be at it too.
  CublasTable open = t;
  open.classes[2].desc.reset();
  open.classes[2].probes.clear();
  open.classes[2].lane_tile_cap = 0;
  open.classes[2].open_probes = {{.at = {.variant = 3, .m = 1, .n = 64, .k = 200}, .desc = gemv32()}};
  absl::StatusOr<CublasTable> kept = parse_table(write_table(open));
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(*kept, open);
  open.classes[2].open_probes[0].at.n = 1;  // now at the contiguous layout
  absl::StatusOr<CublasTable> r = parse_table(write_table(open));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(has(r.status(), "class 2") && has(r.status(), "1x1x200")) << r.status();
}

// A layout-bound class with the tree its probes at the other layout found (OtherLayout,
// session 42's class 114): the "other" line round-trips, desc_for serves that tree there
// at any K, and the parse refuses one on a class of any layout, one with K cuts, one
// whose probe is at the class's own layout, and a second one.
TEST(CublasTable, TheOtherLayoutsTreeIsServedThere) {
  CublasTable t = small_table();
  t.classes[2].desc = gemv32();
  t.classes[2].probes = {{.variant = 3, .m = 1, .n = 64, .k = 200}};  // B strided (nn)
  t.classes[2].layout = KLayout::kStrided;
  dsl::GemmDesc two = gemv32();
  two.lanes = 2;
  two.lane_tile = 64;
  two.lane_fold = {1};
  t.classes[2].other = OtherLayout{.probes = {{.variant = 3, .m = 7, .n = 1, .k = 478},
                                              {.variant = 3, .m = 9, .n = 1, .k = 95}},
                                   .desc = two};
  const std::string text = write_table(t);
  EXPECT_NE(text.find("other\t2\t3@7x1x478/1,3@9x1x95/1\tgemm{"), std::string::npos) << text;
  absl::StatusOr<CublasTable> back = parse_table(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, t);
  for (int64_t k : {1, 61, 478, 100000}) {
    absl::StatusOr<dsl::GemmDesc> d = desc_for(t.classes[2], GemmShape{.m = 7, .n = 1, .k = k}, 1);
    ASSERT_TRUE(d.ok()) << k << ": " << d.status();
    EXPECT_EQ(*d, two) << k;
  }
  EXPECT_EQ(*desc_for(t.classes[2], GemmShape{.m = 1, .n = 300, .k = 500}, 1), gemv32());
  auto refused = [](CublasTable bad, const std::string& want) {
    absl::StatusOr<CublasTable> r = parse_table(write_table(bad));
    EXPECT_FALSE(r.ok()) << want;
    EXPECT_TRUE(has(r.status(), "class 2") && has(r.status(), want)) << r.status();
  };
  CublasTable any = t;
  any.classes[2].layout = KLayout::kAny;
  refused(any, "holds at any layout");
  CublasTable cut = t;
  cut.classes[2].other->desc.k_cuts = {{100, dsl::Fold::kChain}};
  refused(cut, "1 cut levels");
  CublasTable foreign = t;
  foreign.classes[2].other->probes[0].variant = 0;  // a variant of class 0
  refused(foreign, "probe of variant 0");
  CublasTable own = t;
  own.classes[2].other->probes[1].n = 64;  // 9x64: B strided, the class's own layout
  refused(own, "9x64x95");
  std::string twice = text;
  const size_t at = twice.find("other\t2\t");
  twice.insert(at, twice.substr(at, twice.find('\n', at) - at + 1));
  absl::StatusOr<CublasTable> r = parse_table(twice);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(has(r.status(), "second other line")) << r.status();
}

TEST(CublasProfile, UsualShapesAndTheEmbeddedTable) {
  absl::StatusOr<GemmShape> s = usual_shape({64, 128, 256}, DType::kF8E4M3);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(family_of(*s), "f8e4m3:f16:nt");
  EXPECT_TRUE(runtime::validate_for_cublaslt(*s).ok());
  EXPECT_EQ(family_of(*usual_shape({1, 1, 1}, DType::kBF16)), "bf16:bf16:nn");
  absl::Status bad = cublas_map(sm90, {1, 1, 1}, DType::kF32).status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(has(bad, "dtype f32")) << bad;
  EXPECT_TRUE(has(cublas_map(static_cast<Arch>(7), {1, 1, 1}, DType::kF16).status(), "arch 7"));
  absl::StatusOr<const CublasTable*> t = cublas_table(sm90);
  if (!t.ok()) {
    // The committed table is still the placeholder (version 2, no map): the error says
    // what to run, and is not a parse error.
    EXPECT_EQ(t.status().code(), absl::StatusCode::kFailedPrecondition) << t.status();
    EXPECT_TRUE(has(t.status(), "fixbits-cublas-scan")) << t.status();
    EXPECT_FALSE(has(t.status(), "does not parse")) << t.status();
    EXPECT_EQ(cublas_map(sm90, {1, 1, 1}, DType::kF16).status(), t.status());
    return;
  }
  EXPECT_EQ((*t)->arch, "sm_90");
  absl::Status out = cublas_map(sm90, {0, 1, 1}, DType::kF16).status();
  EXPECT_EQ(out.code(), absl::StatusCode::kOutOfRange) << out;
  EXPECT_TRUE(has(out, "GemmShape.m = 0")) << out;
}

}  // namespace
}  // namespace fixbits::profile
