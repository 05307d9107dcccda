// PtxKernel: one entry of a hand-written PTX image (PitchedCopy, ByteScatter), loaded
// on a CUDA device.
//
// Contract: load_ptx_kernel(device, ptx, entry, who) loads `ptx` as a module on
// `device` and returns its kernel `entry`. A device of another platform (HIP) is
// InvalidArgument naming `who` ("PitchedCopy::load") and the platform, before anything
// is loaded; a module or entry the driver refuses passes its Status through.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "runtime/Device.h"

namespace fixbits::runtime {

absl::StatusOr<Kernel> load_ptx_kernel(const Device& device, std::string_view ptx,
                                       const std::string& entry, std::string_view who);

}  // namespace fixbits::runtime
