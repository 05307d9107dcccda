// MatchTally: counting, merging and the text form a --jobs match hands between processes.
#include "profile/match/MatchTally.h"
#include "samples/common/ShapeArg.h"

#include <gtest/gtest.h>

namespace fixbits::profile {
namespace {

MatchResult result(Verdict v, Verdict ans, bool hit, const std::string& path) {
  MatchResult r;
  r.family = "f16:f16:nn split_k";
  r.verdict = v;
  r.answer_verdict = ans;
  r.map_hit = hit;
  r.path = path;
  r.answer_algo = "id=24 tile=11";
  r.answer_detail = "D[0][1]: cuBLAS 0x3c00,\tfixbits 0x3c01\n(desc)";
  return r;
}

TEST(MatchTallyTest, AddCountsBothPathsAndKeepsTheFirstDifferingExample) {
  MatchTallies t;
  t.add("f16:f16:nn", "3x4x5", result(Verdict::kIdentical, Verdict::kIdentical, true, "kernel"));
  t.add("f16:f16:nn", "6x7x8", result(Verdict::kDiffer, Verdict::kDiffer, true, "reference"));
  t.add("f16:f16:nn", "9x9x9", result(Verdict::kNoDesc, Verdict::kDiffer, false, ""));
  const Tally& d = t.by_dtype.at("f16:f16:nn");
  EXPECT_EQ(d.shapes, 3);
  EXPECT_EQ(d.identical, 1);
  EXPECT_EQ(d.differ, 1);
  EXPECT_EQ(d.differ_at_hit, 1);
  EXPECT_EQ(d.no_desc, 1);
  EXPECT_EQ(d.map_hits, 2);
  EXPECT_EQ(d.kernel, 1);
  EXPECT_EQ(d.reference, 1);
  EXPECT_EQ(d.ans_identical, 1);
  EXPECT_EQ(d.ans_differ, 2);
  const AlgoTally& a = t.by_algo.at("f16:f16:nn id=24 tile=11");
  EXPECT_EQ(a.compared, 3);
  EXPECT_EQ(a.differ, 2);
  EXPECT_EQ(a.example.substr(0, 7), "6x7x8: ");
  EXPECT_EQ(t.differ(), 2);      // the answer path is judged
  EXPECT_EQ(t.map_differ(), 1);  // the map path reported
}

TEST(MatchTallyTest, TextRoundTripsAndMergeAdds) {
  MatchTallies t;
  t.add("f16:f16:nn", "6x7x8", result(Verdict::kDiffer, Verdict::kDiffer, true, "kernel"));
  t.add("bf16:bf16:nn", "1x2x3", result(Verdict::kIdentical, Verdict::kIdentical, false, "kernel"));
  t.failures = 2;
  t.compiled = 5;
  t.compile_s = 1.25;
  absl::StatusOr<MatchTallies> back = parse_tallies(t.to_text());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->to_text(), t.to_text());
  // The example's tab and newline became spaces, so the line form holds.
  EXPECT_EQ(back->by_algo.at("f16:f16:nn id=24 tile=11").example.find('\t'), std::string::npos);

  MatchTallies sum = *back;
  sum.merge(t);
  EXPECT_EQ(sum.by_dtype.at("f16:f16:nn").differ, 2);
  EXPECT_EQ(sum.by_dtype.at("bf16:bf16:nn").identical, 2);
  EXPECT_EQ(sum.by_family.at("f16:f16:nn split_k").shapes, 4);
  EXPECT_EQ(sum.by_algo.at("f16:f16:nn id=24 tile=11").compared, 2);
  EXPECT_EQ(sum.failures, 4);
  EXPECT_EQ(sum.compiled, 10);
  EXPECT_DOUBLE_EQ(sum.compile_s, 2.5);
  EXPECT_EQ(sum.differ(), 2);
}

// The class of each answer rides through the text form and the merge, and
// differing_classes() lists those with a differing shape once each, ascending: what
// fixbits-cublas-match --differing-classes-out hands to fixbits-cublas-scan --classes.
TEST(MatchTallyTest, DifferingClassesSurviveTheTextFormAndTheMerge) {
  MatchTallies a, b;
  MatchResult r = result(Verdict::kDiffer, Verdict::kDiffer, true, "kernel");
  r.answer_class = 48;
  a.add("f16:f16:nn", "6x7x8", r);
  r.answer_algo = "id=23 tile=18";
  r.answer_class = 333;
  r.answer_verdict = Verdict::kIdentical;
  a.add("f16:f16:nn", "1x2x3", r);  // compared, identical: not listed
  r.answer_algo = "id=11";
  r.answer_class = 42;
  r.answer_verdict = Verdict::kDiffer;
  b.add("f16:f16:nn", "2x2x2", r);
  b.add("bf16:bf16:nn", "2x2x3", r);  // another family, same class
  absl::StatusOr<MatchTallies> back = parse_tallies(b.to_text());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->by_algo.at("f16:f16:nn id=11").cls, 42);
  a.merge(*back);
  EXPECT_EQ(a.differing_classes(), (std::vector<int>{42, 48}));
  EXPECT_TRUE(MatchTallies{}.differing_classes().empty());
  EXPECT_FALSE(parse_tallies("algo\tf16 id=1\t1\t1\tx\texample\n").ok());
}

