// CacheFile: see CacheFile.h. Example for key K and entry E:
//   "FXBKCACH" 02000000 <len(K) u32> <len(P) u64> K P <fnv1a64 of all the above>
// P = text, entry name, metadata, signature, verified_by, image, image_for (each u64
// length + bytes), then the verified flag (one byte). Version 1 lacked verified_by,
// version 2 the compiled image.
// A reader checks, in order: minimum size, magic, version, that the lengths add up
// to exactly the file size, the checksum, the key echo, then the payload fields.
#include "runtime/CacheFile.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_format.h"
#include "runtime/Fnv1a.h"

namespace fixbits::runtime {
namespace {

constexpr char kMagic[8] = {'F', 'X', 'B', 'K', 'C', 'A', 'C', 'H'};
constexpr size_t kHeaderBytes = 8 + 4 + 4 + 8;
constexpr size_t kChecksumBytes = 8;

void put_u64(std::string& out, uint64_t v, int bytes = 8) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t get_u64(std::string_view in, size_t at, int bytes = 8) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<uint8_t>(in[at + i])} << (8 * i);
  return v;
}

void put_field(std::string& out, std::string_view s) {
  put_u64(out, s.size());
  out.append(s.data(), s.size());
}

// Reads one length-prefixed field of the payload; false when it runs past the end.
bool get_field(std::string_view payload, size_t& at, std::string& out) {
  if (payload.size() - at < 8) return false;
  const uint64_t n = get_u64(payload, at);
  at += 8;
  if (n > payload.size() - at) return false;
  out.assign(payload.data() + at, n);
  at += n;
  return true;
}

absl::Status damaged(std::string_view why) {
  return absl::DataLossError(absl::StrFormat("The kernel cache entry is damaged: %s.", why));
}

}  // namespace

std::string encode_cache_file(const CacheKey& key, const CacheEntry& entry) {
  const std::string k = key.serialize();
  std::string payload;
  put_field(payload, entry.text);
  put_field(payload, entry.entry_name);
  put_field(payload, entry.metadata);
  put_field(payload, entry.signature);
  put_field(payload, entry.verified_by);
  put_field(payload, entry.image);
  put_field(payload, entry.image_for);
  payload.push_back(entry.verified ? 1 : 0);

  std::string out(kMagic, sizeof(kMagic));
  put_u64(out, kCacheFormatVersion, 4);
  put_u64(out, k.size(), 4);
  put_u64(out, payload.size());
  out += k;
  out += payload;
  put_u64(out, fnv1a64(out));
  return out;
}

absl::StatusOr<CacheEntry> decode_cache_file(std::string_view bytes, const CacheKey& key) {
  if (bytes.size() < kHeaderBytes + kChecksumBytes) {
    return damaged(absl::StrFormat("it has %d bytes, fewer than the %d of an empty entry",
                                   bytes.size(), kHeaderBytes + kChecksumBytes));
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return damaged("its magic is not FXBKCACH");
  }
  const uint64_t version = get_u64(bytes, 8, 4);
  const uint64_t key_len = get_u64(bytes, 12, 4);
  const uint64_t payload_len = get_u64(bytes, 16);
  const uint64_t body = bytes.size() - kHeaderBytes - kChecksumBytes;
  if (key_len > body || payload_len != body - key_len) {
    return damaged(absl::StrFormat(
        "its header announces %d key bytes and %d payload bytes but %d bytes follow it",
        key_len, payload_len, body));
  }
  const uint64_t stored = get_u64(bytes, bytes.size() - kChecksumBytes);
  const uint64_t actual = fnv1a64(bytes.substr(0, bytes.size() - kChecksumBytes));
  if (stored != actual) {
    return damaged(absl::StrFormat("its checksum is %016x but its bytes hash to %016x",
                                   stored, actual));
  }
  if (version != kCacheFormatVersion) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "The kernel cache entry has format version %d; this build reads version %d.", version,
        kCacheFormatVersion));
  }
  if (bytes.substr(kHeaderBytes, key_len) != key.serialize()) {
    return absl::FailedPreconditionError(
        "The kernel cache entry belongs to a different key (a file-name hash collision).");
  }
  const std::string_view payload = bytes.substr(kHeaderBytes + key_len, payload_len);
  CacheEntry e;
  size_t at = 0;
  if (!get_field(payload, at, e.text) || !get_field(payload, at, e.entry_name) ||
      !get_field(payload, at, e.metadata) || !get_field(payload, at, e.signature) ||
      !get_field(payload, at, e.verified_by) || !get_field(payload, at, e.image) ||
      !get_field(payload, at, e.image_for) || payload.size() - at != 1) {
    return damaged("its payload fields do not add up to the payload length");
  }
  const uint8_t verified = static_cast<uint8_t>(payload[at]);
  if (verified > 1) return damaged("its verified flag is neither 0 nor 1");
  e.verified = verified == 1;
  if (e.verified == e.signature.empty()) {
    return damaged("its signature and verified flag disagree");
  }
  if (!e.verified && !e.verified_by.empty()) {
    return damaged("it names the hook that verified it but is not verified");
  }
  if (e.image.empty() != e.image_for.empty()) {
    return damaged("its compiled image and the identity it was made under disagree");
  }
  return e;
}

absl::Status write_file_atomically(const std::string& path, std::string_view bytes) {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = absl::StrFormat("%s.tmp.%d.%d", path, static_cast<long>(getpid()),
                                          counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrFormat("Cannot create the cache temp file %s: %s.",
                                                  tmp, std::strerror(errno)));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return absl::UnavailableError(absl::StrFormat("Cannot write the cache temp file %s: %s.",
                                                    tmp, std::strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return absl::UnavailableError(absl::StrFormat("Cannot flush the cache temp file %s: %s.",
                                                  tmp, std::strerror(err)));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return absl::UnavailableError(absl::StrFormat("Cannot rename %s to %s: %s.", tmp, path,
                                                  std::strerror(err)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> read_whole_file(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    const int err = errno;
    if (err == ENOENT) return absl::NotFoundError(absl::StrFormat("No file %s.", path));
    return absl::UnavailableError(absl::StrFormat("Cannot open %s: %s.", path, std::strerror(err)));
  }
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return absl::UnavailableError(absl::StrFormat("Cannot read %s.", path));
  return out;
}

}  // namespace fixbits::runtime
