// DriverError: see DriverError.h. Example:
//   driver_error(DriverApi::kCuda, "cuMemAlloc_v2", 2, "CUDA_ERROR_OUT_OF_MEMORY",
//                "out of memory")
//   -> ResourceExhausted("CUDA driver call cuMemAlloc_v2 failed with
//      CUDA_ERROR_OUT_OF_MEMORY (2): out of memory.")
#include "runtime/DriverError.h"

#include <string>

#include "absl/strings/str_format.h"

namespace fixbits::runtime {

std::string_view driver_api_name(DriverApi api) {
  return api == DriverApi::kCuda ? "CUDA driver" : "HIP runtime";
}

absl::StatusCode classify_driver_error(int code) {
  switch (code) {
    case 1:  // CUDA_ERROR_INVALID_VALUE / hipErrorInvalidValue
      return absl::StatusCode::kInvalidArgument;
    case 2:  // CUDA_ERROR_OUT_OF_MEMORY / hipErrorOutOfMemory
      return absl::StatusCode::kResourceExhausted;
    case 3:    // CUDA_ERROR_NOT_INITIALIZED
    case 4:    // CUDA_ERROR_DEINITIALIZED
    case 100:  // CUDA_ERROR_NO_DEVICE / hipErrorNoDevice
    case 101:  // CUDA_ERROR_INVALID_DEVICE
      return absl::StatusCode::kUnavailable;
    case 200:  // CUDA_ERROR_INVALID_IMAGE
    case 209:  // CUDA_ERROR_NO_BINARY_FOR_GPU
    case 218:  // CUDA_ERROR_INVALID_PTX
    case 222:  // CUDA_ERROR_UNSUPPORTED_PTX_VERSION
    case 300:  // CUDA_ERROR_INVALID_SOURCE
      return absl::StatusCode::kInvalidArgument;
    case 500:  // CUDA_ERROR_NOT_FOUND (e.g. no such kernel in a module)
      return absl::StatusCode::kNotFound;
    case 701:  // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
      return absl::StatusCode::kResourceExhausted;
    case 700:  // CUDA_ERROR_ILLEGAL_ADDRESS
    case 702:  // CUDA_ERROR_LAUNCH_TIMEOUT
    case 719:  // CUDA_ERROR_LAUNCH_FAILED
      return absl::StatusCode::kAborted;
    default:
      return absl::StatusCode::kInternal;
  }
}

absl::Status driver_error(DriverApi api, std::string_view call, int code,
                          const char* name, const char* description,
                          std::string_view detail) {
  if (code == 0) {
    return absl::InternalError(absl::StrFormat(
        "internal invariant broken: driver_error() called for %s call %s that "
        "succeeded.",
        driver_api_name(api), call));
  }
  std::string code_name =
      (name != nullptr && name[0] != '\0') ? std::string(name) : "an unnamed error";
  std::string desc = (description != nullptr && description[0] != '\0')
                         ? std::string(description)
                         : "the driver gave no description";
  while (!desc.empty() && (desc.back() == '.' || desc.back() == '\n')) desc.pop_back();
  std::string msg = absl::StrFormat("%s call %s failed with %s (%d): %s.",
                                    driver_api_name(api), call, code_name, code, desc);
  if (!detail.empty()) {
    msg += " ";
    msg.append(detail.data(), detail.size());
  }
  return absl::Status(classify_driver_error(code), msg);
}

}  // namespace fixbits::runtime
