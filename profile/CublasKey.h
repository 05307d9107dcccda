// CublasKey: what cuBLASLt's cost model answered for one shape, reduced to the parts
// that name a kernel (the "variant"), plus the split count, which varies per shape.
//
// Contract:
//   * answer_of(AlgoConfig) = {key, splitk}: the key keeps every config attribute
//     except CTA_SWIZZLING (it only reorders which block runs when; no accumulator
//     sees a different sequence), `unreadable` and the split count itself, of which
//     it keeps only `split` = SPLITK_NUM > 1; splitk is SPLITK_NUM with 0 and 1 both
//     "no split" = 1. The split count moves bits only through the span of the split
//     (a rule in (splitk, K), CublasTable.h), so it is a per-shape value of the map,
//     not part of the key: 144 split counts no longer make 144 keys.
//   * Which key fields decide bits is CublasClass.h's business: a key is a variant of
//     exactly one class of its family.
//   * to_string(key) / parse_cublas_key(text) round-trip; a bad text is
//     InvalidArgument naming the field.
//   * family_of(shape) is "<in>:<out>:<layout>", e.g. "f16:f16:nn", "f8e4m3:f16:tn";
//     parse_family gives back the shape's dtypes and layout (m = n = k = 0).
// Example: answer_of(algo{id=66 tile=393 splitk=3 reduction=2 ... swizzle=1}) ==
//   {"id=66 tile=393 split=1 reduction=compute_type custom=0 stages=.. inner=0 cluster=0", 3}.
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
  bool split = false;      // SPLITK_NUM > 1
  uint32_t reduction = 0;  // cublasLtReductionScheme_t
  uint32_t custom = 0;
  uint32_t stages = 0;
  uint32_t inner = 0;
  uint32_t cluster = 0;
  bool operator==(const CublasKey&) const = default;
  auto operator<=>(const CublasKey&) const = default;
};

// One heuristic answer: its key and its split count (>= 1; > 1 exactly when key.split).
struct CublasAnswer {
  CublasKey key;
  uint32_t splitk = 1;
  bool operator==(const CublasAnswer&) const = default;
};

CublasAnswer answer_of(const runtime::AlgoConfig& a);

// The key's fields, in text order; a mask of them (1 << field) is how CublasClass
// names a subset. Values print as integers, except split (0/1) and reduction (by name).
enum class KeyField : uint8_t {
  kId, kTile, kSplit, kReduction, kCustom, kStages, kInner, kCluster
};
inline constexpr int kKeyFieldCount = 8;
inline constexpr uint32_t field_bit(KeyField f) { return 1u << static_cast<int>(f); }
std::string_view key_field_name(KeyField f);  // "id", "tile", ...
// "id=66"-style text of one field.
std::string key_field_text(const CublasKey& k, KeyField f);
// The fields (a mask) in which a and b differ.
uint32_t differing_fields(const CublasKey& a, const CublasKey& b);
// The fields of `mask` as "name=value name=value ..." in text order.
std::string fields_text(const CublasKey& k, uint32_t mask);
// Parses "name=value ..." (fields in text order, each at most once) into *k, returning
// the mask of fields given; `what` names the thing in errors ("CublasKey").
absl::StatusOr<uint32_t> parse_fields(std::string_view text, std::string_view what, CublasKey* k);
std::string to_string(const CublasKey& k);
absl::StatusOr<CublasKey> parse_cublas_key(std::string_view text);

// "<in>:<out>:<nn|nt|tn|tt>" (a's layout first; n = row-major as in GemmShape).
std::string family_of(const runtime::GemmShape& s);
absl::StatusOr<runtime::GemmShape> parse_family(std::string_view family);

}  // namespace fixbits::profile
