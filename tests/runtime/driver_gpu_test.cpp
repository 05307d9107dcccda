// GPU tests for the CUDA driver path: device query, hand-written PTX loaded, launched
// and checked bit for bit against the host, JIT errors carried into the Status, events,
// streams, dynamic shared memory above 48 KiB, and the cache+verify loader end to end.
// Skips with "[SKIP] no CUDA device: <reason>" where there is no driver or device.
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/KernelLoader.h"
#include "tests/runtime/AddOnePtx.h"
#include "tests/runtime/GpuTest.h"

namespace fixbits::runtime {
namespace {

using testing::kAddOnePtx;


// One block: each thread writes data[tid] to dynamic shared memory at byte `offset`,
// then thread t reads back the value of thread ntid-1-t: data is reversed.
constexpr const char* kReversePtx = R"(
.version 8.0
.target sm_90
.address_size 64

.extern .shared .align 16 .b8 dyn_smem[];

.visible .entry reverse_through_smem(
    .param .u64 p_data,
    .param .u32 p_offset
)
{
    .reg .b32 %r<8>;
    .reg .f32 %f<2>;
    .reg .b64 %rd<10>;

    ld.param.u64 %rd1, [p_data];
    ld.param.u32 %r1, [p_offset];
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ntid.x;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    mov.u64 %rd5, dyn_smem;
    cvt.u64.u32 %rd6, %r1;
    add.s64 %rd5, %rd5, %rd6;
    add.s64 %rd7, %rd5, %rd3;
    st.shared.f32 [%rd7], %f1;
    bar.sync 0;
    sub.u32 %r4, %r3, 1;
    sub.u32 %r5, %r4, %r2;
    mul.wide.u32 %rd8, %r5, 4;
    add.s64 %rd9, %rd5, %rd8;
    ld.shared.f32 %f1, [%rd9];
    st.global.f32 [%rd4], %f1;
    ret;
}
)";

uint32_t bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}

float from_bits(uint32_t b) {
  float x;
  std::memcpy(&x, &b, 4);
  return x;
}

class DriverGpuTest : public testing::GpuTest {};

TEST_F(DriverGpuTest, DeviceQueryIsSane) {
  const DeviceInfo& i = info();
  EXPECT_EQ(i.platform, Platform::kCuda);
  EXPECT_FALSE(i.name.empty());
  EXPECT_GT(i.multiprocessor_count, 0);
  EXPECT_GE(i.cc_major, 5);
  EXPECT_GT(i.total_memory_bytes, uint64_t{1} << 30);
  EXPECT_EQ(i.warp_size, 32);
  EXPECT_GE(i.max_threads_per_block, 1024);
  EXPECT_GE(i.max_shared_bytes_per_block, 48 * 1024);
  EXPECT_GE(i.max_shared_bytes_per_block_optin, i.max_shared_bytes_per_block);
  EXPECT_GE(i.driver_version, 12000);
  EXPECT_EQ(i.arch, "sm_" + std::to_string(i.cc_major) + std::to_string(i.cc_minor));
  if (i.name.find("H200") != std::string::npos || i.name.find("H100") != std::string::npos) {
    EXPECT_EQ(i.cc_major, 9);
    EXPECT_EQ(i.cc_minor, 0);
    EXPECT_EQ(i.arch, "sm_90");
  }
  std::printf("device: %s, %d SMs, %s, %.1f GiB, driver %d, smem opt-in %d\n", i.name.c_str(),
              i.multiprocessor_count, i.arch.c_str(), i.total_memory_bytes / 1073741824.0,
              i.driver_version, i.max_shared_bytes_per_block_optin);
}

