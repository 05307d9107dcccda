// ReadFile.h — reads a whole file for the verify tools; a Status names the path on failure.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "verify/Asm.h"

namespace fixbits::verify {

inline absl::StatusOr<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("Cannot open kernel file '", path, "'."));
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  if (s.size() > kMaxInputBytes) {
    return absl::InvalidArgumentError(absl::StrCat("Kernel file '", path, "' is over ", kMaxInputBytes, " bytes."));
  }
  return s;
}

}  // namespace fixbits::verify
