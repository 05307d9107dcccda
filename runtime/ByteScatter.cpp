// ByteScatter: see ByteScatter.h. Thread i (a 1-D grid of 256-thread blocks) reads
// record i, offset at list + 8 i and value at list + 8 count + i, and stores the
// value; threads past count do nothing.
//   base = B, count = 3, list = [o0 o1 o2 | v0 v1 v2] -> B[o0] = v0, B[o1] = v1, B[o2] = v2.
#include "runtime/ByteScatter.h"

#include "absl/strings/str_format.h"
#include "runtime/PtxKernel.h"

namespace fixbits::runtime {
namespace {

constexpr const char* kByteScatterPtx = R"(
.version 8.0
.target sm_90
.address_size 64

.visible .entry fixbits_byte_scatter(
    .param .u64 p_base,
    .param .u64 p_list,
    .param .u64 p_count
)
{
    .reg .pred %p<2>;
    .reg .b16 %rs<2>;
    .reg .b32 %r<4>;
    .reg .b64 %rd<16>;

    ld.param.u64 %rd1, [p_base];
    ld.param.u64 %rd2, [p_list];
    ld.param.u64 %rd3, [p_count];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mul.wide.u32 %rd4, %r1, %r2;
    cvt.u64.u32 %rd5, %r3;
    add.s64 %rd6, %rd4, %rd5;
    setp.ge.u64 %p1, %rd6, %rd3;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd7, %rd2;
    shl.b64 %rd8, %rd6, 3;
    add.s64 %rd9, %rd7, %rd8;
    ld.global.u64 %rd10, [%rd9];
    shl.b64 %rd11, %rd3, 3;
    add.s64 %rd12, %rd7, %rd11;
    add.s64 %rd13, %rd12, %rd6;
    ld.global.u8 %rs1, [%rd13];
    add.s64 %rd14, %rd1, %rd10;
    cvta.to.global.u64 %rd15, %rd14;
    st.global.u8 [%rd15], %rs1;
DONE:
    ret;
}
)";

constexpr uint32_t kBlock = 256;

}  // namespace

const char* byte_scatter_ptx() { return kByteScatterPtx; }

void append_element_writes(std::vector<ByteWrite>& out, uint64_t offset, uint32_t bits,
                           size_t bytes) {
  for (size_t b = 0; b < bytes; ++b) {
    out.push_back(ByteWrite{.offset = offset + b, .value = static_cast<uint8_t>(bits >> (8 * b))});
  }
}

void encode_byte_scatter_list(absl::Span<const ByteWrite> writes, std::vector<uint8_t>& out,
                              size_t at) {
  const size_t n = writes.size();
  if (n == 0) return;
  if (out.size() < at + byte_scatter_list_bytes(n)) out.resize(at + byte_scatter_list_bytes(n));
  uint8_t* offsets = out.data() + at;  // (n) u64, little-endian
  uint8_t* values = offsets + 8 * n;   // (n) u8
  for (size_t i = 0; i < n; ++i) {
    const uint64_t o = writes[i].offset;
    for (int b = 0; b < 8; ++b) offsets[8 * i + b] = static_cast<uint8_t>(o >> (8 * b));
    values[i] = writes[i].value;
  }
}

absl::StatusOr<ByteScatter> ByteScatter::load(const Device& device) {
  absl::StatusOr<Kernel> kernel = load_ptx_kernel(device, kByteScatterPtx, "fixbits_byte_scatter", "ByteScatter::load");
  if (!kernel.ok()) return kernel.status();
  return ByteScatter(*std::move(kernel));
}

absl::Status ByteScatter::run(uint64_t base, uint64_t list, uint64_t count, Stream* stream) const {
  if (count == 0) return absl::OkStatus();
  if (list == 0) {
    return absl::InvalidArgumentError("ByteScatter::run was given a null list address.");
  }
  if (list % 8 != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ByteScatter::run: the list address 0x%x is not 8-byte aligned (its offsets are u64).",
        list));
  }
  if (count > uint64_t{0x7fffffff} * kBlock) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ByteScatter::run: %d records is more than one launch writes (%d).", count,
        uint64_t{0x7fffffff} * kBlock));
  }
  const uint32_t blocks = static_cast<uint32_t>((count + kBlock - 1) / kBlock);
  const KernelArg args[] = {KernelArg::device_pointer(base), KernelArg::device_pointer(list),
                            KernelArg::scalar<uint64_t>(count)};
  return kernel_.launch({.grid = {blocks}, .block = {kBlock}}, args, stream);
}

}  // namespace fixbits::runtime
