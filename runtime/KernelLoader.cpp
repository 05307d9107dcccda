// KernelLoader: see KernelLoader.h. The steps, in order:
//   get_or_build(key, build + verify)  -> entry (memory | disk | built)
//   verify again unless just built, a verified memory hit, or a disk entry signed
//   under the registered hook's identity  -> outcome, checked against the stored one
//   device.load_module(entry.image if made for this device, else entry.text) -> module
//   module.kernel(entry.entry_name)    -> kernel
#include "runtime/KernelLoader.h"

#include "absl/strings/str_format.h"
#include "runtime/EnvFlags.h"

namespace fixbits::runtime {

absl::StatusOr<LoadedKernel> load_kernel(const Device& device, KernelCache& cache,
                                         const CacheKey& key, KernelCache::BuildFn build) {
  auto build_and_verify = [&]() -> absl::StatusOr<CacheEntry> {
    absl::StatusOr<CacheEntry> built = build();
    if (!built.ok()) return built.status();
    absl::StatusOr<VerifyOutcome> v = verify_before_load(built->text, key.target);
    if (!v.ok()) return v.status();
    built->signature = v->signature;
    built->verified = v->verified;
    built->verified_by = v->identity;
    // Only an entry the cache keeps gets an image: with the cache off the text goes to
    // the driver as before (and meets the driver's own cache, if any).
    if (cache.options().enabled && env_switch_on("FIXBITS_CACHE_IMAGE")) {
      // No image is no error: the text is loaded as before.
      if (absl::StatusOr<std::string> image = device.compile_module(built->text); image.ok() && !image->empty()) {
        built->image = *std::move(image);
        built->image_for = device.image_identity();
      }
    }
    return built;
  };
  absl::StatusOr<CacheHit> hit = cache.get_or_build(key, build_and_verify);
  if (!hit.ok()) return hit.status();
  const CacheEntry& entry = *hit->entry;

  // The verdict stored with the entry when it was built ("cache build"); a verified
  // memory hit reuses it ("memory cache").
  VerifyOutcome outcome{entry.signature, entry.verified,
                        hit->source == CacheSource::kBuilt ? "cache build" : "memory cache"};
  // A memory hit is the very entry this process built (or read and checked) and
  // verified: checking it again would only repeat the same walk. A disk entry (its
  // bytes checksummed by the cache) signed under the identity of the hook registered
  // now is that hook's proof of these very bytes: the walk would return the stored
  // signature again. Any other disk entry -- unverified, signed by another checker
  // build or by a hook without an identity -- is checked again, and so is every disk
  // entry under FIXBITS_VERIFY_DISK=recheck.
  const bool proven_here = hit->source == CacheSource::kMemory && entry.verified;
  bool proven_on_disk = false;
  if (hit->source == CacheSource::kDisk && entry.verified && !entry.verified_by.empty() &&
      !env_switch_off("FIXBITS_VERIFY") && !env_equals("FIXBITS_VERIFY_DISK", "recheck")) {
    std::shared_ptr<const VerifyHook> hook = verify_hook();
    if (hook->checks() && hook->identity() == entry.verified_by) {
      proven_on_disk = true;
      outcome = VerifyOutcome{entry.signature, true,
                              absl::StrFormat("disk cache (signed by %s)", entry.verified_by),
                              entry.verified_by};
    }
  }
  if (hit->source != CacheSource::kBuilt && !proven_here && !proven_on_disk) {
    absl::StatusOr<VerifyOutcome> v = verify_before_load(entry.text, key.target);
    if (!v.ok()) return v.status();
    if (entry.verified && v->verified && v->signature != entry.signature) {
      return absl::DataLossError(absl::StrFormat(
          "Kernel %s from the %s cache carries signature %s, but the verify hook '%s' "
          "computes %s for the same text; refusing to load it.",
          entry.entry_name, cache_source_name(hit->source), entry.signature, v->hook_name,
          v->signature));
    }
    outcome = *std::move(v);
  }

  absl::StatusOr<std::shared_ptr<Module>> module = absl::UnavailableError("no image");
  if (!entry.image.empty() && entry.image_for == device.image_identity() &&
      env_switch_on("FIXBITS_CACHE_IMAGE")) {
    module = device.load_module(entry.image);
  }
  if (!module.ok()) module = device.load_module(entry.text);
  if (!module.ok()) return module.status();
  absl::StatusOr<Kernel> kernel = (*module)->kernel(entry.entry_name);
  if (!kernel.ok()) return kernel.status();
  return LoadedKernel{hit->entry, hit->source, std::move(outcome), *std::move(module),
                      *std::move(kernel)};
}

}  // namespace fixbits::runtime
