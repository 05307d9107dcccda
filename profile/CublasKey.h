// CublasKey: the part of cuBLASLt's cost-model answer that can move output bits,
// and the name of the problem family (input/output dtypes and layout) it belongs to.
//
// Contract:
//   * key_of(AlgoConfig) keeps every config attribute except CTA_SWIZZLING (it only
//     reorders which block runs when; no accumulator sees a different sequence) and
//     `unreadable`; SPLITK_NUM 0 and 1 both mean "no split" and become 1. Speed knobs
//     such as the tile and the stages stay in the key on purpose: the scan probes
//     every distinct key, so two keys with equal descriptors show the knob is a speed
//     knob instead of assuming it.
//   * to_string(key) / parse_cublas_key(text) round-trip; a bad text is
//     InvalidArgument naming the field.
//   * family_of(shape) is "<in>:<out>:<layout>", e.g. "f16:f16:nn", "f8e4m3:f16:tn";
//     parse_family gives back the shape's dtypes and layout (m = n = k = 0).
// Example: key_of(algo{id=21 tile=18 splitk=0 ... swizzle=1}) ==
//          "id=21 tile=18 splitk=1 reduction=none custom=0 stages=22 inner=0 cluster=0".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "runtime/CublasLt.h"

namespace fixbits::profile {

struct CublasKey {
  int32_t id = 0;
  uint32_t tile = 0;
  uint32_t splitk = 1;     // >= 1
  uint32_t reduction = 0;  // cublasLtReductionScheme_t
  uint32_t custom = 0;
  uint32_t stages = 0;
  uint32_t inner = 0;
  uint32_t cluster = 0;
  bool operator==(const CublasKey&) const = default;
};

CublasKey key_of(const runtime::AlgoConfig& a);
std::string to_string(const CublasKey& k);
absl::StatusOr<CublasKey> parse_cublas_key(std::string_view text);

// "<in>:<out>:<nn|nt|tn|tt>" (a's layout first; n = row-major as in GemmShape).
std::string family_of(const runtime::GemmShape& s);
absl::StatusOr<runtime::GemmShape> parse_family(std::string_view family);

}  // namespace fixbits::profile
