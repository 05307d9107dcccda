// CacheFile: the on-disk format of one kernel cache entry, and its atomic write.
//
// Layout (all integers little-endian):
//   magic "FXBKCACH" (8) | format version u32 | key length u32 | payload length u64
//   | key bytes (CacheKey::serialize()) | payload | checksum u64
// payload = text, entry_name, metadata, signature (each u64 length + bytes), verified u8.
// checksum = FNV-1a 64 over every byte before it.
// Invariant: decode_cache_file() accepts exactly the bytes encode_cache_file() wrote
// for the same key; any flipped byte, truncation, trailing garbage, other version or
// other key is rejected with a Status saying which check failed (DataLoss for damage,
// NotFound-like mismatch as FailedPrecondition for a different key or version).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/CacheEntry.h"

namespace fixbits::runtime {

inline constexpr uint32_t kCacheFormatVersion = 3;

std::string encode_cache_file(const CacheKey& key, const CacheEntry& entry);
absl::StatusOr<CacheEntry> decode_cache_file(std::string_view bytes, const CacheKey& key);

// Writes `bytes` to `path` atomically: a temp file in the same directory, flushed and
// fsync'ed, then rename()d over `path`. The directory must exist.
absl::Status write_file_atomically(const std::string& path, std::string_view bytes);

// Reads a whole file; NotFound when it does not exist.
absl::StatusOr<std::string> read_whole_file(const std::string& path);

}  // namespace fixbits::runtime
