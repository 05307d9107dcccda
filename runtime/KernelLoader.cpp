// KernelLoader: see KernelLoader.h. The steps, in order:
//   get_or_build(key, build + verify)  -> entry (memory | disk | built)
//   verify again unless just built or a verified memory hit -> outcome, checked
//                                         against the stored one
//   device.load_module(entry.text)     -> module
//   module.kernel(entry.entry_name)    -> kernel
#include "runtime/KernelLoader.h"

#include "absl/strings/str_format.h"

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
  // verified: checking it again would only repeat the same walk. A disk entry may
  // come from another process or verifier version, so it is checked again.
  const bool proven_here = hit->source == CacheSource::kMemory && entry.verified;
  if (hit->source != CacheSource::kBuilt && !proven_here) {
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

  absl::StatusOr<std::shared_ptr<Module>> module = device.load_module(entry.text);
  if (!module.ok()) return module.status();
  absl::StatusOr<Kernel> kernel = (*module)->kernel(entry.entry_name);
  if (!kernel.ok()) return kernel.status();
  return LoadedKernel{hit->entry, hit->source, std::move(outcome), *std::move(module),
                      *std::move(kernel)};
}

}  // namespace fixbits::runtime
