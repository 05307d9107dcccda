// float_format_test: FloatFormat conversions against hand-computed bit tables and
// an exhaustive round trip over every 8- and 16-bit pattern.
//
// Every expected value below is worked out by hand in its comment; nothing is
// derived from the code under test. NaN results are the patterns the H200's cvt
// instructions write (measured; see FloatFormat.cpp).
#include "dsl/FloatFormat.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

namespace fixbits {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

float f(uint32_t b) { return bits_float(b); }

struct Case {
  float x;
  uint32_t want;
  Saturation sat = Saturation::kNone;
};

void expect_table(DType t, const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    EXPECT_EQ(to_bits(t, c.x, c.sat), c.want)
        << dtype_name(t) << " x=" << c.x << " (bits 0x" << std::hex << float_bits(c.x)
        << ") sat=" << static_cast<int>(c.sat);
  }
}

TEST(FloatFormat, NamesRoundTripAndUnknownNameIsAnError) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kF8E4M3, DType::kF8E5M2,
                  DType::kTF32}) {
    absl::StatusOr<DType> p = parse_dtype(dtype_name(t));
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(*p, t);
  }
  absl::StatusOr<DType> bad = parse_dtype("fp17");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("\"fp17\""), std::string_view::npos)
      << bad.status().message();
  EXPECT_FALSE(parse_dtype("").ok());
  EXPECT_FALSE(parse_dtype("F16").ok());
}

TEST(FloatFormat, WidthsAndMantissas) {
  EXPECT_EQ(dtype_bits(DType::kF32), 32);
  EXPECT_EQ(dtype_bits(DType::kF16), 16);
  EXPECT_EQ(dtype_bits(DType::kBF16), 16);
  EXPECT_EQ(dtype_bits(DType::kF8E4M3), 8);
  EXPECT_EQ(dtype_bits(DType::kF8E5M2), 8);
  EXPECT_EQ(dtype_bits(DType::kTF32), 32);
  EXPECT_EQ(dtype_mantissa_bits(DType::kF32), 23);
  EXPECT_EQ(dtype_mantissa_bits(DType::kF16), 10);
  EXPECT_EQ(dtype_mantissa_bits(DType::kBF16), 7);
  EXPECT_EQ(dtype_mantissa_bits(DType::kF8E4M3), 3);
  EXPECT_EQ(dtype_mantissa_bits(DType::kF8E5M2), 2);
  EXPECT_EQ(dtype_mantissa_bits(DType::kTF32), 10);
  EXPECT_TRUE(dtype_is_fp8(DType::kF8E4M3));
  EXPECT_TRUE(dtype_is_fp8(DType::kF8E5M2));
  EXPECT_FALSE(dtype_is_fp8(DType::kF16));
  EXPECT_FALSE(dtype_is_fp8(DType::kTF32));
}

TEST(FloatFormat, F16Table) {
  const float sub_min = std::ldexp(1.0f, -24);  // smallest f16 subnormal, 0x0001
  expect_table(DType::kF16, {
      {1.0f, 0x3c00},
      {-2.0f, 0xc000},
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {65504.0f, 0x7bff},                          // max finite
      {65519.0f, 0x7bff},                          // below the tie 65520: down
      {65520.0f, 0x7c00},                          // tie between 65504 and 65536 -> even -> inf
      {65520.0f, 0x7bff, Saturation::kSatFinite},  // satfinite clamps
      {-70000.0f, 0xfc00},
      {-70000.0f, 0xfbff, Saturation::kSatFinite},
      {kInf, 0x7c00},
      {-kInf, 0xfc00},
      {kInf, 0x7bff, Saturation::kSatFinite},
      {-kInf, 0xfbff, Saturation::kSatFinite},
      // 1 + 2^-11 is the tie between 1 (mantissa 0, even) and 1 + 2^-10 -> 1.
      {1.0f + std::ldexp(1.0f, -11), 0x3c00},
      // 1 + 3*2^-11 ties between 1+2^-10 (odd) and 1+2^-9 (even) -> 0x3c02.
      {1.0f + 3 * std::ldexp(1.0f, -11), 0x3c02},
      // Just above the tie rounds up.
      {1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20), 0x3c01},
      {sub_min, 0x0001},
      {-sub_min, 0x8001},
      {std::ldexp(1.0f, -25), 0x0000},              // half of sub_min: tie to even 0
      {std::ldexp(1.0f, -25) * 1.5f, 0x0001},       // 0.75 sub_min -> 1
      {std::ldexp(3.0f, -25), 0x0002},              // 1.5 sub_min: tie -> 2 (even)
      {std::ldexp(5.0f, -25), 0x0002},              // 2.5 sub_min: tie -> 2 (even)
      {std::ldexp(1023.0f, -24), 0x03ff},           // largest subnormal
      {std::ldexp(2047.0f, -25), 0x0400},           // 1023.5 sub: tie -> 1024 = min normal
      {std::ldexp(1.0f, -14), 0x0400},              // min normal
      {std::ldexp(1.0f, -30), 0x0000},              // far below: zero
      {-std::ldexp(1.0f, -30), 0x8000},             // keeps the sign
      {f(0x00000001), 0x0000},                      // f32 subnormal
      {f(0x7fc00000), 0x7fff},                      // NaN -> what cvt writes
      {f(0xffc00001), 0x7fff},                      // -NaN: sign dropped
      {f(0x7f800001), 0x7fff},                      // signalling NaN
      {f(0x7f800001), 0x7fff, Saturation::kSatFinite},
  });
}

