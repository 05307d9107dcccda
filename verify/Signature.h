// Signature.h — the public face of the static equivalence checker (§6).
// Contract: `signature(text)` reads PTX or AMDGCN text, walks every entry over a symbolic
// thread, canonicalizes the dependence trees that reach global stores and hashes them to a
// hex string; two kernels with equal signatures compute their outputs through equivalent
// trees (up to commutativity) and so return the same bits. Unmodeled constructs are hashed
// on their text, so uncertainty splits classes and never merges them. Errors (unreadable or
// empty text, no entry) come back as Status; the checker never aborts on input.
//
//   auto eq = fixbits::verify::equivalent(ptx_a, ptx_b);
//   if (eq.ok() && !eq->equivalent) std::puts(eq->explanation.c_str());
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace fixbits::verify {

enum class Target { kAuto, kPtx, kGcn };

struct KernelSignature {
  std::string name;
  std::string signature;  // 16 hex digits
  int roots = 0;          // distinct root trees
};

struct Signature {
  std::string hex;  // the module's signature: all entries in order
  std::vector<KernelSignature> kernels;
};

struct Equivalence {
  bool equivalent = false;
  std::string explanation;  // empty when equivalent; else the first differing node
  std::string signature_a, signature_b;
};

// Detects the ISA from the text: PTX has .version/.entry, AMDGCN has .amdgcn_target,
// .amdhsa_kernel or s_endpgm.
absl::StatusOr<Target> detect_target(std::string_view text);
absl::StatusOr<Signature> signature(std::string_view text, Target target = Target::kAuto);
absl::StatusOr<Equivalence> equivalent(std::string_view a, std::string_view b,
                                       Target target = Target::kAuto);

}  // namespace fixbits::verify
