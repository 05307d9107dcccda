// TreeSignatureHook: see TreeSignatureHook.h. A thin adapter: pick the ISA from the
// target, run the checker, and turn its Status into a "failed verification" message
// that keeps the checker's code and explanation.
#include "runtime/TreeSignatureHook.h"

#include "absl/strings/str_format.h"
#include "runtime/VerifySourceHash.h"

namespace fixbits::runtime {

verify::Target verify_target(std::string_view target) {
  return target.substr(0, 3) == "gfx" ? verify::Target::kGcn : verify::Target::kPtx;
}

std::string TreeSignatureHook::identity() const {
  return std::string("tree-signature@") + FIXBITS_VERIFY_SOURCE_HASH;
}

absl::StatusOr<std::string> TreeSignatureHook::signature(std::string_view text,
                                                         std::string_view target) const {
  const verify::Target isa = verify_target(target);
  absl::StatusOr<verify::Signature> sig = verify::signature(text, isa);
  if (!sig.ok()) {
    return absl::Status(
        sig.status().code(),
        absl::StrFormat("The %s kernel failed verification: the tree-signature checker could "
                        "not read it as %s (%s)",
                        std::string(target), isa == verify::Target::kGcn ? "AMDGCN" : "PTX",
                        sig.status().message()));
  }
  if (sig->hex.empty()) {
    return absl::InternalError(absl::StrFormat(
        "The %s kernel failed verification: the tree-signature checker returned an empty "
        "signature, which it must never do.",
        std::string(target)));
  }
  return sig->hex;
}

}  // namespace fixbits::runtime
