// TempDir: a fresh directory per test under the gtest temp dir, removed at the end.
// Invariant: path() exists, is empty when the test starts, and is unique per object.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace fixbits::runtime::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "fixbits_rt_XXXXXX";
    char* made = mkdtemp(pattern.data());
    if (made == nullptr) ADD_FAILURE() << "mkdtemp failed for " << pattern;
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace fixbits::runtime::testing
