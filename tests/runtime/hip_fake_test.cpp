// Tests runtime/HipDriver, and Device/Kernel over it, against FakeHip
// (tests/runtime/fake/FakeHip.cpp): a CPU stand-in for libamdhip64.so whose device,
// module image format, attributes and occupancy rule its header comment documents.
// A second build of the fake lacks hipModuleOccupancyMaxActiveBlocksPerMultiprocessor.
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/Device.h"
#include "runtime/Driver.h"
#include "runtime/HipDriver.h"

namespace fixbits::runtime {
namespace {

constexpr const char* kFakeHip = FIXBITS_FAKE_HIP_PATH;
constexpr const char* kFakeHipNoOccupancy = FIXBITS_FAKE_HIP_NO_OCCUPANCY_PATH;
constexpr const char* kOccupancyFunction =
    "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor";

// A module image FakeHip takes: the ELF magic, each kernel name NUL-terminated, and an
// empty name ending the list.
std::string fake_image(std::initializer_list<std::string_view> names) {
  std::string image = "\x7f" "ELF";
  for (std::string_view n : names) {
    image.append(n);
    image.push_back('\0');
  }
  image.push_back('\0');
  return image;
}

std::shared_ptr<Driver> open_fake(const char* library = kFakeHip) {
  absl::StatusOr<std::shared_ptr<Driver>> d = open_hip_driver(0, library);
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? *d : nullptr;
}

// The fake's kernel `name`, alone in a module: the module (to unload) and the function;
// nulls (and a test failure) where either step fails.
struct FakeKernel {
  void* module = nullptr;
  void* function = nullptr;
};
FakeKernel load_kernel(Driver& d, const std::string& name) {
  absl::StatusOr<void*> m = d.module_load(fake_image({name}));
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return {};
  absl::StatusOr<void*> f = d.module_function(*m, name);
  EXPECT_TRUE(f.ok()) << f.status();
  return {*m, f.ok() ? *f : nullptr};
}

TEST(HipFake, DeviceInfoComesFromTheRuntime) {
  std::shared_ptr<Driver> d = open_fake();
  ASSERT_NE(d, nullptr);
  const DeviceInfo& info = d->info();
  EXPECT_EQ(info.platform, Platform::kHip);
  EXPECT_EQ(info.ordinal, 0);
  EXPECT_EQ(info.name, "Fake gfx942");
  EXPECT_EQ(info.multiprocessor_count, 304);
  EXPECT_EQ(info.warp_size, 64);
  EXPECT_EQ(info.max_threads_per_block, 1024);
  EXPECT_EQ(info.max_shared_bytes_per_block, 64 * 1024);
  EXPECT_EQ(info.max_shared_bytes_per_block_optin, 64 * 1024);
  EXPECT_EQ(info.cc_major, 9);
  EXPECT_EQ(info.cc_minor, 4);
  EXPECT_EQ(info.total_memory_bytes, uint64_t{192} << 30);
  EXPECT_EQ(info.driver_version, 60300000);
  EXPECT_EQ(info.arch, "");  // HipDriver.h: empty on HIP
}

TEST(HipFake, OrdinalPastTheDeviceCountIsNotFound) {
  absl::StatusOr<std::shared_ptr<Driver>> d = open_hip_driver(1, kFakeHip);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(d.status().message(),
            "HIP device 1 does not exist: the runtime reports 1 device(s).");
}

TEST(HipFake, ModuleLoadsAndAnUnknownFunctionNamesTheCall) {
  std::shared_ptr<Driver> d = open_fake();
  ASSERT_NE(d, nullptr);
  absl::StatusOr<void*> m = d->module_load(fake_image({"add_one", "reduce"}));
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<void*> f = d->module_function(*m, "reduce");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_NE(*f, nullptr);
  absl::StatusOr<uint32_t> fixed = d->static_shared_bytes(*f);
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_EQ(*fixed, 1024u);

  absl::StatusOr<void*> missing = d->module_function(*m, "no_such_kernel");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "HIP runtime call hipModuleGetFunction failed with hipErrorNotFound (500): named "
            "symbol not found.");
  EXPECT_TRUE(d->module_unload(*m).ok());
}

TEST(HipFake, ImageWithoutElfMagicIsRejectedByTheRuntime) {
  std::shared_ptr<Driver> d = open_fake();
  ASSERT_NE(d, nullptr);
  absl::StatusOr<void*> m = d->module_load("add_one");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(m.status().message().find("hipModuleLoadData failed with hipErrorInvalidImage (200)"),
            absl::string_view::npos)
      << m.status();
}

TEST(HipFake, OccupancyIsTheCalculatorsAnswerAndTheKernelsAttributes) {
  std::shared_ptr<Driver> d = open_fake();
  ASSERT_NE(d, nullptr);
  const FakeKernel k = load_kernel(*d, "k");
  ASSERT_NE(k.function, nullptr);
  const uint32_t grid[3] = {1000, 1, 1};

  // min(2048 / 256, 65536 / (1024 + 0)) = min(8, 64) = 8: threads bound it.
  const uint32_t block256[3] = {256, 1, 1};
  absl::StatusOr<Occupancy> wide = d->occupancy(k.function, grid, block256, 0);
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_EQ(wide->blocks_per_multiprocessor, 8);
  EXPECT_EQ(wide->registers_per_thread, 40);
  EXPECT_EQ(wide->local_bytes_per_thread, 16);
  EXPECT_EQ(wide->cluster_blocks, 0);
  EXPECT_EQ(wide->max_active_clusters, 0);

  // A 3-D block counts all its threads: 8 * 8 * 1 = 64. min(2048 / 64,
  // 65536 / (1024 + 15360)) = min(32, 4) = 4: the LDS binds it.
  const uint32_t block64[3] = {8, 8, 1};
  absl::StatusOr<Occupancy> lds = d->occupancy(k.function, grid, block64, 15360);
  ASSERT_TRUE(lds.ok()) << lds.status();
  EXPECT_EQ(lds->blocks_per_multiprocessor, 4);
  EXPECT_NE(lds->blocks_per_multiprocessor, wide->blocks_per_multiprocessor);
  EXPECT_EQ(lds->registers_per_thread, 40);
  EXPECT_TRUE(d->module_unload(k.module).ok());
}

TEST(HipFake, OccupancyReportsZeroForAttributesTheRuntimeCannotGive) {
  std::shared_ptr<Driver> d = open_fake();
  ASSERT_NE(d, nullptr);
  const FakeKernel k = load_kernel(*d, "noattr_k");
  ASSERT_NE(k.function, nullptr);
  // static_shared_bytes says it cannot tell; occupancy still answers, with 0s.
  absl::StatusOr<uint32_t> fixed = d->static_shared_bytes(k.function);
  EXPECT_EQ(fixed.status().code(), absl::StatusCode::kUnimplemented) << fixed.status();
  const uint32_t grid[3] = {1, 1, 1};
  const uint32_t block[3] = {1024, 1, 1};
  absl::StatusOr<Occupancy> o = d->occupancy(k.function, grid, block, 0);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->blocks_per_multiprocessor, 2);  // min(2048 / 1024, 64)
  EXPECT_EQ(o->registers_per_thread, 0);
  EXPECT_EQ(o->local_bytes_per_thread, 0);
  EXPECT_TRUE(d->module_unload(k.module).ok());
}

