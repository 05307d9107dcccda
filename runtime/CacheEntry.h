// CacheEntry / CacheKey: what the kernel cache stores, and what identifies it.
//
// Invariant: a CacheKey covers every input that can change the built kernel: the
// program (a digest of the tile program / descriptor text, from the caller), the
// target ("sm_90a", "gfx942"), the compiler version (fixbits and LLVM, filled in by
// default) and the code generation flags. Two keys that differ in any field never
// share an entry: the serialized key is echoed into the disk entry and compared on
// read, so a file-name hash collision is a miss, never a wrong kernel.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace fixbits::runtime {

// "fixbits <FIXBITS_VERSION> / LLVM <FIXBITS_LLVM_VERSION>".
std::string default_compiler_version();

struct CacheKey {
  CacheKey() = default;
  CacheKey(std::string program_hash, std::string target,
           std::string compiler_version = default_compiler_version(), std::string flags = "")
      : program_hash(std::move(program_hash)), target(std::move(target)),
        compiler_version(std::move(compiler_version)), flags(std::move(flags)) {}

  // The program: a digest of it, or -- for short canonical texts such as a
  // descriptor's text -- the text itself, which rules out digest collisions (the whole
  // key is echoed into the disk entry and compared). Must not be empty.
  std::string program_hash;
  std::string target;        // e.g. "sm_90a"; must not be empty
  std::string compiler_version = default_compiler_version();
  std::string flags;         // code generation flags, in a canonical order

  // Length-prefixed fields: unambiguous, so distinct keys serialize differently.
  std::string serialize() const;
  // A 16-hex-digit name for the key's disk entry (FNV-1a 64 of serialize()).
  std::string file_stem() const;

  friend bool operator==(const CacheKey& a, const CacheKey& b) {
    return a.program_hash == b.program_hash && a.target == b.target &&
           a.compiler_version == b.compiler_version && a.flags == b.flags;
  }
  template <typename H>
  friend H AbslHashValue(H h, const CacheKey& k) {
    return H::combine(std::move(h), k.program_hash, k.target, k.compiler_version, k.flags);
  }
};

struct CacheEntry {
  std::string text;        // PTX or AMDGCN code object, exactly as built
  std::string entry_name;  // the kernel's symbol in `text`
  std::string metadata;    // launch metadata: opaque bytes owned by the caller
  // The verifier's signature of `text`; empty exactly when `verified` is false (the
  // verifier had not landed, or FIXBITS_VERIFY=off). Never a made-up value.
  std::string signature;
  bool verified = false;
  // The identity (VerifyHook::identity) of the hook that computed `signature`; empty
  // when not verified or when that hook promised no stable identity.
  std::string verified_by;
  // The driver's compiled form of `text` (Device::compile_module: a cubin), and the
  // Device::image_identity it was made under; both empty when there is none. A device
  // of that identity loads it without compiling `text` again (KernelLoader.h).
  std::string image;
  std::string image_for;

  friend bool operator==(const CacheEntry& a, const CacheEntry& b) {
    return a.text == b.text && a.entry_name == b.entry_name && a.metadata == b.metadata &&
           a.signature == b.signature && a.verified == b.verified &&
           a.verified_by == b.verified_by && a.image == b.image && a.image_for == b.image_for;
  }
};

}  // namespace fixbits::runtime
