// Cupti: runtime profiling through NVIDIA's CUPTI activity API (dlopen'ed), the first
// instrument of reference §4: which kernels a library call launched, over what grid,
// and how many memsets it issued. It is what names a GEMM's family (split-K launches
// a reduce kernel after the GEMM; the vector path launches dot/gemv kernels).
//
// Contract:
//   * KernelRecorder::start() opens libcupti.so.13 (then the CUDA install's
//     extras/CUPTI/lib64 and lib64 copies, then .so.12), registers the buffer
//     callbacks and enables the CONCURRENT_KERNEL and MEMSET activity kinds. Without
//     the library: Unavailable("no CUPTI found (libcupti.so.13): <dlerror>").
//   * One recorder at a time per process (CUPTI's callbacks are process-wide): a
//     second start() before stop() is FailedPrecondition.
//   * stop() synchronizes nothing: the caller makes sure the work finished (e.g.
//     Device::synchronize()); stop() flushes CUPTI's buffers, disables the kinds and
//     returns every record seen since start(), in completion order.
//   * Records are read at the field offsets every CUpti_ActivityKernel version since
//     4 shares (kind, ..., grid, block, shared memory, correlation id, name); a record
//     whose kind or grid does not look like a kernel is counted in `unparsed`, never
//     guessed at.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace fixbits::runtime {

struct KernelRecord {
  std::string name;          // mangled, as the driver knows it
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  int32_t static_shared = 0, dynamic_shared = 0;  // bytes
  uint32_t stream_id = 0;
  uint64_t duration_ns = 0;
};

struct LaunchProfile {
  std::vector<KernelRecord> kernels;
  int memsets = 0;
  uint64_t memset_bytes = 0;
  int unparsed = 0;  // records of an enabled kind whose layout did not check out
};

// "name grid=(x,y,z) block=(x,y,z) smem=s+d"; one line per kernel, then memsets.
std::string to_string(const LaunchProfile& p);

class KernelRecorder {
 public:
  static absl::StatusOr<std::unique_ptr<KernelRecorder>> start(
      const std::vector<std::string>& library_paths = {});
  ~KernelRecorder();  // stops recording if stop() was not called
  KernelRecorder(const KernelRecorder&) = delete;
  KernelRecorder& operator=(const KernelRecorder&) = delete;

  absl::StatusOr<LaunchProfile> stop();

  struct Impl;

 private:
  explicit KernelRecorder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fixbits::runtime