// differing_shapes: each differing answer's first shape as --probe-at takes it, after
// the text form and a merge; samples::parse_shape_arg reads each back to the shape.
TEST(MatchTallyTest, DifferingShapesAreProbeAtArguments) {
  runtime::GemmShape bf16{.m = 3, .n = 5825, .k = 642, .a_dtype = DType::kBF16,
                          .b_dtype = DType::kBF16, .out_dtype = DType::kBF16};
  runtime::GemmShape fp8{.m = 64, .n = 512, .k = 4096, .a_dtype = DType::kF8E4M3,
                         .b_dtype = DType::kF8E4M3, .out_dtype = DType::kF16,
                         .b_row_major = false};
  MatchTallies a, b;
  MatchResult r = result(Verdict::kDiffer, Verdict::kDiffer, true, "kernel");
  r.answer_algo = "id=11";
  a.add("bf16:bf16:nn", runtime::to_string(bf16), r);
  a.add("bf16:bf16:nn", "9x9x9 bf16*bf16->bf16 NN", r);  // not the first: not listed
  r.answer_algo = "id=66";
  b.add("f8e4m3:f16:tn", runtime::to_string(fp8), r);
  r.answer_algo = "id=24";
  b.add("f16:f16:nn", "not a shape", r);  // unreadable: left out
  absl::StatusOr<MatchTallies> back = parse_tallies(b.to_text());
  ASSERT_TRUE(back.ok()) << back.status();
  a.merge(*back);
  const std::vector<std::string> got = a.differing_shapes();
  ASSERT_EQ(got, (std::vector<std::string>{"3x5825x642:bf16:bf16", "64x512x4096:f8e4m3:f16:tn"}));
  for (const auto& [text, want] : {std::pair{got[0], bf16}, std::pair{got[1], fp8}}) {
    absl::StatusOr<runtime::GemmShape> s = samples::parse_shape_arg(text);
    ASSERT_TRUE(s.ok()) << text << ": " << s.status();
    EXPECT_EQ(runtime::to_string(*s), runtime::to_string(want)) << text;
  }
  EXPECT_TRUE(MatchTallies{}.differing_shapes().empty());
}

TEST(MatchTallyTest, UndescribedAnswersAreCountedAndListedMostFirst) {
  runtime::GemmShape gemv{.m = 1, .n = 10618, .k = 212, .a_dtype = DType::kBF16,
                          .b_dtype = DType::kBF16, .out_dtype = DType::kBF16};
  MatchTallies a, b;
  MatchResult r = result(Verdict::kNoDesc, Verdict::kNoDesc, false, "");
  r.answer_algo = "id=13 custom=10";
  r.answer_class = 80;
  r.answer_detail = "class 80 has no descriptor";
  a.add("bf16:bf16:nn", runtime::to_string(gemv), r);
  a.add("bf16:bf16:nn", "1x9000x64 bf16*bf16->bf16 NN", r);  // not the first: not listed
  r.answer_algo = "id=23";
  r.answer_class = 177;
  b.add("f16:f16:nn", "2x2x16982 f16*f16->f16 NN", r);
  // A compared shape of an answer counts as compared, not undescribed.
  b.add("f16:f16:nn", "2x2x17000 f16*f16->f16 NN",
        result(Verdict::kIdentical, Verdict::kIdentical, true, "kernel"));
  absl::StatusOr<MatchTallies> back = parse_tallies(b.to_text());
  ASSERT_TRUE(back.ok()) << back.status();
  a.merge(*back);
  const AlgoTally& g = a.by_algo.at("bf16:bf16:nn id=13 custom=10");
  EXPECT_EQ(g.no_desc, 2);
  EXPECT_EQ(g.compared, 0);
  EXPECT_EQ(g.cls, 80);
  EXPECT_EQ(g.no_desc_example, runtime::to_string(gemv) + ": class 80 has no descriptor");
  EXPECT_EQ(a.by_algo.at("f16:f16:nn id=23").no_desc, 1);
  EXPECT_TRUE(a.differing_shapes().empty());
  // Most undescribed shapes first, in --probe-at form.
  EXPECT_EQ(a.no_desc_shapes(),
            (std::vector<std::string>{"1x10618x212:bf16:bf16", "2x2x16982:f16:f16"}));
  EXPECT_TRUE(MatchTallies{}.no_desc_shapes().empty());
}

TEST(MatchTallyTest, ABadLineIsNamed) {
  absl::StatusOr<MatchTallies> t = parse_tallies("run\t0\t1\t0.5\ndtype\tf16\t1\t2\n");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("line 2"), std::string_view::npos) << t.status();
  EXPECT_NE(t.status().message().find("13 counts"), std::string_view::npos) << t.status();
  EXPECT_FALSE(parse_tallies("what\t1\n").ok());
  EXPECT_FALSE(parse_tallies("dtype\tf16\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\t-1\n").ok());
}

}  // namespace
}  // namespace fixbits::profile
