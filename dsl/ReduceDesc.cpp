// ReduceDesc: validation, canonical text form, parser and stable hash.
//
// Contract (see ReduceDesc.h):
//   * validate(d) is OK exactly when every field holds a value the pinned-tree
//     semantics gives a meaning to; otherwise InvalidArgument naming the field.
//   * to_string(d) prints every field in a fixed order and never fails (an enum
//     holding an out-of-range value prints as "?<number>", which parse rejects).
//   * parse_reduce_desc(to_string(d)) == d for every valid d; other text gives
//     InvalidArgument naming the field and its byte position, never a crash.
//   * hash(d) = FNV-1a 64 over to_string(d) (basis 0xcbf29ce484222325, prime
//     0x100000001b3).
// Example: "reduce{op=rms_norm axis=row in=bf16 acc=f32 out=bf16 order=pinned strip=256}".
#include "dsl/ReduceDesc.h"

#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "dsl/DescText.h"

namespace fixbits::dsl {
namespace {

using desc_text::EnumName;

constexpr EnumName<ReduceOp> kOpNames[] = {
    {ReduceOp::kSum, "sum"},         {ReduceOp::kMax, "max"},
    {ReduceOp::kMin, "min"},         {ReduceOp::kRmsNorm, "rms_norm"},
    {ReduceOp::kSoftmax, "softmax"},
};
constexpr EnumName<ReduceAxis> kAxisNames[] = {
    {ReduceAxis::kRow, "row"},
    {ReduceAxis::kColumn, "column"},
};
constexpr EnumName<TreeOrder> kOrderNames[] = {
    {TreeOrder::kPinned, "pinned"},
    {TreeOrder::kFree, "free"},
};

constexpr std::string_view kKeys[] = {"op", "axis", "in", "acc", "out", "order", "strip"};

constexpr int64_t kMaxStrip = int64_t{1} << 16;

absl::Status bad(std::string msg) { return absl::InvalidArgumentError(std::move(msg)); }

}  // namespace

absl::Status validate(const ReduceDesc& d) {
  if (!desc_text::enum_in_range(d.op, kOpNames)) {
    return bad(absl::StrFormat("ReduceDesc.op holds %d, which is no ReduceOp.",
                               static_cast<int>(d.op)));
  }
  if (!desc_text::enum_in_range(d.axis, kAxisNames)) {
    return bad(absl::StrFormat("ReduceDesc.axis holds %d, which is no ReduceAxis.",
                               static_cast<int>(d.axis)));
  }
  if (!desc_text::enum_in_range(d.order, kOrderNames)) {
    return bad(absl::StrFormat("ReduceDesc.order holds %d, which is no TreeOrder.",
                               static_cast<int>(d.order)));
  }
  for (auto [name, t] : {std::pair<const char*, DType>{"in_dtype", d.in_dtype},
                         {"acc_dtype", d.acc_dtype},
                         {"out_dtype", d.out_dtype}}) {
    if (!desc_text::dtype_in_range(t)) {
      return bad(absl::StrFormat("ReduceDesc.%s holds %d, which is no DType.", name,
                                 static_cast<int>(t)));
    }
    if (t == DType::kTF32) {
      return bad(absl::StrFormat(
          "ReduceDesc.%s is tf32, which is a matrix-instruction input format, not a "
          "storage format; use f32, f16, bf16, f8e4m3 or f8e5m2.",
          name));
    }
  }
  if (d.acc_dtype != DType::kF32) {
    return bad(absl::StrFormat(
        "ReduceDesc.acc_dtype is %s but only an f32 accumulator is supported.",
        dtype_name(d.acc_dtype)));
  }
  if (d.strip < 1 || d.strip > kMaxStrip || (d.strip & (d.strip - 1)) != 0) {
    return bad(absl::StrFormat(
        "ReduceDesc.strip is %d but must be a power of two in [1, 65536].", d.strip));
  }
  return absl::OkStatus();
}

std::string to_string(const ReduceDesc& d) {
  using desc_text::enum_name;
  using desc_text::safe_dtype_name;
  return absl::StrCat("reduce{op=", enum_name(d.op, kOpNames),
                      " axis=", enum_name(d.axis, kAxisNames),
                      " in=", safe_dtype_name(d.in_dtype),
                      " acc=", safe_dtype_name(d.acc_dtype),
                      " out=", safe_dtype_name(d.out_dtype),
                      " order=", enum_name(d.order, kOrderNames), " strip=", d.strip, "}");
}

absl::StatusOr<ReduceDesc> parse_reduce_desc(std::string_view text) {
  absl::StatusOr<desc_text::Fields> fields =
      desc_text::split_fields("ReduceDesc", "reduce", text, kKeys);
  if (!fields.ok()) return fields.status();
  desc_text::FieldReader r("ReduceDesc", text, *fields);
  ReduceDesc d;
  r.enum_field("op", kOpNames, &d.op);
  r.enum_field("axis", kAxisNames, &d.axis);
  r.dtype_field("in", &d.in_dtype);
  r.dtype_field("acc", &d.acc_dtype);
  r.dtype_field("out", &d.out_dtype);
  r.enum_field("order", kOrderNames, &d.order);
  r.int_field("strip", &d.strip);
  if (!r.status().ok()) return r.status();
  if (absl::Status s = validate(d); !s.ok()) return s;
  return d;
}

uint64_t hash(const ReduceDesc& d) { return desc_text::fnv1a64(to_string(d)); }

std::ostream& operator<<(std::ostream& os, const ReduceDesc& d) { return os << to_string(d); }

}  // namespace fixbits::dsl