TEST(HipFake, CalculatorRefusalIsADriverError) {
  std::shared_ptr<Driver> d = open_fake();
  ASSERT_NE(d, nullptr);
  const FakeKernel k = load_kernel(*d, "k");
  ASSERT_NE(k.function, nullptr);
  const uint32_t grid[3] = {1, 1, 1};
  const uint32_t block[3] = {2048, 1, 1};  // past the fake's 1024 threads a block
  absl::StatusOr<Occupancy> o = d->occupancy(k.function, grid, block, 0);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(o.status().message(),
            "HIP runtime call hipModuleOccupancyMaxActiveBlocksPerMultiprocessor failed with "
            "hipErrorInvalidValue (1): invalid argument.");
  EXPECT_TRUE(d->module_unload(k.module).ok());
}

TEST(HipFake, RuntimeWithoutTheCalculatorLoadsAndOccupancyIsUnimplemented) {
  std::shared_ptr<Driver> d = open_fake(kFakeHipNoOccupancy);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->info().name, "Fake gfx942");
  const FakeKernel k = load_kernel(*d, "k");
  ASSERT_NE(k.function, nullptr);
  const uint32_t grid[3] = {1, 1, 1};
  const uint32_t block[3] = {256, 1, 1};
  absl::StatusOr<Occupancy> o = d->occupancy(k.function, grid, block, 0);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(o.status().message().find(kOccupancyFunction), absl::string_view::npos)
      << o.status();
  EXPECT_NE(o.status().message().find(kFakeHipNoOccupancy), absl::string_view::npos)
      << o.status();
  EXPECT_TRUE(d->module_unload(k.module).ok());
}

