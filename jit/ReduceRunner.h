// ReduceRunner: runs one dsl::reduce kernel (a ReduceDesc under one ReduceConfig)
// on a device, over a host problem given as bit patterns like the CPU reference's.
//
// Contract: upload() packs reference::ReduceProblem's per-element uint32 bit
// patterns into in_dtype-sized device arrays; launch() runs one block per row with
// the kernel's own block size, one block per reduced line (row or column) -- or,
// with ReduceConfig.blocks_per_row = P > 1, the kernels of dsl::reduce_phases in
// order on one stream (P blocks per row for the strip partials into a workspace of
// rows * strip_count(cols) floats per statistic, then the in-order fold; for a
// pinned column sum/max/min, P blocks per column group for the strip-part partials
// into strip_count(rows) * P * cols floats, then the per-column fold:
// dsl::split_workspace_floats; with ReduceConfig.rows_per_launch, every phase for one
// group of rows, then the next group; with ReduceConfig.alternate_row_order, a phase
// that walks the rows backward gets the launch's row count as its last argument);
// with ReduceConfig.cluster_rows (RMSNorm/softmax rows,
// NVIDIA) the one cluster kernel instead, one launch of rows * P blocks whose kernel
// declares its cluster shape (P, 1, 1), same workspaces; the bits are the same for every P;
// with ReduceConfig.whole_strips, upload() and share_inputs() refuse a problem whose
// line length is not a multiple of the pass extent (dsl::pass_extent: the strip for a
// cluster kernel; InvalidArgument naming the field);
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

  // The first kernel launched (the only one unless the row is split).
  const JitKernel& kernel() const { return *phases_.front(); }
  // Every kernel, in launch order.
  const std::vector<std::shared_ptr<const JitKernel>>& phases() const { return phases_; }

  // The blocks_per_row this runner recommends for a problem, by one documented rule
  // (target T = 4 * multiprocessors blocks, so every SM has several in flight):
  // Rows: 1 (no split) unless order=pinned, elems_per_thread*lanes*warps <= strip,
  // the row has at least 2 strips and rows < T (too few blocks to keep every SM
  // busy); then min(strips per row, ceil(T / rows), 1024).
  // Columns (suggest_column_parts): 1 unless order=pinned, op sum/max/min, the
  // G = ceil(cols / (lanes*warps)) column groups are fewer than T and rows > Rq
  // (dsl::column_pass_rows); then the smallest power of two P whose blocks that load
  // rows -- G*P with 2 or more strips, G*ceil(rows*P/strip) with one -- reach T,
  // capped by dsl::max_column_parts (strip/Rq, 1024). Example, H200 (132 SMs), f32
  // 4096 x 4096, strip 4096, warps 8, elems 8: G = 16, Rq = 8 -> P = 64.
  static int suggest_blocks_per_row(const dsl::ReduceDesc& desc, const dsl::ReduceConfig& config,
                                    int64_t rows, int64_t cols, int multiprocessors);
  static int suggest_column_parts(const dsl::ReduceDesc& desc, const dsl::ReduceConfig& config,
                                  int64_t rows, int64_t cols, int multiprocessors);
  const dsl::ReduceDesc& desc() const { return desc_; }
  // The shape of the uploaded (or shared) problem; 0 x 0 before upload().
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }

  // Allocates device buffers for the problem's shape and copies its inputs.
  absl::Status upload(const dsl::reference::ReduceProblem& p);
  // Reuses buffers uploaded by another runner of the same shape (for benchmarks that
  // compare kernels on one input without copying it again).
  absl::Status share_inputs(const ReduceRunner& other);
  absl::Status launch(runtime::Stream* stream = nullptr) const;
  absl::StatusOr<std::vector<uint32_t>> download() const;
  // Bytes a launch reads and writes (for achieved-bandwidth numbers).
  size_t bytes_moved() const;
  // Floats of each split workspace after upload (0 when unsplit).
  size_t workspace_floats() const { return ws_floats_; }
  // The driver's occupancy answer for each phase's launch over a full group of rows
  // (runtime::Kernel::occupancy), in phase order: for reading a tuning's numbers, not
  // part of any choice. Unimplemented where the driver has no calculator.
  absl::StatusOr<std::vector<runtime::Occupancy>> occupancy() const;

 private:
  ReduceRunner() = default;
  absl::Status alloc_workspace();  // split rows/columns: ws_ (and ws2_ for softmax)
  // whole_strips: a line of `line` elements must be whole strips (InvalidArgument).
  absl::Status check_whole_strips(int64_t line) const;
  // Every phase for rows [first, first + count) (all rows unless rows_per_launch).
  absl::Status launch_rows(int64_t first, int64_t count, runtime::Stream* stream) const;
  // Rows of one full launch: rows_per_launch (at most the rows), or all rows.
  int64_t launch_group() const;
  // Phase `phase`'s grid, block and dynamic shared bytes for a launch of `count` rows.
  absl::StatusOr<runtime::LaunchConfig> launch_config(size_t phase, int64_t count) const;
  std::shared_ptr<runtime::Device> device_;
  dsl::ReduceDesc desc_;
  std::vector<std::shared_ptr<const JitKernel>> phases_;
  int blocks_per_row_ = 1;
  bool cluster_rows_ = false;  // split rows as the one cluster kernel
  int64_t whole_extent_ = 0;   // whole_strips: rows must be multiples of this (upload checks)
  int64_t rows_per_launch_ = 0;  // split rows launched in groups of this many (0: all)
  std::vector<bool> walks_rows_backward_;  // per phase (split rows): takes rows last
  int rows_per_block_ = 1;  // > 1: the one kernel takes the launch's rows last
  int64_t rows_ = 0, cols_ = 0;
  float eps_ = 0.0f;
  std::shared_ptr<runtime::Buffer> x_, w_;
  std::shared_ptr<runtime::Buffer> y_;
  std::shared_ptr<runtime::Buffer> ws_, ws2_;  // split: strip (part) results (softmax: max, sum)
  size_t y_count_ = 0;
  size_t ws_floats_ = 0;
};

}  // namespace fixbits::jit
