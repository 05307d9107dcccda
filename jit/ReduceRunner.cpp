// ReduceRunner.cpp: host<->device packing and the launch of a reduction, with the
// parameter order ReduceProgram.h documents (LINE = cols, or rows, cols by column):
//   sum/max/min: (x, y, LINE)   rmsnorm: (x, w, y, LINE, eps)   softmax: (x, y, LINE)
#include "jit/ReduceRunner.h"

#include <cstring>

#include "absl/strings/str_format.h"

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
  const std::string key = absl::StrFormat("%s warps=%d elems_per_thread=%d", dsl::to_string(desc),
                                          config.warps, config.elems_per_thread);
  absl::StatusOr<std::shared_ptr<const JitKernel>> k = jit::load_keyed(
      *device, key, [&] { return dsl::reduce(desc, config); }, codegen::Target::kNvptxSm90a, cache);
  if (!k.ok()) return k.status();
  ReduceRunner r;
  r.device_ = std::move(device);
  r.desc_ = desc;
  r.kernel_ = std::move(*k);
  return r;
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
  return y_->fill_bytes(0xff);  // a kernel that skips an output leaves NaN-ish bytes behind
}

absl::Status ReduceRunner::share_inputs(const ReduceRunner& other) {
  if (other.desc_.in_dtype != desc_.in_dtype || other.desc_.op != desc_.op ||
      other.desc_.out_dtype != desc_.out_dtype) {
    return absl::InvalidArgumentError("share_inputs needs a runner with the same op and dtypes.");
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
  return absl::OkStatus();
}

absl::Status ReduceRunner::launch(runtime::Stream* stream) const {
  if (x_ == nullptr) return absl::FailedPreconditionError("ReduceRunner::launch before upload().");
  const int32_t cols = static_cast<int32_t>(cols_);
  std::vector<runtime::KernelArg> args;
  args.push_back(runtime::KernelArg::pointer(*x_));
  if (desc_.op == dsl::ReduceOp::kRmsNorm) args.push_back(runtime::KernelArg::pointer(*w_));
  args.push_back(runtime::KernelArg::pointer(*y_));
  const bool by_row = desc_.axis == dsl::ReduceAxis::kRow;
  if (!by_row) args.push_back(runtime::KernelArg::scalar<int32_t>(static_cast<int32_t>(rows_)));
  args.push_back(runtime::KernelArg::scalar<int32_t>(cols));
  if (desc_.op == dsl::ReduceOp::kRmsNorm) args.push_back(runtime::KernelArg::scalar<float>(eps_));
  runtime::LaunchConfig cfg;
  // One block per reduced line: kernel_->grid names the size ("rows" or "cols").
  cfg.grid.x = static_cast<uint32_t>(kernel_->grid == "cols" ? cols_ : rows_);
  cfg.block.x = kernel_->block_threads;
  cfg.dynamic_shared_bytes = kernel_->dynamic_shared_bytes;
  return kernel_->kernel().launch(cfg, args, stream);
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
