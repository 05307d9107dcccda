// ReduceRunner.cpp: host<->device packing and the launch of a reduction, with the
// parameter order ReduceProgram.h documents (LINE = cols, or rows, cols by column):
//   sum/max/min: (x, y, LINE)   rmsnorm: (x, w, y, LINE, eps)   softmax: (x, y, LINE)
// (then rows with rows_per_block > 1)
// and, for split rows (also as one cluster kernel) and split columns, the parameters
// each phase lists in dsl/tile/ReduceProgram.h.
#include "jit/ReduceRunner.h"

#include <cstring>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"

namespace fixbits::jit {
namespace {

size_t elem_bytes(DType t) { return static_cast<size_t>(dtype_bits(t)) / 8; }

bool is_elementwise(dsl::ReduceOp op) {
  return op == dsl::ReduceOp::kRmsNorm || op == dsl::ReduceOp::kSoftmax;
}

absl::StatusOr<std::shared_ptr<runtime::Buffer>> upload_bits(const runtime::Device& dev, DType t,
                                                             const std::vector<uint32_t>& bits) {
  std::vector<uint8_t> bytes = pack_bits(t, bits);
  absl::StatusOr<runtime::Buffer> buf = dev.alloc(bytes.empty() ? 4 : bytes.size());
  if (!buf.ok()) return buf.status();
  if (!bytes.empty()) {
    if (absl::Status s = buf->copy_from_host(bytes.data(), bytes.size()); !s.ok()) return s;
  }
  return std::make_shared<runtime::Buffer>(std::move(*buf));
}

// How many kernels reduce_phases gives a split runner's key, learnt when that key's
// programs are first built, so that a later create() finds its loaded phases without
// building the programs again. Session 28's device run 1 timed a memory hit of the
// 8-block cluster softmax at 423 us, every microsecond of it reduce_phases, against
// 0.42 us for a one-kernel sum. create()'s key determines the programs (it is the
// descriptor and every knob), so it determines their count. One lock guards the map.
class PhaseCounts {
 public:
  std::optional<size_t> find(const std::string& key) {
    absl::MutexLock l(&mu_);
    auto it = counts_.find(key);
    return it == counts_.end() ? std::nullopt : std::optional<size_t>(it->second);
  }
  void insert(const std::string& key, size_t count) {
    absl::MutexLock l(&mu_);
    counts_.emplace(key, count);
  }

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, size_t> counts_ ABSL_GUARDED_BY(mu_);
};

PhaseCounts& phase_counts() {
  static PhaseCounts* counts = new PhaseCounts();
  return *counts;
}

}  // namespace

std::vector<uint8_t> pack_bits(DType t, const std::vector<uint32_t>& bits) {
  const size_t w = elem_bytes(t);
  std::vector<uint8_t> out(bits.size() * w);
  for (size_t i = 0; i < bits.size(); ++i) std::memcpy(&out[i * w], &bits[i], w);  // little endian
  return out;
}

std::vector<uint32_t> unpack_bits(DType t, const std::vector<uint8_t>& bytes) {
  const size_t w = elem_bytes(t);
  std::vector<uint32_t> out(bytes.size() / w, 0);
  for (size_t i = 0; i < out.size(); ++i) std::memcpy(&out[i], &bytes[i * w], w);
  return out;
}

absl::StatusOr<ReduceRunner> ReduceRunner::create(std::shared_ptr<runtime::Device> device,
                                                  const dsl::ReduceDesc& desc,
                                                  const dsl::ReduceConfig& config,
                                                  runtime::KernelCache* cache) {
  if (device == nullptr) return absl::InvalidArgumentError("ReduceRunner needs a device.");
  if (absl::Status s = dsl::validate(config); !s.ok()) return s;
  // The descriptor and the knobs determine the program, so they key the kernel: a
  // loaded kernel is found without building the program again.
  const std::string key = absl::StrFormat("%s warps=%d elems_per_thread=%d%s", dsl::to_string(desc),
                                          config.warps, config.elems_per_thread,
                                          config.keep_passes > 0
                                              ? absl::StrFormat(" keep_passes=%d", config.keep_passes)
                                              : "") +
                          (config.keep_in_shared ? " keep_in_shared" : "") +
                          (config.min_blocks_per_sm > 0
                               ? absl::StrFormat(" min_blocks_per_sm=%d", config.min_blocks_per_sm)
                               : "") +
                          (config.cluster_rows ? " cluster_rows" : "") +
                          (config.whole_strips ? " whole_strips" : "") +
                          (config.divide_by_reciprocal ? " divide_by_reciprocal" : "") +
                          (config.stage_exp ? " stage_exp" : "") +
                          (config.rows_per_block > 1
                               ? absl::StrFormat(" rows_per_block=%d", config.rows_per_block)
                               : "");
  if (config.rows_per_launch > 0 && desc.axis != dsl::ReduceAxis::kRow) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceConfig.rows_per_launch %d applies to split rows; %s reduces columns.",
        config.rows_per_launch, dsl::to_string(desc)));
  }
  ReduceRunner r;
  if (config.blocks_per_row == 1) {
    absl::StatusOr<std::shared_ptr<const JitKernel>> k = jit::load_keyed(
        *device, key, [&] { return dsl::reduce(desc, config); }, codegen::Target::kNvptxSm90a, cache);
    if (!k.ok()) return k.status();
    r.phases_.push_back(std::move(*k));
  } else {
    // The phases are built together (they share their checks), only when one of them
    // is neither loaded nor cached; each is keyed apart.
    std::optional<absl::StatusOr<std::vector<tile::Program>>> programs;
    auto built = [&]() -> const absl::StatusOr<std::vector<tile::Program>>& {
      if (!programs) programs = dsl::reduce_phases(desc, config);
      return *programs;
    };
    const std::string runner_key = absl::StrFormat("%s blocks_per_row=%d", key, config.blocks_per_row);
    std::optional<size_t> count = phase_counts().find(runner_key);
    if (!count) {
      if (!built().ok()) return built().status();
      count = built()->size();
      phase_counts().insert(runner_key, *count);
    }
    for (size_t i = 0; i < *count; ++i) {
      // A phase walking the rows backward is another program; one walking them forward
      // is the same program with or without alternate_row_order, so it shares the key.
      const bool backward = dsl::phase_walks_rows_backward(config, i);
      const std::string phase_key = absl::StrFormat("%s phase=%d%s", runner_key, i, backward ? " rows_backward" : "");
      absl::StatusOr<std::shared_ptr<const JitKernel>> k = jit::load_keyed(
          *device, phase_key,
          [&]() -> absl::StatusOr<tile::Program> {
            if (!built().ok()) return built().status();
            return (*built())[i];
          },
          codegen::Target::kNvptxSm90a, cache);
      if (!k.ok()) return k.status();
      r.phases_.push_back(std::move(*k));
      r.walks_rows_backward_.push_back(backward);
    }
  }
  r.device_ = std::move(device);
  r.desc_ = desc;
  r.blocks_per_row_ = config.blocks_per_row;
  r.cluster_rows_ = config.cluster_rows;
  r.whole_extent_ = config.whole_strips ? dsl::pass_extent(desc, config) : 0;
  r.rows_per_launch_ = config.rows_per_launch;
  r.rows_per_block_ = config.rows_per_block;
  return r;
}

