// Runtime: the process-wide entry points to the GPU: runtime::cuda() and
// runtime::hip() return the Device for an ordinal, opening it on first use.
//
// Contract: each (platform, ordinal) is opened once per process; the result, device
// or error, is remembered and returned to every later caller, under a lock (safe from
// any thread). Without a driver the error reads
//   "no CUDA driver found (libcuda.so.1): <dlerror>"   (kUnavailable)
// so a caller (or a GPU test) can print it as the reason it skipped.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "runtime/Device.h"

namespace fixbits::runtime {

absl::StatusOr<std::shared_ptr<Device>> cuda(int ordinal = 0);
absl::StatusOr<std::shared_ptr<Device>> hip(int ordinal = 0);

}  // namespace fixbits::runtime
