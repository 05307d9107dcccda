// Device: one GPU, CUDA or HIP, with RAII modules, kernels, buffers, streams and
// events. The public runtime API; runtime::cuda() / runtime::hip() (Runtime.h) open one.
//
// Contract: every operation that can fail returns absl::Status(Or) with a sentence
// naming the call and the driver's error; nothing aborts. Objects keep their Device's
// driver alive (shared ownership), so destroying them in any order is safe. A Device
// and all objects made from it may be used from several threads; a single Buffer,
// Stream or Event is not meant to be mutated from two threads at once.
//
// Example:
//   auto dev = runtime::cuda();                         // StatusOr<shared_ptr<Device>>
//   auto mod = (*dev)->load_module(ptx);                // StatusOr<shared_ptr<Module>>
//   auto k = (*mod)->kernel("add_one");
//   auto buf = (*dev)->alloc(n * 4);  buf->copy_from_host(host, n * 4);
//   k->launch({.grid = {n / 256}, .block = {256}}, {KernelArg::pointer(*buf),
//             KernelArg::scalar<uint32_t>(n)});
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/DeviceInfo.h"

namespace fixbits::runtime {

class Driver;
class Stream;

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  uint32_t dynamic_shared_bytes = 0;
};

// One kernel parameter, held by value (up to 16 bytes): a device pointer or a scalar.
class KernelArg {
 public:
  template <typename T>
  static KernelArg scalar(T value) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 16,
                  "a kernel scalar must be trivially copyable and at most 16 bytes");
    KernelArg a;
    std::memcpy(a.bytes_, &value, sizeof(T));
    a.size_ = sizeof(T);
    return a;
  }
  static KernelArg device_pointer(uint64_t address) { return scalar<uint64_t>(address); }
  static KernelArg pointer(const class Buffer& buffer);

  const void* data() const { return bytes_; }
  size_t size() const { return size_; }

 private:
  alignas(16) unsigned char bytes_[16] = {};
  size_t size_ = 0;
};

// Device memory, freed on destruction.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&&) noexcept;
  Buffer& operator=(Buffer&&) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  uint64_t address() const { return address_; }
  size_t size() const { return size_; }

  // Copies `bytes` between host and the start of this buffer; `bytes` must not exceed
  // size(). With a stream the copy is asynchronous (host memory must stay alive).
  absl::Status copy_from_host(const void* src, size_t bytes, Stream* stream = nullptr);
  // The same into bytes [offset, offset + bytes) of this buffer, which must lie inside
  // size(): a patch of a few elements without touching the rest.
  absl::Status copy_from_host(size_t offset, const void* src, size_t bytes,
                              Stream* stream = nullptr);
  absl::Status copy_to_host(void* dst, size_t bytes, Stream* stream = nullptr) const;
  absl::Status fill_bytes(uint8_t value);

 private:
  friend class Device;
  Buffer(std::shared_ptr<Driver> driver, uint64_t address, size_t size)
      : driver_(std::move(driver)), address_(address), size_(size) {}
  void release();
  std::shared_ptr<Driver> driver_;
  uint64_t address_ = 0;
  size_t size_ = 0;
};

class Stream {
 public:
  Stream(Stream&&) noexcept;
  Stream& operator=(Stream&&) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  absl::Status synchronize();
  void* handle() const { return handle_; }

 private:
  friend class Device;
  Stream(std::shared_ptr<Driver> driver, void* handle)
      : driver_(std::move(driver)), handle_(handle) {}
  void release();
  std::shared_ptr<Driver> driver_;
  void* handle_ = nullptr;
};

class Event {
 public:
  Event(Event&&) noexcept;
  Event& operator=(Event&&) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();

  // Records on `stream` (null: the default stream).
  absl::Status record(Stream* stream = nullptr);
  absl::Status synchronize();
  // Milliseconds from `start` to this event; both must have been recorded.
  absl::StatusOr<float> elapsed_ms_since(const Event& start) const;

