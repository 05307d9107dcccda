// FloatFormat: binary32 <-> narrow formats, exact and bit-for-bit.
//
// Contract (see FloatFormat.h): to_bits rounds to nearest, ties to even, with the
// exponent unbounded, then applies the format's range (overflow -> inf, NaN for
// E4M3, or the largest finite value under kSatFinite). Subnormal results are
// rounded at the subnormal quantum, so there is exactly one rounding.
//
// Decisions the header leaves open, fixed here:
//   * NaN input -> the NaN the GPU's cvt instructions write, whatever the input's
//     sign and payload: f16 0x7fff, bf16 0x7fff, e4m3 0x7f, e5m2 0x7f, tf32
//     0x7fffe000 (measured on an H200 with cvt.rn.f16/bf16/tf32.f32 and
//     cvt.rn.satfinite.e4m3x2/e5m2x2.f32, which also agreed with every non-NaN
//     result here on 1,047,607 values spanning ties, subnormals and overflow).
//   * kF32 is the identity on bits (NaN payloads are kept as they are).
//   * to_float of a NaN pattern gives the f32 quiet NaN 0x7fc00000 with that sign.
//   * E4M3 overflow under kNone (finite too large, or +-inf) gives sign | 0x7f.
//
// Example: 65520.0f -> f16: significand 65520 / 2^5 = 2047.5 -> ties to 2048 (even)
// -> 2^16 > 65504 -> 0x7c00.
#include "dsl/FloatFormat.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_format.h"

namespace fixbits {
namespace {

// A binary format: sign, `exp_bits` exponent bits with bias 2^(exp_bits-1)-1,
// `man_bits` fraction bits. `max_exp`/`max_man` is the largest finite encoding.
struct Format {
  int exp_bits;
  int man_bits;
  bool has_inf;       // IEEE-like: exponent all ones is inf/NaN
  uint32_t max_exp;   // biased exponent of the largest finite value
  uint32_t max_man;   // its fraction
  uint32_t qnan;      // the NaN cvt writes (positive), in the storage width
  int width;          // storage bits
  int man_shift;      // where the fraction starts in storage (tf32: 13)
  int bias() const { return (1 << (exp_bits - 1)) - 1; }
};

Format format_of(DType t) {
  switch (t) {
    case DType::kF16:    return {5, 10, true, 30, 0x3ff, 0x7fffu, 16, 0};
    case DType::kBF16:   return {8, 7, true, 254, 0x7f, 0x7fffu, 16, 0};
    case DType::kF8E4M3: return {4, 3, false, 15, 6, 0x7fu, 8, 0};
    case DType::kF8E5M2: return {5, 2, true, 30, 3, 0x7fu, 8, 0};
    case DType::kTF32:   return {8, 10, true, 254, 0x3ff, 0x7fffe000u, 32, 13};
    case DType::kF32:    return {8, 23, true, 254, 0x7fffff, 0x7fc00000u, 32, 0};
  }
  return {8, 23, true, 254, 0x7fffff, 0x7fc00000u, 32, 0};
}

uint32_t encode(const Format& f, uint32_t sign, uint32_t biased, uint32_t man) {
  const uint32_t sign_bit = sign << (f.width - 1);
  return sign_bit | (biased << (f.man_bits + f.man_shift)) | (man << f.man_shift);
}

uint32_t overflow_bits(const Format& f, uint32_t sign, Saturation sat) {
  if (sat == Saturation::kSatFinite) return encode(f, sign, f.max_exp, f.max_man);
  if (!f.has_inf) return (sign << (f.width - 1)) | f.qnan;  // E4M3: NaN
  return encode(f, sign, f.max_exp + 1, 0);                 // inf
}

uint32_t narrow(const Format& f, float x, Saturation sat) {
  const uint32_t xb = float_bits(x);
  const uint32_t sign = xb >> 31;
  const uint32_t ef = (xb >> 23) & 0xff;
  const uint32_t mf = xb & 0x7fffff;
  if (ef == 0xff) {
    if (mf != 0) return f.qnan;  // sign dropped, as cvt does
    return overflow_bits(f, sign, sat);
  }
  if (ef == 0 && mf == 0) return sign << (f.width - 1);

  // |x| = sig * 2^e exactly, with floor(log2|x|) = lg.
  uint64_t sig;
  int e, lg;
  if (ef != 0) {
    sig = mf | (1u << 23);
    e = static_cast<int>(ef) - 127 - 23;
    lg = static_cast<int>(ef) - 127;
  } else {
    sig = mf;
    e = -149;
    lg = -149 + (31 - std::countl_zero(mf));
  }
  const int emin = 1 - f.bias();
  // Quantum of the target at |x|: 2^q.
  int q = (lg > emin ? lg : emin) - f.man_bits;
  const int shift = q - e;  // >= 0 for every narrower format
  uint64_t n;
  if (shift <= 0) {
    n = sig << (-shift);  // not reached for formats narrower than f32
  } else if (shift > 40) {
    n = 0;  // sig < 2^24, so sig / 2^shift < 1/2: rounds to zero
  } else {
    n = sig >> shift;
    const uint64_t rem = sig & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (n & 1))) ++n;
  }
  const uint64_t one = uint64_t{1} << f.man_bits;
  if (n >= 2 * one) {  // rounding carried into the next binade; n == 2*one exactly
    n >>= 1;
    ++q;
  }
  if (n < one) return encode(f, sign, 0, static_cast<uint32_t>(n));  // subnormal/0
  const int64_t biased = int64_t{q} + f.man_bits + f.bias();
  const uint32_t man = static_cast<uint32_t>(n - one);
  const int64_t max_exp = f.max_exp;
  if (biased > max_exp || (biased == max_exp && man > f.max_man)) {
    return overflow_bits(f, sign, sat);
  }
  return encode(f, sign, static_cast<uint32_t>(biased), man);
}

