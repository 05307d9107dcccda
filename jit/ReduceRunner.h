// ReduceRunner: runs one dsl::reduce kernel (a ReduceDesc under one ReduceConfig)
// on a device, over a host problem given as bit patterns like the CPU reference's.
//
// Contract: upload() packs reference::ReduceProblem's per-element uint32 bit
// patterns into in_dtype-sized device arrays; launch() runs one block per row with
// the kernel's own block size, one block per reduced line (row or column);
// download() returns outputs as uint32 bit patterns of out_dtype in the reference's
// layout, so a caller compares them with memcmp.
//
// Example:
//   auto r = ReduceRunner::create(dev, desc, {.warps = 8});
//   r->upload(problem); r->launch(); auto bits = r->download();   // == reference::reduce
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/ReduceDesc.h"
#include "dsl/reference/Reference.h"
#include "dsl/tile/ReduceProgram.h"
#include "jit/Jit.h"
#include "runtime/Device.h"

namespace fixbits::jit {

// Packs bit patterns (low bits of each uint32) into a byte array of `t`'s width, and back.
std::vector<uint8_t> pack_bits(DType t, const std::vector<uint32_t>& bits);
std::vector<uint32_t> unpack_bits(DType t, const std::vector<uint8_t>& bytes);

class ReduceRunner {
 public:
  static absl::StatusOr<ReduceRunner> create(std::shared_ptr<runtime::Device> device,
                                             const dsl::ReduceDesc& desc,
                                             const dsl::ReduceConfig& config,
                                             runtime::KernelCache* cache = nullptr);

  const JitKernel& kernel() const { return *kernel_; }
  const dsl::ReduceDesc& desc() const { return desc_; }

  // Allocates device buffers for the problem's shape and copies its inputs.
  absl::Status upload(const dsl::reference::ReduceProblem& p);
  // Reuses buffers uploaded by another runner of the same shape (for benchmarks that
  // compare kernels on one input without copying it again).
  absl::Status share_inputs(const ReduceRunner& other);
  absl::Status launch(runtime::Stream* stream = nullptr) const;
  absl::StatusOr<std::vector<uint32_t>> download() const;
  // Bytes a launch reads and writes (for achieved-bandwidth numbers).
  size_t bytes_moved() const;

 private:
  ReduceRunner() = default;
  std::shared_ptr<runtime::Device> device_;
  dsl::ReduceDesc desc_;
  std::shared_ptr<const JitKernel> kernel_;
  int64_t rows_ = 0, cols_ = 0;
  float eps_ = 0.0f;
  std::shared_ptr<runtime::Buffer> x_, w_;
  std::shared_ptr<runtime::Buffer> y_;
  size_t y_count_ = 0;
};

}  // namespace fixbits::jit
