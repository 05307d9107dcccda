// FlagArg: one command-line argument of a sample, read as `--name=value`; the flag
// parsing the cuBLAS samples (scan, match, coverage) share.
//
// Contract: value(flag) is the text after `flag` (which includes its '=') when the
// argument starts with it, else nullopt; int_value(flag, lo, out) parses that text as
// an integer >= lo into *out, else InvalidArgument "--name takes an integer >= lo."
// (also when the argument does not start with `flag`).
// Example: FlagArg("--shapes=100").int_value("--shapes=", 0, &n) sets n = 100.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"

namespace fixbits::samples {

class FlagArg {
 public:
  explicit FlagArg(std::string arg) : arg_(std::move(arg)) {}

  const std::string& text() const { return arg_; }

  std::optional<std::string> value(const std::string& flag) const {
    if (arg_.rfind(flag, 0) == 0) return arg_.substr(flag.size());
    return std::nullopt;
  }

  absl::Status int_value(const std::string& flag, int64_t lo, int64_t* out) const {
    const std::optional<std::string> v = value(flag);
    if (!v || !absl::SimpleAtoi(*v, out) || *out < lo) {
      return absl::InvalidArgumentError(flag.substr(0, flag.size() - 1) + " takes an integer >= " +
                                        std::to_string(lo) + ".");
    }
    return absl::OkStatus();
  }

 private:
  std::string arg_;
};

}  // namespace fixbits::samples
