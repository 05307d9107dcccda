// MmaModel: the sm_90 truncating model and the exact-sum, one-RNE model of one
// matrix instruction (contract in MmaModel.h).
//
// Sm90MmaModel, step by step, for terms T = {c} u {a_i * b_i}:
//   1. NaN in, inf * 0, or +inf and -inf among the terms -> canonical NaN 0x7fffffff;
//      otherwise any inf term -> that inf.
//   2. Every product is exact in a double (two 24-bit significands give at most 48
//      bits; exponents stay inside the double range).
//   3. Every nonzero term gets an alignment exponent (kSm90AlignReference):
//      a product a*b gets e(a) + e(b), where e(x) = max(floor(log2|x|), emin_in) is
//      x's exponent FIELD in the input format (a subnormal sits at emin_in: -14 for
//      f16 and e5m2, -126 for bf16/tf32, -6 for e4m3); c gets max(floor(log2|c|),
//      -126). So a product whose significands multiply to [2, 4) has its leading
//      bit one above its alignment exponent. E = the largest alignment exponent.
//      Every term is truncated toward zero to a multiple of 2^(E - F), F =
//      kSm90AlignFractionBits (25), or kSm90Fp8AlignFractionBits (13) for fp8 inputs.
//   4. The truncated terms are summed exactly (int64: each is below 2^(F+2) units).
//   5. The sum is normalized and rounded once by kSm90FinalRounding (toward zero) to
//      kSm90ResultFractionBits (23) fraction bits, or kSm90Fp8ResultFractionBits (13)
//      for fp8 inputs, with f32's subnormal quantum 2^-149 as the floor; a magnitude
//      of 2^128 or more gives inf.
//   6. A zero sum is -0.0 only when every term is a zero with its sign bit set
//      (IEEE's rule for an exact zero sum); otherwise +0.0. A nonzero sum that
//      rounds to zero in step 5 (below 2^-149) is +0.0 whatever its sign (measured:
//      device run 3 of 2026-12-02, every bf16 pair product of magnitude below
//      2^-149 through mma.sync and wgmma gave 0x00000000, 518 negative ones of 518).
// Measured (2026-12-02, one H200, random inputs incl. f16 subnormals, c of wide
// range; tools tests/dsl/reference/hw/mma_probe.cu and wgmma_probe.cu):
//   mma.sync m16n8k16 f16 and bf16: 1,024,000 of 1,024,000 each, bit for bit
//     (aligning at each term's leading bit instead: 91% / 95%);
//   wgmma m64n8k16 f16: 1,024,000 of 1,024,000;
//   wgmma m64n8k32 e4m3 (the 13-bit constants): 1,024,000 of 1,024,000;
//   mma.sync m16n8k32 e4m3: NOT this model (168 of 512,000): its result keeps all
//     23 fraction bits; F = 25..26 with a 23-bit result matched about 62%, the rest
//     off by 1-2 ulp, no variant tried exceeded 74%. The model has no instruction
//     argument, so fp8 follows wgmma; mma.sync fp8 is an open item. tf32 unmeasured.
//
// Example (F = 25): c = 1.0 and one product 3 * 2^-25. E = 0, the quantum is 2^-25,
// so the product survives alignment and the exact sum is 1 + 0.75 * 2^-23; toward
// zero that is 1.0 (0x3f800000), where one RNE would give 1 + 2^-23 (0x3f800001).
// A product 3 * 2^-27 instead lies below the quantum and is truncated to 0 before
// the sum, so no final rounding mode could see it.
//
// ExactRneMmaModel: the same terms summed exactly in a 768-bit fixed-point integer
// (weight of bit 0 = 2^-320, enough for any product of two binary32 values and any
// count of them below 2^100), then rounded once to nearest, ties to even, to f32.
#include "dsl/reference/MmaModel.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <memory>
#include <span>
#include <vector>

