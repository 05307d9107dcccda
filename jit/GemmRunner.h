// GemmRunner: runs the kernels of one dsl::gemm (a GemmDesc under one GemmConfig) on
// a device, over a host problem given as bit patterns like the CPU reference's.
//
// Contract: upload() packs reference::GemmProblem's per-element uint32 bit patterns
// into dtype-sized device arrays (a and b keep the problem's row/column-major
// layout; the kernels address them through strides); launch() runs the main kernel
// and, for family split_k, the merge kernel after it on the same stream (a
// workspace of parts*M*N partial_dtype values is allocated at upload);
// download() returns the m x n row-major output as out_dtype bit patterns, so a
// caller compares it with reference::gemm by memcmp. The output buffer is filled
// with 0xff bytes at upload, so an element a kernel skips shows up as a mismatch.
//
// Example:
//   auto r = GemmRunner::create(dev, desc, {.warps = 4, .block_n = 8});
//   r->upload(problem); r->launch(); auto bits = r->download();   // == reference::gemm
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/GemmDesc.h"
#include "dsl/reference/Reference.h"
#include "dsl/tile/GemmProgram.h"
#include "jit/Jit.h"
#include "runtime/Device.h"

namespace fixbits::jit {

class GemmRunner {
 public:
  static absl::StatusOr<GemmRunner> create(std::shared_ptr<runtime::Device> device,
                                           const dsl::GemmDesc& desc,
                                           const dsl::GemmConfig& config,
                                           runtime::KernelCache* cache = nullptr);

  const JitKernel& main_kernel() const { return *main_; }
  const JitKernel* merge_kernel() const { return merge_.get(); }  // split_k only
  const dsl::GemmDesc& desc() const { return desc_; }

  // Allocates device buffers for the problem's shape and copies its inputs.
  absl::Status upload(const dsl::reference::GemmProblem& p);
  absl::Status launch(runtime::Stream* stream = nullptr) const;
  absl::StatusOr<std::vector<uint32_t>> download() const;

 private:
  GemmRunner() = default;
  std::shared_ptr<runtime::Device> device_;
  dsl::GemmDesc desc_;
  dsl::GemmConfig config_;
  std::shared_ptr<const JitKernel> main_, merge_;
  dsl::GemmLaunchShape shape_;
  int64_t m_ = 0, n_ = 0, k_ = 0;
  int64_t a_sm_ = 0, a_sk_ = 0, b_sk_ = 0, b_sn_ = 0;
  float alpha_ = 1.0f, beta_ = 0.0f;
  std::shared_ptr<runtime::Buffer> a_, b_, c_, bias_, out_, ws_;
};

}  // namespace fixbits::jit
