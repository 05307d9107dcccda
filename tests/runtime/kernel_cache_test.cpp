// Tests for KernelCache (runtime/KernelCache.h): memory and disk hits, damaged disk
// entries discarded and rebuilt, key changes, FIXBITS_CACHE=off, build errors, and
// one build for many concurrent callers.
#include "runtime/KernelCache.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "runtime/CacheFile.h"
#include "runtime/EnvFlags.h"
#include "tests/runtime/TempDir.h"

namespace fixbits::runtime {
namespace {

CacheKey key(std::string program = "prog-a") {
  return CacheKey{std::move(program), "sm_90a", "fixbits test / LLVM 22.1", "-O3"};
}

// A builder that counts its calls and returns a text naming the call number.
struct CountingBuilder {
  std::atomic<int> calls{0};
  absl::StatusOr<CacheEntry> operator()() {
    const int n = ++calls;
    CacheEntry e;
    e.text = "// ptx build #" + std::to_string(n);
    e.entry_name = "kern";
    e.metadata = std::string("\x01\x00\x02", 3);
    return e;
  }
};

KernelCache::Options disk_options(const std::string& dir) {
  KernelCache::Options o;
  o.enabled = true;
  o.dir = dir;
  return o;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

TEST(KernelCache, BuildThenRoundTripFromDisk) {
  testing::TempDir dir;
  KernelCache cache(disk_options(dir.path()));
  CountingBuilder b;
  absl::StatusOr<CacheHit> hit = cache.get_or_build(key(), [&] { return b(); });
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(hit->source, CacheSource::kBuilt);
  EXPECT_EQ(hit->entry->text, "// ptx build #1");
  EXPECT_EQ(hit->entry->metadata, std::string("\x01\x00\x02", 3));
  EXPECT_FALSE(hit->entry->verified);
  EXPECT_EQ(b.calls, 1);

  const std::string path = cache.entry_path(key());
  EXPECT_EQ(path, dir.path() + "/" + key().file_stem() + ".fxk");
  absl::StatusOr<CacheEntry> on_disk = decode_cache_file(read_bytes(path), key());
  ASSERT_TRUE(on_disk.ok()) << on_disk.status();
  EXPECT_EQ(*on_disk, *hit->entry);
}

TEST(KernelCache, SecondLookupIsAMemoryHit) {
  testing::TempDir dir;
  KernelCache cache(disk_options(dir.path()));
  CountingBuilder b;
  absl::StatusOr<CacheHit> first = cache.get_or_build(key(), [&] { return b(); });
  absl::StatusOr<CacheHit> second = cache.get_or_build(key(), [&] { return b(); });
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(second->source, CacheSource::kMemory);
  EXPECT_EQ(second->entry.get(), first->entry.get());
  EXPECT_EQ(b.calls, 1);
  EXPECT_EQ(cache.stats().memory_hits, 1u);
  EXPECT_EQ(cache.stats().builds, 1u);
}

TEST(KernelCache, DiskHitAcrossInstances) {
  testing::TempDir dir;
  CountingBuilder b;
  {
    KernelCache writer(disk_options(dir.path()));
    ASSERT_TRUE(writer.get_or_build(key(), [&] { return b(); }).ok());
  }
  KernelCache reader(disk_options(dir.path()));
  absl::StatusOr<CacheHit> hit = reader.get_or_build(key(), [&] { return b(); });
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(hit->source, CacheSource::kDisk);
  EXPECT_EQ(hit->entry->text, "// ptx build #1");
  EXPECT_EQ(b.calls, 1);
  EXPECT_EQ(reader.stats().disk_hits, 1u);
  // After the disk hit the entry is in memory.
  absl::StatusOr<CacheHit> again = reader.get_or_build(key(), [&] { return b(); });
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->source, CacheSource::kMemory);
}

// Damages the disk entry with `damage`, then checks a fresh cache discards it,
// rebuilds, and leaves a valid entry behind.
void expect_damage_rebuilt(const std::function<std::string(std::string)>& damage,
                           const std::string& what) {
  testing::TempDir dir;
  CountingBuilder b;
  KernelCache first(disk_options(dir.path()));
  ASSERT_TRUE(first.get_or_build(key(), [&] { return b(); }).ok());
  const std::string path = first.entry_path(key());
  write_bytes(path, damage(read_bytes(path)));

  KernelCache second(disk_options(dir.path()));
  absl::StatusOr<CacheHit> hit = second.get_or_build(key(), [&] { return b(); });
  ASSERT_TRUE(hit.ok()) << what << ": " << hit.status();
  EXPECT_EQ(hit->source, CacheSource::kBuilt) << what;
  EXPECT_EQ(hit->entry->text, "// ptx build #2") << what;
  EXPECT_EQ(b.calls, 2) << what;
  EXPECT_EQ(second.stats().discarded_disk_entries, 1u) << what;

  KernelCache third(disk_options(dir.path()));
  absl::StatusOr<CacheHit> again = third.get_or_build(key(), [&] { return b(); });
  ASSERT_TRUE(again.ok()) << what;
  EXPECT_EQ(again->source, CacheSource::kDisk) << what;
  EXPECT_EQ(again->entry->text, "// ptx build #2") << what;
}

TEST(KernelCache, CorruptedByteIsDiscardedAndRebuilt) {
  const size_t size = encode_cache_file(key(), *CountingBuilder()()).size();
  for (size_t at : {size_t{0}, size_t{9}, size_t{30}, size / 2, size - 9, size - 1}) {
    expect_damage_rebuilt(
        [at](std::string s) {
          s[at] = static_cast<char>(s[at] ^ 0x20);
          return s;
        },
        "flip at " + std::to_string(at));
  }
}

TEST(KernelCache, TruncatedFileIsRebuilt) {
  for (size_t keep : {size_t{0}, size_t{7}, size_t{24}, size_t{60}}) {
    expect_damage_rebuilt([keep](std::string s) { return s.substr(0, keep); },
                          "truncated to " + std::to_string(keep));
  }
  expect_damage_rebuilt([](std::string s) { return s.substr(0, s.size() - 1); },
                        "last byte cut");
}

TEST(KernelCache, EntryOfAnotherKeyAtTheSamePathIsAMiss) {
  testing::TempDir dir;
  CountingBuilder b;
  KernelCache first(disk_options(dir.path()));
  ASSERT_TRUE(first.get_or_build(key("other"), [&] { return b(); }).ok());
  // Simulate a file-name collision: key()'s path holds key("other")'s entry.
  write_bytes(first.entry_path(key()), read_bytes(first.entry_path(key("other"))));
  KernelCache second(disk_options(dir.path()));
  absl::StatusOr<CacheHit> hit = second.get_or_build(key(), [&] { return b(); });
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(hit->source, CacheSource::kBuilt);
  EXPECT_EQ(b.calls, 2);
}

TEST(KernelCache, AnyKeyFieldChangeIsAMiss) {
  testing::TempDir dir;
  KernelCache cache(disk_options(dir.path()));
  CountingBuilder b;
  const CacheKey base = key();
  ASSERT_TRUE(cache.get_or_build(base, [&] { return b(); }).ok());
  std::vector<CacheKey> changed(4, base);
  changed[0].program_hash += "x";
  changed[1].target = "sm_100a";
  changed[2].compiler_version = "fixbits 0.2.0 / LLVM 22.1";
  changed[3].flags = "-O2";
  for (size_t i = 0; i < changed.size(); ++i) {
    absl::StatusOr<CacheHit> hit = cache.get_or_build(changed[i], [&] { return b(); });
    ASSERT_TRUE(hit.ok());
    EXPECT_EQ(hit->source, CacheSource::kBuilt) << "field " << i;
    EXPECT_NE(changed[i].file_stem(), base.file_stem()) << "field " << i;
  }
  EXPECT_EQ(b.calls, 5);
  // The original is still a hit.
  EXPECT_EQ(cache.get_or_build(base, [&] { return b(); })->source, CacheSource::kMemory);
}

TEST(KernelCache, DisabledAlwaysBuildsAndWritesNothing) {
  testing::TempDir dir;
  KernelCache::Options o = disk_options(dir.path());
  o.enabled = false;
  KernelCache cache(o);
  CountingBuilder b;
  for (int i = 1; i <= 3; ++i) {
    absl::StatusOr<CacheHit> hit = cache.get_or_build(key(), [&] { return b(); });
    ASSERT_TRUE(hit.ok());
    EXPECT_EQ(hit->source, CacheSource::kBuilt);
    EXPECT_EQ(hit->entry->text, "// ptx build #" + std::to_string(i));
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(KernelCache, OptionsFromEnvironment) {
  testing::TempDir dir;
  setenv("FIXBITS_CACHE", "off", 1);
  EXPECT_FALSE(KernelCache::Options::from_env().enabled);
  setenv("FIXBITS_CACHE", "OFF", 1);
  EXPECT_FALSE(KernelCache::Options::from_env().enabled);
  setenv("FIXBITS_CACHE", "on", 1);
  EXPECT_TRUE(KernelCache::Options::from_env().enabled);
  unsetenv("FIXBITS_CACHE");
  EXPECT_TRUE(KernelCache::Options::from_env().enabled);

  setenv("FIXBITS_CACHE_DIR", dir.path().c_str(), 1);
  EXPECT_EQ(KernelCache::Options::from_env().dir, dir.path());
  unsetenv("FIXBITS_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(default_cache_dir(), "/xdg/fixbits");
  unsetenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::string saved_home = home ? home : "";
  setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(default_cache_dir(), "/home/someone/.cache/fixbits");
  if (home) setenv("HOME", saved_home.c_str(), 1);
  else unsetenv("HOME");
}

TEST(KernelCache, BuildErrorIsReturnedAndNotCached) {
  testing::TempDir dir;
  KernelCache cache(disk_options(dir.path()));
  int calls = 0;
  auto failing = [&]() -> absl::StatusOr<CacheEntry> {
    ++calls;
    return absl::InvalidArgumentError("GemmDesc.k_loop_step is 0.");
  };
  absl::StatusOr<CacheHit> hit = cache.get_or_build(key(), failing);
  ASSERT_FALSE(hit.ok());
  EXPECT_EQ(hit.status().message(), "GemmDesc.k_loop_step is 0.");
  ASSERT_FALSE(cache.get_or_build(key(), failing).ok());
  EXPECT_EQ(calls, 2);
  CountingBuilder b;
  absl::StatusOr<CacheHit> ok = cache.get_or_build(key(), [&] { return b(); });
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->source, CacheSource::kBuilt);
}

TEST(KernelCache, MalformedBuiltEntryIsRejected) {
  KernelCache cache(KernelCache::Options{true, ""});
  auto empty_text = []() -> absl::StatusOr<CacheEntry> { return CacheEntry{"", "k", "", "", false, ""}; };
  auto no_name = []() -> absl::StatusOr<CacheEntry> { return CacheEntry{"t", "", "", "", false, ""}; };
  auto fake_sig = []() -> absl::StatusOr<CacheEntry> { return CacheEntry{"t", "k", "", "sig", false, ""}; };
  EXPECT_EQ(cache.get_or_build(key("a"), empty_text).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cache.get_or_build(key("b"), no_name).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cache.get_or_build(key("c"), fake_sig).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cache.get_or_build(CacheKey{"", "sm_90a"}, no_name).status().message(),
            "The cache key's program_hash is empty.");
}

TEST(KernelCache, UnwritableDirectoryStillReturnsTheEntry) {
  testing::TempDir dir;
  const std::string file = dir.path() + "/plain_file";
  write_bytes(file, "x");
  KernelCache cache(disk_options(file + "/sub"));  // a directory under a file: ENOTDIR
  CountingBuilder b;
  absl::StatusOr<CacheHit> hit = cache.get_or_build(key(), [&] { return b(); });
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(hit->source, CacheSource::kBuilt);
  // Both the read (ENOTDIR) and the write of the entry fail, and both are counted.
  EXPECT_EQ(cache.stats().disk_errors, 2u);
  EXPECT_NE(cache.last_disk_error().find("Cannot create the cache directory"), std::string::npos);
  EXPECT_EQ(cache.get_or_build(key(), [&] { return b(); })->source, CacheSource::kMemory);
}

TEST(KernelCache, ConcurrentCallersBuildOnce) {
  testing::TempDir dir;
  KernelCache cache(disk_options(dir.path()));
  std::atomic<int> calls{0};
  absl::Notification go;
  auto slow = [&]() -> absl::StatusOr<CacheEntry> {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return CacheEntry{"// slow", "kern", "", "", false, ""};
  };
  constexpr int kThreads = 8;
  std::vector<CacheHit> hits(kThreads);
  std::vector<absl::Status> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      go.WaitForNotification();
      absl::StatusOr<CacheHit> h = cache.get_or_build(key(), slow);
      if (h.ok()) hits[t] = *h;
      else errors[t] = h.status();
    });
  }
  go.Notify();
  for (auto& th : threads) th.join();
  EXPECT_EQ(calls, 1);
  int built = 0;
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(errors[t].ok()) << errors[t];
    ASSERT_NE(hits[t].entry, nullptr);
    EXPECT_EQ(hits[t].entry.get(), hits[0].entry.get());
    built += hits[t].source == CacheSource::kBuilt;
  }
  EXPECT_EQ(built, 1);
  EXPECT_EQ(cache.stats().builds, 1u);
  EXPECT_EQ(cache.stats().memory_hits, uint64_t{kThreads - 1});
}

TEST(KernelCache, ConcurrentWaitersShareABuildError) {
  KernelCache cache(KernelCache::Options{true, ""});
  std::atomic<int> calls{0};
  absl::Notification go;
  auto failing = [&]() -> absl::StatusOr<CacheEntry> {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return absl::InternalError("LLVM crashed politely.");
  };
  std::vector<absl::Status> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      go.WaitForNotification();
      results[t] = cache.get_or_build(key(), failing).status();
    });
  }
  go.Notify();
  for (auto& th : threads) th.join();
  // Each caller either built and failed, or waited on a build that failed; nobody
  // got an entry, and at most one build ran per round of waiters.
  for (const absl::Status& s : results) EXPECT_EQ(s.message(), "LLVM crashed politely.");
  EXPECT_GE(calls, 1);
  EXPECT_LE(calls, 4);
}

}  // namespace
}  // namespace fixbits::runtime
