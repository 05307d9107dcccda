// Tests for KernelLoader (runtime/KernelLoader.h) and the Device wrappers
// (runtime/Device.h) on a FakeDriver: every text is verified before the driver sees
// it, rejections load nothing, stale signatures are refused, and launches are
// validated and passed through with their arguments.
#include "runtime/KernelLoader.h"

#include <stdlib.h>

#include <functional>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/runtime/FakeDriver.h"
#include "tests/runtime/TempDir.h"

namespace fixbits::runtime {
namespace {

using testing::FakeDriver;

constexpr const char* kText = ".visible .entry add_one(.param .u64 p) { ret; }";

// Signs a text with a prefix and its length; rejects texts containing "bad".
// With an identity, it promises the same signature as any hook of that identity.
class PrefixHook final : public VerifyHook {
 public:
  explicit PrefixHook(std::string prefix, std::string identity = "")
      : prefix_(std::move(prefix)), identity_(std::move(identity)) {}
  std::string_view name() const override { return "prefix"; }
  std::string identity() const override { return identity_; }
  absl::StatusOr<std::string> signature(std::string_view text, std::string_view) const override {
    ++calls;
    if (text.find("bad") != std::string_view::npos) {
      return absl::InvalidArgumentError("the warp fold counts down.");
    }
    return prefix_ + std::to_string(text.size());
  }
  mutable int calls = 0;

 private:
  std::string prefix_;
  std::string identity_;
};

class KernelLoaderTest : public ::testing::Test {
 protected:
  // The loader is tested on toy texts the real checker would reject, so each test
  // starts from the hook that checks nothing and registers its own where it matters.
  void SetUp() override {
    unsetenv("FIXBITS_VERIFY");
    unsetenv("FIXBITS_VERIFY_DISK");
    unsetenv("FIXBITS_CACHE_IMAGE");
    set_verify_hook(std::make_shared<UnverifiedHook>());
  }
  void TearDown() override {
    set_verify_hook(nullptr);
    unsetenv("FIXBITS_VERIFY_DISK");
    unsetenv("FIXBITS_CACHE_IMAGE");  // the image tests turn it on
  }

  absl::StatusOr<CacheEntry> build(const std::string& text = kText) {
    ++builds;
    return CacheEntry{text, "add_one", "meta", "", false, ""};
  }

  // add_one built and loaded through a fresh memory cache, the driver expecting the two
  // arguments of its launches (the launch tests).
  absl::StatusOr<LoadedKernel> load_for_launches() {
    KernelCache cache({true, ""});
    driver->expected_args = 2;
    return load_kernel(device, cache, key, [&] { return build(); });
  }

  std::shared_ptr<FakeDriver> driver = std::make_shared<FakeDriver>();
  Device device{driver};
  CacheKey key{"prog", "sm_90a"};
  int builds = 0;
};

TEST_F(KernelLoaderTest, BuiltTextIsVerifiedAndTheOutcomeStored) {
  auto hook = std::make_shared<PrefixHook>("sig:");
  set_verify_hook(hook);
  KernelCache cache({true, ""});
  absl::StatusOr<LoadedKernel> k = load_kernel(device, cache, key, [&] { return build(); });
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->source, CacheSource::kBuilt);
  EXPECT_TRUE(k->entry->verified);
  EXPECT_EQ(k->entry->signature, "sig:" + std::to_string(std::string(kText).size()));
  EXPECT_EQ(k->verify.signature, k->entry->signature);
  EXPECT_EQ(k->kernel.name(), "add_one");
  ASSERT_EQ(driver->loaded_images.size(), 1u);
  EXPECT_EQ(driver->loaded_images[0], kText);
  EXPECT_EQ(hook->calls, 1);
}

TEST_F(KernelLoaderTest, VerifiedMemoryHitIsNotWalkedAgain) {
  auto hook = std::make_shared<PrefixHook>("sig:");
  set_verify_hook(hook);
  KernelCache cache({true, ""});
  ASSERT_TRUE(load_kernel(device, cache, key, [&] { return build(); }).ok());
  absl::StatusOr<LoadedKernel> again = load_kernel(device, cache, key, [&] { return build(); });
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->source, CacheSource::kMemory);
  EXPECT_TRUE(again->verify.verified);
  EXPECT_EQ(again->verify.signature, "sig:" + std::to_string(std::string(kText).size()));
  EXPECT_EQ(hook->calls, 1);
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(driver->loaded_images.size(), 2u);
}

