// Hash: the one 64-bit hash the checker builds its node hashes and signatures from.
//
// Contract: mix(h, v) folds v into h (order-sensitive, avalanching); hash_text(s) is
// FNV-1a 64 over s's bytes with its length folded in (TextHasher: the same over pieces).
// All are pure, stable across runs and machines. Signatures are compared within one build
// only (the kernel cache key digests verify/), so the constants may change between versions.
#pragma once

#include <cstdint>
#include <string_view>

namespace fixbits::verify {

inline uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

inline uint64_t hash_text(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return mix(h, s.size());
}

// hash_text over the concatenation of the pieces given to add(), without building it:
// TextHasher t; t.add("4*"); t.add("param0"); t.value() == hash_text("4*param0").
class TextHasher {
 public:
  void add(std::string_view s) {
    for (unsigned char c : s) {
      h_ ^= c;
      h_ *= 0x100000001b3ULL;
    }
    n_ += s.size();
  }
  uint64_t value() const { return mix(h_, n_); }

 private:
  uint64_t h_ = 0xcbf29ce484222325ULL;
  uint64_t n_ = 0;
};

}  // namespace fixbits::verify
