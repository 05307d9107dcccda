// CacheEntry: see CacheEntry.h. serialize() writes "<len>:<field>" for each of the
// four fields, e.g. {"ab", "sm_90a", "v", ""} -> "2:ab6:sm_90a1:v0:".
#include "runtime/CacheEntry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/Fnv1a.h"

#ifndef FIXBITS_VERSION
#error "FIXBITS_VERSION must be defined by the build (CMakeLists.txt)"
#endif
#ifndef FIXBITS_LLVM_VERSION
#error "FIXBITS_LLVM_VERSION must be defined by the build (CMakeLists.txt)"
#endif

namespace fixbits::runtime {

std::string default_compiler_version() {
  return "fixbits " FIXBITS_VERSION " / LLVM " FIXBITS_LLVM_VERSION;
}

std::string CacheKey::serialize() const {
  std::string out;
  for (const std::string* f : {&program_hash, &target, &compiler_version, &flags}) {
    absl::StrAppend(&out, f->size(), ":", *f);
  }
  return out;
}

std::string CacheKey::file_stem() const {
  return absl::StrFormat("%016x", fnv1a64(serialize()));
}

}  // namespace fixbits::runtime