TEST_F(KernelLoaderTest, RejectedTextIsNeitherLoadedNorCached) {
  set_verify_hook(std::make_shared<PrefixHook>("sig:"));
  KernelCache cache({true, ""});
  const std::string bad = ".entry add_one bad";
  absl::StatusOr<LoadedKernel> k = load_kernel(device, cache, key, [&] { return build(bad); });
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().message(),
            "The verify hook 'prefix' rejected the sm_90a kernel: the warp fold counts down.");
  EXPECT_TRUE(driver->loaded_images.empty());
  ASSERT_FALSE(load_kernel(device, cache, key, [&] { return build(bad); }).ok());
  EXPECT_EQ(builds, 2);
}

TEST_F(KernelLoaderTest, DiskEntryWhoseSignatureNoLongerMatchesIsRefused) {
  testing::TempDir dir;
  set_verify_hook(std::make_shared<PrefixHook>("old:"));
  {
    KernelCache writer({true, dir.path()});
    ASSERT_TRUE(load_kernel(device, writer, key, [&] { return build(); }).ok());
  }
  set_verify_hook(std::make_shared<PrefixHook>("new:"));
  KernelCache reader({true, dir.path()});
  absl::StatusOr<LoadedKernel> k = load_kernel(device, reader, key, [&] { return build(); });
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(k.status().message().find("carries signature old:"), absl::string_view::npos)
      << k.status();
  EXPECT_EQ(driver->loaded_images.size(), 1u);  // only the first, verified load
}

// Writes the entry through one cache with `writer_hook`, then loads it from disk in a
// fresh cache under `reader_hook`; returns the load.
absl::StatusOr<LoadedKernel> write_then_read_from_disk(
    const Device& device, const CacheKey& key, const std::string& dir,
    std::shared_ptr<PrefixHook> writer_hook, std::shared_ptr<PrefixHook> reader_hook,
    const std::function<absl::StatusOr<CacheEntry>()>& build) {
  set_verify_hook(writer_hook);
  {
    KernelCache writer({true, dir});
    absl::StatusOr<LoadedKernel> k = load_kernel(device, writer, key, build);
    if (!k.ok()) return k.status();
  }
  set_verify_hook(reader_hook);
  KernelCache reader({true, dir});
  return load_kernel(device, reader, key, build);
}

TEST_F(KernelLoaderTest, DiskEntrySignedUnderTheCurrentIdentityLoadsOnItsProof) {
  testing::TempDir dir;
  auto writer = std::make_shared<PrefixHook>("sig:", "prefix@1");
  auto reader = std::make_shared<PrefixHook>("sig:", "prefix@1");
  absl::StatusOr<LoadedKernel> k =
      write_then_read_from_disk(device, key, dir.path(), writer, reader, [&] { return build(); });
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->source, CacheSource::kDisk);
  EXPECT_EQ(k->entry->verified_by, "prefix@1");
  EXPECT_TRUE(k->verify.verified);
  EXPECT_EQ(k->verify.signature, "sig:" + std::to_string(std::string(kText).size()));
  EXPECT_EQ(k->verify.hook_name, "disk cache (signed by prefix@1)");
  EXPECT_EQ(writer->calls, 1);
  EXPECT_EQ(reader->calls, 0);  // not walked again
  EXPECT_EQ(builds, 1);
}

