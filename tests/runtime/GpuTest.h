// GpuTest: the shared entry for GPU tests. A test fixture that opens CUDA device 0
// through runtime::cuda(), or skips the test with the reason when there is none:
//   [SKIP] no CUDA device: no CUDA driver found (libcuda.so.1): libcuda.so.1: cannot ...
// Invariant: inside a test body of a GpuTest-derived fixture, device() is a working
// device (the test was skipped otherwise). Use cuda_device_or_skip_reason() outside
// fixtures. Tests using it are named *_gpu_test.cpp (ctest label gpu).
#pragma once

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "runtime/Runtime.h"

namespace fixbits::runtime::testing {

// The device, or a status whose message is the reason to skip.
inline absl::StatusOr<std::shared_ptr<Device>> cuda_device_or_skip_reason() {
  absl::StatusOr<std::shared_ptr<Device>> dev = runtime::cuda(0);
  if (!dev.ok()) return dev.status();
  if (*dev == nullptr) return absl::InternalError("runtime::cuda() returned a null device");
  return dev;
}

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::shared_ptr<Device>> dev = cuda_device_or_skip_reason();
    if (!dev.ok()) GTEST_SKIP() << "[SKIP] no CUDA device: " << dev.status().message();
    device_ = *std::move(dev);
  }

  Device& device() { return *device_; }
  // The same device as the shared handle jit runners keep.
  const std::shared_ptr<Device>& shared_device() { return device_; }
  const DeviceInfo& info() { return device_->info(); }

  // Loads `ptx` and looks up `entry`; the returned Kernel keeps its module loaded.
  absl::StatusOr<Kernel> load_ptx_kernel(std::string_view ptx, const std::string& entry) {
    absl::StatusOr<std::shared_ptr<Module>> mod = device_->load_module(ptx);
    if (!mod.ok()) return mod.status();
    return (*mod)->kernel(entry);
  }

 private:
  std::shared_ptr<Device> device_;
};

}  // namespace fixbits::runtime::testing