TEST(HipFake, CopiesRoundTripBytes) {
  std::shared_ptr<Driver> d = open_fake();
  ASSERT_NE(d, nullptr);
  std::vector<unsigned char> sent(4096);
  for (size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<unsigned char>(i * 37 + 11);
  absl::StatusOr<uint64_t> buf = d->mem_alloc(sent.size());
  ASSERT_TRUE(buf.ok()) << buf.status();

  ASSERT_TRUE(d->copy_to_device(*buf, sent.data(), sent.size(), nullptr).ok());
  std::vector<unsigned char> back(sent.size(), 0);
  ASSERT_TRUE(d->copy_to_host(back.data(), *buf, back.size(), nullptr).ok());
  EXPECT_EQ(std::memcmp(back.data(), sent.data(), sent.size()), 0);

  // The same on a stream, after a memset that the copy must overwrite.
  ASSERT_TRUE(d->memset8(*buf, 0xAB, sent.size()).ok());
  absl::StatusOr<void*> s = d->stream_create();
  ASSERT_TRUE(s.ok()) << s.status();
  std::vector<unsigned char> set(sent.size(), 0);
  ASSERT_TRUE(d->copy_to_host(set.data(), *buf, set.size(), *s).ok());
  ASSERT_TRUE(d->stream_synchronize(*s).ok());
  EXPECT_EQ(set, std::vector<unsigned char>(sent.size(), 0xAB));
  ASSERT_TRUE(d->copy_to_device(*buf, sent.data(), sent.size(), *s).ok());
  std::vector<unsigned char> again(sent.size(), 0);
  ASSERT_TRUE(d->copy_to_host(again.data(), *buf, again.size(), *s).ok());
  ASSERT_TRUE(d->stream_synchronize(*s).ok());
  EXPECT_EQ(std::memcmp(again.data(), sent.data(), sent.size()), 0);

  // A copy past the allocation is the runtime's error, named.
  absl::Status past = d->copy_to_host(back.data(), *buf + 1, sent.size(), nullptr);
  EXPECT_EQ(past.code(), absl::StatusCode::kInvalidArgument) << past;
  EXPECT_NE(past.message().find("hipMemcpyDtoH"), absl::string_view::npos) << past;

  EXPECT_TRUE(d->stream_destroy(*s).ok());
  EXPECT_TRUE(d->mem_free(*buf).ok());
}

// The public layer over the same fake: Device, Module, Kernel and Buffer.
TEST(HipFake, DeviceLayerReachesTheCalculator) {
  std::shared_ptr<Driver> d = open_fake();
  ASSERT_NE(d, nullptr);
  Device dev(d);
  EXPECT_EQ(dev.info().platform, Platform::kHip);
  absl::StatusOr<std::shared_ptr<Module>> mod = dev.load_module(fake_image({"add_one"}));
  ASSERT_TRUE(mod.ok()) << mod.status();

  absl::StatusOr<Kernel> missing = (*mod)->kernel("nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("'nope'"), absl::string_view::npos);
  EXPECT_NE(missing.status().message().find("hipModuleGetFunction"), absl::string_view::npos);

  absl::StatusOr<Kernel> k = (*mod)->kernel("add_one");
  ASSERT_TRUE(k.ok()) << k.status();
  absl::StatusOr<Occupancy> wide = k->occupancy({.grid = {1000}, .block = {256}});
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_EQ(wide->blocks_per_multiprocessor, 8);
  EXPECT_EQ(wide->registers_per_thread, 40);
  absl::StatusOr<Occupancy> lds =
      k->occupancy({.grid = {1000}, .block = {8, 8}, .dynamic_shared_bytes = 15360});
  ASSERT_TRUE(lds.ok()) << lds.status();
  EXPECT_EQ(lds->blocks_per_multiprocessor, 4);

  // The kernel's 1024 static bytes count against the 64 KiB limit with the dynamic ones.
  absl::StatusOr<Occupancy> over =
      k->occupancy({.grid = {1}, .block = {64}, .dynamic_shared_bytes = 64 * 1024});
  EXPECT_EQ(over.status().code(), absl::StatusCode::kInvalidArgument) << over.status();

  absl::StatusOr<Buffer> buf = dev.alloc(64);
  ASSERT_TRUE(buf.ok()) << buf.status();
  const std::string sent = "sixty-four bytes of fixbits: a round trip through the fake HIP";
  ASSERT_TRUE(buf->copy_from_host(sent.data(), sent.size()).ok());
  std::string back(sent.size(), '\0');
  ASSERT_TRUE(buf->copy_to_host(back.data(), back.size()).ok());
  EXPECT_EQ(back, sent);
}

}  // namespace
}  // namespace fixbits::runtime
