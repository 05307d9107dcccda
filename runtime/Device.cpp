// Device: RAII wrappers over a Driver (see Device.h). Each wrapper owns one driver
// handle and hands it back exactly once: on destruction or when moved-over. Errors in
// destructors cannot be returned and are dropped (the driver reports them again on
// the next checked call, e.g. a sticky launch failure).
#include "runtime/Device.h"

#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "runtime/Driver.h"

namespace fixbits::runtime {

std::string_view platform_name(Platform p) {
  return p == Platform::kCuda ? "CUDA" : "HIP";
}

KernelArg KernelArg::pointer(const Buffer& buffer) {
  return device_pointer(buffer.address());
}

// ---- Buffer -------------------------------------------------------------------
Buffer::Buffer(Buffer&& o) noexcept
    : driver_(std::move(o.driver_)), address_(std::exchange(o.address_, 0)),
      size_(std::exchange(o.size_, 0)) {}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    release();
    driver_ = std::move(o.driver_);
    address_ = std::exchange(o.address_, 0);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

Buffer::~Buffer() { release(); }

void Buffer::release() {
  if (driver_ && address_ != 0) (void)driver_->mem_free(address_);
  address_ = 0;
  size_ = 0;
}

static absl::Status check_copy(const char* what, uint64_t address, size_t bytes,
                               size_t size, const void* host) {
  if (address == 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("Buffer::%s was called on an empty (moved-from or default) buffer.", what));
  }
  if (bytes > size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Buffer::%s of %d bytes exceeds the buffer's size of %d bytes.", what, bytes, size));
  }
  if (host == nullptr && bytes > 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("Buffer::%s was given a null host pointer.", what));
  }
  return absl::OkStatus();
}

absl::Status Buffer::copy_from_host(const void* src, size_t bytes, Stream* stream) {
  if (auto s = check_copy("copy_from_host", address_, bytes, size_, src); !s.ok()) return s;
  if (bytes == 0) return absl::OkStatus();
  return driver_->copy_to_device(address_, src, bytes, stream ? stream->handle() : nullptr);
}

absl::Status Buffer::copy_from_host(size_t offset, const void* src, size_t bytes,
                                    Stream* stream) {
  if (auto s = check_copy("copy_from_host", address_, 0, size_, src); !s.ok()) return s;
  if (offset > size_ || bytes > size_ - offset) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Buffer::copy_from_host of %d bytes at offset %d exceeds the buffer's size of %d bytes.",
        bytes, offset, size_));
  }
  if (src == nullptr && bytes > 0) {
    return absl::InvalidArgumentError("Buffer::copy_from_host was given a null host pointer.");
  }
  if (bytes == 0) return absl::OkStatus();
  return driver_->copy_to_device(address_ + offset, src, bytes,
                                 stream ? stream->handle() : nullptr);
}

absl::Status Buffer::copy_to_host(void* dst, size_t bytes, Stream* stream) const {
  if (auto s = check_copy("copy_to_host", address_, bytes, size_, dst); !s.ok()) return s;
  if (bytes == 0) return absl::OkStatus();
  return driver_->copy_to_host(dst, address_, bytes, stream ? stream->handle() : nullptr);
}

absl::Status Buffer::fill_bytes(uint8_t value) {
  if (address_ == 0) {
    return absl::FailedPreconditionError(
        "Buffer::fill_bytes was called on an empty (moved-from or default) buffer.");
  }
  return driver_->memset8(address_, value, size_);
}

// ---- Stream -------------------------------------------------------------------
Stream::Stream(Stream&& o) noexcept
    : driver_(std::move(o.driver_)), handle_(std::exchange(o.handle_, nullptr)) {}

Stream& Stream::operator=(Stream&& o) noexcept {
  if (this != &o) {
    release();
    driver_ = std::move(o.driver_);
    handle_ = std::exchange(o.handle_, nullptr);
  }
  return *this;
}

Stream::~Stream() { release(); }

void Stream::release() {
  if (driver_ && handle_ != nullptr) (void)driver_->stream_destroy(handle_);
  handle_ = nullptr;
}

absl::Status Stream::synchronize() {
  if (handle_ == nullptr) {
    return absl::FailedPreconditionError("Stream::synchronize was called on a moved-from stream.");
  }
  return driver_->stream_synchronize(handle_);
}

