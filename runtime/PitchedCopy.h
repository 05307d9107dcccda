// PitchedCopy: a device-to-device 2-D byte copy (the cuMemcpy2D shape) as a tiny
// hand-written PTX kernel, so runtime/ can write a strided slice of a matrix (one
// column of a row-major B) without copying the whole matrix from the host.
//
// Contract: run() copies, for r < rows and c < width_bytes,
//   dst[r * dst_pitch + c] = src[r * src_pitch + c]
// one byte per thread, asynchronously on `stream` (null: the default stream). The
// regions must not overlap. Arguments are checked (pitches >= width, the thread
// count fits one launch); nothing is checked about the addresses, which are raw
// device addresses (Buffer::address() plus a byte offset). Loading needs a CUDA
// device; on any other platform load() is InvalidArgument.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/Device.h"

namespace fixbits::runtime {

class PitchedCopy {
 public:
  static absl::StatusOr<PitchedCopy> load(const Device& device);

  absl::Status run(uint64_t dst, uint64_t dst_pitch, uint64_t src, uint64_t src_pitch,
                   uint64_t width_bytes, uint64_t rows, Stream* stream = nullptr) const;

 private:
  explicit PitchedCopy(Kernel kernel) : kernel_(std::move(kernel)) {}
  Kernel kernel_;
};

// The PTX text run() launches (entry fixbits_pitched_copy), for inspection and tests.
const char* pitched_copy_ptx();

}  // namespace fixbits::runtime
