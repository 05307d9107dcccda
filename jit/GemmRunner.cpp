// GemmRunner.cpp: host<->device packing and the launches of a dsl::gemm, with the
// parameter orders GemmProgram.h documents:
//   main:        (a, b, out, c, bias, m, n, k, a_sm, a_sk, b_sk, b_sn, alpha, beta)
//   split parts: (a, b, ws, m, n, k, a_sm, a_sk, b_sk, b_sn)
//   split merge: (ws, out, c, bias, m, n, parts, alpha, beta)
#include "jit/GemmRunner.h"

#include "absl/strings/str_format.h"
#include "jit/ReduceRunner.h"  // pack_bits / unpack_bits

namespace fixbits::jit {
namespace {

size_t elem_bytes(DType t) { return static_cast<size_t>(dtype_bits(t)) / 8; }

absl::StatusOr<std::shared_ptr<runtime::Buffer>> alloc(const runtime::Device& dev, size_t bytes) {
  absl::StatusOr<runtime::Buffer> buf = dev.alloc(bytes == 0 ? 4 : bytes);
  if (!buf.ok()) return buf.status();
  return std::make_shared<runtime::Buffer>(std::move(*buf));
}

absl::StatusOr<std::shared_ptr<runtime::Buffer>> upload_bits(const runtime::Device& dev, DType t,
                                                             const std::vector<uint32_t>& bits) {
  std::vector<uint8_t> bytes = pack_bits(t, bits);
  absl::StatusOr<std::shared_ptr<runtime::Buffer>> buf = alloc(dev, bytes.size());
  if (!buf.ok()) return buf.status();
  if (!bytes.empty()) {
    if (absl::Status s = (*buf)->copy_from_host(bytes.data(), bytes.size()); !s.ok()) return s;
  }
  return buf;
}

runtime::Dim3 dim(const std::array<int64_t, 3>& g) {
  return runtime::Dim3{static_cast<uint32_t>(g[0]), static_cast<uint32_t>(g[1]),
                       static_cast<uint32_t>(g[2])};
}

bool empty_grid(const std::array<int64_t, 3>& g) { return g[0] == 0 || g[1] == 0 || g[2] == 0; }

}  // namespace

absl::StatusOr<GemmRunner> GemmRunner::create(std::shared_ptr<runtime::Device> device,
                                              const dsl::GemmDesc& desc,
                                              const dsl::GemmConfig& config,
                                              runtime::KernelCache* cache) {
  if (device == nullptr) return absl::InvalidArgumentError("GemmRunner needs a device.");
  absl::StatusOr<dsl::GemmPrograms> progs = dsl::gemm(desc, config);  // checks desc and knobs
  if (!progs.ok()) return progs.status();
  // Every knob is in the key: two configs must never share a cached kernel.
  const std::string key = absl::StrFormat(
      "%s warps=%d rows_per_thread=%d block_n=%d warp_m_tiles=%d warp_n_tiles=%d",
      dsl::to_string(desc), config.warps, config.rows_per_thread, config.block_n,
      config.warp_m_tiles, config.warp_n_tiles);
  GemmRunner r;
  absl::StatusOr<std::shared_ptr<const JitKernel>> main = jit::load_keyed(
      *device, key + " kernel=main", [&]() -> absl::StatusOr<tile::Program> { return progs->main; },
      codegen::Target::kNvptxSm90a, cache);
  if (!main.ok()) return main.status();
  r.main_ = *std::move(main);
  if (progs->merge) {
    absl::StatusOr<std::shared_ptr<const JitKernel>> merge = jit::load_keyed(
        *device, key + " kernel=merge",
        [&]() -> absl::StatusOr<tile::Program> { return *progs->merge; },
        codegen::Target::kNvptxSm90a, cache);
    if (!merge.ok()) return merge.status();
    r.merge_ = *std::move(merge);
  }
  r.device_ = std::move(device);
  r.desc_ = desc;
  r.config_ = config;
  return r;
}

absl::Status GemmRunner::upload(const dsl::reference::GemmProblem& p) {
  absl::StatusOr<dsl::GemmLaunchShape> shape = dsl::gemm_launch_shape(desc_, config_, p.m, p.n, p.k);
  if (!shape.ok()) return shape.status();
  auto count = [](const char* field, size_t have, int64_t want) -> absl::Status {
    if (static_cast<int64_t>(have) == want) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrFormat("GemmProblem.%s has %d elements; the shape needs %d.", field, have, want));
  };
  if (absl::Status s = count("a", p.a.size(), p.m * p.k); !s.ok()) return s;
  if (absl::Status s = count("b", p.b.size(), p.k * p.n); !s.ok()) return s;
  if (desc_.alpha_beta) {
    if (absl::Status s = count("c", p.c.size(), p.m * p.n); !s.ok()) return s;
  }
  if (desc_.bias) {
    if (absl::Status s = count("bias", p.bias.size(), p.n); !s.ok()) return s;
  }
  shape_ = *shape;
  m_ = p.m;
  n_ = p.n;
  k_ = p.k;
  a_sm_ = p.a_row_major ? p.k : 1;
  a_sk_ = p.a_row_major ? 1 : p.m;
  b_sk_ = p.b_row_major ? p.n : 1;
  b_sn_ = p.b_row_major ? 1 : p.k;
  alpha_ = desc_.alpha_beta ? p.alpha : 1.0f;
  beta_ = desc_.alpha_beta ? p.beta : 0.0f;
  absl::StatusOr<std::shared_ptr<runtime::Buffer>> buf = upload_bits(*device_, desc_.a_dtype, p.a);
  if (!buf.ok()) return buf.status();
  a_ = *buf;
  if (buf = upload_bits(*device_, desc_.b_dtype, p.b); !buf.ok()) return buf.status();
  b_ = *buf;
  if (buf = upload_bits(*device_, desc_.out_dtype, desc_.alpha_beta ? p.c : std::vector<uint32_t>{});
      !buf.ok())
    return buf.status();
  c_ = *buf;
  if (buf = upload_bits(*device_, DType::kF32, desc_.bias ? p.bias : std::vector<uint32_t>{});
      !buf.ok())
    return buf.status();
  bias_ = *buf;
  if (buf = alloc(*device_, static_cast<size_t>(m_ * n_) * elem_bytes(desc_.out_dtype)); !buf.ok())
    return buf.status();
  out_ = *buf;
  if (absl::Status s = out_->fill_bytes(0xff); !s.ok()) return s;
  ws_ = nullptr;
  if (merge_ != nullptr) {
    const size_t bytes = static_cast<size_t>(shape_.workspace_elems) * elem_bytes(desc_.partial_dtype);
    if (buf = alloc(*device_, bytes); !buf.ok()) return buf.status();
    ws_ = *buf;
  }
  return absl::OkStatus();
}

