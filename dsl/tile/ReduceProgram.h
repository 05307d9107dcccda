// ReduceProgram: dsl::reduce(desc, config) — the tile program of a row reduction
// (sum, max, min) or of a fused RMSNorm / softmax, for one ReduceDesc.
//
// Contract: the program computes exactly ReduceDesc's tree (pinned order) for
// every valid ReduceConfig; the config's knobs only pick the tile extent and warp
// count. For kFree the bits follow FreeLayout{elems_per_thread, 32, warps}
// (free_layout(config)), as the CPU reference defines them. Compile for a target
// whose warp width equals config.lanes (pinned bits do not depend on it).
// x is rows x cols row-major. axis=row: one block per row (grid = "rows");
// axis=column: one block per column (grid = "cols"), reading the column with
// stride cols (correct and pinned, but uncoalesced: not yet a fast layout).
// Kernel parameters, in order, where LINE = `cols: i32` for rows and
// `rows: i32, cols: i32` for columns:
//   kSum/kMax/kMin: x: ptr<in>, y: ptr<out>, LINE        (y: one value per line)
//   kRmsNorm:       x: ptr<in>, w: ptr<in>, y: ptr<out>, LINE, eps: f32
//                   (w: one value per element of a line)
//   kSoftmax:       x: ptr<in>, y: ptr<out>, LINE         (y shaped like x)
// Example: dsl::reduce({.op = ReduceOp::kSum, .strip = 1024}, {.warps = 8})
//          -> program whose loop walks a row 1024 elements at a time.
#pragma once

#include "absl/status/statusor.h"
#include "dsl/ReduceDesc.h"
#include "dsl/tile/Program.h"

namespace fixbits::dsl {

// Speed knobs; none of them moves the bits of a pinned reduction.
struct ReduceConfig {
  int warps = 4;             // threads per block = 32 * warps; a power of two in [1, 32]
  int elems_per_thread = 4;  // elements one thread holds per pass; a power of two in [1, 64]
  int lanes = 32;            // the target's warp width: 32 (NVIDIA) or 64 (AMD wave64)
};

// Checks the knobs; the message names the bad field and its value.
absl::Status validate(const ReduceConfig& c);
// The extent of one pass over the row: max(strip, elems_per_thread*lanes*warps)
// for pinned order, elems_per_thread*lanes*warps for free order.
int64_t pass_extent(const ReduceDesc& d, const ReduceConfig& c);
FreeLayout free_layout(const ReduceConfig& c);

absl::StatusOr<tile::Program> reduce(const ReduceDesc& desc, const ReduceConfig& config = {});

}  // namespace fixbits::dsl
