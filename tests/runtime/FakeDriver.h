// FakeDriver: a Driver (runtime/Driver.h) with no GPU behind it, for CPU tests of the
// code above the driver (Device wrappers, KernelLoader). It records every image
// loaded and every launch; "memory" is host memory; module_function finds an entry
// only when the image contains ".entry <name>".
// Invariant: handles it returns are unique and non-null; freeing one twice fails.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "runtime/Driver.h"

namespace fixbits::runtime::testing {

class FakeDriver final : public Driver {
 public:
  struct Launch {
    std::string kernel;
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t shared;
    std::vector<uint64_t> first_words;  // the first 8 bytes of each argument
  };

  FakeDriver() {
    info_.name = "fake";
    info_.multiprocessor_count = 4;
    info_.max_threads_per_block = 1024;
    info_.max_shared_bytes_per_block = 48 * 1024;
    info_.max_shared_bytes_per_block_optin = 227 * 1024;
    info_.arch = "sm_90";
  }

  const DeviceInfo& info() const override { return info_; }

  absl::StatusOr<void*> module_load(std::string_view image) override {
    absl::MutexLock l(&mu_);
    loaded_images.emplace_back(image);
    modules_[++next_] = std::string(image);
    return reinterpret_cast<void*>(next_);
  }
  // With compiles_images: "IMAGE(<identity>):" + text, or compile_error when set.
  absl::StatusOr<std::string> compile_module(std::string_view text) override {
    absl::MutexLock l(&mu_);
    ++compile_calls;
    if (!compiles_images) return Driver::compile_module(text);
    if (!compile_error.empty()) return absl::InternalError(compile_error);
    return absl::StrFormat("IMAGE(%s %d):%s", info_.arch, info_.driver_version, text);
  }
  absl::Status module_unload(void* m) override {
    absl::MutexLock l(&mu_);
    return modules_.erase(reinterpret_cast<uintptr_t>(m)) ? absl::OkStatus()
                                                          : absl::InternalError("double unload");
  }
  absl::StatusOr<void*> module_function(void* m, const std::string& name) override {
    absl::MutexLock l(&mu_);
    const std::string& text = modules_.at(reinterpret_cast<uintptr_t>(m));
    if (text.find(".entry " + name) == std::string::npos) {
      return absl::NotFoundError(absl::StrFormat("fake: no entry %s", name));
    }
    functions_[++next_] = name;
    return reinterpret_cast<void*>(next_);
  }
  absl::StatusOr<uint64_t> mem_alloc(size_t bytes) override {
    absl::MutexLock l(&mu_);
    auto mem = std::make_unique<std::vector<uint8_t>>(bytes);
    const uint64_t addr = reinterpret_cast<uint64_t>(mem->data());
    memory_[addr] = std::move(mem);
    return addr;
  }
  absl::Status mem_free(uint64_t p) override {
    absl::MutexLock l(&mu_);
    return memory_.erase(p) ? absl::OkStatus() : absl::InternalError("double free");
  }
  absl::Status copy_to_device(uint64_t dst, const void* src, size_t n, void*) override {
    std::memcpy(reinterpret_cast<void*>(dst), src, n);
    return absl::OkStatus();
  }
  absl::Status copy_to_host(void* dst, uint64_t src, size_t n, void*) override {
    std::memcpy(dst, reinterpret_cast<const void*>(src), n);
    return absl::OkStatus();
  }
  absl::Status memset8(uint64_t dst, uint8_t v, size_t n) override {
    std::memset(reinterpret_cast<void*>(dst), v, n);
    return absl::OkStatus();
  }
  absl::StatusOr<void*> stream_create() override { return reinterpret_cast<void*>(++next_); }
  absl::Status stream_destroy(void*) override { ++destroyed_streams; return absl::OkStatus(); }
  absl::Status stream_synchronize(void*) override { return absl::OkStatus(); }
  absl::StatusOr<void*> event_create() override { return reinterpret_cast<void*>(++next_); }
  absl::Status event_destroy(void*) override { ++destroyed_events; return absl::OkStatus(); }
  absl::Status event_record(void*, void*) override { return absl::OkStatus(); }
  absl::Status event_synchronize(void*) override { return absl::OkStatus(); }
  absl::StatusOr<float> event_elapsed_ms(void*, void*) override {
    absl::MutexLock l(&mu_);
    if (elapsed_ms.empty()) return 0.5f;
    const float ms = elapsed_ms.front();
    elapsed_ms.erase(elapsed_ms.begin());
    return ms;
  }
  absl::StatusOr<std::vector<size_t>> param_sizes(void*) override {
    if (!declared_params_known) return absl::UnimplementedError("fake: parameters unknown");
    return declared_params;
  }
  absl::StatusOr<uint32_t> static_shared_bytes(void*) override {
    if (!static_shared_known) return absl::UnimplementedError("fake: static shared bytes unknown");
    return static_shared;
  }
  absl::Status set_max_dynamic_shared(void*, uint32_t bytes) override {
    raised_shared = bytes;
    ++raise_calls;
    return absl::OkStatus();
  }
  // With answers_occupancy: `occupancy_answer`, the configuration recorded in
  // occupancy_queries; otherwise the base's Unimplemented (a driver without a calculator).
  absl::StatusOr<Occupancy> occupancy(void* fn, const uint32_t grid[3], const uint32_t block[3],
                                      uint32_t shared) override {
    if (!answers_occupancy) return Driver::occupancy(fn, grid, block, shared);
    absl::MutexLock l(&mu_);
    occupancy_queries.push_back(Launch{functions_.at(reinterpret_cast<uintptr_t>(fn)),
                                       {grid[0], grid[1], grid[2]},
                                       {block[0], block[1], block[2]}, shared, {}});
    return occupancy_answer;
  }
  absl::Status launch(void* fn, const uint32_t grid[3], const uint32_t block[3], uint32_t shared,
                      void*, void** args) override {
    absl::MutexLock l(&mu_);
    Launch rec{functions_.at(reinterpret_cast<uintptr_t>(fn)), {grid[0], grid[1], grid[2]},
               {block[0], block[1], block[2]}, shared, {}};
    const auto named = args_of_kernel.find(rec.kernel);
    const size_t words = named != args_of_kernel.end() ? named->second : expected_args;
    for (size_t i = 0; i < words; ++i) {
      uint64_t w = 0;
      std::memcpy(&w, args[i], sizeof(w));
      rec.first_words.push_back(w);
    }
    launches.push_back(rec);
    return absl::OkStatus();
  }
  absl::Status synchronize() override { return absl::OkStatus(); }

