// ByteScatter: writes a list of (offset, byte) pairs into device memory as a tiny
// hand-written PTX kernel, so runtime/ callers can patch hundreds of scattered bytes
// with one upload of the list and one launch instead of one synchronous copy each.
//
// Contract: run(base, list, count) writes, for i < count,
//   byte at (base + offset[i]) = value[i]
// one byte per thread, asynchronously on `stream` (null: the default stream). `list`
// is the device address of `count` records laid out as encode_byte_scatter_list()
// writes them: count little-endian u64 offsets, then count u8 values (9 * count
// bytes, no padding); it must be 8-byte aligned. base = 0 makes the offsets absolute
// device addresses, so one list may cover several buffers. The offsets must be
// distinct (which thread's byte lands is otherwise unspecified) and must not point
// into the list. Arguments are checked (count fits one launch, list non-null and
// aligned); the addresses written are not. Loading needs a CUDA device; on any other
// platform load() is InvalidArgument.
//
// Example: writes {(0x1000, 0xaa), (0x2001, 0xbb)} with base 0 -> list bytes
//   [00 10 00 00 00 00 00 00 | 01 20 00 00 00 00 00 00 | aa bb]   (18 bytes)
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/Device.h"

namespace fixbits::runtime {

// One byte of a scatter: the byte `offset` bytes past run()'s base becomes `value`.
struct ByteWrite {
  uint64_t offset = 0;
  uint8_t value = 0;
  bool operator==(const ByteWrite&) const = default;
};

// Appends the low `bytes` (1..4) bytes of `bits`, little-endian, as writes to
// offset, offset + 1, ...: one element of a 1-, 2- or 4-byte dtype.
void append_element_writes(std::vector<ByteWrite>& out, uint64_t offset, uint32_t bits,
                           size_t bytes);

// The list's size on the device: 9 bytes a record.
constexpr size_t byte_scatter_list_bytes(size_t count) { return count * 9; }

// Writes `writes` in the device layout (offsets, then values) at out[at, at + 9 * n),
// growing `out` as needed (an empty list writes nothing).
void encode_byte_scatter_list(absl::Span<const ByteWrite> writes, std::vector<uint8_t>& out,
                              size_t at = 0);

class ByteScatter {
 public:
  static absl::StatusOr<ByteScatter> load(const Device& device);

  absl::Status run(uint64_t base, uint64_t list, uint64_t count, Stream* stream = nullptr) const;

 private:
  explicit ByteScatter(Kernel kernel) : kernel_(std::move(kernel)) {}
  Kernel kernel_;
};

// The PTX text run() launches (entry fixbits_byte_scatter), for inspection and tests.
const char* byte_scatter_ptx();

}  // namespace fixbits::runtime
