// DeviceInfo: what a GPU reports about itself, queried once when a Device opens.
//
// Invariant: filled only from driver queries (never guessed); fields a platform cannot
// report stay at their zero/empty value and say so in the comment.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fixbits::runtime {

enum class Platform : uint8_t { kCuda, kHip };

std::string_view platform_name(Platform p);  // "CUDA" or "HIP"

struct DeviceInfo {
  Platform platform = Platform::kCuda;
  int ordinal = 0;                   // index among the platform's devices
  std::string name;                  // e.g. "NVIDIA H200"
  int multiprocessor_count = 0;      // SMs (CUDA) / compute units (HIP)
  int cc_major = 0;                  // compute capability (HIP: as hipDeviceComputeCapability says)
  int cc_minor = 0;
  uint64_t total_memory_bytes = 0;
  int warp_size = 0;                 // 32 on NVIDIA, 64 or 32 on AMD
  int max_threads_per_block = 0;
  int max_shared_bytes_per_block = 0;        // without opt-in
  int max_shared_bytes_per_block_optin = 0;  // CUDA opt-in limit; HIP: same as above
  int driver_version = 0;            // e.g. 13000 for CUDA 13.0
  // "sm_90" on CUDA (from the compute capability). Empty on HIP: the gfx name is only
  // in hipDeviceProp_t, whose layout changes between ROCm releases.
  std::string arch;
};

}  // namespace fixbits::runtime
