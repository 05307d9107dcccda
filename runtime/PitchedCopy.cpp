// PitchedCopy: see PitchedCopy.h. Thread i (a 1-D grid of 256-thread blocks) copies
// byte (r, c) = (i / width, i % width); threads past rows * width do nothing.
//   rows = 3, width = 2, src_pitch = 2, dst_pitch = 8:
//   src bytes [s0 s1 | s2 s3 | s4 s5] -> dst bytes 0,1 / 8,9 / 16,17.
#include "runtime/PitchedCopy.h"

#include "absl/strings/str_format.h"
#include "runtime/PtxKernel.h"

namespace fixbits::runtime {
namespace {

constexpr const char* kPitchedCopyPtx = R"(
.version 8.0
.target sm_90
.address_size 64

.visible .entry fixbits_pitched_copy(
    .param .u64 p_dst,
    .param .u64 p_src,
    .param .u64 p_rows,
    .param .u64 p_width,
    .param .u64 p_dst_pitch,
    .param .u64 p_src_pitch
)
{
    .reg .pred %p<2>;
    .reg .b16 %rs<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<18>;

    ld.param.u64 %rd1, [p_dst];
    ld.param.u64 %rd2, [p_src];
    ld.param.u64 %rd3, [p_rows];
    ld.param.u64 %rd4, [p_width];
    ld.param.u64 %rd5, [p_dst_pitch];
    ld.param.u64 %rd6, [p_src_pitch];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mul.wide.u32 %rd7, %r1, %r2;
    cvt.u64.u32 %rd8, %r3;
    add.s64 %rd9, %rd7, %rd8;
    mul.lo.s64 %rd10, %rd3, %rd4;
    setp.ge.u64 %p1, %rd9, %rd10;
    @%p1 bra DONE;
    div.u64 %rd11, %rd9, %rd4;
    rem.u64 %rd12, %rd9, %rd4;
    mad.lo.s64 %rd13, %rd11, %rd6, %rd12;
    mad.lo.s64 %rd14, %rd11, %rd5, %rd12;
    cvta.to.global.u64 %rd15, %rd2;
    add.s64 %rd16, %rd15, %rd13;
    ld.global.u8 %rs1, [%rd16];
    cvta.to.global.u64 %rd15, %rd1;
    add.s64 %rd17, %rd15, %rd14;
    st.global.u8 [%rd17], %rs1;
DONE:
    ret;
}
)";

constexpr uint32_t kBlock = 256;

}  // namespace

const char* pitched_copy_ptx() { return kPitchedCopyPtx; }

absl::StatusOr<PitchedCopy> PitchedCopy::load(const Device& device) {
  absl::StatusOr<Kernel> kernel = load_ptx_kernel(device, kPitchedCopyPtx, "fixbits_pitched_copy", "PitchedCopy::load");
  if (!kernel.ok()) return kernel.status();
  return PitchedCopy(*std::move(kernel));
}

absl::Status PitchedCopy::run(uint64_t dst, uint64_t dst_pitch, uint64_t src,
                              uint64_t src_pitch, uint64_t width_bytes, uint64_t rows,
                              Stream* stream) const {
  if (width_bytes == 0 || rows == 0) return absl::OkStatus();
  if (dst_pitch < width_bytes || src_pitch < width_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "PitchedCopy::run: a pitch (dst %d, src %d bytes) is below the row width of %d bytes.",
        dst_pitch, src_pitch, width_bytes));
  }
  if (dst == 0 || src == 0) {
    return absl::InvalidArgumentError("PitchedCopy::run was given a null device address.");
  }
  const uint64_t total = rows * width_bytes;
  if (total / rows != width_bytes || total > uint64_t{0x7fffffff} * kBlock) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "PitchedCopy::run: %d rows of %d bytes is more than one launch copies.", rows,
        width_bytes));
  }
  const uint32_t blocks = static_cast<uint32_t>((total + kBlock - 1) / kBlock);
  const KernelArg args[] = {
      KernelArg::device_pointer(dst),       KernelArg::device_pointer(src),
      KernelArg::scalar<uint64_t>(rows),    KernelArg::scalar<uint64_t>(width_bytes),
      KernelArg::scalar<uint64_t>(dst_pitch), KernelArg::scalar<uint64_t>(src_pitch)};
  return kernel_.launch({.grid = {blocks}, .block = {kBlock}}, args, stream);
}

}  // namespace fixbits::runtime
