// DescText: the shared machinery of the descriptors' one-line text form
// ("name{key=value key=value ...}") — splitting it into fields, reading typed
// values with errors that name the field and its byte position, and the stable
// FNV-1a 64 hash. Internal to dsl/ (GemmDesc.cpp, ReduceDesc.cpp).
//
// Contract: split_fields accepts exactly one occurrence of each expected key (at most
// one of the keys from `required` on, which are optional), in any order, separated by spaces or tabs, inside "<prefix>{...}" (surrounding
// whitespace ignored); anything else is InvalidArgument. FieldReader records the
// first error and ignores every later call, so a parser reads as a flat list of
// field reads followed by one status check. No input makes either crash.
// Example: split_fields("ReduceDesc", "reduce", "reduce{op=sum strip=8}", {"op","strip"})
//          gives [{op, "sum", 10}, {strip, "8", 20}].
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "dsl/FloatFormat.h"

namespace fixbits::dsl::desc_text {

template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

template <class E, size_t N>
bool enum_in_range(E v, const EnumName<E> (&names)[N]) {
  for (const EnumName<E>& n : names) {
    if (n.value == v) return true;
  }
  return false;
}

// The lower_snake name of `v`, or "?<number>" when `v` is no listed value.
template <class E, size_t N>
std::string enum_name(E v, const EnumName<E> (&names)[N]) {
  for (const EnumName<E>& n : names) {
    if (n.value == v) return std::string(n.name);
  }
  return absl::StrFormat("?%d", static_cast<int>(v));
}

bool dtype_in_range(DType t);
// dtype_name(t), or "?<number>" for a value outside the enum.
std::string safe_dtype_name(DType t);

// FNV-1a 64: offset basis 0xcbf29ce484222325, prime 0x100000001b3.
uint64_t fnv1a64(std::string_view bytes);

// absl here is built with its own string_view; this bridges std::string_view to it.
inline absl::string_view av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// The items of `items` joined with ", ".
std::string join(std::span<const std::string_view> items);

// `text` quoted for an error message: at most 48 bytes, non-printable bytes as '?'.
std::string quote(std::string_view text);

struct Field {
  std::string_view key;
  std::string_view value;  // points into the parsed text
};
using Fields = std::vector<Field>;  // in the order of `keys`

// `what` names the descriptor type in messages ("GemmDesc").
// keys[required..] may be absent: their Field then has an empty key (FieldReader::has).
absl::StatusOr<Fields> split_fields(std::string_view what, std::string_view prefix,
                                    std::string_view text,
                                    std::span<const std::string_view> keys,
                                    size_t required = static_cast<size_t>(-1));

class FieldReader {
 public:
  // `fields` must come from split_fields over `text` (the views point into it).
  FieldReader(std::string_view what, std::string_view text, const Fields& fields)
      : what_(what), text_(text), fields_(fields) {}

  const absl::Status& status() const { return status_; }
  // Whether the text gave `key` (an optional key of split_fields may be absent).
  bool has(std::string_view key) const {
    for (const Field& f : fields_) {
      if (f.key == key) return true;
    }
    return false;
  }

  template <class E, size_t N>
  void enum_field(std::string_view key, const EnumName<E> (&names)[N], E* out) {
    if (const Field* f = find(key)) parse_enum(f->value, names, out, key, "the value");
  }
  void dtype_field(std::string_view key, DType* out);
  void bool_field(std::string_view key, bool* out);
  template <class T>
  void int_field(std::string_view key, T* out) {
    if (const Field* f = find(key)) parse_int(f->value, out, key, "the value");
  }
  // "x<sep>y": calls fn(x, y).
  void pair_field(std::string_view key, char sep,
                  const std::function<void(std::string_view, std::string_view)>& fn);
  // "[a,b,c]" or "[]": calls fn(item) for each item in order.
  void list_field(std::string_view key, const std::function<void(std::string_view)>& fn);
  void split_pair(std::string_view item, char sep, std::string_view key,
                  const std::function<void(std::string_view, std::string_view)>& fn);

  // Piece parsers: false (and the error recorded) when `piece` is malformed.
  template <class T>
  bool parse_int(std::string_view piece, T* out, std::string_view key,
                 std::string_view what_piece) {
    if (!status_.ok()) return false;
    T v{};
    if (piece.empty() || piece.size() > 24 || !absl::SimpleAtoi(av(piece), &v) ||
        piece.front() == '+' || piece.front() == ' ') {
      fail(key, piece,
           absl::StrFormat("%s \"%s\" is not an integer in range", what_piece, quote(piece)));
      return false;
    }
    *out = v;
    return true;
  }
  template <class E, size_t N>
  bool parse_enum(std::string_view piece, const EnumName<E> (&names)[N], E* out,
                  std::string_view key, std::string_view what_piece) {
    if (!status_.ok()) return false;
    for (const EnumName<E>& n : names) {
      if (n.name == piece) {
        *out = n.value;
        return true;
      }
    }
    std::vector<std::string_view> all;
    for (const EnumName<E>& n : names) all.push_back(n.name);
    fail(key, piece,
         absl::StrFormat("%s \"%s\" is not one of %s", what_piece, quote(piece),
                         join(all)));
    return false;
  }
  // Records an error about `piece` of `key` (the first error is kept).
  void fail(std::string_view key, std::string_view piece, const std::string& why);

 private:
  const Field* find(std::string_view key);

  std::string_view what_;
  std::string_view text_;
  const Fields& fields_;
  absl::Status status_;
};

}  // namespace fixbits::dsl::desc_text