 private:
  friend class Device;
  Event(std::shared_ptr<Driver> driver, void* handle)
      : driver_(std::move(driver)), handle_(handle) {}
  void release();
  std::shared_ptr<Driver> driver_;
  void* handle_ = nullptr;
};

class Module;

// A kernel entry of a loaded module; keeps the module loaded.
class Kernel {
 public:
  const std::string& name() const { return name_; }

  // The byte size of each parameter, when the driver can say (CUDA 12.4+); empty
  // otherwise, and then launch() cannot check the arguments.
  const std::vector<size_t>& param_sizes() const { return param_sizes_; }
  bool params_known() const { return params_known_; }

  // Validates the configuration against the device limits and the arguments against
  // the kernel's parameters (count and byte sizes, where known), raises the dynamic
  // shared memory limit when needed, then launches on `stream` (null: default stream).
  absl::Status launch(const LaunchConfig& config, absl::Span<const KernelArg> args,
                      Stream* stream = nullptr) const;

  // What the driver's occupancy calculator says of this launch configuration (blocks an
  // SM, registers, clusters the device holds; DeviceInfo.h), after the same checks and
  // shared-memory raise as launch(); Unimplemented where the driver has no calculator.
  absl::StatusOr<Occupancy> occupancy(const LaunchConfig& config) const;

 private:
  friend class Module;
  // launch()'s and occupancy()'s shared part: the configuration checked against the
  // device's limits and the dynamic shared limit raised where the launch needs it.
  absl::Status prepare(const LaunchConfig& config, const char* caller) const;
  Kernel(std::shared_ptr<const Module> module, void* function, std::string name)
      : module_(std::move(module)), function_(function), name_(std::move(name)) {}
  std::shared_ptr<const Module> module_;
  void* function_ = nullptr;
  std::string name_;
  std::vector<size_t> param_sizes_;
  // The kernel's static shared bytes, which count against the per-block limit with the
  // launch's dynamic bytes (0 where the driver cannot say).
  uint32_t static_shared_bytes_ = 0;
  // The dynamic shared limit this kernel's function was raised to (0: never), shared by
  // the kernel's copies, so a launch calls the driver only to raise it further, not on
  // every launch past 48 KiB.
  std::shared_ptr<std::atomic<uint32_t>> raised_shared_ = std::make_shared<std::atomic<uint32_t>>(0);
  bool params_known_ = false;
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Looks up an entry point; NotFound names the entry when it is absent.
  absl::StatusOr<Kernel> kernel(const std::string& entry) const;

 private:
  friend class Device;
  friend class Kernel;
  struct Token {};

 public:
  Module(Token, std::shared_ptr<Driver> driver, void* handle)
      : driver_(std::move(driver)), handle_(handle) {}

 private:
  std::shared_ptr<Driver> driver_;
  void* handle_ = nullptr;
};

class Device {
 public:
  explicit Device(std::shared_ptr<Driver> driver);

  const DeviceInfo& info() const;

  // Loads PTX text or a cubin (CUDA), or an HSA code object (HIP). Empty images are
  // rejected.
  absl::StatusOr<std::shared_ptr<Module>> load_module(std::string_view image) const;
  // The driver's compiled image of a module text, for load_module to take without
  // compiling it again (Driver::compile_module; Unimplemented where there is none).
  absl::StatusOr<std::string> compile_module(std::string_view text) const;
  // What a compiled image is good for: this device's architecture and driver version
  // ("sm_90 driver 13000"). An image made under another identity is not loaded.
  std::string image_identity() const;
  // Allocates `bytes` (> 0) of device memory.
  absl::StatusOr<Buffer> alloc(size_t bytes) const;
  absl::StatusOr<Stream> create_stream() const;
  absl::StatusOr<Event> create_event() const;
  // Waits for all work on the device.
  absl::Status synchronize() const;

 private:
  std::shared_ptr<Driver> driver_;
};

}  // namespace fixbits::runtime