namespace fixbits::dsl::reference {

// --- The measured constants of the sm_90 model: change here when hardware disagrees.
// Fraction bits kept below the largest term's leading bit during alignment.
inline constexpr int kSm90AlignFractionBits = 25;
inline constexpr int kSm90Fp8AlignFractionBits = 13;
// Fraction bits of the instruction's result before it is widened to f32.
inline constexpr int kSm90ResultFractionBits = 23;
inline constexpr int kSm90Fp8ResultFractionBits = 13;
enum class FinalRounding { kTowardZero, kNearestEven };
// Which exponent a term is aligned by: its exponent fields (measured on sm_90) or
// the position of its leading bit (the earlier reading, kept to switch back to).
enum class AlignReference { kExponentFields, kLeadingBit };
inline constexpr AlignReference kSm90AlignReference = AlignReference::kExponentFields;
inline constexpr FinalRounding kSm90FinalRounding = FinalRounding::kTowardZero;

namespace {

constexpr uint32_t kCanonicalNan = 0x7fffffffu;

[[noreturn]] void invariant_failed(const char* what) {
  std::fprintf(stderr, "fixbits internal invariant broken in MmaModel: %s\n", what);
  std::abort();
}

// 1 - bias: the exponent of the smallest normal value (and of every subnormal).
int min_normal_exponent(DType t) {
  switch (t) {
    case DType::kF16:
    case DType::kF8E5M2:
      return -14;
    case DType::kF8E4M3:
      return -6;
    case DType::kBF16:
    case DType::kTF32:
    case DType::kF32:
      return -126;
  }
  return -126;
}

// max(floor(log2|x|), emin) for a nonzero binary32 x with emin >= -126: the
// exponent field of x in a format whose smallest normal exponent is emin.
int exponent_field(float x, int emin) {
  const int biased = static_cast<int>((std::bit_cast<uint32_t>(x) >> 23) & 0xff);
  return std::max(biased - 127, emin);  // f32 subnormals (biased 0) clamp to emin
}

float nan_result() { return std::bit_cast<float>(kCanonicalNan); }

// Step 1 of both models: the IEEE special cases. Returns true and sets *out when
// the result is decided by a NaN or an infinity.
bool special_case(float c, std::span<const float> a, std::span<const float> b, float* out) {
  // The usual case first: every value finite decides nothing here (the probe's judge
  // spent 15% of its time in the checks below; session 10, CPU profile).
  bool finite = std::isfinite(c);
  for (size_t i = 0; i < a.size(); ++i) finite &= std::isfinite(a[i]) & std::isfinite(b[i]);
  if (finite) return false;
  bool pos_inf = false, neg_inf = false;
  auto note = [&](double t) {
    if (std::isinf(t)) (t > 0 ? pos_inf : neg_inf) = true;
  };
  if (std::isnan(c)) return *out = nan_result(), true;
  note(c);
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) return *out = nan_result(), true;
    const bool inf_a = std::isinf(a[i]), inf_b = std::isinf(b[i]);
    if ((inf_a && b[i] == 0.0f) || (inf_b && a[i] == 0.0f)) {
      return *out = nan_result(), true;
    }
    if (inf_a || inf_b) note(static_cast<double>(a[i]) * static_cast<double>(b[i]));
  }
  if (pos_inf && neg_inf) return *out = nan_result(), true;
  if (pos_inf) return *out = std::numeric_limits<float>::infinity(), true;
  if (neg_inf) return *out = -std::numeric_limits<float>::infinity(), true;
  return false;
}

// Sign of an exactly zero sum (step 6).
float zero_result(float c, std::span<const float> a, std::span<const float> b) {
  bool all_neg_zero = c == 0.0f && std::signbit(c);
  for (size_t i = 0; i < a.size() && all_neg_zero; ++i) {
    const double p = static_cast<double>(a[i]) * static_cast<double>(b[i]);
    all_neg_zero = p == 0.0 && std::signbit(p);
  }
  return all_neg_zero ? -0.0f : 0.0f;
}

