// EnvFlags: see EnvFlags.h.
#include "runtime/EnvFlags.h"

#include <cstdlib>

#include "absl/strings/ascii.h"

namespace fixbits::runtime {

bool env_switch_off(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return false;
  const std::string s = absl::AsciiStrToLower(v);
  return s == "off" || s == "0" || s == "false" || s == "no";
}

bool env_switch_on(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return false;
  const std::string s = absl::AsciiStrToLower(v);
  return s == "on" || s == "1" || s == "true" || s == "yes";
}

bool env_equals(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && absl::AsciiStrToLower(v) == absl::AsciiStrToLower(value);
}

std::string default_cache_dir() {
  if (const char* d = std::getenv("FIXBITS_CACHE_DIR"); d != nullptr && d[0] != '\0') return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && x[0] != '\0') {
    return std::string(x) + "/fixbits";
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && h[0] != '\0') {
    return std::string(h) + "/.cache/fixbits";
  }
  return "";
}

}  // namespace fixbits::runtime
