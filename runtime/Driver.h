// Driver: the internal seam between the public Device API (Device.h) and one GPU
// API (CUDA driver or HIP runtime) bound to one device.
//
// Contract: a Driver is created already bound to a device and a context (CUDA: the
// device's primary context, retained for the Driver's lifetime), is safe to call from
// any thread (each call makes its context current on the calling thread first), and
// never aborts: every failure is a Status from driver_error(). Handles are opaque
// pointers owned by the caller of the create/load function, who must pass them back
// to the matching destroy/unload function exactly once. Device.h wraps them in RAII.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/DeviceInfo.h"

namespace fixbits::runtime {

class Driver {
 public:
  virtual ~Driver() = default;

  virtual const DeviceInfo& info() const = 0;

  // `image` is PTX text (CUDA; NUL-terminated copy made internally) or an HSA code
  // object (HIP). A JIT failure's log is part of the Status.
  virtual absl::StatusOr<void*> module_load(std::string_view image) = 0;
  virtual absl::Status module_unload(void* module) = 0;
  // The driver's compiled form of a module text (CUDA: the cubin its JIT makes of a PTX
  // text for this device), which module_load() then takes without compiling it again.
  // Unimplemented where the driver keeps none (HIP's image is already compiled).
  virtual absl::StatusOr<std::string> compile_module(std::string_view text) {
    (void)text;
    return absl::UnimplementedError("This driver keeps no compiled module image.");
  }
  virtual absl::StatusOr<void*> module_function(void* module, const std::string& name) = 0;

  virtual absl::StatusOr<uint64_t> mem_alloc(size_t bytes) = 0;
  virtual absl::Status mem_free(uint64_t ptr) = 0;
  // `stream` null: synchronous copy. Otherwise asynchronous on that stream.
  virtual absl::Status copy_to_device(uint64_t dst, const void* src, size_t bytes,
                                      void* stream) = 0;
  virtual absl::Status copy_to_host(void* dst, uint64_t src, size_t bytes,
                                    void* stream) = 0;
  virtual absl::Status memset8(uint64_t dst, uint8_t value, size_t bytes) = 0;

  virtual absl::StatusOr<void*> stream_create() = 0;
  virtual absl::Status stream_destroy(void* stream) = 0;
  virtual absl::Status stream_synchronize(void* stream) = 0;

  virtual absl::StatusOr<void*> event_create() = 0;
  virtual absl::Status event_destroy(void* event) = 0;
  virtual absl::Status event_record(void* event, void* stream) = 0;
  virtual absl::Status event_synchronize(void* event) = 0;
  virtual absl::StatusOr<float> event_elapsed_ms(void* start, void* stop) = 0;

  // The byte size of each kernel parameter, in order; Unimplemented when the driver
  // cannot say (then launch arguments are passed unchecked).
  virtual absl::StatusOr<std::vector<size_t>> param_sizes(void* function) = 0;
  // The function's statically declared shared memory, in bytes (it counts against the
  // same per-block limit as the dynamic bytes a launch asks for); Unimplemented when the
  // driver cannot say (then it is taken as 0).
  virtual absl::StatusOr<uint32_t> static_shared_bytes(void* function) = 0;
  // Raises the function's dynamic shared memory limit (CUDA opt-in: needed once the
  // static and dynamic bytes together pass 48 KiB).
  virtual absl::Status set_max_dynamic_shared(void* function, uint32_t bytes) = 0;
  // The occupancy calculator's answer (DeviceInfo.h's Occupancy) for `function` launched
  // with this grid, block and dynamic shared bytes (the dynamic limit already raised
  // where it must be). Unimplemented where the driver has no calculator.
  virtual absl::StatusOr<Occupancy> occupancy(void* function, const uint32_t grid[3],
                                              const uint32_t block[3],
                                              uint32_t dynamic_shared_bytes) {
    (void)function, (void)grid, (void)block, (void)dynamic_shared_bytes;
    return absl::UnimplementedError("This driver has no occupancy calculator.");
  }
  // `args[i]` points at the i-th kernel parameter's value.
  virtual absl::Status launch(void* function, const uint32_t grid[3],
                              const uint32_t block[3], uint32_t dynamic_shared_bytes,
                              void* stream, void** args) = 0;
  virtual absl::Status synchronize() = 0;
};

}  // namespace fixbits::runtime