// The f32 value of mag * 2^exp2 (mag > 0), keeping `frac_bits` fraction bits (and
// never finer than 2^-149), rounded by `mode`; 2^128 or more is inf.
// `sticky` says that nonzero bits below mag's bit 0 were already dropped (used by
// the exact model's big integer; mag then holds the top bits only).
float round_to_f32(unsigned __int128 mag, int exp2, bool negative, int frac_bits,
                   FinalRounding mode, bool sticky_in = false) {
  const uint64_t hi = static_cast<uint64_t>(mag >> 64), lo = static_cast<uint64_t>(mag);
  const int lead = hi != 0 ? 64 + 63 - std::countl_zero(hi) : 63 - std::countl_zero(lo);
  const int value_exp = lead + exp2;  // floor(log2 value)
  const int q = std::max(value_exp, -126) - frac_bits;  // target quantum 2^q
  const int shift = q - exp2;
  unsigned __int128 n;
  bool round_up = false;
  if (shift <= 0) {
    n = mag << (-shift);  // exact; n < 2^(frac_bits+1)
  } else if (shift > 127) {
    n = 0;  // only reached for values far below 2^(q-1): both modes give zero
  } else {
    n = mag >> shift;
    const unsigned __int128 rem = mag & ((static_cast<unsigned __int128>(1) << shift) - 1);
    const unsigned __int128 half = static_cast<unsigned __int128>(1) << (shift - 1);
    if (mode == FinalRounding::kNearestEven) {
      round_up = rem > half || (rem == half && (sticky_in || (n & 1)));
    }
  }
  if (shift <= 0 && sticky_in && mode == FinalRounding::kNearestEven) {
    invariant_failed("sticky bits below an exactly representable value");
  }
  if (round_up) ++n;
  double v = std::ldexp(static_cast<double>(static_cast<uint64_t>(n)), q);
  if (v >= 0x1p128) v = std::numeric_limits<double>::infinity();
  const float f = static_cast<float>(v);  // exact: v has <= 24 bits at quantum >= 2^-149
  return negative ? -f : f;
}

class Sm90MmaModel final : public MmaModel {
 public:
  const char* name() const override { return "sm90"; }

  float mma(float c, std::span<const float> a, std::span<const float> b,
            DType in) const override {
    if (a.size() != b.size()) invariant_failed("mma called with a.size() != b.size()");
    float special;
    if (special_case(c, a, b, &special)) return special;
    const bool fp8 = dtype_is_fp8(in);
    const int align_bits = fp8 ? kSm90Fp8AlignFractionBits : kSm90AlignFractionBits;
    const int result_bits = fp8 ? kSm90Fp8ResultFractionBits : kSm90ResultFractionBits;

    // Step 2-3: exact terms and the largest alignment exponent.
    const int emin_in = min_normal_exponent(in);
    std::array<double, 64> small;
    std::vector<double> large;
    double* prod = small.data();
    if (a.size() > small.size()) {
      large.resize(a.size());
      prod = large.data();
    }
    int e_max = std::numeric_limits<int>::min();
    if (c != 0.0f) e_max = exponent_field(c, -126);
    for (size_t i = 0; i < a.size(); ++i) {
      prod[i] = static_cast<double>(a[i]) * static_cast<double>(b[i]);
      if (prod[i] == 0.0) continue;
      const int e = kSm90AlignReference == AlignReference::kExponentFields
                        ? exponent_field(a[i], emin_in) + exponent_field(b[i], emin_in)
                        : std::ilogb(prod[i]);
      e_max = std::max(e_max, e);
    }
    if (e_max == std::numeric_limits<int>::min()) return zero_result(c, a, b);

    // Step 3-4: truncate each term to a multiple of 2^(e_max - align_bits), sum.
    // |t| < 2^(e_max+2), so t * 2^-unit is below 2^(align_bits+2) and exact.
    const int unit = e_max - align_bits;
    const double scale = std::ldexp(1.0, -unit);
    int64_t sum = static_cast<int64_t>(std::trunc(static_cast<double>(c) * scale));
    for (size_t i = 0; i < a.size(); ++i) {
      sum += static_cast<int64_t>(std::trunc(prod[i] * scale));
    }
    if (sum == 0) return zero_result(c, a, b);
    // Step 5.
    const bool negative = sum < 0;
    const uint64_t mag = negative ? 0 - static_cast<uint64_t>(sum) : static_cast<uint64_t>(sum);
    const float r = round_to_f32(mag, unit, negative, result_bits, kSm90FinalRounding);
    return r == 0.0f ? 0.0f : r;  // step 6: an underflow to zero is +0.0
  }
};