TEST_F(KernelLoaderTest, DiskEntrySignedByAnotherCheckerBuildIsWalkedAgain) {
  testing::TempDir dir;
  // Same name, another identity (another checker build) that now signs differently:
  // the stored proof is not trusted, the walk runs and the mismatch is refused.
  auto writer = std::make_shared<PrefixHook>("old:", "prefix@1");
  auto reader = std::make_shared<PrefixHook>("new:", "prefix@2");
  absl::StatusOr<LoadedKernel> k =
      write_then_read_from_disk(device, key, dir.path(), writer, reader, [&] { return build(); });
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(reader->calls, 1);
}

TEST_F(KernelLoaderTest, RecheckSwitchWalksEveryDiskEntry) {
  testing::TempDir dir;
  setenv("FIXBITS_VERIFY_DISK", "recheck", 1);
  auto writer = std::make_shared<PrefixHook>("sig:", "prefix@1");
  auto reader = std::make_shared<PrefixHook>("sig:", "prefix@1");
  absl::StatusOr<LoadedKernel> k =
      write_then_read_from_disk(device, key, dir.path(), writer, reader, [&] { return build(); });
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(reader->calls, 1);
  EXPECT_EQ(k->verify.hook_name, "prefix");
}

TEST_F(KernelLoaderTest, UnverifiedDiskEntryGetsAFreshVerdict) {
  testing::TempDir dir;
  {
    KernelCache writer({true, dir.path()});
    absl::StatusOr<LoadedKernel> k = load_kernel(device, writer, key, [&] { return build(); });
    ASSERT_TRUE(k.ok());
    EXPECT_FALSE(k->entry->verified);
    EXPECT_EQ(k->entry->signature, "");
  }
  set_verify_hook(std::make_shared<PrefixHook>("sig:"));
  KernelCache reader({true, dir.path()});
  absl::StatusOr<LoadedKernel> k = load_kernel(device, reader, key, [&] { return build(); });
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->source, CacheSource::kDisk);
  EXPECT_FALSE(k->entry->verified);
  EXPECT_TRUE(k->verify.verified);
  EXPECT_EQ(k->verify.hook_name, "prefix");
}

