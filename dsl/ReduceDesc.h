// ReduceDesc: the written-down reduction tree of a row (or column) reduction and
// of the fused forms built on it (RMSNorm, softmax).
//
// Invariant: for kPinned order the output bits are a function of this descriptor
// and the inputs only; block size, warp count, elements per thread and layout are
// speed knobs that cannot move them. kFree order is kept so the cost of pinning
// can be measured; its bits depend on the layout (see FreeLayout below), which is
// why it is never used where bits matter.
//
// Semantics of the pinned tree for a row x[0..n) (the CPU reference implements it):
//   leaf(i)  = in(x_i) converted exactly to acc_dtype (kSum, kMax, kMin, kSoftmax
//              max pass); x_i (x) x_i rounded (kRmsNorm); e_i (kSoftmax sum pass).
//   strip    = the row is cut into strips of `strip` elements (a power of two).
//              Each strip is a balanced tree over its logical index: level j
//              combines the partials of index blocks that differ in bit j, padding
//              past n with the identity (-0.0 for sums, -inf for max, +inf for min).
//   strips   = strip results are folded in a chain in index order: r = s_0 (+) s_1 ...
//   Every combine is one correctly rounded acc_dtype operation (max/min: IEEE
//   maxNum/minNum with NaN propagated, as PTX max.NaN.f32).
// Fused forms, all ops IEEE binary32 correctly rounded, no contraction:
//   kRmsNorm: ms = sum / n; r = 1 / sqrt(ms + eps); y_i = round(out, (x_i * r) * w_i)
//   kSoftmax: m = max; e_i = fixbits_exp(x_i - m); s = sum e; y_i = round(out, e_i / s)
//   where fixbits_exp is the op sequence in dsl/reference/ExpF32.h (same on CPU/GPU).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dsl/FloatFormat.h"

namespace fixbits::dsl {

enum class ReduceOp : uint8_t { kSum, kMax, kMin, kRmsNorm, kSoftmax };
enum class TreeOrder : uint8_t { kPinned, kFree };
enum class ReduceAxis : uint8_t { kRow, kColumn };  // kRow: contiguous axis

struct ReduceDesc {
  ReduceOp op = ReduceOp::kSum;
  ReduceAxis axis = ReduceAxis::kRow;
  DType in_dtype = DType::kF32;
  DType acc_dtype = DType::kF32;
  DType out_dtype = DType::kF32;
  TreeOrder order = TreeOrder::kPinned;
  int64_t strip = 1024;  // width of one balanced tree, a power of two in [1, 2^16]
  bool operator==(const ReduceDesc&) const = default;
};

// The physical layout of a free-order reduction (pinned order ignores it): how
// many elements each thread folds sequentially, lanes per warp, warps. A row is
// walked by the block in chunks of elems_per_thread * lanes * warps elements.
struct FreeLayout {
  int elems_per_thread = 4;
  int lanes = 32;
  int warps = 4;
};

absl::Status validate(const ReduceDesc& d);  // names the bad field
// Canonical text, e.g. "reduce{op=sum axis=row in=f32 acc=f32 out=f32 order=pinned strip=1024}".
std::string to_string(const ReduceDesc& d);
absl::StatusOr<ReduceDesc> parse_reduce_desc(std::string_view text);
uint64_t hash(const ReduceDesc& d);  // FNV-1a 64 over to_string(d); stable
// Writes to_string(d) (so gtest prints descriptors readably).
std::ostream& operator<<(std::ostream& os, const ReduceDesc& d);

}  // namespace fixbits::dsl