// A two's complement fixed-point integer of kWords 64-bit words; bit 0 weighs
// 2^kLsbExp. Holds any exact sum of binary32 products.
class ExactAccumulator {
 public:
  static constexpr int kWords = 12;
  static constexpr int kLsbExp = -320;

  // Adds the double t exactly (t must be finite with its lowest set bit >= 2^kLsbExp).
  void add(double t) {
    if (t == 0.0) return;
    int e;
    const double m = std::frexp(std::fabs(t), &e);        // |t| = m * 2^e, m in [0.5, 1)
    uint64_t sig = static_cast<uint64_t>(std::ldexp(m, 53));  // exact, 53 bits
    int lsb = e - 53;  // |t| = sig * 2^lsb
    const int tz = std::countr_zero(sig);
    sig >>= tz;
    lsb += tz;
    const int pos = lsb - kLsbExp;
    if (pos < 0 || pos + 53 > kWords * 64 - 2) invariant_failed("term outside the accumulator");
    uint64_t add_words[kWords] = {};
    const int w = pos / 64, s = pos % 64;
    add_words[w] = sig << s;
    if (s != 0 && w + 1 < kWords) add_words[w + 1] = sig >> (64 - s);
    if (t < 0) negate(add_words);
    unsigned __int128 carry = 0;
    for (int i = 0; i < kWords; ++i) {
      carry += static_cast<unsigned __int128>(words_[i]) + add_words[i];
      words_[i] = static_cast<uint64_t>(carry);
      carry >>= 64;
    }
  }

  // The sum rounded to nearest, ties to even, to f32; 0 when the sum is zero.
  bool is_zero() const {
    for (uint64_t x : words_) {
      if (x != 0) return false;
    }
    return true;
  }

  float round_rne() const {
    uint64_t mag[kWords];
    std::copy(std::begin(words_), std::end(words_), mag);
    const bool negative = (mag[kWords - 1] >> 63) != 0;
    if (negative) negate(mag);
    int top = kWords - 1;
    while (top > 0 && mag[top] == 0) --top;
    const int lead = top * 64 + 63 - std::countl_zero(mag[top]);
    // Keep the 100 bits from the leading bit down (more than 24 + guard), the rest
    // becomes a sticky bit.
    const int low = std::max(0, lead - 99);
    unsigned __int128 head = 0;
    for (int bit = lead; bit >= low; --bit) {
      head = (head << 1) | ((mag[bit / 64] >> (bit % 64)) & 1);
    }
    bool sticky = false;
    for (int bit = 0; bit < low && !sticky; ++bit) sticky = (mag[bit / 64] >> (bit % 64)) & 1;
    return round_to_f32(head, low + kLsbExp, negative, kSm90ResultFractionBits,
                        FinalRounding::kNearestEven, sticky);
  }

 private:
  static void negate(uint64_t* x) {
    unsigned __int128 carry = 1;
    for (int i = 0; i < kWords; ++i) {
      carry += static_cast<uint64_t>(~x[i]);
      x[i] = static_cast<uint64_t>(carry);
      carry >>= 64;
    }
  }
  uint64_t words_[kWords] = {};
};

class ExactRneMmaModel final : public MmaModel {
 public:
  const char* name() const override { return "exact_rne"; }

  float mma(float c, std::span<const float> a, std::span<const float> b,
            DType in) const override {
    if (a.size() != b.size()) invariant_failed("mma called with a.size() != b.size()");
    float special;
    if (special_case(c, a, b, &special)) return special;
    ExactAccumulator acc;
    acc.add(c);
    for (size_t i = 0; i < a.size(); ++i) {
      acc.add(static_cast<double>(a[i]) * static_cast<double>(b[i]));
    }
    if (acc.is_zero()) return zero_result(c, a, b);
    return acc.round_rne();
  }
};

}  // namespace

std::unique_ptr<MmaModel> make_sm90_mma_model() { return std::make_unique<Sm90MmaModel>(); }
std::unique_ptr<MmaModel> make_exact_rne_mma_model() {
  return std::make_unique<ExactRneMmaModel>();
}

}  // namespace fixbits::dsl::reference