TEST(FloatFormat, BF16Table) {
  expect_table(DType::kBF16, {
      {1.0f, 0x3f80},
      {-0.0f, 0x8000},
      {f(0x3f808000), 0x3f80},  // 1 + 2^-8: tie, 0x3f80 even -> down
      {f(0x3f818000), 0x3f82},  // 1 + 3*2^-8: tie, 0x3f81 odd -> up
      {f(0x3f808001), 0x3f81},  // just above tie -> up
      {f(0x7f7fffff), 0x7f80},  // FLT_MAX rounds past bf16 max 0x7f7f -> inf
      {f(0x7f7fffff), 0x7f7f, Saturation::kSatFinite},
      {f(0x7f7f7fff), 0x7f7f},  // below the tie: stays max finite
      {f(0x7f7f8000), 0x7f80},  // tie: 0x7f7f is odd -> up -> inf
      {kInf, 0x7f80},
      {-kInf, 0xff7f, Saturation::kSatFinite},
      {f(0x00008000), 0x0000},  // f32 subnormal tie: 0x0000 even -> down
      {f(0x00018000), 0x0002},  // tie, odd 0x0001 -> up
      {f(0x007fffff), 0x0080},  // largest f32 subnormal rounds to bf16 min normal
      {f(0x00010000), 0x0001},  // exact bf16 subnormal
      {f(0x7fc00000), 0x7fff},
      {f(0xff800001), 0x7fff},
  });
}

TEST(FloatFormat, E4M3Table) {
  // e4m3: bias 7, max 1.110b * 2^8 = 448 (0x7e), 0x7f is NaN, min subnormal 2^-9.
  expect_table(DType::kF8E4M3, {
      {1.0f, 0x38},
      {-1.0f, 0xb8},
      {0.0f, 0x00},
      {-0.0f, 0x80},
      {448.0f, 0x7e},
      {464.0f, 0x7e},  // tie between 448 (mantissa 110, even) and 480 -> 448
      {465.0f, 0x7f},  // rounds to 480 > 448: overflow -> NaN under kNone
      {465.0f, 0x7e, Saturation::kSatFinite},
      {500.0f, 0x7e, Saturation::kSatFinite},  // the header's example
      {-500.0f, 0xff},
      {-500.0f, 0xfe, Saturation::kSatFinite},
      {kInf, 0x7f},   // no inf: NaN
      {-kInf, 0xff},
      {kInf, 0x7e, Saturation::kSatFinite},
      {-kInf, 0xfe, Saturation::kSatFinite},
      {std::ldexp(1.0f, -9), 0x01},         // min subnormal
      {std::ldexp(1.0f, -10), 0x00},        // tie -> 0
      {std::ldexp(3.0f, -10), 0x02},        // 1.5 q: tie -> 2
      {std::ldexp(7.0f, -9), 0x07},         // largest subnormal 7/8 * 2^-6
      {std::ldexp(15.0f, -10), 0x08},       // 7.5 q: tie -> 8 = min normal 2^-6
      {std::ldexp(1.0f, -6), 0x08},
      {1.0625f, 0x38},                      // 1 + 2^-4: tie, 1.000 even -> 1
      {1.1875f, 0x3a},                      // 1 + 3*2^-4: tie -> 1.010b
      {f(0x7fc00000), 0x7f},
      {f(0xffc00000), 0x7f},  // NaN sign dropped (cvt)
      {f(0x7fc00000), 0x7f, Saturation::kSatFinite},
  });
}