int ReduceRunner::suggest_column_parts(const dsl::ReduceDesc& desc, const dsl::ReduceConfig& config,
                                       int64_t rows, int64_t cols, int multiprocessors) {
  if (desc.op != dsl::ReduceOp::kSum && desc.op != dsl::ReduceOp::kMax && desc.op != dsl::ReduceOp::kMin) {
    return 1;
  }
  if (desc.order != dsl::TreeOrder::kPinned || desc.axis != dsl::ReduceAxis::kColumn) return 1;
  if (rows < 1 || cols < 1 || multiprocessors < 1 || desc.strip < 1) return 1;
  const int64_t groups = (cols - 1) / (int64_t{config.lanes} * config.warps) + 1;
  const int64_t target = int64_t{4} * multiprocessors;
  const int64_t rq = dsl::column_pass_rows(desc, config);
  if (groups >= target || rows <= rq) return 1;
  const int64_t strips = dsl::strip_count(desc, rows);
  const int64_t cap = dsl::max_column_parts(desc, config);
  // Blocks that load rows: every part of the first strip when there are several strips;
  // with one strip only the parts that start before `rows`.
  auto working = [&](int64_t p) {
    return groups * (strips > 1 ? p : (rows * p - 1) / desc.strip + 1);
  };
  int64_t p = 1;
  while (p < cap && working(p) < target) p *= 2;
  return static_cast<int>(p);
}

