// DriverError: turns a failed CUDA driver / HIP call into a readable absl::Status.
//
// Contract: every driver or HIP call in runtime/ that can fail goes through
// driver_error(); the message is one sentence naming the API, the call, the numeric
// code, the code's name and the driver's description, e.g.
//   "CUDA driver call cuModuleLoadDataEx failed with CUDA_ERROR_INVALID_PTX (218):
//    a PTX JIT compilation failed."
// The absl status code is chosen from the numeric code (classify_driver_error), so
// callers can branch on "out of memory" or "no device" without parsing text.
// Pure functions: no driver needed, so the mapping is testable on any machine.
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace fixbits::runtime {

enum class DriverApi { kCuda, kHip };

// "CUDA driver" or "HIP runtime".
std::string_view driver_api_name(DriverApi api);

// The absl code for a driver result code. CUDA driver and HIP share the numbers
// this looks at (1 invalid value, 2 out of memory, 3 not initialized, 100 no device,
// 101 invalid device, 200/209/218/222 bad image or PTX, 500 not found, 700+ faults
// during a kernel). Unknown codes map to kInternal.
absl::StatusCode classify_driver_error(int code);

// The Status for `call` having returned `code`. `name` and `description` come from
// cuGetErrorName/cuGetErrorString (hipGetErrorName/hipGetErrorString); either may be
// null or empty, in which case the message says the driver gave none. `code` 0 is a
// caller bug and yields kInternal saying so. `detail`, when not empty, is appended as
// a second sentence (e.g. the PTX JIT error log).
absl::Status driver_error(DriverApi api, std::string_view call, int code,
                          const char* name, const char* description,
                          std::string_view detail = {});

}  // namespace fixbits::runtime