// The compiled image, under FIXBITS_CACHE_IMAGE=on: made once in the build, stored with
// the entry, and loaded instead of the text on every later load of a device of its
// identity (a disk hit too); another identity, a failed compile, the switch unset (the
// default) or off load the text, and a build then makes no image.
TEST_F(KernelLoaderTest, TheCompiledImageIsStoredAndLoadedInsteadOfTheText) {
  testing::TempDir dir;
  driver->compiles_images = true;
  ASSERT_EQ(setenv("FIXBITS_CACHE_IMAGE", "on", 1), 0);
  driver->set_driver_version(13000);
  const std::string image = std::string("IMAGE(sm_90 13000):") + kText;
  {
    KernelCache writer({true, dir.path()});
    absl::StatusOr<LoadedKernel> k = load_kernel(device, writer, key, [&] { return build(); });
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_EQ(k->entry->image, image);
    EXPECT_EQ(k->entry->image_for, "sm_90 driver 13000");
    EXPECT_EQ(k->entry->text, kText) << "the text stays what was checked";
    ASSERT_EQ(driver->loaded_images.size(), 1u);
    EXPECT_EQ(driver->loaded_images.back(), image);
  }
  EXPECT_EQ(driver->compile_calls, 1);
  // A disk hit loads the stored image, compiling nothing.
  KernelCache reader({true, dir.path()});
  absl::StatusOr<LoadedKernel> hit = load_kernel(device, reader, key, [&] { return build(); });
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(hit->source, CacheSource::kDisk);
  EXPECT_EQ(driver->loaded_images.back(), image);
  EXPECT_EQ(driver->compile_calls, 1);
  EXPECT_EQ(builds, 1);
  // Another driver version: the text.
  driver->set_driver_version(13010);
  reader.clear_memory();
  hit = load_kernel(device, reader, key, [&] { return build(); });
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_EQ(hit->source, CacheSource::kDisk);
  EXPECT_EQ(driver->loaded_images.back(), kText);
  driver->set_driver_version(13000);
  // A fresh build through `fresh_cache` compiles no image and loads the text.
  auto expect_text_only = [&](KernelCache& fresh_cache) {
    const int compiles = driver->compile_calls;
    absl::StatusOr<LoadedKernel> fresh = load_kernel(device, fresh_cache, key, [&] { return build(); });
    ASSERT_TRUE(fresh.ok()) << fresh.status();
    EXPECT_TRUE(fresh->entry->image.empty());
    EXPECT_EQ(driver->compile_calls, compiles);
    EXPECT_EQ(driver->loaded_images.back(), kText);
  };
  // Switched off, or unset (the default): the text, and a fresh build makes no image.
  for (const char* value : {"off", ""}) {
    SCOPED_TRACE(absl::StrCat("FIXBITS_CACHE_IMAGE='", value, "'"));
    if (value[0] != '\0') {
      ASSERT_EQ(setenv("FIXBITS_CACHE_IMAGE", value, 1), 0);
    } else {
      ASSERT_EQ(unsetenv("FIXBITS_CACHE_IMAGE"), 0);
    }
    reader.clear_memory();
    hit = load_kernel(device, reader, key, [&] { return build(); });
    ASSERT_TRUE(hit.ok()) << hit.status();
    EXPECT_EQ(driver->loaded_images.back(), kText);
    KernelCache fresh({true, ""});
    expect_text_only(fresh);
  }
  ASSERT_EQ(setenv("FIXBITS_CACHE_IMAGE", "on", 1), 0);
  // A disabled cache keeps nothing, so it makes no image.
  KernelCache disabled({false, ""});
  expect_text_only(disabled);
  // A compile that fails is no load failure: the entry has no image, the text loads.
  driver->compile_error = "ptxas ran out of registers";
  KernelCache failing({true, ""});
  absl::StatusOr<LoadedKernel> k = load_kernel(device, failing, key, [&] { return build(); });
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_TRUE(k->entry->image.empty());
  EXPECT_TRUE(k->entry->image_for.empty());
  EXPECT_EQ(driver->loaded_images.back(), kText);
}

// A text the check rejects is never compiled to an image either.
TEST_F(KernelLoaderTest, ARejectedTextIsNotCompiled) {
  driver->compiles_images = true;
  ASSERT_EQ(setenv("FIXBITS_CACHE_IMAGE", "on", 1), 0);
  set_verify_hook(std::make_shared<PrefixHook>("sig:"));
  KernelCache cache({true, ""});
  absl::StatusOr<LoadedKernel> k = load_kernel(device, cache, key, [&] { return build("bad text"); });
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(driver->compile_calls, 0);
  EXPECT_TRUE(driver->loaded_images.empty());
}

TEST_F(KernelLoaderTest, MissingEntryNameIsNotFound) {
  KernelCache cache({true, ""});
  absl::StatusOr<LoadedKernel> k = load_kernel(device, cache, key, [&]() -> absl::StatusOr<CacheEntry> {
    return CacheEntry{kText, "other_kernel", "", "", false, ""};
  });
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(k.status().message().find("no usable kernel entry 'other_kernel'"),
            absl::string_view::npos);
}

