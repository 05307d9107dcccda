// CublasClass: the bit-deciding key of cuBLASLt's answers. A class is a set of key
// variants (CublasKey.h) that agree on the class's fields; every variant of a family
// belongs to exactly one class, and one probed descriptor (carried to each shape's K
// and split count by span rules, CublasTable.h) stands for the whole class.
//
// The coarse fields (kCoarseFields), and why each can move bits:
//   id         the kernel family (nvjet is 66; the H200 scan also saw 13, 14, 23, 24,
//              and dot_kernel + reduce for GEMV); each runs its own code;
//   split      SPLITK_NUM > 1: a split kernel plus a reduce kernel (family split_k);
//              the count itself is per shape and moves only the split span;
//   reduction  REDUCTION_SCHEME: where and at what precision the split partials are
//              merged (partial_dtype, merge_dtype);
//   inner      INNER_SHAPE_ID: the MMA instruction shape, hence instruction_k;
//   custom     CUSTOM_OPTION: per-algorithm options whose meaning cuBLASLt does not
//              document, so nothing shows they cannot move bits.
// Per algorithm id, the key can fix more (key_mask): ids 13, 23 and 24 fix tile and
// stages from the start (kTileStagesIds), because the H200 probes showed both move bits
// for ids 23 and 24 (their coarse classes split by exactly those fields), and id 13 is
// given them too (issue #7; its classes were not probed enough to say); nvjet (66)
// stays coarse, its tiles and stages shown not to matter.
// The fine fields (tile, stages, cluster) are speed knobs by the H200 probes (every
// nvjet tile/stages/cluster gave one descriptor) but that is never assumed: the scan
// probes each class at variants that differ in them, and when two probes of a class
// disagree the class is split by the fields in which their variants differ
// (refine()), each part probed again. A class's own mask then holds those fields too.
// (STAGES_ID names the mainloop's K step, which can move bits when accumulation is not
// fast; the validation is what catches that.)
//
// Contract: class_of(key) has mask key_mask(key) (kCoarseFields, plus tile and stages
// for the ids of kTileStagesIds) and key's values there (others 0);
// contains(c, key) iff key agrees with c.values on c.mask; to_string / parse_cublas_class
// round-trip ("id=66 split=1 reduction=compute_type custom=0 inner=0"), and a parsed
// class must fix every coarse field (InvalidArgument naming the missing field); it
// need not fix key_mask's tile and stages (a table written under the older key parses,
// and profile::rekey_table gives it today's).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "profile/CublasKey.h"

namespace fixbits::profile {

inline constexpr uint32_t kCoarseFields = field_bit(KeyField::kId) | field_bit(KeyField::kSplit) |
                                          field_bit(KeyField::kReduction) |
                                          field_bit(KeyField::kCustom) |
                                          field_bit(KeyField::kInner);

// The algorithm ids whose key fixes tile and stages too.
inline constexpr int32_t kTileStagesIds[] = {13, 23, 24};
// The fields a class of `key` fixes from the start.
uint32_t key_mask(const CublasKey& key);

struct CublasClass {
  uint32_t mask = kCoarseFields;  // the fields the class fixes
  CublasKey values;               // their values; every other field 0
  bool operator==(const CublasClass&) const = default;
};

CublasClass class_of(const CublasKey& key);  // mask key_mask(key)
CublasClass class_of(const CublasKey& key, uint32_t mask);
bool contains(const CublasClass& c, const CublasKey& key);
std::string to_string(const CublasClass& c);
absl::StatusOr<CublasClass> parse_cublas_class(std::string_view text);

}  // namespace fixbits::profile