TEST_F(DriverGpuTest, AddOneMatchesTheHostBitForBit) {
  if (info().cc_major < 9) GTEST_SKIP() << "[SKIP] the test PTX targets sm_90";
  absl::StatusOr<std::shared_ptr<Module>> mod = device().load_module(kAddOnePtx);
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<Kernel> k = (*mod)->kernel("add_one");
  ASSERT_TRUE(k.ok()) << k.status();

  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> in = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 16777216.0f, 16777215.0f,
                           -16777216.0f, 3.4028235e38f, -3.4028235e38f, inf, -inf,
                           from_bits(0x00000001), from_bits(0x80000001), from_bits(0x007fffff),
                           1e-8f, -1e-8f, 8388608.5f, -0.99999994f, 2.9802322e-08f};
  const size_t fixed = in.size();
  for (int i = 0; in.size() < 1000; ++i) in.push_back(std::ldexp(float(i % 97) - 48.0f, i % 60 - 30));
  in.push_back(std::numeric_limits<float>::quiet_NaN());
  const uint32_t n = static_cast<uint32_t>(in.size());

  absl::StatusOr<Buffer> buf = device().alloc(n * sizeof(float));
  ASSERT_TRUE(buf.ok()) << buf.status();
  ASSERT_TRUE(buf->copy_from_host(in.data(), n * sizeof(float)).ok());
  const KernelArg args[] = {KernelArg::pointer(*buf), KernelArg::scalar<uint32_t>(n)};
  ASSERT_TRUE(k->launch({{(n + 255) / 256}, {256}, 0}, args).ok());
  std::vector<float> out(n);
  ASSERT_TRUE(buf->copy_to_host(out.data(), n * sizeof(float)).ok());

  for (uint32_t i = 0; i + 1 < n; ++i) {
    volatile float one = 1.0f;
    const float want = in[i] + one;  // IEEE binary32 add, RNE (-ffp-contract=off)
    EXPECT_EQ(bits(out[i]), bits(want)) << "i=" << i << " in=" << in[i];
  }
  EXPECT_TRUE(std::isnan(out[n - 1]));
  // Hand-checked values: -1 + 1 is +0; 2^24 + 1 ties to even, staying 2^24; the
  // smallest subnormal vanishes next to 1.
  EXPECT_EQ(bits(out[3]), 0x00000000u);
  EXPECT_EQ(bits(out[5]), 0x4b800000u);
  EXPECT_EQ(bits(out[6]), 0x4b800000u);
  EXPECT_EQ(bits(out[12]), 0x3f800000u);
  EXPECT_EQ(bits(out[10]), 0x7f800000u);
  EXPECT_EQ(fixed, 20u);
}

// The driver's compiled image of a PTX text (cuLink: a cubin, what the kernel cache
// keeps) loads without the text and gives the text's kernel's bits on every input.
TEST_F(DriverGpuTest, TheCompiledImageComputesAsTheText) {
  if (info().cc_major < 9) GTEST_SKIP() << "[SKIP] the test PTX targets sm_90";
  absl::StatusOr<std::string> image = device().compile_module(kAddOnePtx);
  ASSERT_TRUE(image.ok()) << image.status();
  ASSERT_GE(image->size(), 4u);
  EXPECT_EQ(image->substr(0, 4), "\x7f" "ELF") << "a cubin is an ELF file";
  EXPECT_NE(device().image_identity().find("driver "), std::string::npos) << device().image_identity();
  std::vector<float> in;
  for (int i = 0; i < 4096; ++i) in.push_back(std::ldexp(float(i % 89) - 44.0f, i % 70 - 35));
  const uint32_t n = static_cast<uint32_t>(in.size());
  std::vector<std::vector<float>> outs;
  for (const std::string& source : {std::string(kAddOnePtx), *image}) {
    absl::StatusOr<std::shared_ptr<Module>> mod = device().load_module(source);
    ASSERT_TRUE(mod.ok()) << mod.status();
    absl::StatusOr<Kernel> k = (*mod)->kernel("add_one");
    ASSERT_TRUE(k.ok()) << k.status();
    absl::StatusOr<Buffer> buf = device().alloc(n * sizeof(float));
    ASSERT_TRUE(buf.ok()) << buf.status();
    ASSERT_TRUE(buf->copy_from_host(in.data(), n * sizeof(float)).ok());
    const KernelArg args[] = {KernelArg::pointer(*buf), KernelArg::scalar<uint32_t>(n)};
    ASSERT_TRUE(k->launch({{(n + 255) / 256}, {256}, 0}, args).ok());
    outs.emplace_back(n);
    ASSERT_TRUE(buf->copy_to_host(outs.back().data(), n * sizeof(float)).ok());
  }
  EXPECT_EQ(std::memcmp(outs[0].data(), outs[1].data(), n * sizeof(float)), 0);
  // A text the driver's compiler refuses is an error carrying its log.
  absl::StatusOr<std::string> bad = device().compile_module(
      ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry broken() { frobnicate.u32 %r1; ret; }\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("JIT error log"), std::string::npos) << bad.status();
}