TEST_F(KernelLoaderTest, LaunchIsValidatedAndPassesArguments) {
  absl::StatusOr<LoadedKernel> k = load_for_launches();
  ASSERT_TRUE(k.ok());
  absl::StatusOr<Buffer> buf = device.alloc(64);
  ASSERT_TRUE(buf.ok());
  const KernelArg args[] = {KernelArg::pointer(*buf), KernelArg::scalar<uint32_t>(0xdeadbeef)};
  ASSERT_TRUE(k->kernel.launch({{3, 2, 1}, {128, 1, 1}, 1024}, args).ok());
  ASSERT_EQ(driver->launches.size(), 1u);
  const FakeDriver::Launch& l = driver->launches[0];
  EXPECT_EQ(l.kernel, "add_one");
  EXPECT_EQ(l.grid[0], 3u);
  EXPECT_EQ(l.grid[1], 2u);
  EXPECT_EQ(l.block[0], 128u);
  EXPECT_EQ(l.shared, 1024u);
  EXPECT_EQ(l.first_words[0], buf->address());
  EXPECT_EQ(l.first_words[1] & 0xffffffffu, 0xdeadbeefu);
  EXPECT_EQ(driver->raised_shared, 0u);

  // Above 48 KiB the limit is raised first; above the opt-in limit it is refused.
  ASSERT_TRUE(k->kernel.launch({{1}, {32}, 100 * 1024}, args).ok());
  EXPECT_EQ(driver->raised_shared, 100u * 1024);
  absl::Status too_much = k->kernel.launch({{1}, {32}, 228 * 1024}, args);
  EXPECT_EQ(too_much.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(too_much.message(),
            "Kernel 'add_one': 233472 bytes of dynamic shared memory (and 0 static) exceed the "
            "device's limit of 232448 bytes per block.");
  absl::Status zero = k->kernel.launch({{0, 1, 1}, {32}, 0}, args);
  EXPECT_EQ(zero.message(),
            "The launch grid (0, 1, 1) has a zero dimension; every dimension must be at least 1.");
  absl::Status big = k->kernel.launch({{1}, {32, 33, 1}, 0}, args);
  EXPECT_EQ(big.message(),
            "Kernel 'add_one': the block (32, 33, 1) has 1056 threads, more than the device's "
            "limit of 1024 threads per block.");
  EXPECT_EQ(driver->launches.size(), 2u);
}

// The static bytes count with the dynamic ones: 48 KiB of dynamic shared memory is under
// the default limit alone, over it with the kernel's static bytes (the cluster reduction
// of 6 kept strips of 4096 bf16 was refused with CUDA_ERROR_INVALID_VALUE on the device
// until the limit was raised for it too), and the opt-in limit holds the two together.
TEST_F(KernelLoaderTest, StaticSharedBytesCountTowardsTheLimits) {
  driver->static_shared = 2048;
  absl::StatusOr<LoadedKernel> k = load_for_launches();
  ASSERT_TRUE(k.ok());
  const KernelArg args[] = {KernelArg::device_pointer(0x1000), KernelArg::scalar<uint32_t>(1)};
  ASSERT_TRUE(k->kernel.launch({{1}, {32}, 46 * 1024}, args).ok());
  EXPECT_EQ(driver->raised_shared, 0u);  // 46 KiB + 2 KiB = the default 48 KiB
  ASSERT_TRUE(k->kernel.launch({{1}, {32}, 48 * 1024}, args).ok());
  EXPECT_EQ(driver->raised_shared, 48u * 1024);
  // Raised once: the same or fewer bytes again call the driver no more.
  ASSERT_TRUE(k->kernel.launch({{1}, {32}, 48 * 1024}, args).ok());
  ASSERT_TRUE(k->kernel.launch({{1}, {32}, 47 * 1024}, args).ok());
  EXPECT_EQ(driver->raise_calls, 1);
  ASSERT_TRUE(k->kernel.launch({{1}, {32}, 227 * 1024 - 2048}, args).ok());
  EXPECT_EQ(driver->raise_calls, 2);
  EXPECT_EQ(driver->raised_shared, 227u * 1024 - 2048);
  absl::Status over = k->kernel.launch({{1}, {32}, 227 * 1024 - 2047}, args);
  EXPECT_EQ(over.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(over.message(),
            "Kernel 'add_one': 230401 bytes of dynamic shared memory (and 2048 static) exceed "
            "the device's limit of 232448 bytes per block.");
  EXPECT_EQ(driver->launches.size(), 5u);
}

// occupancy() passes the launch's grid, block and dynamic bytes to the driver after
// launch()'s checks and shared-memory raise (the calculator counts the raised limit),
// and says Unimplemented where the driver has no calculator; it launches nothing.
TEST_F(KernelLoaderTest, OccupancyAsksTheDriverAfterTheLaunchChecks) {
  absl::StatusOr<LoadedKernel> k = load_for_launches();
  ASSERT_TRUE(k.ok()) << k.status();
  absl::StatusOr<Occupancy> none = k->kernel.occupancy({{6}, {512}, 0});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kUnimplemented) << none.status();

  driver->answers_occupancy = true;
  driver->occupancy_answer = {.blocks_per_multiprocessor = 4, .registers_per_thread = 40,
                              .local_bytes_per_thread = 16, .cluster_blocks = 6,
                              .max_active_clusters = 80};
  absl::StatusOr<Occupancy> o = k->kernel.occupancy({{1536}, {512}, 64 * 1024});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->blocks_per_multiprocessor, 4);
  EXPECT_EQ(o->registers_per_thread, 40);
  EXPECT_EQ(o->local_bytes_per_thread, 16);
  EXPECT_EQ(o->cluster_blocks, 6);
  EXPECT_EQ(o->max_active_clusters, 80);
  ASSERT_EQ(driver->occupancy_queries.size(), 1u);
  const FakeDriver::Launch& q = driver->occupancy_queries[0];
  EXPECT_EQ(q.kernel, "add_one");
  EXPECT_EQ(q.grid[0], 1536u);
  EXPECT_EQ(q.block[0], 512u);
  EXPECT_EQ(q.shared, 64u * 1024);
  EXPECT_EQ(driver->raised_shared, 64u * 1024);  // raised before the question

  absl::Status big = k->kernel.occupancy({{1}, {32, 33, 1}, 0}).status();
  EXPECT_EQ(big.message(),
            "Kernel 'add_one': the block (32, 33, 1) has 1056 threads, more than the device's "
            "limit of 1024 threads per block.");
  EXPECT_EQ(driver->occupancy_queries.size(), 1u);  // refused before the driver
  EXPECT_TRUE(driver->launches.empty());
}

