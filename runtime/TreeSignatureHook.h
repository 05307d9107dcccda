// TreeSignatureHook: the verify-before-load hook backed by the static checker (§6):
// a kernel text's signature is verify::signature()'s hex hash of its dependence trees.
//
// Contract: the target string picks the ISA -- "gfx..." reads AMDGCN, anything else
// ("sm_90a", "sm_100") reads PTX -- so a text of the wrong ISA is rejected rather than
// silently re-detected. A non-empty hex signature comes back for every text the
// checker reads; a text it cannot read (no entry, unbalanced braces, not assembly) is
// an error whose message says the kernel failed verification and why, with the
// checker's status code. This is the default registered hook (VerifyHook.h).
//
// Example:
//   TreeSignatureHook hook;
//   absl::StatusOr<std::string> sig = hook.signature(ptx_text, "sm_90a");
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "runtime/VerifyHook.h"
#include "verify/Signature.h"

namespace fixbits::runtime {

// The checker's ISA for a runtime target string: kGcn for "gfx*", else kPtx.
verify::Target verify_target(std::string_view target);

class TreeSignatureHook final : public VerifyHook {
 public:
  std::string_view name() const override { return "tree-signature"; }
  // "tree-signature@" + a hash of the verify/ sources this binary was built from
  // (generated at build time), so a changed checker never trusts an older proof.
  std::string identity() const override;
  absl::StatusOr<std::string> signature(std::string_view text,
                                        std::string_view target) const override;
};

}  // namespace fixbits::runtime
