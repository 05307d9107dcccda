// FloatFormat: the floating-point storage formats fixbits reads and writes, and
// exact conversions between them and binary32.
//
// Invariant: every conversion here is a pure function of its input bits and the
// named rounding/saturation rule, matching what the GPU's cvt instructions do:
//   - to_bits(f32 -> narrower): round-to-nearest-even; NaN stays NaN (canonical
//     quiet NaN of the target: the positive pattern the GPU's cvt writes, f16/bf16
//     0x7fff, e4m3/e5m2 0x7f, tf32 0x7fffe000); overflow follows `Saturation`.
//   - to_float(narrower -> f32): exact (every narrower value is a binary32 value).
// Example: to_bits(DType::kF16, 65520.0f) == 0x7c00 (+inf, RNE overflow);
//          to_bits(DType::kF8E4M3, 500.0f, Saturation::kSatFinite) == 0x7e (448).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace fixbits {

enum class DType : uint8_t {
  kF32,     // IEEE binary32
  kF16,     // IEEE binary16
  kBF16,    // bfloat16: 8 exponent bits, 7 mantissa bits
  kF8E4M3,  // OCP fp8 E4M3 (FN): no inf, NaN = S.1111.111, max 448
  kF8E5M2,  // OCP fp8 E5M2: IEEE-like, has inf, max 57344
  kTF32,    // TensorFloat-32 held in 32 bits: low 13 mantissa bits zero
};

// How an out-of-range finite value converts (NaN always stays NaN).
enum class Saturation : uint8_t {
  kNone,       // IEEE overflow: to inf where the format has one; E4M3 gives NaN.
  kSatFinite,  // PTX .satfinite: clamp to the largest finite value (inf too).
};

// "f32", "f16", "bf16", "f8e4m3", "f8e5m2", "tf32".
std::string_view dtype_name(DType t);
absl::StatusOr<DType> parse_dtype(std::string_view name);
int dtype_bits(DType t);            // storage width in bits: 32, 16, 8 (tf32: 32)
int dtype_mantissa_bits(DType t);   // explicit fraction bits: 23, 10, 7, 3, 2, 10
bool dtype_is_fp8(DType t);

// Rounds `x` to format `t` and returns its bit pattern in the low bits.
uint32_t to_bits(DType t, float x, Saturation sat = Saturation::kNone);
// The exact binary32 value of bit pattern `bits` of format `t`.
float to_float(DType t, uint32_t bits);
// Every value of an 8- or 16-bit format, indexed by its bits (the table to_float reads);
// empty for f32 and tf32. For loops that widen many values of one dtype.
std::span<const float> value_table(DType t);
// to_float(t, to_bits(t, x, sat)): x rounded to `t`, as a float.
float round_to(DType t, float x, Saturation sat = Saturation::kNone);

uint32_t float_bits(float x);
float bits_float(uint32_t b);

}  // namespace fixbits
