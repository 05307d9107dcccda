// VerifyHook: see VerifyHook.h. The default (and the one null restores) is
// TreeSignatureHook, the static checker. The registry is one shared_ptr behind a mutex; a
// caller copies it out, so a hook swapped mid-call stays alive until the call ends.
#include "runtime/VerifyHook.h"

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "runtime/EnvFlags.h"
#include "runtime/TreeSignatureHook.h"

namespace fixbits::runtime {
namespace {

struct HookRegistry {
  absl::Mutex mu;
  std::shared_ptr<const VerifyHook> hook ABSL_GUARDED_BY(mu) =
      std::make_shared<TreeSignatureHook>();
};

HookRegistry& hook_registry() {
  static HookRegistry* r = new HookRegistry();
  return *r;
}

}  // namespace

void set_verify_hook(std::shared_ptr<const VerifyHook> hook) {
  HookRegistry& r = hook_registry();
  absl::MutexLock lock(&r.mu);
  r.hook = hook ? std::move(hook) : std::make_shared<TreeSignatureHook>();
}

std::shared_ptr<const VerifyHook> verify_hook() {
  HookRegistry& r = hook_registry();
  absl::MutexLock lock(&r.mu);
  return r.hook;
}

absl::StatusOr<VerifyOutcome> verify_before_load(std::string_view text, std::string_view target) {
  if (env_switch_off("FIXBITS_VERIFY")) return VerifyOutcome{"", false, "off", ""};
  std::shared_ptr<const VerifyHook> hook = verify_hook();
  absl::StatusOr<std::string> sig = hook->signature(text, target);
  const std::string hook_name(hook->name());
  if (!sig.ok()) {
    return absl::Status(sig.status().code(),
                        absl::StrFormat("The verify hook '%s' rejected the %s kernel: %s",
                                        hook_name, std::string(target), sig.status().message()));
  }
  if (!hook->checks()) return VerifyOutcome{"", false, hook_name, ""};
  if (sig->empty()) {
    return absl::InternalError(absl::StrFormat(
        "The verify hook '%s' returned an empty signature for a %s kernel; a checking hook "
        "must return a signature or an error.",
        hook_name, std::string(target)));
  }
  return VerifyOutcome{*std::move(sig), true, hook_name, hook->identity()};
}

}  // namespace fixbits::runtime