TEST_F(DriverGpuTest, InvalidPtxCarriesTheJitLog) {
  const std::string bad = ".version 8.0\n.target sm_90\n.address_size 64\n"
                          ".visible .entry broken() { frobnicate.u32 %r1; ret; }\n";
  absl::StatusOr<std::shared_ptr<Module>> mod = device().load_module(bad);
  ASSERT_FALSE(mod.ok());
  const std::string msg(mod.status().message());
  EXPECT_EQ(mod.status().code(), absl::StatusCode::kInvalidArgument) << msg;
  EXPECT_NE(msg.find("CUDA driver call cuModuleLoadDataEx failed with CUDA_ERROR_INVALID_PTX (218)"),
            std::string::npos) << msg;
  EXPECT_NE(msg.find("JIT error log:"), std::string::npos) << msg;
  std::printf("invalid PTX status: %s\n", msg.c_str());
}

TEST_F(DriverGpuTest, MissingEntryIsNotFound) {
  absl::StatusOr<std::shared_ptr<Module>> mod = device().load_module(kAddOnePtx);
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<Kernel> k = (*mod)->kernel("no_such_kernel");
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(k.status().message().find("CUDA_ERROR_NOT_FOUND (500)"), absl::string_view::npos)
      << k.status();
}

TEST_F(DriverGpuTest, WrongArgumentsAreRefusedBeforeLaunch) {
  absl::StatusOr<std::shared_ptr<Module>> mod = device().load_module(kAddOnePtx);
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<Kernel> k = (*mod)->kernel("add_one");
  ASSERT_TRUE(k.ok()) << k.status();
  if (!k->params_known()) GTEST_SKIP() << "[SKIP] driver older than CUDA 12.4: no cuFuncGetParamInfo";
  EXPECT_EQ(k->param_sizes(), (std::vector<size_t>{8, 4}));
  const KernelArg missing[] = {KernelArg::device_pointer(0)};
  EXPECT_EQ(k->launch({{1}, {32}, 0}, missing).code(), absl::StatusCode::kInvalidArgument);
  const KernelArg wide[] = {KernelArg::device_pointer(0), KernelArg::scalar<uint64_t>(1)};
  EXPECT_EQ(k->launch({{1}, {32}, 0}, wide).message(),
            "Kernel 'add_one': argument 1 is 8 bytes but the parameter is 4 bytes.");
}

TEST_F(DriverGpuTest, StreamEventsAndLargeDynamicSharedMemory) {
  absl::StatusOr<std::shared_ptr<Module>> mod = device().load_module(kReversePtx);
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<Kernel> k = (*mod)->kernel("reverse_through_smem");
  ASSERT_TRUE(k.ok()) << k.status();
  const uint32_t threads = 256;
  const uint32_t offset = 96 * 1024;  // above the 48 KiB default: needs the opt-in
  std::vector<float> in(threads), out(threads);
  for (uint32_t i = 0; i < threads; ++i) in[i] = float(i) * 0.25f - 7.0f;

  absl::StatusOr<Stream> stream = device().create_stream();
  absl::StatusOr<Event> start = device().create_event();
  absl::StatusOr<Event> stop = device().create_event();
  ASSERT_TRUE(stream.ok() && start.ok() && stop.ok());
  absl::StatusOr<Buffer> buf = device().alloc(threads * 4);
  ASSERT_TRUE(buf.ok());
  ASSERT_TRUE(buf->copy_from_host(in.data(), threads * 4, &*stream).ok());
  ASSERT_TRUE(start->record(&*stream).ok());
  const KernelArg args[] = {KernelArg::pointer(*buf), KernelArg::scalar<uint32_t>(offset)};
  absl::Status launched = k->launch({{1}, {threads}, offset + threads * 4}, args, &*stream);
  ASSERT_TRUE(launched.ok()) << launched;
  ASSERT_TRUE(stop->record(&*stream).ok());
  ASSERT_TRUE(buf->copy_to_host(out.data(), threads * 4, &*stream).ok());
  ASSERT_TRUE(stream->synchronize().ok());
  for (uint32_t i = 0; i < threads; ++i) EXPECT_EQ(bits(out[i]), bits(in[threads - 1 - i])) << i;
  absl::StatusOr<float> ms = stop->elapsed_ms_since(*start);
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_GE(*ms, 0.0f);
  EXPECT_LT(*ms, 10000.0f);

  // Beyond the opt-in limit the launch is refused before the driver sees it.
  absl::Status too_big = k->launch(
      {{1}, {threads}, uint32_t(info().max_shared_bytes_per_block_optin) + 1}, args, &*stream);
  EXPECT_EQ(too_big.code(), absl::StatusCode::kInvalidArgument);
}

