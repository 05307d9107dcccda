// HipDriver: the Driver implementation over the HIP runtime, loaded with dlopen.
//
// Contract: as CudaDriver.h, for AMD GPUs. When libamdhip64.so cannot be opened it
// returns Unavailable("no HIP runtime found (<library>): <dlerror>"). Module images
// are HSA code objects (ELF bytes), which hipModuleLoadData takes; assembly text must
// be assembled first (codegen's job). DeviceInfo.arch stays empty on HIP. occupancy()
// is Unimplemented, naming the function, on a runtime without
// hipModuleOccupancyMaxActiveBlocksPerMultiprocessor.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/Driver.h"

namespace fixbits::runtime {

inline constexpr const char* kHipLibraryName = "libamdhip64.so";

absl::StatusOr<std::shared_ptr<Driver>> open_hip_driver(
    int ordinal, const std::string& library = kHipLibraryName);

}  // namespace fixbits::runtime
