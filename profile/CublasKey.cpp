// CublasKey: see CublasKey.h. The text form is space-separated name=value pairs in
// a fixed order (KeyField's); the reduction scheme is written by name (runtime's names),
// split as 0 or 1.
#include "profile/CublasKey.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace fixbits::profile {
namespace {

absl::string_view av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

constexpr const char* kFieldNames[kKeyFieldCount] = {"id",     "tile",   "split", "reduction",
                                                     "custom", "stages", "inner", "cluster"};

absl::StatusOr<uint32_t> parse_reduction(std::string_view v, std::string_view what) {
  for (uint32_t s : {0u, 1u, 2u, 4u}) {
    if (runtime::reduction_scheme_name(s) == v) return s;
  }
  uint32_t x = 0;
  if (absl::SimpleAtoi(av(v), &x)) return x;
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s.reduction is \"%s\"; expected none, inplace, compute_type, output_type or a "
      "number.", what, v));
}

uint32_t* unsigned_field(CublasKey& k, KeyField f) {
  switch (f) {
    case KeyField::kTile: return &k.tile;
    case KeyField::kReduction: return &k.reduction;
    case KeyField::kCustom: return &k.custom;
    case KeyField::kStages: return &k.stages;
    case KeyField::kInner: return &k.inner;
    case KeyField::kCluster: return &k.cluster;
    default: return nullptr;
  }
}

int64_t field_value(const CublasKey& k, KeyField f) {
  switch (f) {
    case KeyField::kId: return k.id;
    case KeyField::kTile: return k.tile;
    case KeyField::kSplit: return k.split ? 1 : 0;
    case KeyField::kReduction: return k.reduction;
    case KeyField::kCustom: return k.custom;
    case KeyField::kStages: return k.stages;
    case KeyField::kInner: return k.inner;
    case KeyField::kCluster: return k.cluster;
  }
  return 0;
}

}  // namespace

CublasAnswer answer_of(const runtime::AlgoConfig& a) {
  CublasAnswer r;
  r.splitk = a.splitk_num == 0 ? 1 : a.splitk_num;
  r.key.id = a.id;
  r.key.tile = a.tile_id;
  r.key.split = r.splitk > 1;
  r.key.reduction = a.reduction_scheme;
  r.key.custom = a.custom_option;
  r.key.stages = a.stages_id;
  r.key.inner = a.inner_shape_id;
  r.key.cluster = a.cluster_shape_id;
  return r;
}

std::string_view key_field_name(KeyField f) { return kFieldNames[static_cast<int>(f)]; }

std::string key_field_text(const CublasKey& k, KeyField f) {
  if (f == KeyField::kReduction) {
    return absl::StrCat("reduction=", runtime::reduction_scheme_name(k.reduction));
  }
  return absl::StrCat(av(key_field_name(f)), "=", field_value(k, f));
}

uint32_t differing_fields(const CublasKey& a, const CublasKey& b) {
  uint32_t mask = 0;
  for (int i = 0; i < kKeyFieldCount; ++i) {
    const KeyField f = static_cast<KeyField>(i);
    if (field_value(a, f) != field_value(b, f)) mask |= field_bit(f);
  }
  return mask;
}

std::string fields_text(const CublasKey& k, uint32_t mask) {
  std::vector<std::string> parts;
  for (int i = 0; i < kKeyFieldCount; ++i) {
    if (mask & (1u << i)) parts.push_back(key_field_text(k, static_cast<KeyField>(i)));
  }
  return absl::StrJoin(parts, " ");
}

std::string to_string(const CublasKey& k) { return fields_text(k, (1u << kKeyFieldCount) - 1); }

