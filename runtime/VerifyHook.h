// VerifyHook: the check every kernel text passes before the runtime loads it.
//
// Contract: the registered hook maps (text, target) to the text's canonical signature
// (the verifier's hash of its dependence trees), or to an error that stops the load.
// The default registered hook is TreeSignatureHook (runtime/TreeSignatureHook.h), the
// static checker of verify/. UnverifiedHook stays available: it checks nothing,
// returns no signature, and entries it passes are marked unverified
// (CacheEntry::verified == false, signature empty) -- never a made-up signature.
// FIXBITS_VERIFY=off skips the hook the same way.
//
// Example (opt out of checking for one process, e.g. a third-party text):
//   runtime::set_verify_hook(std::make_shared<UnverifiedHook>());
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace fixbits::runtime {

class VerifyHook {
 public:
  virtual ~VerifyHook() = default;
  // A short name for messages, e.g. "tree-signature".
  virtual std::string_view name() const = 0;
  // False only for UnverifiedHook: its empty signature means "not checked".
  virtual bool checks() const { return true; }
  // The signature of `text` for `target` ("sm_90a", "gfx942"). A checking hook must
  // return a non-empty signature or an error saying what is wrong with the text.
  virtual absl::StatusOr<std::string> signature(std::string_view text,
                                                std::string_view target) const = 0;
  // What this hook computes, as a stable name: two hooks with the same non-empty
  // identity return the same signature for every text (e.g. "tree-signature@<hash of
  // the checker's sources>"). A disk cache entry signed under the current identity is
  // loaded on its stored proof instead of being walked again (KernelLoader.h). Empty:
  // no such promise, so entries it signed are checked again on every disk load.
  virtual std::string identity() const { return ""; }
};

// The placeholder hook: checks nothing and says so.
class UnverifiedHook final : public VerifyHook {
 public:
  std::string_view name() const override { return "unverified"; }
  bool checks() const override { return false; }
  absl::StatusOr<std::string> signature(std::string_view, std::string_view) const override {
    return std::string();
  }
};

// Registers `hook` for the process (thread-safe); null restores the default
// TreeSignatureHook.
void set_verify_hook(std::shared_ptr<const VerifyHook> hook);
std::shared_ptr<const VerifyHook> verify_hook();

struct VerifyOutcome {
  std::string signature;  // empty when not verified
  bool verified = false;
  std::string hook_name;  // which hook ran ("unverified", or "off" when skipped)
  std::string identity;   // the hook's identity() when it checked, else empty
};

// Runs the registered hook on `text` unless FIXBITS_VERIFY=off. A checking hook that
// returns an empty signature is an Internal error naming the hook.
absl::StatusOr<VerifyOutcome> verify_before_load(std::string_view text, std::string_view target);

}  // namespace fixbits::runtime
