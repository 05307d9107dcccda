// DescText: splitting "name{key=value ...}" into fields and reading them; see
// DescText.h for the contract.
// Example: "gemm{ik=16 ik=8 ...}" -> InvalidArgument "GemmDesc text names the field
// \"ik\" twice (bytes 5 and 11)."
#include "dsl/DescText.h"


namespace fixbits::dsl::desc_text {

bool dtype_in_range(DType t) { return static_cast<int>(t) <= static_cast<int>(DType::kTF32); }

std::string safe_dtype_name(DType t) {
  if (!dtype_in_range(t)) return absl::StrFormat("?%d", static_cast<int>(t));
  return std::string(dtype_name(t));
}

uint64_t fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string join(std::span<const std::string_view> items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += items[i];
  }
  return out;
}

std::string quote(std::string_view text) {
  std::string out;
  const size_t n = text.size() < 48 ? text.size() : 48;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    out.push_back(c >= 0x20 && c < 0x7f && c != '"' ? static_cast<char>(c) : '?');
  }
  if (n < text.size()) out += "...";
  return out;
}

absl::StatusOr<Fields> split_fields(std::string_view what, std::string_view prefix,
                                    std::string_view text,
                                    std::span<const std::string_view> keys,
                                    size_t required) {
  const std::string_view full = text;
  auto pos_of = [&](std::string_view piece) {
    return static_cast<size_t>(piece.data() - full.data());
  };
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  const std::string open = std::string(prefix) + "{";
  if (text.substr(0, open.size()) != open) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s text must start with \"%s\" but begins \"%s\".", what, open, quote(text)));
  }
  if (text.size() <= open.size() || text.back() != '}') {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s text must end with \"}\" (it has %d bytes and ends \"%s\").", what,
        full.size(), quote(text.substr(text.size() > 8 ? text.size() - 8 : 0))));
  }
  std::string_view body = text.substr(open.size(), text.size() - open.size() - 1);
  std::vector<Field> found(keys.size());
  std::vector<bool> have(keys.size(), false);
  size_t i = 0;
  while (i < body.size()) {
    if (body[i] == ' ' || body[i] == '\t') {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < body.size() && body[j] != ' ' && body[j] != '\t') ++j;
    std::string_view token = body.substr(i, j - i);
    i = j;
    const size_t eq = token.find('=');
    if (eq == std::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s text has \"%s\" at byte %d, which is not key=value.", what,
                          quote(token), pos_of(token)));
    }
    std::string_view key = token.substr(0, eq);
    size_t k = 0;
    while (k < keys.size() && keys[k] != key) ++k;
    if (k == keys.size()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s text names an unknown field \"%s\" at byte %d; the fields "
                          "are %s.",
                          what, quote(key), pos_of(token), join(keys)));
    }
    if (have[k]) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s text names the field \"%s\" twice (bytes %d and %d).", what, key,
          pos_of(found[k].key), pos_of(token)));
    }
    have[k] = true;
    found[k] = Field{key, token.substr(eq + 1)};
  }
  for (size_t k = 0; k < keys.size() && k < required; ++k) {
    if (!have[k]) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s text lacks the field \"%s\"; every field must be given.", what, keys[k]));
    }
  }
  return found;
}

const Field* FieldReader::find(std::string_view key) {
  if (!status_.ok()) return nullptr;
  for (const Field& f : fields_) {
    if (f.key == key) return &f;
  }
  status_ = absl::InternalError(
      absl::StrFormat("%s parser asks for the field \"%s\", which split_fields did not "
                      "read (parser bug).",
                      what_, key));
  return nullptr;
}

void FieldReader::fail(std::string_view key, std::string_view piece, const std::string& why) {
  if (!status_.ok()) return;
  const size_t pos = piece.data() >= text_.data() && piece.data() <= text_.data() + text_.size()
                         ? static_cast<size_t>(piece.data() - text_.data())
                         : 0;
  status_ = absl::InvalidArgumentError(
      absl::StrFormat("%s field \"%s\" at byte %d: %s.", what_, key, pos, why));
}

void FieldReader::dtype_field(std::string_view key, DType* out) {
  const Field* f = find(key);
  if (f == nullptr) return;
  absl::StatusOr<DType> t = parse_dtype(f->value);
  if (!t.ok()) {
    fail(key, f->value,
         absl::StrFormat("\"%s\" is not a dtype (f32, f16, bf16, f8e4m3, f8e5m2, tf32)",
                         quote(f->value)));
    return;
  }
  *out = *t;
}

void FieldReader::bool_field(std::string_view key, bool* out) {
  const Field* f = find(key);
  if (f == nullptr) return;
  if (f->value == "0" || f->value == "1") {
    *out = f->value == "1";
    return;
  }
  fail(key, f->value, absl::StrFormat("\"%s\" is not 0 or 1", quote(f->value)));
}

void FieldReader::split_pair(std::string_view item, char sep, std::string_view key,
                             const std::function<void(std::string_view, std::string_view)>& fn) {
  if (!status_.ok()) return;
  const size_t at = item.find(sep);
  if (at == std::string_view::npos) {
    fail(key, item, absl::StrFormat("\"%s\" lacks the separator '%c'", quote(item), sep));
    return;
  }
  fn(item.substr(0, at), item.substr(at + 1));
}

void FieldReader::pair_field(std::string_view key, char sep,
                             const std::function<void(std::string_view, std::string_view)>& fn) {
  if (const Field* f = find(key)) split_pair(f->value, sep, key, fn);
}

void FieldReader::list_field(std::string_view key,
                             const std::function<void(std::string_view)>& fn) {
  const Field* f = find(key);
  if (f == nullptr) return;
  std::string_view v = f->value;
  if (v.size() < 2 || v.front() != '[' || v.back() != ']') {
    fail(key, v, absl::StrFormat("\"%s\" is not a bracketed list like [a,b]", quote(v)));
    return;
  }
  std::string_view inner = v.substr(1, v.size() - 2);
  if (inner.empty()) return;
  size_t start = 0;
  while (status_.ok()) {
    const size_t comma = inner.find(',', start);
    std::string_view item = inner.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty()) {
      fail(key, v, absl::StrFormat("\"%s\" has an empty list item", quote(v)));
      return;
    }
    fn(item);
    if (comma == std::string_view::npos) return;
    start = comma + 1;
  }
}

}  // namespace fixbits::dsl::desc_text