// ---- Event --------------------------------------------------------------------
Event::Event(Event&& o) noexcept
    : driver_(std::move(o.driver_)), handle_(std::exchange(o.handle_, nullptr)) {}

Event& Event::operator=(Event&& o) noexcept {
  if (this != &o) {
    release();
    driver_ = std::move(o.driver_);
    handle_ = std::exchange(o.handle_, nullptr);
  }
  return *this;
}

Event::~Event() { release(); }

void Event::release() {
  if (driver_ && handle_ != nullptr) (void)driver_->event_destroy(handle_);
  handle_ = nullptr;
}

absl::Status Event::record(Stream* stream) {
  if (handle_ == nullptr) {
    return absl::FailedPreconditionError("Event::record was called on a moved-from event.");
  }
  return driver_->event_record(handle_, stream ? stream->handle() : nullptr);
}

absl::Status Event::synchronize() {
  if (handle_ == nullptr) {
    return absl::FailedPreconditionError("Event::synchronize was called on a moved-from event.");
  }
  return driver_->event_synchronize(handle_);
}

absl::StatusOr<float> Event::elapsed_ms_since(const Event& start) const {
  if (handle_ == nullptr || start.handle_ == nullptr) {
    return absl::FailedPreconditionError(
        "Event::elapsed_ms_since was called with a moved-from event.");
  }
  return driver_->event_elapsed_ms(start.handle_, handle_);
}

// ---- Module and Kernel ----------------------------------------------------------
Module::~Module() {
  if (driver_ && handle_ != nullptr) (void)driver_->module_unload(handle_);
}

absl::StatusOr<Kernel> Module::kernel(const std::string& entry) const {
  if (entry.empty()) {
    return absl::InvalidArgumentError("Module::kernel was given an empty entry name.");
  }
  absl::StatusOr<void*> fn = driver_->module_function(handle_, entry);
  if (!fn.ok()) {
    return absl::Status(fn.status().code(),
                        absl::StrFormat("The module has no usable kernel entry '%s': %s",
                                        entry, fn.status().message()));
  }
  Kernel k(shared_from_this(), *fn, entry);
  absl::StatusOr<std::vector<size_t>> sizes = driver_->param_sizes(*fn);
  if (sizes.ok()) {
    k.param_sizes_ = *std::move(sizes);
    k.params_known_ = true;
  } else if (!absl::IsUnimplemented(sizes.status())) {
    return sizes.status();
  }
  absl::StatusOr<uint32_t> fixed = driver_->static_shared_bytes(*fn);
  if (fixed.ok()) {
    k.static_shared_bytes_ = *fixed;
  } else if (!absl::IsUnimplemented(fixed.status())) {
    return fixed.status();
  }
  return k;
}

static absl::Status check_dim(const char* what, const Dim3& d) {
  if (d.x == 0 || d.y == 0 || d.z == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "The launch %s (%d, %d, %d) has a zero dimension; every dimension must be at least 1.",
        what, d.x, d.y, d.z));
  }
  return absl::OkStatus();
}

