// KernelLoader: the one path from "a kernel for this key" to a launchable Kernel:
// cache lookup (or build), verify-before-load, driver load, entry lookup.
//
// Contract: every text is passed to verify_before_load() (VerifyHook.h) before the
// driver sees it -- a freshly built text once, inside the build so its outcome is
// stored with the cache entry, with the hook's identity; a text from the disk cache
// (or an unverified one from memory) again on each load, unless the disk entry was
// signed under the identity of the hook registered now (the same checker build: the
// walk would repeat the stored signature; FIXBITS_VERIFY_DISK=recheck walks it anyway).
// A verified memory hit is the entry this process already checked and is not walked again. A hook error stops the load. When a checking hook's fresh signature differs
// from a verified signature stored with the entry, the load fails (DataLoss) rather
// than run a kernel whose proof does not match. `build` fills text, entry_name and
// metadata; its signature/verified fields are overwritten by the hook's outcome.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "runtime/Device.h"
#include "runtime/KernelCache.h"
#include "runtime/VerifyHook.h"

namespace fixbits::runtime {

struct LoadedKernel {
  std::shared_ptr<const CacheEntry> entry;
  CacheSource source = CacheSource::kBuilt;
  VerifyOutcome verify;  // what the hook said for this load
  std::shared_ptr<Module> module;
  Kernel kernel;
};

absl::StatusOr<LoadedKernel> load_kernel(const Device& device, KernelCache& cache,
                                         const CacheKey& key, KernelCache::BuildFn build);

}  // namespace fixbits::runtime
