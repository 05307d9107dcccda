// PtxKernel: see PtxKernel.h.
#include "runtime/PtxKernel.h"

#include <memory>

#include "absl/strings/str_format.h"

namespace fixbits::runtime {

absl::StatusOr<Kernel> load_ptx_kernel(const Device& device, std::string_view ptx,
                                       const std::string& entry, std::string_view who) {
  if (device.info().platform != Platform::kCuda) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s was given a %s device; its kernel is PTX, for CUDA devices only.", who,
        platform_name(device.info().platform)));
  }
  absl::StatusOr<std::shared_ptr<Module>> module = device.load_module(ptx);
  if (!module.ok()) return module.status();
  return (*module)->kernel(entry);
}

}  // namespace fixbits::runtime