// A driver that cannot say (some HIP versions) leaves them 0: the kernel still loads.
TEST_F(KernelLoaderTest, UnknownStaticSharedBytesCountAsZero) {
  driver->static_shared = 2048;
  driver->static_shared_known = false;
  absl::StatusOr<LoadedKernel> k = load_for_launches();
  ASSERT_TRUE(k.ok()) << k.status();
  const KernelArg args[] = {KernelArg::device_pointer(0x1000), KernelArg::scalar<uint32_t>(1)};
  ASSERT_TRUE(k->kernel.launch({{1}, {32}, 48 * 1024}, args).ok());
  EXPECT_EQ(driver->raised_shared, 0u);
}

TEST_F(KernelLoaderTest, ArgumentsAreCheckedAgainstKnownParameters) {
  driver->declared_params_known = true;
  driver->declared_params = {8, 4};
  KernelCache cache({true, ""});
  absl::StatusOr<LoadedKernel> k = load_kernel(device, cache, key, [&] { return build(); });
  ASSERT_TRUE(k.ok());
  ASSERT_TRUE(k->kernel.params_known());
  EXPECT_EQ(k->kernel.param_sizes(), (std::vector<size_t>{8, 4}));
  const KernelArg ok_args[] = {KernelArg::device_pointer(0x1000), KernelArg::scalar<uint32_t>(1)};
  EXPECT_TRUE(k->kernel.launch({{1}, {32}, 0}, ok_args).ok());
  const KernelArg too_few[] = {KernelArg::device_pointer(0x1000)};
  EXPECT_EQ(k->kernel.launch({{1}, {32}, 0}, too_few).message(),
            "Kernel 'add_one' takes 2 parameters but 1 arguments were given.");
  const KernelArg wrong_size[] = {KernelArg::device_pointer(0x1000), KernelArg::scalar<double>(1.0)};
  EXPECT_EQ(k->kernel.launch({{1}, {32}, 0}, wrong_size).message(),
            "Kernel 'add_one': argument 1 is 8 bytes but the parameter is 4 bytes.");
  EXPECT_EQ(driver->launches.size(), 1u);
}