absl::Status GemmRunner::launch(runtime::Stream* stream) const {
  if (a_ == nullptr) return absl::FailedPreconditionError("GemmRunner::launch before upload().");
  using runtime::KernelArg;
  const auto i32 = [](int64_t v) { return KernelArg::scalar<int32_t>(static_cast<int32_t>(v)); };
  const auto i64 = [](int64_t v) { return KernelArg::scalar<int64_t>(v); };
  std::vector<KernelArg> args = {KernelArg::pointer(*a_), KernelArg::pointer(*b_)};
  if (merge_ == nullptr) {
    args.insert(args.end(), {KernelArg::pointer(*out_), KernelArg::pointer(*c_),
                             KernelArg::pointer(*bias_)});
  } else {
    args.push_back(KernelArg::pointer(*ws_));
  }
  args.insert(args.end(), {i32(m_), i32(n_), i32(k_), i64(a_sm_), i64(a_sk_), i64(b_sk_), i64(b_sn_)});
  if (merge_ == nullptr) {
    args.push_back(KernelArg::scalar<float>(alpha_));
    args.push_back(KernelArg::scalar<float>(beta_));
  }
  runtime::LaunchConfig cfg;
  cfg.block.x = main_->block_threads;
  cfg.dynamic_shared_bytes = main_->dynamic_shared_bytes;
  if (!empty_grid(shape_.main_grid)) {
    cfg.grid = dim(shape_.main_grid);
    if (absl::Status s = main_->kernel().launch(cfg, args, stream); !s.ok()) return s;
  }
  if (merge_ == nullptr || empty_grid(shape_.merge_grid)) return absl::OkStatus();
  std::vector<KernelArg> margs = {KernelArg::pointer(*ws_), KernelArg::pointer(*out_),
                                  KernelArg::pointer(*c_), KernelArg::pointer(*bias_),
                                  i32(m_), i32(n_), i32(shape_.parts),
                                  KernelArg::scalar<float>(alpha_), KernelArg::scalar<float>(beta_)};
  cfg.block.x = merge_->block_threads;
  cfg.dynamic_shared_bytes = merge_->dynamic_shared_bytes;
  cfg.grid = dim(shape_.merge_grid);
  return merge_->kernel().launch(cfg, margs, stream);
}

absl::StatusOr<std::vector<uint32_t>> GemmRunner::download() const {
  if (out_ == nullptr) return absl::FailedPreconditionError("GemmRunner::download before upload().");
  if (absl::Status s = device_->synchronize(); !s.ok()) return s;
  std::vector<uint8_t> bytes(static_cast<size_t>(m_ * n_) * elem_bytes(desc_.out_dtype));
  if (!bytes.empty()) {
    if (absl::Status s = out_->copy_to_host(bytes.data(), bytes.size()); !s.ok()) return s;
  }
  return unpack_bits(desc_.out_dtype, bytes);
}

}  // namespace fixbits::jit