  size_t live_modules() {
    absl::MutexLock l(&mu_);
    return modules_.size();
  }
  size_t live_allocations() {
    absl::MutexLock l(&mu_);
    return memory_.size();
  }

  // Public record of what happened (read after the calls finish).
  std::vector<std::string> loaded_images;
  std::vector<Launch> launches;
  size_t expected_args = 0;  // how many argument words launch() records
  // Per kernel name, instead of expected_args (kernels of one sequence differ).
  std::map<std::string, size_t> args_of_kernel;
  bool declared_params_known = false;  // param_sizes() answers declared_params when set
  std::vector<size_t> declared_params;
  uint32_t raised_shared = 0;
  int raise_calls = 0;  // set_max_dynamic_shared calls
  // What static_shared_bytes() answers for every kernel (its static __shared__ bytes).
  uint32_t static_shared = 0;
  bool static_shared_known = true;
  int destroyed_streams = 0;
  int destroyed_events = 0;
  // What event_elapsed_ms() answers, first to last; 0.5 once they are used up.
  std::vector<float> elapsed_ms;
  // compile_module(): off by default (Unimplemented, as a driver without images).
  bool compiles_images = false;
  std::string compile_error;  // non-empty: compile_module fails with it
  int compile_calls = 0;
  // occupancy(): off by default (Unimplemented); when on, every query is recorded.
  bool answers_occupancy = false;
  Occupancy occupancy_answer;
  std::vector<Launch> occupancy_queries;
  // The driver version info() reports (part of Device::image_identity).
  void set_driver_version(int v) { info_.driver_version = v; }

 private:
  DeviceInfo info_;
  absl::Mutex mu_;
  uintptr_t next_ = 0x1000;
  std::map<uintptr_t, std::string> modules_;
  std::map<uintptr_t, std::string> functions_;
  std::map<uint64_t, std::unique_ptr<std::vector<uint8_t>>> memory_;
};

}  // namespace fixbits::runtime::testing
