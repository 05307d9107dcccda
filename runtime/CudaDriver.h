// CudaDriver: the Driver implementation over the CUDA driver API, loaded with dlopen.
//
// Contract: open_cuda_driver() never needs CUDA at build time. When the library cannot
// be opened it returns Unavailable("no CUDA driver found (<library>): <dlerror>");
// when a symbol is missing it names the symbol. The driver binds device `ordinal`'s
// primary context (cuDevicePrimaryCtxRetain), so other libraries (cuBLAS) share it;
// it releases the context when destroyed. `library` exists so tests can point the
// loader at a library that does not exist; production code uses the default.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/Driver.h"

namespace fixbits::runtime {

inline constexpr const char* kCudaLibraryName = "libcuda.so.1";

absl::StatusOr<std::shared_ptr<Driver>> open_cuda_driver(
    int ordinal, const std::string& library = kCudaLibraryName);

// Number of CUDA devices the driver reports; an error when the driver is absent or
// cuInit fails (CUDA_ERROR_NO_DEVICE gives Unavailable).
absl::StatusOr<int> cuda_device_count(const std::string& library = kCudaLibraryName);

}  // namespace fixbits::runtime
