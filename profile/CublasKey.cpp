// CublasKey: see CublasKey.h. The text form is space-separated key=value pairs in
// a fixed order; the reduction scheme is written by name (runtime's names).
#include "profile/CublasKey.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace fixbits::profile {
namespace {

absl::string_view av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

constexpr const char* kFieldNames[] = {"id",     "tile",   "splitk", "reduction",
                                       "custom", "stages", "inner",  "cluster"};

absl::StatusOr<uint32_t> parse_reduction(std::string_view v) {
  for (uint32_t s : {0u, 1u, 2u, 4u}) {
    if (runtime::reduction_scheme_name(s) == v) return s;
  }
  uint32_t x = 0;
  if (absl::SimpleAtoi(av(v), &x)) return x;
  return absl::InvalidArgumentError(absl::StrFormat(
      "CublasKey.reduction is \"%s\"; expected none, inplace, compute_type, output_type or a "
      "number.", v));
}

}  // namespace

CublasKey key_of(const runtime::AlgoConfig& a) {
  CublasKey k;
  k.id = a.id;
  k.tile = a.tile_id;
  k.splitk = a.splitk_num == 0 ? 1 : a.splitk_num;
  k.reduction = a.reduction_scheme;
  k.custom = a.custom_option;
  k.stages = a.stages_id;
  k.inner = a.inner_shape_id;
  k.cluster = a.cluster_shape_id;
  return k;
}

std::string to_string(const CublasKey& k) {
  return absl::StrFormat("id=%d tile=%u splitk=%u reduction=%s custom=%u stages=%u inner=%u "
                         "cluster=%u",
                         k.id, k.tile, k.splitk, runtime::reduction_scheme_name(k.reduction),
                         k.custom, k.stages, k.inner, k.cluster);
}

absl::StatusOr<CublasKey> parse_cublas_key(std::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(av(text), ' ', absl::SkipEmpty());
  if (parts.size() != 8) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "A CublasKey has 8 fields (id tile splitk reduction custom stages inner cluster); "
        "\"%s\" has %d.", text, parts.size()));
  }
  CublasKey k;
  uint32_t* fields[] = {nullptr, &k.tile, &k.splitk, nullptr,
                        &k.custom, &k.stages, &k.inner, &k.cluster};
  for (size_t i = 0; i < 8; ++i) {
    const std::string want = std::string(kFieldNames[i]) + "=";
    if (!absl::StartsWith(parts[i], want)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "CublasKey field %d is \"%s\"; expected %s<value>.", i + 1, std::string(parts[i]),
          want));
    }
    const absl::string_view v = parts[i].substr(want.size());
    bool ok = true;
    if (i == 0) {
      ok = absl::SimpleAtoi(v, &k.id);
    } else if (i == 3) {
      absl::StatusOr<uint32_t> r = parse_reduction(std::string_view(v.data(), v.size()));
      if (!r.ok()) return r.status();
      k.reduction = *r;
    } else {
      ok = absl::SimpleAtoi(v, fields[i]);
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "CublasKey.%s is \"%s\", not an integer in range.", kFieldNames[i], std::string(v)));
    }
  }
  if (k.splitk == 0) {
    return absl::InvalidArgumentError("CublasKey.splitk is 0; a key holds 1 for \"no split\".");
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