int ReduceRunner::suggest_blocks_per_row(const dsl::ReduceDesc& desc, const dsl::ReduceConfig& config,
                                         int64_t rows, int64_t cols, int multiprocessors) {
  if (desc.order != dsl::TreeOrder::kPinned) return 1;
  if (rows < 1 || cols < 1 || multiprocessors < 1 || desc.strip < 1) return 1;
  if (desc.axis == dsl::ReduceAxis::kColumn) return suggest_column_parts(desc, config, rows, cols, multiprocessors);
  const int64_t block = int64_t{config.elems_per_thread} * config.lanes * config.warps;
  if (block > desc.strip) return 1;
  const int64_t strips = dsl::strip_count(desc, cols);
  const int64_t target = int64_t{4} * multiprocessors;
  if (strips < 2 || rows >= target) return 1;
  const int64_t p = std::min<int64_t>({strips, (target + rows - 1) / rows, 1024});
  return static_cast<int>(std::max<int64_t>(p, 1));
}

absl::Status ReduceRunner::check_whole_strips(int64_t line) const {
  if (whole_extent_ == 0 || line % whole_extent_ == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "ReduceConfig.whole_strips: this runner's kernel is for rows whose length is a multiple "
      "of its pass extent (%d: the strip, or the block's elements where more); "
      "ReduceProblem.cols %d is not (build one without whole_strips).",
      whole_extent_, line));
}

absl::Status ReduceRunner::upload(const dsl::reference::ReduceProblem& p) {
  if (p.rows < 1 || p.cols < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceProblem.rows and .cols must be at least 1; got %d x %d.", p.rows, p.cols));
  }
  if (p.rows > 0x7fffffff || p.cols > 0x7fffffff) {
    return absl::InvalidArgumentError("ReduceProblem.rows and .cols must fit in 31 bits.");
  }
  if (p.x.size() != static_cast<size_t>(p.rows * p.cols)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceProblem.x has %d elements; rows*cols = %d.", p.x.size(), p.rows * p.cols));
  }
  const bool by_row = desc_.axis == dsl::ReduceAxis::kRow;
  const int64_t line = by_row ? p.cols : p.rows;  // elements of one reduced line
  if (desc_.op == dsl::ReduceOp::kRmsNorm && p.w.size() != static_cast<size_t>(line)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceProblem.w has %d elements; RMSNorm needs one per element of a line (%d).",
        p.w.size(), line));
  }
  if (absl::Status s = check_whole_strips(line); !s.ok()) return s;
  rows_ = p.rows;
  cols_ = p.cols;
  eps_ = p.eps;
  absl::StatusOr<std::shared_ptr<runtime::Buffer>> x = upload_bits(*device_, desc_.in_dtype, p.x);
  if (!x.ok()) return x.status();
  x_ = *x;
  if (desc_.op == dsl::ReduceOp::kRmsNorm) {
    absl::StatusOr<std::shared_ptr<runtime::Buffer>> w = upload_bits(*device_, desc_.in_dtype, p.w);
    if (!w.ok()) return w.status();
    w_ = *w;
  }
  y_count_ = is_elementwise(desc_.op) ? static_cast<size_t>(rows_ * cols_)
                                      : static_cast<size_t>(by_row ? rows_ : cols_);
  absl::StatusOr<runtime::Buffer> y = device_->alloc(y_count_ * elem_bytes(desc_.out_dtype));
  if (!y.ok()) return y.status();
  y_ = std::make_shared<runtime::Buffer>(std::move(*y));
  if (absl::Status s = alloc_workspace(); !s.ok()) return s;
  return y_->fill_bytes(0xff);  // a kernel that skips an output leaves NaN-ish bytes behind
}

