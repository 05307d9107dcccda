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
//
// The compiled image (opt-in: FIXBITS_CACHE_IMAGE=on): a text that passes its check is
// also handed to the driver's compiler once, in the build (Device::compile_module, a
// cubin for CUDA), and the image
// is stored with the entry under Device::image_identity. Any later load of the entry on
// a device of that identity loads the image instead of the text, so a disk hit does not
// wait for the driver's compile (session 28's H100, the driver's own cache off: 14.8 ms
// for a small kernel, 301 ms for a large one). The image is made from the checked text
// by the driver that would compile it at load anyway; it is loaded only after the text
// passes the same checks as before. A driver without images, a failed compile, another
// identity or an image the driver refuses all fall back to loading the text.
// A disabled cache (FIXBITS_CACHE=off) makes no image. Without FIXBITS_CACHE_IMAGE=on
// none is made or loaded (the default since session 31): CUDA's cuLink compiles its PTX
// input as relocatable code (-rdc=true, the driver API's documentation of
// cuLinkAddData), while cuModuleLoadDataEx compiles the whole module. Session 32 timed
// the two on RMSNorm 256 x 131072 in one call: its winner ran 70.8 us from the text and
// 91.5 us from the image (docs/performance.md, Session 32). (Session 31's slowdown of
// that row's keep-in-shared cluster kernels, first blamed on the image, was their PTX:
// spilled registers, found and fixed in session 33.)
// The loaded text then meets the driver's own compute cache, if any.
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
