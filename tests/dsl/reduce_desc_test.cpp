// Tests of ReduceDesc validate / to_string / parse_reduce_desc / hash.
// Contract checked: each rule names its field; the text form is the documented
// literal and round-trips; garbage is rejected with a Status; the hash is pinned.
#include "dsl/ReduceDesc.h"

#include <random>
#include <string>

#include "gtest/gtest.h"

namespace fixbits::dsl {
namespace {

ReduceDesc rms() {
  return ReduceDesc{ReduceOp::kRmsNorm, ReduceAxis::kRow, DType::kBF16, DType::kF32,
                    DType::kBF16,       TreeOrder::kPinned, 256};
}
ReduceDesc softmax_col() {
  return ReduceDesc{ReduceOp::kSoftmax, ReduceAxis::kColumn, DType::kF16, DType::kF32,
                    DType::kF16,        TreeOrder::kFree,    1};
}

TEST(ReduceDescTest, ValidAndInvalid) {
  EXPECT_TRUE(validate(ReduceDesc{}).ok());
  EXPECT_TRUE(validate(rms()).ok());
  EXPECT_TRUE(validate(softmax_col()).ok());
  ReduceDesc big = ReduceDesc{};
  big.strip = 65536;
  EXPECT_TRUE(validate(big).ok());

  struct Case {
    ReduceDesc d;
    const char* must_contain;
  };
  auto with = [](auto f) {
    ReduceDesc d;
    f(d);
    return d;
  };
  const Case cases[] = {
      {with([](ReduceDesc& d) { d.strip = 0; }), "ReduceDesc.strip is 0"},
      {with([](ReduceDesc& d) { d.strip = 96; }), "ReduceDesc.strip is 96"},
      {with([](ReduceDesc& d) { d.strip = 131072; }), "ReduceDesc.strip is 131072"},
      {with([](ReduceDesc& d) { d.strip = -1024; }), "ReduceDesc.strip is -1024"},
      {with([](ReduceDesc& d) { d.acc_dtype = DType::kF16; }), "ReduceDesc.acc_dtype is f16"},
      {with([](ReduceDesc& d) { d.in_dtype = DType::kTF32; }), "ReduceDesc.in_dtype is tf32"},
      {with([](ReduceDesc& d) { d.out_dtype = static_cast<DType>(40); }),
       "ReduceDesc.out_dtype holds 40"},
      {with([](ReduceDesc& d) { d.op = static_cast<ReduceOp>(7); }), "ReduceDesc.op holds 7"},
      {with([](ReduceDesc& d) { d.axis = static_cast<ReduceAxis>(2); }),
       "ReduceDesc.axis holds 2"},
      {with([](ReduceDesc& d) { d.order = static_cast<TreeOrder>(2); }),
       "ReduceDesc.order holds 2"},
  };
  for (const Case& c : cases) {
    absl::Status s = validate(c.d);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.must_contain;
    EXPECT_NE(s.message().find(c.must_contain), std::string::npos) << s.message();
    EXPECT_FALSE(parse_reduce_desc(to_string(c.d)).ok()) << to_string(c.d);
  }
}

TEST(ReduceDescTest, TextAndRoundTrip) {
  EXPECT_EQ(to_string(ReduceDesc{}),
            "reduce{op=sum axis=row in=f32 acc=f32 out=f32 order=pinned strip=1024}");
  EXPECT_EQ(to_string(rms()),
            "reduce{op=rms_norm axis=row in=bf16 acc=f32 out=bf16 order=pinned strip=256}");
  for (const ReduceDesc& d : {ReduceDesc{}, rms(), softmax_col()}) {
    absl::StatusOr<ReduceDesc> back = parse_reduce_desc(to_string(d));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, d);
  }
}

TEST(ReduceDescTest, ParseRejectsGarbage) {
  const std::string good = to_string(rms());
  for (size_t n = 0; n < good.size(); ++n) EXPECT_FALSE(parse_reduce_desc(good.substr(0, n)).ok());
  auto msg = [](const std::string& t) {
    absl::StatusOr<ReduceDesc> d = parse_reduce_desc(t);
    EXPECT_FALSE(d.ok()) << t;
    return d.ok() ? std::string() : std::string(d.status().message());
  };
  EXPECT_NE(msg("reduce{op=sum axis=row in=f32 acc=f32 out=f32 order=pinned strip=1024 strip=8}")
                .find("\"strip\" twice"),
            std::string::npos);
  EXPECT_NE(msg("reduce{op=sum axis=row in=f32 acc=f32 out=f32 order=pinned}")
                .find("lacks the field \"strip\""),
            std::string::npos);
  EXPECT_NE(msg("reduce{op=sum axis=row in=f32 acc=f32 out=f32 order=pinned "
                "strip=99999999999999999999999}")
                .find("field \"strip\" at byte 65"),
            std::string::npos);
  EXPECT_NE(msg("reduce{op=avg axis=row in=f32 acc=f32 out=f32 order=pinned strip=1}")
                .find("field \"op\" at byte 10"),
            std::string::npos);
  EXPECT_NE(msg("reduce{op=sum axis=row in=f32 acc=f32 out=f32 order=pinned strip=1 x=1}")
                .find("unknown field \"x\""),
            std::string::npos);
  EXPECT_NE(msg("reduce{op=sum axis=row in=f32 acc=f32 out=f32 order=pinned strip=3}")
                .find("ReduceDesc.strip is 3"),
            std::string::npos);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string junk(rng() % 120, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    EXPECT_FALSE(parse_reduce_desc(junk).ok());
    std::string t = good;
    t[rng() % t.size()] = static_cast<char>(rng());
    absl::StatusOr<ReduceDesc> d = parse_reduce_desc(t);
    if (d.ok()) EXPECT_EQ(parse_reduce_desc(to_string(*d)).value(), *d);
  }
}

// Literals computed independently with a 3-line Python FNV-1a over the text.
TEST(ReduceDescTest, HashIsPinned) {
  EXPECT_EQ(hash(ReduceDesc{}), 0x447a45df774b1a2bull);
  EXPECT_EQ(hash(rms()), 0xcd68aef0648ae3ull);
  EXPECT_EQ(hash(softmax_col()), 0xece58cc02e5281d2ull);
}

}  // namespace
}  // namespace fixbits::dsl