absl::Status ReduceRunner::alloc_workspace() {
  ws_.reset();
  ws2_.reset();
  ws_floats_ = 0;
  if (blocks_per_row_ == 1) return absl::OkStatus();
  if (desc_.axis == dsl::ReduceAxis::kRow && rows_ * blocks_per_row_ > 0x7fffffff) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ReduceProblem.rows %d times ReduceConfig.blocks_per_row %d exceeds the grid limit 2^31-1.",
        rows_, blocks_per_row_));
  }
  const size_t floats = static_cast<size_t>(dsl::split_workspace_floats(desc_, blocks_per_row_, rows_, cols_));
  ws_floats_ = floats;
  for (auto* ws : {&ws_, &ws2_}) {
    if (ws == &ws2_ && desc_.op != dsl::ReduceOp::kSoftmax) break;
    absl::StatusOr<runtime::Buffer> b = device_->alloc(floats * 4);
    if (!b.ok()) return b.status();
    *ws = std::make_shared<runtime::Buffer>(std::move(*b));
    // A strip a partials kernel skipped would be read as NaN, never as a plausible value.
    if (absl::Status s = (*ws)->fill_bytes(0xff); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ReduceRunner::share_inputs(const ReduceRunner& other) {
  if (other.desc_.in_dtype != desc_.in_dtype || other.desc_.op != desc_.op ||
      other.desc_.out_dtype != desc_.out_dtype || other.desc_.axis != desc_.axis) {
    return absl::InvalidArgumentError("share_inputs needs a runner with the same op, axis and dtypes.");
  }
  if (absl::Status s = check_whole_strips(desc_.axis == dsl::ReduceAxis::kRow ? other.cols_ : other.rows_); !s.ok()) {
    return s;
  }
  rows_ = other.rows_;
  cols_ = other.cols_;
  eps_ = other.eps_;
  x_ = other.x_;
  w_ = other.w_;
  y_count_ = other.y_count_;
  absl::StatusOr<runtime::Buffer> y = device_->alloc(y_count_ * elem_bytes(desc_.out_dtype));
  if (!y.ok()) return y.status();
  y_ = std::make_shared<runtime::Buffer>(std::move(*y));
  return alloc_workspace();
}

absl::Status ReduceRunner::launch(runtime::Stream* stream) const {
  if (x_ == nullptr) return absl::FailedPreconditionError("ReduceRunner::launch before upload().");
  // Split rows in groups of rows_per_launch (launch-only, the same kernels): each
  // group's arguments point at its first row of x, y and the workspaces.
  const int64_t group = launch_group();
  for (int64_t first = 0; first < rows_; first += group) {
    if (absl::Status s = launch_rows(first, std::min(group, rows_ - first), stream); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ReduceRunner::launch_rows(int64_t first, int64_t count, runtime::Stream* stream) const {
  using runtime::KernelArg;
  const KernelArg cols = KernelArg::scalar<int32_t>(static_cast<int32_t>(cols_));
  const KernelArg eps = KernelArg::scalar<float>(eps_);
  const bool rms = desc_.op == dsl::ReduceOp::kRmsNorm;
  const bool by_row = desc_.axis == dsl::ReduceAxis::kRow;
  // Byte offsets of row `first` (0 unless rows are launched in groups, by_row only).
  const uint64_t x_off = static_cast<uint64_t>(first * cols_) * elem_bytes(desc_.in_dtype);
  const uint64_t y_off =
      static_cast<uint64_t>(is_elementwise(desc_.op) ? first * cols_ : first) * elem_bytes(desc_.out_dtype);
  const uint64_t ws_off =
      blocks_per_row_ > 1 && by_row ? static_cast<uint64_t>(first * dsl::strip_count(desc_, cols_)) * 4 : 0;
  const KernelArg x = KernelArg::device_pointer(x_->address() + x_off);
  const KernelArg y = KernelArg::device_pointer(y_->address() + y_off);
  std::vector<std::vector<KernelArg>> args;
  if (blocks_per_row_ == 1) {
    std::vector<KernelArg> a = {x};
    if (rms) a.push_back(KernelArg::pointer(*w_));
    a.push_back(y);
    if (!by_row) a.push_back(KernelArg::scalar<int32_t>(static_cast<int32_t>(rows_)));
    a.push_back(cols);
    if (rms) a.push_back(eps);
    // rows_per_block > 1: the kernel's blocks take consecutive rows of this launch.
    if (rows_per_block_ > 1) a.push_back(KernelArg::scalar<int32_t>(static_cast<int32_t>(count)));
    args.push_back(std::move(a));
  } else {
    const KernelArg ws = KernelArg::device_pointer(ws_->address() + ws_off);
    const KernelArg rows = KernelArg::scalar<int32_t>(static_cast<int32_t>(rows_));
    switch (desc_.op) {
      case dsl::ReduceOp::kSum:
      case dsl::ReduceOp::kMax:
      case dsl::ReduceOp::kMin:
        if (by_row) args = {{x, ws, cols}, {ws, y, cols}};
        else args = {{x, ws, rows, cols}, {ws, y, rows, cols}};  // split columns
        break;
      case dsl::ReduceOp::kRmsNorm:
        if (cluster_rows_) args = {{x, KernelArg::pointer(*w_), ws, y, cols, eps}};  // one kernel
        else args = {{x, ws, cols}, {x, KernelArg::pointer(*w_), ws, y, cols, eps}};
        break;
      case dsl::ReduceOp::kSoftmax: {
        const KernelArg wss = KernelArg::device_pointer(ws2_->address() + ws_off);
        if (cluster_rows_) args = {{x, ws, wss, y, cols}};
        else args = {{x, ws, cols}, {x, ws, wss, cols}, {x, ws, wss, y, cols}};
        break;
      }
    }
  }
  // A phase walking the rows backward takes this launch's row count last.
  for (size_t i = 0; i < args.size() && i < walks_rows_backward_.size(); ++i) {
    if (walks_rows_backward_[i]) args[i].push_back(KernelArg::scalar<int32_t>(static_cast<int32_t>(count)));
  }
  if (args.size() != phases_.size()) {
    return absl::InternalError(absl::StrFormat(
        "ReduceRunner invariant broken: %d kernels but %d argument lists.", phases_.size(), args.size()));
  }
  for (size_t i = 0; i < phases_.size(); ++i) {
    absl::StatusOr<runtime::LaunchConfig> cfg = launch_config(i, count);
    if (!cfg.ok()) return cfg.status();
    if (absl::Status s = phases_[i]->kernel().launch(*cfg, args[i], stream); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<runtime::LaunchConfig> ReduceRunner::launch_config(size_t phase, int64_t count) const {
  const JitKernel& k = *phases_[phase];
  runtime::LaunchConfig cfg;
  // kernel.grid names the size (dsl::grid_blocks), over this launch's rows.
  const bool by_row = desc_.axis == dsl::ReduceAxis::kRow;
  absl::StatusOr<int64_t> grid = dsl::grid_blocks(k.grid, by_row ? count : rows_, cols_, blocks_per_row_);
  if (!grid.ok()) return grid.status();
  cfg.grid.x = static_cast<uint32_t>(*grid);
  cfg.block.x = k.block_threads;
  cfg.dynamic_shared_bytes = k.dynamic_shared_bytes;
  return cfg;
}

int64_t ReduceRunner::launch_group() const {
  return rows_per_launch_ > 0 ? std::min(rows_per_launch_, rows_) : rows_;
}

absl::StatusOr<std::vector<runtime::Occupancy>> ReduceRunner::occupancy() const {
  const int64_t count = launch_group();
  std::vector<runtime::Occupancy> out;
  for (size_t i = 0; i < phases_.size(); ++i) {
    absl::StatusOr<runtime::LaunchConfig> cfg = launch_config(i, count);
    if (!cfg.ok()) return cfg.status();
    absl::StatusOr<runtime::Occupancy> o = phases_[i]->kernel().occupancy(*cfg);
    if (!o.ok()) return o.status();
    out.push_back(*o);
  }
  return out;
}

absl::StatusOr<std::vector<uint32_t>> ReduceRunner::download() const {
  if (y_ == nullptr) return absl::FailedPreconditionError("ReduceRunner::download before upload().");
  if (absl::Status s = device_->synchronize(); !s.ok()) return s;
  std::vector<uint8_t> bytes(y_count_ * elem_bytes(desc_.out_dtype));
  if (absl::Status s = y_->copy_to_host(bytes.data(), bytes.size()); !s.ok()) return s;
  return unpack_bits(desc_.out_dtype, bytes);
}

size_t ReduceRunner::bytes_moved() const {
  size_t in = static_cast<size_t>(rows_ * cols_) * elem_bytes(desc_.in_dtype);
  if (desc_.op == dsl::ReduceOp::kRmsNorm) {
    in += static_cast<size_t>(desc_.axis == dsl::ReduceAxis::kRow ? cols_ : rows_) *
          elem_bytes(desc_.in_dtype);
  }
  return in + y_count_ * elem_bytes(desc_.out_dtype);
}

}  // namespace fixbits::jit
