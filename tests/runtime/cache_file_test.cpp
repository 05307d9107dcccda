// Tests for the cache file format (runtime/CacheFile.h) and FNV-1a (runtime/Fnv1a.h):
// the exact bytes round-trip, and every single-byte flip, every truncation, and any
// trailing byte is rejected; an entry of an older version (1: no signer, 2: no
// compiled image) is refused by its version, and an image without the identity it was
// made under is damage.
#include "runtime/CacheFile.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/Fnv1a.h"
#include "tests/runtime/TempDir.h"

namespace fixbits::runtime {
namespace {

CacheKey key() { return CacheKey{"prog-1234", "sm_90a", "fixbits 0.1.0 / LLVM 22.1", "-O3"}; }

CacheEntry entry() {
  CacheEntry e;
  e.text = std::string(".version 8.0\n.target sm_90\n\0binary\xff tail", 40);
  e.entry_name = "add_one";
  e.metadata = std::string("\x00\x01\x02\x03grid", 8);
  e.signature = "";
  e.verified = false;
  e.image = std::string("\x7f" "ELF\x02\x01\x01\0\0cubin", 14);  // binary, with NULs
  e.image_for = "sm_90 driver 13000";
  return e;
}

TEST(Fnv1a, PublishedVectors) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(CacheFile, RoundTripsExactBytes) {
  const std::string bytes = encode_cache_file(key(), entry());
  absl::StatusOr<CacheEntry> back = decode_cache_file(bytes, key());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, entry());
  EXPECT_EQ(back->text.size(), 40u);
  EXPECT_EQ(back->image.size(), 14u);
  EXPECT_EQ(back->image_for, "sm_90 driver 13000");
  // And without an image.
  CacheEntry plain = entry();
  plain.image.clear();
  plain.image_for.clear();
  absl::StatusOr<CacheEntry> plain_back = decode_cache_file(encode_cache_file(key(), plain), key());
  ASSERT_TRUE(plain_back.ok()) << plain_back.status();
  EXPECT_EQ(*plain_back, plain);
}

TEST(CacheFile, ImageWithoutItsIdentityIsRejected) {
  CacheEntry e = entry();
  e.image_for.clear();
  absl::StatusOr<CacheEntry> r = decode_cache_file(encode_cache_file(key(), e), key());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("compiled image"), absl::string_view::npos) << r.status();
}

TEST(CacheFile, RoundTripsVerifiedSignature) {
  CacheEntry e = entry();
  e.signature = "tree:9f3a";
  e.verified = true;
  e.verified_by = "tree-signature@0123456789abcdef";
  absl::StatusOr<CacheEntry> back = decode_cache_file(encode_cache_file(key(), e), key());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, e);
  EXPECT_EQ(back->verified_by, "tree-signature@0123456789abcdef");
}

TEST(CacheFile, SignerWithoutVerifiedFlagIsRejected) {
  CacheEntry e = entry();
  e.verified_by = "tree-signature@1";  // names a signer but carries no signature
  absl::StatusOr<CacheEntry> r = decode_cache_file(encode_cache_file(key(), e), key());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("names the hook"), absl::string_view::npos) << r.status();
}

TEST(CacheFile, OlderVersionEntriesAreRefused) {
  // A version 1 (no verified_by) or 2 (no image) file with a correct checksum: the
  // reader must refuse it by version, so the cache rebuilds it, never misread its payload.
  for (char version : {1, 2}) {
    std::string bytes = encode_cache_file(key(), entry());
    bytes[8] = version;
    const std::string body = bytes.substr(0, bytes.size() - 8);
    const uint64_t sum = fnv1a64(body);
    for (int i = 0; i < 8; ++i) bytes[bytes.size() - 8 + i] = static_cast<char>((sum >> (8 * i)) & 0xff);
    absl::StatusOr<CacheEntry> r = decode_cache_file(bytes, key());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(r.status().message().find(absl::StrCat("format version ", int(version))), absl::string_view::npos)
        << r.status();
  }
}

TEST(CacheFile, EveryFlippedByteIsRejected) {
  const std::string good = encode_cache_file(key(), entry());
  for (size_t i = 0; i < good.size(); ++i) {
    for (unsigned char mask : {0x01, 0x80, 0xff}) {
      std::string bad = good;
      bad[i] = static_cast<char>(static_cast<unsigned char>(bad[i]) ^ mask);
      EXPECT_FALSE(decode_cache_file(bad, key()).ok()) << "byte " << i << " mask " << int(mask);
    }
  }
}

TEST(CacheFile, EveryTruncationIsRejected) {
  const std::string good = encode_cache_file(key(), entry());
  for (size_t n = 0; n < good.size(); ++n) {
    absl::StatusOr<CacheEntry> r = decode_cache_file(good.substr(0, n), key());
    ASSERT_FALSE(r.ok()) << "length " << n;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << "length " << n;
  }
}

TEST(CacheFile, TrailingByteIsRejected) {
  EXPECT_FALSE(decode_cache_file(encode_cache_file(key(), entry()) + "x", key()).ok());
}

TEST(CacheFile, OtherKeyIsRejected) {
  CacheKey other = key();
  other.flags = "-O2";
  absl::StatusOr<CacheEntry> r = decode_cache_file(encode_cache_file(key(), entry()), other);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("different key"), absl::string_view::npos);
}

TEST(CacheFile, SignatureWithoutVerifiedFlagIsRejected) {
  CacheEntry e = entry();
  e.signature = "tree:1";  // verified stays false: inconsistent
  EXPECT_FALSE(decode_cache_file(encode_cache_file(key(), e), key()).ok());
}

TEST(CacheKey, SerializationIsUnambiguous) {
  // Moving a character between adjacent fields must change the serialization.
  CacheKey a{"ab", "c", "v", ""};
  CacheKey b{"a", "bc", "v", ""};
  EXPECT_NE(a.serialize(), b.serialize());
  EXPECT_NE(a.file_stem(), b.file_stem());
  EXPECT_EQ(CacheKey({"2", "x", "y", "z"}).serialize(), "1:21:x1:y1:z");
}

TEST(CacheKey, DefaultCompilerVersionNamesBothVersions) {
  CacheKey k{"p", "sm_90a"};
  EXPECT_EQ(k.compiler_version, "fixbits " FIXBITS_VERSION " / LLVM " FIXBITS_LLVM_VERSION);
}

TEST(AtomicWrite, WritesAndReplaces) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/f.fxk";
  ASSERT_TRUE(write_file_atomically(path, "first").ok());
  ASSERT_TRUE(write_file_atomically(path, std::string("sec\0nd", 6)).ok());
  absl::StatusOr<std::string> got = read_whole_file(path);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, std::string("sec\0nd", 6));
  // No temp file is left behind.
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1);
}

TEST(AtomicWrite, MissingDirectoryIsAnError) {
  testing::TempDir dir;
  absl::Status s = write_file_atomically(dir.path() + "/no/such/dir/f", "x");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Cannot create the cache temp file"), absl::string_view::npos);
  EXPECT_TRUE(absl::IsNotFound(read_whole_file(dir.path() + "/absent").status()));
}

}  // namespace
}  // namespace fixbits::runtime