// Several threads share one Device and one Kernel, each with its own stream and
// buffer (threads start with no current context: each call binds the primary one).
TEST_F(DriverGpuTest, ThreadsShareTheDeviceAndKernel) {
  absl::StatusOr<Kernel> k = load_ptx_kernel(kAddOnePtx, "add_one");
  ASSERT_TRUE(k.ok()) << k.status();
  constexpr int kThreads = 4;
  constexpr uint32_t n = 4096;
  std::vector<absl::Status> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      results[t] = [&]() -> absl::Status {
        std::vector<float> host(n);
        for (uint32_t i = 0; i < n; ++i) host[i] = float(t * 100000 + int(i));
        absl::StatusOr<Stream> s = device().create_stream();
        if (!s.ok()) return s.status();
        absl::StatusOr<Buffer> b = device().alloc(n * 4);
        if (!b.ok()) return b.status();
        if (auto st = b->copy_from_host(host.data(), n * 4, &*s); !st.ok()) return st;
        const KernelArg args[] = {KernelArg::pointer(*b), KernelArg::scalar<uint32_t>(n)};
        for (int rep = 0; rep < 10; ++rep) {
          if (auto st = k->launch({{n / 256}, {256}, 0}, args, &*s); !st.ok()) return st;
        }
        std::vector<float> out(n);
        if (auto st = b->copy_to_host(out.data(), n * 4, &*s); !st.ok()) return st;
        if (auto st = s->synchronize(); !st.ok()) return st;
        for (uint32_t i = 0; i < n; ++i) {
          if (out[i] != host[i] + 10.0f) {
            return absl::InternalError("thread " + std::to_string(t) + " element " +
                                       std::to_string(i) + " is wrong");
          }
        }
        return absl::OkStatus();
      }();
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(results[t].ok()) << results[t];
}

TEST_F(DriverGpuTest, FixtureHelperLoadsAKernel) {
  absl::StatusOr<Kernel> k = load_ptx_kernel(kAddOnePtx, "add_one");
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->name(), "add_one");
  EXPECT_FALSE(load_ptx_kernel(kAddOnePtx, "absent").ok());
}

TEST_F(DriverGpuTest, LoaderBuildsOnceThenHitsMemory) {
  KernelCache cache({true, ""});
  int builds = 0;
  auto build = [&]() -> absl::StatusOr<CacheEntry> {
    ++builds;
    return CacheEntry{kAddOnePtx, "add_one", "", "", false, ""};
  };
  const CacheKey key{"add_one_test", "sm_90"};
  absl::StatusOr<LoadedKernel> first = load_kernel(device(), cache, key, build);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<LoadedKernel> second = load_kernel(device(), cache, key, build);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(first->source, CacheSource::kBuilt);
  EXPECT_EQ(second->source, CacheSource::kMemory);
  EXPECT_EQ(builds, 1);
  // The default hook is the tree-signature checker: the built entry was verified by
  // it, and a memory hit reuses that verdict (the same entry, proven in this process)
  // instead of walking the same text again.
  EXPECT_EQ(verify_hook()->name(), "tree-signature");
  EXPECT_TRUE(first->entry->verified);
  EXPECT_TRUE(second->verify.verified);
  EXPECT_EQ(second->verify.hook_name, "memory cache");
  EXPECT_FALSE(second->verify.signature.empty());
  EXPECT_EQ(second->verify.signature, first->entry->signature);

  absl::StatusOr<Buffer> buf = device().alloc(4);
  ASSERT_TRUE(buf.ok());
  const float x = 2.5f;
  ASSERT_TRUE(buf->copy_from_host(&x, 4).ok());
  const KernelArg args[] = {KernelArg::pointer(*buf), KernelArg::scalar<uint32_t>(1)};
  ASSERT_TRUE(second->kernel.launch({{1}, {32}, 0}, args).ok());
  float y = 0;
  ASSERT_TRUE(buf->copy_to_host(&y, 4).ok());
  EXPECT_EQ(bits(y), bits(3.5f));
}

}  // namespace
}  // namespace fixbits::runtime