TEST(FloatFormat, E5M2Table) {
  // e5m2: bias 15, max 1.11b * 2^15 = 57344 (0x7b), inf 0x7c, min subnormal 2^-16.
  expect_table(DType::kF8E5M2, {
      {1.0f, 0x3c},
      {-0.0f, 0x80},
      {57344.0f, 0x7b},
      {61439.0f, 0x7b},                  // below the tie 61440
      {61440.0f, 0x7c},                  // tie: 1.11b odd -> up -> 65536 -> inf
      {61440.0f, 0x7b, Saturation::kSatFinite},
      {kInf, 0x7c},
      {-kInf, 0xfc},
      {-kInf, 0xfb, Saturation::kSatFinite},
      {std::ldexp(1.0f, -16), 0x01},
      {std::ldexp(1.0f, -17), 0x00},     // tie -> 0
      {std::ldexp(3.0f, -17), 0x02},     // tie -> 2
      {std::ldexp(7.0f, -17), 0x04},     // 3.5 q: tie -> 4 = min normal 2^-14
      {1.125f, 0x3c},                    // 1 + 2^-3: tie -> 1
      {1.375f, 0x3e},                    // 1 + 3*2^-3: tie -> 1.10b
      {f(0x7fc00000), 0x7f},
      {f(0xff800001), 0x7f},
  });
}

TEST(FloatFormat, TF32Table) {
  expect_table(DType::kTF32, {
      {1.0f, 0x3f800000},
      {-0.0f, 0x80000000},
      {f(0x3f801000), 0x3f800000},  // tie at bit 12, bit 13 clear -> down
      {f(0x3f803000), 0x3f804000},  // tie, bit 13 set -> up
      {f(0x3f801001), 0x3f802000},  // above the tie -> up
      {f(0x3fffffff), 0x40000000},  // carry into the exponent
      {f(0x7f7fffff), 0x7f800000},  // FLT_MAX -> inf
      {f(0x7f7fffff), 0x7f7fe000, Saturation::kSatFinite},
      {f(0x7f7fefff), 0x7f7fe000},  // below the tie stays finite
      {f(0x00001000), 0x00000000},  // subnormal tie -> even 0
      {f(0x00003000), 0x00004000},
      {f(0x007fffff), 0x00800000},  // largest f32 subnormal -> min normal
      {kInf, 0x7f800000},
      {f(0x7fc00001), 0x7fffe000},
      {f(0xffffffff), 0x7fffe000},
  });
  EXPECT_EQ(float_bits(to_float(DType::kTF32, 0x3f804000)), 0x3f804000u);
}

TEST(FloatFormat, F32IsIdentity) {
  for (uint32_t b : {0x00000000u, 0x80000000u, 0x00000001u, 0x7f7fffffu, 0x7f800000u,
                     0x7fc00001u, 0x3f800001u}) {
    EXPECT_EQ(to_bits(DType::kF32, f(b)), b);
    EXPECT_EQ(float_bits(to_float(DType::kF32, b)), b);
  }
}

