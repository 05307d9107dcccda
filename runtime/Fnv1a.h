// Fnv1a: the 64-bit FNV-1a hash, used for cache file names and as the cache file
// checksum. Not cryptographic: it detects corruption and truncation, not tampering.
//
// Invariant: fnv1a64("") == 0xcbf29ce484222325 (the offset basis) and
// fnv1a64("a") == 0xaf63dc4c8601ec8c (the published test vector).
#pragma once

#include <cstdint>
#include <string_view>

namespace fixbits::runtime {

inline constexpr uint64_t kFnv1aOffsetBasis = 0xcbf29ce484222325ull;
inline constexpr uint64_t kFnv1aPrime = 0x100000001b3ull;

// Continues a hash `h` over `bytes` (start with kFnv1aOffsetBasis).
constexpr uint64_t fnv1a64(std::string_view bytes, uint64_t h = kFnv1aOffsetBasis) {
  for (char c : bytes) {
    h ^= static_cast<uint8_t>(c);
    h *= kFnv1aPrime;
  }
  return h;
}

}  // namespace fixbits::runtime
