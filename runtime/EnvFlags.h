// EnvFlags: reading the FIXBITS_* switches the runtime honours.
//
// Contract: a switch is "off" when its variable is set to off, 0, false or no (any
// case); unset or any other value leaves the feature on. An opt-in switch is "on" only
// when set to on, 1, true or yes (any case). Read at each call, so tests can set and
// unset variables.
//   FIXBITS_CACHE=off    the kernel cache (memory and disk) is bypassed
//   FIXBITS_VERIFY=off   the verify hook is skipped; entries are marked unverified
//   FIXBITS_VERIFY_DISK=recheck  disk cache entries are walked again even when signed
//                        by the current checker build (KernelLoader.h)
//   FIXBITS_CACHE_IMAGE=on  cache entries keep and load the driver's compiled image
//                        (opt-in; KernelLoader.h says why)
//   FIXBITS_CACHE_DIR    where disk entries live (default: $XDG_CACHE_HOME/fixbits,
//                        else $HOME/.cache/fixbits)
#pragma once

#include <string>

namespace fixbits::runtime {

bool env_switch_off(const char* name);

// True when opt-in switch `name` is set to on, 1, true or yes (any case).
bool env_switch_on(const char* name);

// True when variable `name` is set to `value` (any case).
bool env_equals(const char* name, const char* value);

// The cache directory from FIXBITS_CACHE_DIR / XDG_CACHE_HOME / HOME; empty when none
// of them is set (the disk cache is then unused).
std::string default_cache_dir();

}  // namespace fixbits::runtime