absl::Status Kernel::prepare(const LaunchConfig& config, const char* caller) const {
  if (function_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrFormat("Kernel::%s was called on an empty kernel.", caller));
  }
  if (auto s = check_dim("grid", config.grid); !s.ok()) return s;
  if (auto s = check_dim("block", config.block); !s.ok()) return s;
  const DeviceInfo& info = module_->driver_->info();
  const uint64_t threads =
      uint64_t{config.block.x} * config.block.y * config.block.z;
  if (info.max_threads_per_block > 0 && threads > uint64_t(info.max_threads_per_block)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Kernel '%s': the block (%d, %d, %d) has %d threads, more than the device's "
        "limit of %d threads per block.",
        name_, config.block.x, config.block.y, config.block.z, threads,
        info.max_threads_per_block));
  }
  // The static and dynamic shared bytes share one per-block limit: the opt-in one, and
  // past the default (48 KiB on CUDA) only once the dynamic limit is raised, even when
  // the dynamic bytes alone are under it (a launch of 48 KiB dynamic plus any static
  // bytes is refused with CUDA_ERROR_INVALID_VALUE otherwise).
  const uint64_t shared = uint64_t{static_shared_bytes_} + config.dynamic_shared_bytes;
  if (info.max_shared_bytes_per_block_optin > 0 &&
      shared > uint64_t(info.max_shared_bytes_per_block_optin)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Kernel '%s': %d bytes of dynamic shared memory (and %d static) exceed the device's "
        "limit of %d bytes per block.",
        name_, config.dynamic_shared_bytes, static_shared_bytes_,
        info.max_shared_bytes_per_block_optin));
  }
  if (info.max_shared_bytes_per_block > 0 && config.dynamic_shared_bytes > 0 &&
      shared > uint64_t(info.max_shared_bytes_per_block) &&
      config.dynamic_shared_bytes > raised_shared_->load(std::memory_order_relaxed)) {
    if (auto s = module_->driver_->set_max_dynamic_shared(function_, config.dynamic_shared_bytes);
        !s.ok()) {
      return s;
    }
    // Two launches racing here both raise it; the larger value stays recorded.
    uint32_t seen = raised_shared_->load(std::memory_order_relaxed);
    while (seen < config.dynamic_shared_bytes &&
           !raised_shared_->compare_exchange_weak(seen, config.dynamic_shared_bytes)) {
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Occupancy> Kernel::occupancy(const LaunchConfig& config) const {
  if (absl::Status s = prepare(config, "occupancy"); !s.ok()) return s;
  const uint32_t grid[3] = {config.grid.x, config.grid.y, config.grid.z};
  const uint32_t block[3] = {config.block.x, config.block.y, config.block.z};
  return module_->driver_->occupancy(function_, grid, block, config.dynamic_shared_bytes);
}

absl::Status Kernel::launch(const LaunchConfig& config, absl::Span<const KernelArg> args,
                            Stream* stream) const {
  if (absl::Status s = prepare(config, "launch"); !s.ok()) return s;
  if (params_known_) {
    if (args.size() != param_sizes_.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "Kernel '%s' takes %d parameters but %d arguments were given.", name_,
          param_sizes_.size(), args.size()));
    }
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].size() != param_sizes_[i]) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "Kernel '%s': argument %d is %d bytes but the parameter is %d bytes.", name_, i,
            args[i].size(), param_sizes_[i]));
      }
    }
  }
  std::vector<void*> params;
  params.reserve(args.size());
  for (const KernelArg& a : args) params.push_back(const_cast<void*>(a.data()));
  const uint32_t grid[3] = {config.grid.x, config.grid.y, config.grid.z};
  const uint32_t block[3] = {config.block.x, config.block.y, config.block.z};
  return module_->driver_->launch(function_, grid, block, config.dynamic_shared_bytes,
                                  stream ? stream->handle() : nullptr,
                                  params.empty() ? nullptr : params.data());
}

// ---- Device -------------------------------------------------------------------
Device::Device(std::shared_ptr<Driver> driver) : driver_(std::move(driver)) {}

const DeviceInfo& Device::info() const { return driver_->info(); }

absl::StatusOr<std::shared_ptr<Module>> Device::load_module(std::string_view image) const {
  if (image.empty()) {
    return absl::InvalidArgumentError("Device::load_module was given an empty module image.");
  }
  absl::StatusOr<void*> handle = driver_->module_load(image);
  if (!handle.ok()) return handle.status();
  return std::make_shared<Module>(Module::Token{}, driver_, *handle);
}

absl::StatusOr<std::string> Device::compile_module(std::string_view text) const {
  if (text.empty()) {
    return absl::InvalidArgumentError("Device::compile_module was given an empty module text.");
  }
  return driver_->compile_module(text);
}

std::string Device::image_identity() const {
  const DeviceInfo& i = driver_->info();
  return absl::StrFormat("%s driver %d", i.arch, i.driver_version);
}

absl::StatusOr<Buffer> Device::alloc(size_t bytes) const {
  if (bytes == 0) {
    return absl::InvalidArgumentError("Device::alloc was asked for 0 bytes; allocate at least 1.");
  }
  absl::StatusOr<uint64_t> ptr = driver_->mem_alloc(bytes);
  if (!ptr.ok()) return ptr.status();
  return Buffer(driver_, *ptr, bytes);
}

absl::StatusOr<Stream> Device::create_stream() const {
  absl::StatusOr<void*> h = driver_->stream_create();
  if (!h.ok()) return h.status();
  return Stream(driver_, *h);
}

absl::StatusOr<Event> Device::create_event() const {
  absl::StatusOr<void*> h = driver_->event_create();
  if (!h.ok()) return h.status();
  return Event(driver_, *h);
}

absl::Status Device::synchronize() const { return driver_->synchronize(); }

}  // namespace fixbits::runtime
