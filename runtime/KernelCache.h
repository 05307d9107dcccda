// KernelCache: built kernels kept in memory and on disk, so a program is compiled once
// per (program, target, compiler version, flags) across threads and processes.
//
// Contract:
//   - get_or_build(key, build) returns the entry for `key`, from memory, else from
//     disk (<dir>/<key.file_stem()>.fxk), else by calling `build` once and storing
//     the result in both. Concurrent callers for one key wait for a single build.
//   - A disk entry that fails its checks (CacheFile.h: truncated, flipped byte, other
//     version, other key) is deleted and rebuilt; the count is in stats().
//   - Disk writes are atomic (temp file + rename). A disk failure (read-only dir) is
//     not an error for the caller: the entry is still returned and kept in memory;
//     stats().disk_errors counts it and last_disk_error() says why.
//   - A build error is returned to every waiting caller and not cached.
//   - Options::enabled false (FIXBITS_CACHE=off) bypasses memory and disk: every call
//     builds. Options::dir empty: memory only.
// The memory map is unbounded (one entry per distinct kernel a process uses).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "runtime/CacheEntry.h"

namespace fixbits::runtime {

enum class CacheSource : uint8_t {
  kMemory,  // found in this process's map (or built by a concurrent caller)
  kDisk,    // read from a valid disk entry
  kBuilt,   // `build` was called by this caller
};

std::string_view cache_source_name(CacheSource s);  // "memory", "disk", "built"

struct CacheHit {
  std::shared_ptr<const CacheEntry> entry;
  CacheSource source = CacheSource::kBuilt;
};

struct CacheStats {
  uint64_t memory_hits = 0;
  uint64_t disk_hits = 0;
  uint64_t builds = 0;
  uint64_t discarded_disk_entries = 0;  // damaged or mismatched files deleted
  uint64_t disk_errors = 0;             // reads/writes that failed for I/O reasons
};

class KernelCache {
 public:
  struct Options {
    bool enabled = true;  // false: every call builds, nothing is stored
    std::string dir;      // empty: no disk cache
    // enabled = !FIXBITS_CACHE=off, dir = default_cache_dir() (EnvFlags.h).
    static Options from_env();
  };

  explicit KernelCache(Options options);

  // The process-wide cache, configured from the environment at first use.
  static KernelCache& global();

  using BuildFn = absl::FunctionRef<absl::StatusOr<CacheEntry>()>;
  absl::StatusOr<CacheHit> get_or_build(const CacheKey& key, BuildFn build);

  // Drops the memory map (the disk is left alone); for tests and benchmarks.
  void clear_memory();

  const Options& options() const { return options_; }
  CacheStats stats() const;
  std::string last_disk_error() const;
  // The path of `key`'s disk entry ("" without a disk cache).
  std::string entry_path(const CacheKey& key) const;

 private:
  struct Slot;

  // Reads and checks `key`'s disk entry; a damaged one is deleted. null: a miss.
  std::shared_ptr<const CacheEntry> read_disk(const CacheKey& key);
  void write_disk(const CacheKey& key, const CacheEntry& entry);
  void note_disk_error(std::string why);

  const Options options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<CacheKey, std::shared_ptr<Slot>> slots_ ABSL_GUARDED_BY(mu_);
  CacheStats stats_ ABSL_GUARDED_BY(mu_);
  std::string last_disk_error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fixbits::runtime