TEST_F(KernelLoaderTest, UnknownParametersLeaveArgumentsUnchecked) {
  KernelCache cache({true, ""});
  absl::StatusOr<LoadedKernel> k = load_kernel(device, cache, key, [&] { return build(); });
  ASSERT_TRUE(k.ok());
  EXPECT_FALSE(k->kernel.params_known());
  const KernelArg one[] = {KernelArg::scalar<uint32_t>(7)};
  EXPECT_TRUE(k->kernel.launch({{1}, {32}, 0}, one).ok());
}

TEST_F(KernelLoaderTest, WrappersReleaseTheirHandles) {
  {
    KernelCache cache({true, ""});
    absl::StatusOr<LoadedKernel> k = load_kernel(device, cache, key, [&] { return build(); });
    ASSERT_TRUE(k.ok());
    Kernel kernel = k->kernel;
    k->module.reset();
    EXPECT_EQ(driver->live_modules(), 1u);  // the LoadedKernel's kernel keeps it
    absl::StatusOr<Buffer> a = device.alloc(16);
    absl::StatusOr<Buffer> b = device.alloc(16);
    ASSERT_TRUE(a.ok() && b.ok());
    *a = *std::move(b);  // frees a's memory, takes b's
    EXPECT_EQ(driver->live_allocations(), 1u);
    absl::StatusOr<Stream> s = device.create_stream();
    absl::StatusOr<Event> e = device.create_event();
    ASSERT_TRUE(s.ok() && e.ok());
  }
  EXPECT_EQ(driver->live_modules(), 0u);
  EXPECT_EQ(driver->live_allocations(), 0u);
  EXPECT_EQ(driver->destroyed_streams, 1);
  EXPECT_EQ(driver->destroyed_events, 1);
}

TEST_F(KernelLoaderTest, BufferCopiesAreBoundsChecked) {
  absl::StatusOr<Buffer> buf = device.alloc(8);
  ASSERT_TRUE(buf.ok());
  const uint8_t in[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  uint8_t out[16] = {};
  ASSERT_TRUE(buf->copy_from_host(in, 8).ok());
  ASSERT_TRUE(buf->copy_to_host(out, 8).ok());
  EXPECT_EQ(std::memcmp(in, out, 8), 0);
  absl::Status s = buf->copy_to_host(out, 16);
  EXPECT_EQ(s.message(), "Buffer::copy_to_host of 16 bytes exceeds the buffer's size of 8 bytes.");
  // A patch at an offset lands there and only there; one past the end is refused.
  ASSERT_TRUE(buf->copy_from_host(5, in + 6, 2).ok());
  ASSERT_TRUE(buf->copy_to_host(out, 8).ok());
  const uint8_t patched[8] = {1, 2, 3, 4, 5, 7, 8, 8};
  EXPECT_EQ(std::memcmp(patched, out, 8), 0);
  EXPECT_EQ(buf->copy_from_host(7, in, 2).message(),
            "Buffer::copy_from_host of 2 bytes at offset 7 exceeds the buffer's size of 8 bytes.");
  EXPECT_EQ(buf->copy_from_host(9, in, 0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(device.alloc(0).status().code(), absl::StatusCode::kInvalidArgument);
  Buffer empty;
  EXPECT_EQ(empty.copy_from_host(in, 1).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(empty.copy_from_host(0, in, 1).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(device.load_module("").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fixbits::runtime
