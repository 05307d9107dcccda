// cache_bench: what the kernel cache saves, per lookup path: a memory hit, a disk hit
// (read + checksum + decode), a build-and-write (atomic write with fsync), the FNV-1a
// checksum alone, and -- when a CUDA device is present -- the driver's module load of
// the same PTX (what a memory hit still pays when it loads). Entry size is the
// argument (bytes of kernel text). Run: build/bench/cache_bench --benchmark_format=json
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <string>

#include "benchmark/benchmark.h"
#include "runtime/Fnv1a.h"
#include "runtime/KernelCache.h"
#include "runtime/Runtime.h"

namespace fixbits::runtime {
namespace {

std::string make_temp_dir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "fixbits_bench_XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) return "";
  return pattern;
}

CacheEntry entry_of_size(int64_t bytes) {
  CacheEntry e;
  e.text.reserve(bytes);
  for (int64_t i = 0; i < bytes; ++i) e.text.push_back(static_cast<char>('a' + i % 26));
  e.entry_name = "kernel";
  e.metadata = "grid=132";
  return e;
}

void BM_MemoryHit(benchmark::State& state) {
  KernelCache cache({true, ""});
  const CacheEntry e = entry_of_size(state.range(0));
  const CacheKey key{"prog", "sm_90a"};
  (void)cache.get_or_build(key, [&] { return e; });
  for (auto _ : state) {
    absl::StatusOr<CacheHit> hit = cache.get_or_build(key, [&] { return e; });
    if (!hit.ok() || hit->source != CacheSource::kMemory) state.SkipWithError("expected a memory hit");
    benchmark::DoNotOptimize(hit);
  }
}

void BM_DiskHit(benchmark::State& state) {
  const std::string dir = make_temp_dir();
  if (dir.empty()) return state.SkipWithError("mkdtemp failed");
  const CacheEntry e = entry_of_size(state.range(0));
  const CacheKey key{"prog", "sm_90a"};
  KernelCache cache({true, dir});
  (void)cache.get_or_build(key, [&] { return e; });
  for (auto _ : state) {
    cache.clear_memory();
    absl::StatusOr<CacheHit> hit = cache.get_or_build(key, [&] { return e; });
    if (!hit.ok() || hit->source != CacheSource::kDisk) state.SkipWithError("expected a disk hit");
    benchmark::DoNotOptimize(hit);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
  std::filesystem::remove_all(dir);
}

void BM_BuildAndWrite(benchmark::State& state) {
  const std::string dir = make_temp_dir();
  if (dir.empty()) return state.SkipWithError("mkdtemp failed");
  const CacheEntry e = entry_of_size(state.range(0));
  KernelCache cache({true, dir});
  int64_t n = 0;
  for (auto _ : state) {
    const CacheKey key{"prog" + std::to_string(n++), "sm_90a"};
    absl::StatusOr<CacheHit> hit = cache.get_or_build(key, [&] { return e; });
    if (!hit.ok() || hit->source != CacheSource::kBuilt) state.SkipWithError("expected a build");
  }
  if (cache.stats().disk_errors != 0) state.SkipWithError(cache.last_disk_error().c_str());
  std::filesystem::remove_all(dir);
}

void BM_Fnv1a(benchmark::State& state) {
  const std::string text = entry_of_size(state.range(0)).text;
  for (auto _ : state) benchmark::DoNotOptimize(fnv1a64(text));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}

constexpr const char* kPtx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry noop(.param .u64 p) { ret; }
)";

void BM_DriverModuleLoadRepeat(benchmark::State& state) {
  absl::StatusOr<std::shared_ptr<Device>> dev = cuda();
  if (!dev.ok()) return state.SkipWithError(std::string(dev.status().message()).c_str());
  for (auto _ : state) {
    absl::StatusOr<std::shared_ptr<Module>> m = (*dev)->load_module(kPtx);
    if (!m.ok()) return state.SkipWithError(std::string(m.status().message()).c_str());
  }
}

BENCHMARK(BM_MemoryHit)->Arg(16 << 10)->Arg(256 << 10);
BENCHMARK(BM_DiskHit)->Arg(16 << 10)->Arg(256 << 10);
BENCHMARK(BM_BuildAndWrite)->Arg(16 << 10)->Arg(256 << 10);
BENCHMARK(BM_Fnv1a)->Arg(256 << 10);
BENCHMARK(BM_DriverModuleLoadRepeat)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace fixbits::runtime

BENCHMARK_MAIN();
