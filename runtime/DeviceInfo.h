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

// How many of one kernel's blocks (and, for a cluster kernel, clusters) the driver says
// fit at once for one launch configuration: the occupancy calculator's answer, not a
// measurement (placement at run time may reach fewer; the CUDA driver API says so).
struct Occupancy {
  int blocks_per_multiprocessor = 0;  // resident blocks an SM / compute unit holds
  int registers_per_thread = 0;       // the compiled kernel's (0 where the driver cannot say)
  // The compiled kernel's local memory a thread (register spills and local arrays; 0
  // where there is none or the driver cannot say).
  int local_bytes_per_thread = 0;
  int cluster_blocks = 0;             // blocks a cluster, from the kernel; 0: no cluster
  // Clusters the whole device holds at once (CUDA 12.0+ drivers); 0 for no cluster or
  // where the driver cannot say.
  int max_active_clusters = 0;
};

}  // namespace fixbits::runtime