float widen(const Format& f, uint32_t bits) {
  const uint32_t sign = (bits >> (f.width - 1)) & 1;
  const uint32_t biased = (bits >> (f.man_bits + f.man_shift)) & ((1u << f.exp_bits) - 1);
  const uint32_t man = (bits >> f.man_shift) & ((1u << f.man_bits) - 1);
  const bool special = f.has_inf ? biased == (1u << f.exp_bits) - 1
                                 : (biased == f.max_exp && man > f.max_man);
  if (special) {
    if (f.has_inf && man == 0) {
      return sign ? -std::numeric_limits<float>::infinity()
                  : std::numeric_limits<float>::infinity();
    }
    return bits_float((sign << 31) | 0x7fc00000u);
  }
  float mag;
  if (biased == 0) {
    mag = std::ldexp(static_cast<float>(man), 1 - f.bias() - f.man_bits);
  } else {
    mag = std::ldexp(static_cast<float>(man | (1u << f.man_bits)),
                     static_cast<int>(biased) - f.bias() - f.man_bits);
  }
  return sign ? -mag : mag;
}

}  // namespace

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kF32:    return "f32";
    case DType::kF16:    return "f16";
    case DType::kBF16:   return "bf16";
    case DType::kF8E4M3: return "f8e4m3";
    case DType::kF8E5M2: return "f8e5m2";
    case DType::kTF32:   return "tf32";
  }
  return "unknown";
}

absl::StatusOr<DType> parse_dtype(std::string_view name) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kF8E4M3, DType::kF8E5M2,
                  DType::kTF32}) {
    if (dtype_name(t) == name) return t;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "Unknown dtype \"%s\"; expected one of f32, f16, bf16, f8e4m3, f8e5m2, tf32.",
      std::string(name)));
}

int dtype_bits(DType t) { return format_of(t).width; }
int dtype_mantissa_bits(DType t) { return format_of(t).man_bits; }
bool dtype_is_fp8(DType t) { return t == DType::kF8E4M3 || t == DType::kF8E5M2; }

uint32_t to_bits(DType t, float x, Saturation sat) {
  if (t == DType::kF32) return float_bits(x);
  return narrow(format_of(t), x, sat);
}

namespace {

// Every value of a format of 16 bits or fewer, widened once (widen's ldexp is most of
// a reference GEMM's time: the scan's probe replays, session 9).
std::vector<float> widen_all(DType t) {
  const Format f = format_of(t);
  std::vector<float> out(size_t{1} << f.width);
  for (uint32_t b = 0; b < out.size(); ++b) out[b] = widen(f, b);
  return out;
}

}  // namespace

// One table per format, each a function-local static (thread-safe first use).
template <DType T>
const std::vector<float>& table_of() {
  static const std::vector<float> all = widen_all(T);
  return all;
}

template <DType T>
float from_table(uint32_t bits) {
  const std::vector<float>& all = table_of<T>();
  return all[bits & (all.size() - 1)];
}

float to_float(DType t, uint32_t bits) {
  switch (t) {
    case DType::kF32: return bits_float(bits);
    case DType::kF16: return from_table<DType::kF16>(bits);
    case DType::kBF16: return from_table<DType::kBF16>(bits);
    case DType::kF8E4M3: return from_table<DType::kF8E4M3>(bits);
    case DType::kF8E5M2: return from_table<DType::kF8E5M2>(bits);
    case DType::kTF32: break;
  }
  return widen(format_of(t), bits);
}

std::span<const float> value_table(DType t) {
  switch (t) {
    case DType::kF16: return table_of<DType::kF16>();
    case DType::kBF16: return table_of<DType::kBF16>();
    case DType::kF8E4M3: return table_of<DType::kF8E4M3>();
    case DType::kF8E5M2: return table_of<DType::kF8E5M2>();
    case DType::kF32:
    case DType::kTF32: break;
  }
  return {};
}

float round_to(DType t, float x, Saturation sat) { return to_float(t, to_bits(t, x, sat)); }

uint32_t float_bits(float x) { return std::bit_cast<uint32_t>(x); }
float bits_float(uint32_t b) { return std::bit_cast<float>(b); }

}  // namespace fixbits
