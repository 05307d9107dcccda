// CublasClass: see CublasClass.h. A class is its key's values masked, so equality of
// classes is equality of (mask, masked values). class_of({id=23 tile=11 stages=20 ...})
// keeps tile=11 stages=20; class_of({id=66 tile=10 stages=13 ...}) drops them.
#include "profile/CublasClass.h"

#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace fixbits::profile {

uint32_t key_mask(const CublasKey& key) {
  for (int32_t id : kTileStagesIds) {
    if (key.id == id) {
      return kCoarseFields | field_bit(KeyField::kTile) | field_bit(KeyField::kStages);
    }
  }
  return kCoarseFields;
}

CublasClass class_of(const CublasKey& key) { return class_of(key, key_mask(key)); }

CublasClass class_of(const CublasKey& key, uint32_t mask) {
  CublasClass c{.mask = mask, .values = key};
  CublasKey& v = c.values;
  auto keep = [&](KeyField f) { return (mask & field_bit(f)) != 0; };
  if (!keep(KeyField::kId)) v.id = 0;
  if (!keep(KeyField::kTile)) v.tile = 0;
  if (!keep(KeyField::kSplit)) v.split = false;
  if (!keep(KeyField::kReduction)) v.reduction = 0;
  if (!keep(KeyField::kCustom)) v.custom = 0;
  if (!keep(KeyField::kStages)) v.stages = 0;
  if (!keep(KeyField::kInner)) v.inner = 0;
  if (!keep(KeyField::kCluster)) v.cluster = 0;
  return c;
}

bool contains(const CublasClass& c, const CublasKey& key) {
  return (differing_fields(c.values, key) & c.mask) == 0;
}

std::string to_string(const CublasClass& c) { return fields_text(c.values, c.mask); }

absl::StatusOr<CublasClass> parse_cublas_class(std::string_view text) {
  CublasClass c;
  absl::StatusOr<uint32_t> mask = parse_fields(text, "CublasClass", &c.values);
  if (!mask.ok()) return mask.status();
  c.mask = *mask;
  if ((c.mask & kCoarseFields) != kCoarseFields) {
    std::vector<std::string> missing;
    for (int i = 0; i < kKeyFieldCount; ++i) {
      const KeyField f = static_cast<KeyField>(i);
      if ((kCoarseFields & field_bit(f)) && !(c.mask & field_bit(f))) {
        missing.emplace_back(key_field_name(f));
      }
    }
    return absl::InvalidArgumentError(absl::StrFormat(
        "The CublasClass \"%s\" lacks the coarse field(s) %s; every class fixes id, split, "
        "reduction, custom and inner.", text, absl::StrJoin(missing, ", ")));
  }
  return c;
}

}  // namespace fixbits::profile