absl::StatusOr<uint32_t> parse_fields(std::string_view text, std::string_view what, CublasKey* k) {
  uint32_t mask = 0;
  int last = -1;
  for (absl::string_view part : absl::StrSplit(av(text), ' ', absl::SkipEmpty())) {
    const size_t eq = part.find('=');
    const absl::string_view name = part.substr(0, eq);
    int field = -1;
    for (int i = 0; i < kKeyFieldCount; ++i) {
      if (name == kFieldNames[i]) field = i;
    }
    if (eq == absl::string_view::npos || field < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s has \"%s\", which is not <field>=<value> with a field of id, tile, split, "
          "reduction, custom, stages, inner, cluster.", what, std::string(part)));
    }
    if (field <= last) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s.%s is out of order or repeated in \"%s\"; fields go in the order id, tile, split, "
          "reduction, custom, stages, inner, cluster.", what, kFieldNames[field], text));
    }
    last = field;
    mask |= 1u << field;
    const std::string v(part.substr(eq + 1));
    const KeyField f = static_cast<KeyField>(field);
    bool ok = true;
    if (f == KeyField::kId) {
      ok = absl::SimpleAtoi(v, &k->id);
    } else if (f == KeyField::kSplit) {
      ok = v == "0" || v == "1";
      k->split = v == "1";
    } else if (f == KeyField::kReduction) {
      absl::StatusOr<uint32_t> r = parse_reduction(v, what);
      if (!r.ok()) return r.status();
      k->reduction = *r;
    } else {
      ok = absl::SimpleAtoi(v, unsigned_field(*k, f));
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s.%s is \"%s\", not %s.", what, kFieldNames[field], v,
          f == KeyField::kSplit ? "0 or 1" : "an integer in range"));
    }
  }
  return mask;
}

absl::StatusOr<CublasKey> parse_cublas_key(std::string_view text) {
  CublasKey k;
  absl::StatusOr<uint32_t> mask = parse_fields(text, "CublasKey", &k);
  if (!mask.ok()) return mask.status();
  const uint32_t all = (1u << kKeyFieldCount) - 1;
  if (*mask != all) {
    std::vector<std::string> missing;
    for (int i = 0; i < kKeyFieldCount; ++i) {
      if (!(*mask & (1u << i))) missing.push_back(kFieldNames[i]);
    }
    return absl::InvalidArgumentError(absl::StrFormat(
        "A CublasKey has 8 fields (id tile split reduction custom stages inner cluster); "
        "\"%s\" lacks %s.", text, absl::StrJoin(missing, ", ")));
  }
  return k;
}

std::string family_of(const runtime::GemmShape& s) {
  // cuBLASLt never mixes input dtypes outside fp8; a mixed fp8 pair prints as "a/b".
  std::string in(dtype_name(s.a_dtype));
  if (s.b_dtype != s.a_dtype) in += "/" + std::string(dtype_name(s.b_dtype));
  return absl::StrFormat("%s:%s:%c%c", in, dtype_name(s.out_dtype), s.a_row_major ? 'n' : 't',
                         s.b_row_major ? 'n' : 't');
}

absl::StatusOr<runtime::GemmShape> parse_family(std::string_view family) {
  std::vector<std::string> parts = absl::StrSplit(av(family), ':');
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "The problem family \"%s\" is not <in>:<out>:<layout> (e.g. f16:f16:nn): %s.", family,
        why));
  };
  if (parts.size() != 3) return bad("it needs three ':'-separated parts");
  runtime::GemmShape s;
  std::vector<std::string> in = absl::StrSplit(parts[0], '/');
  if (in.size() > 2) return bad("the input part names more than two dtypes");
  absl::StatusOr<DType> a = parse_dtype(in[0]);
  if (!a.ok()) return bad("its input dtype \"" + in[0] + "\" is unknown");
  absl::StatusOr<DType> b = in.size() == 2 ? parse_dtype(in[1]) : a;
  if (!b.ok()) return bad("its second input dtype \"" + in[1] + "\" is unknown");
  absl::StatusOr<DType> o = parse_dtype(parts[1]);
  if (!o.ok()) return bad("its output dtype \"" + parts[1] + "\" is unknown");
  if (parts[2].size() != 2 || (parts[2][0] != 'n' && parts[2][0] != 't') ||
      (parts[2][1] != 'n' && parts[2][1] != 't')) {
    return bad("its layout \"" + parts[2] + "\" is not nn, nt, tn or tt");
  }
  s.a_dtype = *a;
  s.b_dtype = *b;
  s.out_dtype = *o;
  s.a_row_major = parts[2][0] == 'n';
  s.b_row_major = parts[2][1] == 'n';
  return s;
}

}  // namespace fixbits::profile
