// KernelCache: see KernelCache.h. One Slot per key in the map; the first caller for a
// key owns the slot and fills it (disk, else build) outside the lock, later callers
// wait on the slot's `done` under the lock:
//   caller A: slot new -> owner -> disk miss -> build -> done, entry
//   caller B: slot exists, !done -> Await(done) -> entry (source kMemory)
#include "runtime/KernelCache.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/str_format.h"
#include "runtime/CacheFile.h"
#include "runtime/EnvFlags.h"

namespace fixbits::runtime {

struct KernelCache::Slot {
  bool done = false;
  absl::Status status;                      // the build error, when it failed
  std::shared_ptr<const CacheEntry> entry;  // set when done and ok
};

std::string_view cache_source_name(CacheSource s) {
  switch (s) {
    case CacheSource::kMemory:
      return "memory";
    case CacheSource::kDisk:
      return "disk";
    case CacheSource::kBuilt:
      return "built";
  }
  return "unknown";
}

KernelCache::Options KernelCache::Options::from_env() {
  Options o;
  o.enabled = !env_switch_off("FIXBITS_CACHE");
  o.dir = default_cache_dir();
  return o;
}

KernelCache::KernelCache(Options options) : options_(std::move(options)) {}

KernelCache& KernelCache::global() {
  static KernelCache* cache = new KernelCache(Options::from_env());
  return *cache;
}

namespace {

// The builder's result must be an entry the loader can use.
absl::Status check_built(const CacheKey& key, const CacheEntry& e) {
  if (e.text.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "The kernel builder for target %s returned an entry with empty text.", key.target));
  }
  if (e.entry_name.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "The kernel builder for target %s returned an entry with no entry name.", key.target));
  }
  if (e.verified == e.signature.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "The kernel builder for entry %s returned verified=%s with a %s signature; a "
        "signature is present exactly when the entry is verified.",
        e.entry_name, e.verified ? "true" : "false", e.signature.empty() ? "empty" : "non-empty"));
  }
  if (!e.verified && !e.verified_by.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "The kernel builder for entry %s returned verified_by=%s for an unverified entry.",
        e.entry_name, e.verified_by));
  }
  return absl::OkStatus();
}

absl::Status check_key(const CacheKey& key) {
  if (key.program_hash.empty()) {
    return absl::InvalidArgumentError("The cache key's program_hash is empty.");
  }
  if (key.target.empty()) return absl::InvalidArgumentError("The cache key's target is empty.");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CacheHit> KernelCache::get_or_build(const CacheKey& key, BuildFn build) {
  if (auto s = check_key(key); !s.ok()) return s;
  if (!options_.enabled) {
    absl::StatusOr<CacheEntry> built = build();
    if (!built.ok()) return built.status();
    if (auto s = check_built(key, *built); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    ++stats_.builds;
    return CacheHit{std::make_shared<const CacheEntry>(*std::move(built)), CacheSource::kBuilt};
  }

  std::shared_ptr<Slot> slot;
  {
    absl::MutexLock lock(&mu_);
    auto [it, inserted] = slots_.try_emplace(key, nullptr);
    if (!inserted) {
      slot = it->second;
      mu_.Await(absl::Condition(+[](Slot* s) { return s->done; }, slot.get()));
      if (!slot->status.ok()) return slot->status;
      ++stats_.memory_hits;
      return CacheHit{slot->entry, CacheSource::kMemory};
    }
    it->second = std::make_shared<Slot>();
    slot = it->second;
  }

  // This caller owns the slot: fill it from disk or by building, outside the lock.
  CacheHit hit;
  absl::Status status;
  if (std::shared_ptr<const CacheEntry> from_disk = read_disk(key)) {
    hit = CacheHit{std::move(from_disk), CacheSource::kDisk};
  } else {
    absl::StatusOr<CacheEntry> built = build();
    if (built.ok()) status = check_built(key, *built);
    else status = built.status();
    if (status.ok()) {
      hit = CacheHit{std::make_shared<const CacheEntry>(*std::move(built)), CacheSource::kBuilt};
      write_disk(key, *hit.entry);
    }
  }

  absl::MutexLock lock(&mu_);
  slot->done = true;
  if (!status.ok()) {
    slot->status = status;
    slots_.erase(key);  // not cached: the next caller builds again
    return status;
  }
  slot->entry = hit.entry;
  if (hit.source == CacheSource::kDisk) ++stats_.disk_hits;
  else ++stats_.builds;
  return hit;
}

std::string KernelCache::entry_path(const CacheKey& key) const {
  if (options_.dir.empty()) return "";
  return options_.dir + "/" + key.file_stem() + ".fxk";
}

std::shared_ptr<const CacheEntry> KernelCache::read_disk(const CacheKey& key) {
  const std::string path = entry_path(key);
  if (path.empty()) return nullptr;
  absl::StatusOr<std::string> bytes = read_whole_file(path);
  if (!bytes.ok()) {
    if (!absl::IsNotFound(bytes.status())) note_disk_error(std::string(bytes.status().message()));
    return nullptr;
  }
  absl::StatusOr<CacheEntry> entry = decode_cache_file(*bytes, key);
  if (!entry.ok()) {
    ::unlink(path.c_str());  // rebuilt and rewritten by the caller
    absl::MutexLock lock(&mu_);
    ++stats_.discarded_disk_entries;
    return nullptr;
  }
  return std::make_shared<const CacheEntry>(*std::move(entry));
}

void KernelCache::write_disk(const CacheKey& key, const CacheEntry& entry) {
  const std::string path = entry_path(key);
  if (path.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(options_.dir, ec);
  if (ec) {
    note_disk_error(absl::StrFormat("Cannot create the cache directory %s: %s.", options_.dir,
                                    ec.message()));
    return;
  }
  if (absl::Status s = write_file_atomically(path, encode_cache_file(key, entry)); !s.ok()) {
    note_disk_error(std::string(s.message()));
  }
}

void KernelCache::note_disk_error(std::string why) {
  absl::MutexLock lock(&mu_);
  ++stats_.disk_errors;
  last_disk_error_ = std::move(why);
}

void KernelCache::clear_memory() {
  absl::MutexLock lock(&mu_);
  // Slots still being filled stay: their owner and waiters hold them.
  absl::erase_if(slots_, [](const auto& kv) { return kv.second->done; });
}

CacheStats KernelCache::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

std::string KernelCache::last_disk_error() const {
  absl::MutexLock lock(&mu_);
  return last_disk_error_;
}

}  // namespace fixbits::runtime