TEST(FloatFormat, ToFloatHandValues) {
  EXPECT_EQ(to_float(DType::kF16, 0x3c00), 1.0f);
  EXPECT_EQ(to_float(DType::kF16, 0x7bff), 65504.0f);
  EXPECT_EQ(to_float(DType::kF16, 0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(to_float(DType::kF16, 0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(float_bits(to_float(DType::kF16, 0x8000)), 0x80000000u);
  EXPECT_EQ(to_float(DType::kF16, 0xfc00), -kInf);
  EXPECT_TRUE(std::isnan(to_float(DType::kF16, 0x7c01)));
  EXPECT_EQ(to_float(DType::kBF16, 0x3f80), 1.0f);
  EXPECT_EQ(to_float(DType::kBF16, 0x0001), std::ldexp(1.0f, -133));
  EXPECT_EQ(to_float(DType::kF8E4M3, 0x7e), 448.0f);
  EXPECT_EQ(to_float(DType::kF8E4M3, 0xfe), -448.0f);
  EXPECT_EQ(to_float(DType::kF8E4M3, 0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(to_float(DType::kF8E4M3, 0x78), 256.0f);  // exponent 15 is finite in e4m3
  EXPECT_TRUE(std::isnan(to_float(DType::kF8E4M3, 0x7f)));
  EXPECT_TRUE(std::isnan(to_float(DType::kF8E4M3, 0xff)));
  EXPECT_EQ(to_float(DType::kF8E5M2, 0x7b), 57344.0f);
  EXPECT_EQ(to_float(DType::kF8E5M2, 0x7c), kInf);
  EXPECT_EQ(to_float(DType::kF8E5M2, 0x01), std::ldexp(1.0f, -16));
  EXPECT_TRUE(std::isnan(to_float(DType::kF8E5M2, 0x7d)));
  EXPECT_EQ(round_to(DType::kF16, 65520.0f), kInf);
  EXPECT_EQ(round_to(DType::kF8E4M3, 500.0f, Saturation::kSatFinite), 448.0f);
}

bool is_nan_pattern(DType t, uint32_t b) {
  switch (t) {
    case DType::kF16: return (b & 0x7c00) == 0x7c00 && (b & 0x3ff) != 0;
    case DType::kBF16: return (b & 0x7f80) == 0x7f80 && (b & 0x7f) != 0;
    case DType::kF8E4M3: return (b & 0x7f) == 0x7f;
    case DType::kF8E5M2: return (b & 0x7c) == 0x7c && (b & 0x3) != 0;
    default: return false;
  }
}

// Every non-NaN pattern converts to f32 and back to itself, under both saturation
// modes (an exact value is never out of range), and the f32 values are strictly
// increasing over the positive patterns (so the decoding is monotone, not merely
// invertible).
void exhaustive_round_trip(DType t, uint32_t count) {
  const uint32_t sign_bit = count >> 1;
  float prev = -1.0f;
  int nan_count = 0;
  for (uint32_t b = 0; b < count; ++b) {
    const float v = to_float(t, b);
    if (is_nan_pattern(t, b)) {
      ++nan_count;
      EXPECT_TRUE(std::isnan(v)) << std::hex << b;
      continue;
    }
    ASSERT_FALSE(std::isnan(v)) << std::hex << b;
    ASSERT_EQ(to_bits(t, v), b) << dtype_name(t) << " 0x" << std::hex << b;
    if (!std::isinf(v)) {
      ASSERT_EQ(to_bits(t, v, Saturation::kSatFinite), b) << dtype_name(t) << std::hex << b;
    }
    if (b < sign_bit) {
      ASSERT_GT(v, prev) << dtype_name(t) << " 0x" << std::hex << b;
      prev = v;
      ASSERT_EQ(float_bits(to_float(t, b | sign_bit)), float_bits(-v));
    }
  }
  EXPECT_GT(nan_count, 0);
}

TEST(FloatFormat, ExhaustiveRoundTripF16) { exhaustive_round_trip(DType::kF16, 1u << 16); }
TEST(FloatFormat, ExhaustiveRoundTripBF16) { exhaustive_round_trip(DType::kBF16, 1u << 16); }
TEST(FloatFormat, ExhaustiveRoundTripE4M3) { exhaustive_round_trip(DType::kF8E4M3, 256); }
TEST(FloatFormat, ExhaustiveRoundTripE5M2) { exhaustive_round_trip(DType::kF8E5M2, 256); }

// Midpoints between neighbouring f16 values round to the even neighbour and
// anything a hair off the midpoint rounds to the nearer one: checked for every
// adjacent pair of positive finite f16 values (midpoints are exact in f32).
TEST(FloatFormat, F16EveryMidpointTiesToEven) {
  for (uint32_t b = 0; b < 0x7bff; ++b) {
    const float lo = to_float(DType::kF16, b);
    const float hi = to_float(DType::kF16, b + 1);
    const float mid = lo + (hi - lo) * 0.5f;
    const uint32_t even = (b & 1) ? b + 1 : b;
    ASSERT_EQ(to_bits(DType::kF16, mid), even) << std::hex << b;
    ASSERT_EQ(to_bits(DType::kF16, std::nextafter(mid, 0.0f)), b) << std::hex << b;
    ASSERT_EQ(to_bits(DType::kF16, std::nextafter(mid, kInf)), b + 1) << std::hex << b;
  }
}

// to_float reads only a narrow format's own bits (it looks them up in a table of every
// value since session 9): bits above the width change nothing, as before.
TEST(FloatFormat, ToFloatIgnoresBitsAboveTheWidth) {
  for (DType t : {DType::kF16, DType::kBF16, DType::kF8E4M3, DType::kF8E5M2}) {
    const uint32_t width = static_cast<uint32_t>(dtype_bits(t));
    for (uint32_t b = 0; b < (1u << width); b += 7) {
      const float plain = to_float(t, b);
      const float high = to_float(t, b | (0xa5a5a5a5u << width));
      EXPECT_EQ(float_bits(plain), float_bits(high)) << dtype_name(t) << " bits " << b;
    }
  }
  EXPECT_EQ(to_float(DType::kF16, 0x12343c00u), 1.0f);
  EXPECT_EQ(to_float(DType::kBF16, 0xffff3f80u), 1.0f);
}

}  // namespace
}  // namespace fixbits
