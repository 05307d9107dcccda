// TextCount: how many times a piece of text occurs in generated PTX/GCN or program
// text (overlapping occurrences counted), for the codegen tests' structure checks.
#pragma once

#include <string>

namespace fixbits::testing {

inline int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace fixbits::testing
