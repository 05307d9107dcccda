// CublasBlackBox: see CublasBlackBox.h. One call, for a 1 x 1 x K probe problem on a
// row-major A and row-major B of shape M x N x K:
//   A: row 0 <- p.a (K elements, the first K of the buffer: a plain upload)
//   B: column 0 <- p.b (K elements at pitch N: staged, then PitchedCopy)
//   cublasLtMatmul(full shape) ; D[0][0] -> out
// Rows/columns written by the previous call and not by this one are overwritten with
// zeros (the "dirty" counts), so the matrices stay zero outside the probe's slice.
#include "profile/CublasBlackBox.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "runtime/PitchedCopy.h"

namespace fixbits::profile {

using namespace fixbits::runtime;  // the runtime layer this box drives
namespace {

void put(std::vector<uint8_t>& out, size_t index, uint32_t bits, size_t bytes) {
  std::memcpy(out.data() + index * bytes, &bits, bytes);  // little-endian low bytes
}

uint32_t get(const std::vector<uint8_t>& in, size_t index, size_t bytes) {
  uint32_t bits = 0;
  std::memcpy(&bits, in.data() + index * bytes, bytes);
  return bits;
}

}  // namespace

struct CublasBlackBox::Impl {
  std::shared_ptr<CublasLt> lt;
  GemmShape shape;
  MatmulReport report;
  size_t ea = 0, eb = 0, eo = 0;  // element bytes of A, B, D
  Buffer a, b, d, staging;
  std::optional<PitchedCopy> copy;  // loaded on first strided upload
  absl::Mutex mu;
  int64_t a_dirty = 0, b_dirty = 0;  // rows of A / columns of B possibly non-zero
  int64_t calls = 0, launches = 0;
  std::vector<uint8_t> host;  // upload scratch
  std::vector<uint8_t> out;   // download scratch

  absl::Status ensure_staging(size_t bytes) {
    if (staging.size() >= bytes) return absl::OkStatus();
    absl::StatusOr<Buffer> s = lt->device()->alloc(std::max(bytes, staging.size() * 2));
    if (!s.ok()) return s.status();
    staging = *std::move(s);
    return absl::OkStatus();
  }

  // Writes host bytes laid out as `rows` lines of `width` bytes into `dst` at pitch
  // `pitch` (contiguous when pitch == width: a plain upload from the buffer start).
  absl::Status write_slice(Buffer& dst, uint64_t rows, uint64_t width, uint64_t pitch) {
    const uint64_t bytes = rows * width;
    if (pitch == width) return dst.copy_from_host(host.data(), bytes);
    if (absl::Status s = ensure_staging(bytes); !s.ok()) return s;
    if (absl::Status s = staging.copy_from_host(host.data(), bytes); !s.ok()) return s;
    if (!copy.has_value()) {
      absl::StatusOr<PitchedCopy> c = PitchedCopy::load(*lt->device());
      if (!c.ok()) return c.status();
      copy = *std::move(c);
    }
    return copy->run(dst.address(), pitch, staging.address(), width, width, rows);
  }

  // Rows [i0, i0 + rows) of p's A into A's first rows; zero rows up to a_dirty.
  absl::Status upload_a(const dsl::reference::GemmProblem& p, int64_t i0, int64_t rows) {
    const int64_t k = shape.k, up = std::max(rows, a_dirty);
    host.assign(static_cast<size_t>(up * k) * ea, 0);
    auto a_at = [&](int64_t i, int64_t kk) {
      return p.a_row_major ? p.a[static_cast<size_t>(i * k + kk)]
                           : p.a[static_cast<size_t>(kk * p.m + i)];
    };
    absl::Status st;
    if (shape.a_row_major) {  // device A: row i at i * k
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t kk = 0; kk < k; ++kk) put(host, r * k + kk, a_at(i0 + r, kk), ea);
      st = write_slice(a, 1, static_cast<uint64_t>(up * k) * ea, static_cast<uint64_t>(up * k) * ea);
    } else {  // device A column-major: (i, kk) at kk * m + i; lines are the k columns
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t r = 0; r < rows; ++r) put(host, kk * up + r, a_at(i0 + r, kk), ea);
      st = write_slice(a, k, up * ea, shape.m * ea);
    }
    if (st.ok()) a_dirty = rows;
    return st;
  }

  // Columns [j0, j0 + cols) of p's B into B's first columns; zero columns to b_dirty.
  absl::Status upload_b(const dsl::reference::GemmProblem& p, int64_t j0, int64_t cols) {
    const int64_t k = shape.k, up = std::max(cols, b_dirty);
    host.assign(static_cast<size_t>(up * k) * eb, 0);
    auto b_at = [&](int64_t kk, int64_t j) {
      return p.b_row_major ? p.b[static_cast<size_t>(kk * p.n + j)]
                           : p.b[static_cast<size_t>(j * k + kk)];
    };
    absl::Status st;
    if (!shape.b_row_major) {  // device B column-major: column j at j * k
      for (int64_t c = 0; c < cols; ++c)
        for (int64_t kk = 0; kk < k; ++kk) put(host, c * k + kk, b_at(kk, j0 + c), eb);
      st = write_slice(b, 1, static_cast<uint64_t>(up * k) * eb, static_cast<uint64_t>(up * k) * eb);
    } else {  // device B row-major: (kk, j) at kk * n + j; lines are the k rows
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t c = 0; c < cols; ++c) put(host, kk * up + c, b_at(kk, j0 + c), eb);
      st = write_slice(b, k, up * eb, shape.n * eb);
    }
    if (st.ok()) b_dirty = cols;
    return st;
  }
};

CublasBlackBox::CublasBlackBox(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CublasBlackBox::~CublasBlackBox() = default;

absl::StatusOr<std::shared_ptr<CublasBlackBox>> CublasBlackBox::create(
    std::shared_ptr<CublasLt> lt, const GemmShape& shape) {
  if (lt == nullptr) {
    return absl::InvalidArgumentError("CublasBlackBox::create was given a null CublasLt.");
  }
  absl::StatusOr<MatmulReport> report = lt->heuristic(shape);  // validates the shape
  if (!report.ok()) return report.status();
  auto impl = std::make_unique<Impl>();
  impl->lt = std::move(lt);
  impl->shape = shape;
  impl->report = *report;
  impl->ea = cublaslt_element_bytes(shape.a_dtype);
  impl->eb = cublaslt_element_bytes(shape.b_dtype);
  impl->eo = cublaslt_element_bytes(shape.out_dtype);
  const Device& dev = *impl->lt->device();
  const uint64_t a_bytes = static_cast<uint64_t>(shape.m * shape.k) * impl->ea;
  const uint64_t b_bytes = static_cast<uint64_t>(shape.k * shape.n) * impl->eb;
  const uint64_t d_bytes = static_cast<uint64_t>(shape.m * shape.n) * impl->eo;
  struct Alloc {
    Buffer* buf;
    uint64_t bytes;
  };
  for (Alloc x : {Alloc{&impl->a, a_bytes}, Alloc{&impl->b, b_bytes}, Alloc{&impl->d, d_bytes}}) {
    absl::StatusOr<Buffer> buf = dev.alloc(x.bytes);
    if (!buf.ok()) return buf.status();
    *x.buf = *std::move(buf);
    if (absl::Status s = x.buf->fill_bytes(0); !s.ok()) return s;
  }
  return std::shared_ptr<CublasBlackBox>(new CublasBlackBox(std::move(impl)));
}

const GemmShape& CublasBlackBox::shape() const { return impl_->shape; }
const MatmulReport& CublasBlackBox::report() const { return impl_->report; }
int64_t CublasBlackBox::calls() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->calls;
}
int64_t CublasBlackBox::launches() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->launches;
}

dsl::probe::GemmBlackBox CublasBlackBox::as_black_box() {
  std::shared_ptr<CublasBlackBox> self = shared_from_this();
  return [self](const dsl::reference::GemmProblem& p) { return self->run(p); };
}

absl::StatusOr<std::vector<uint32_t>> CublasBlackBox::run(const dsl::reference::GemmProblem& p) {
  Impl& im = *impl_;
  const GemmShape& s = im.shape;
  if (p.k != s.k) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GemmProblem.k is %d but this cuBLASLt black box runs the shape %s (k = %d).", p.k,
        to_string(s), s.k));
  }
  if (p.m < 1 || p.n < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GemmProblem has m = %d, n = %d; the cuBLASLt black box needs both >= 1.", p.m, p.n));
  }
  if (p.a.size() != static_cast<size_t>(p.m * p.k)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GemmProblem.a has %d elements; m x k is %d.", p.a.size(), p.m * p.k));
  }
  if (p.b.size() != static_cast<size_t>(p.k * p.n)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "GemmProblem.b has %d elements; k x n is %d.", p.b.size(), p.k * p.n));
  }
  if (p.alpha != 1.0f || p.beta != 0.0f || !p.c.empty() || !p.bias.empty()) {
    return absl::InvalidArgumentError(
        "GemmProblem asks for alpha/beta, c or bias; the cuBLASLt black box runs the bare "
        "product (alpha = 1, beta = 0, no bias).");
  }
  auto check_width = [](const std::vector<uint32_t>& v, size_t bytes, const char* name) {
    if (bytes >= 4) return absl::OkStatus();
    const uint32_t limit = uint32_t{1} << (8 * bytes);
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] >= limit) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "GemmProblem.%s[%d] is 0x%x, wider than its %d-byte dtype.", name, i, v[i], bytes));
      }
    }
    return absl::OkStatus();
  };
  if (absl::Status st = check_width(p.a, im.ea, "a"); !st.ok()) return st;
  if (absl::Status st = check_width(p.b, im.eb, "b"); !st.ok()) return st;

  absl::MutexLock lock(&im.mu);
  ++im.calls;
  std::vector<uint32_t> result(static_cast<size_t>(p.m * p.n));
  for (int64_t i0 = 0; i0 < p.m; i0 += s.m) {
    const int64_t rows = std::min(s.m, p.m - i0);
    if (absl::Status st = im.upload_a(p, i0, rows); !st.ok()) return st;
    for (int64_t j0 = 0; j0 < p.n; j0 += s.n) {
      const int64_t cols = std::min(s.n, p.n - j0);
      if (absl::Status st = im.upload_b(p, j0, cols); !st.ok()) return st;
      absl::StatusOr<MatmulReport> r = im.lt->matmul(s, im.a, im.b, im.d);
      if (!r.ok()) return r.status();
      ++im.launches;
      // D row-major: the first `rows` rows are the first rows * n elements.
      im.out.resize(static_cast<size_t>(rows * s.n) * im.eo);
      if (absl::Status st = im.d.copy_to_host(im.out.data(), im.out.size()); !st.ok()) return st;
      for (int64_t r2 = 0; r2 < rows; ++r2)
        for (int64_t c = 0; c < cols; ++c)
          result[static_cast<size_t>((i0 + r2) * p.n + j0 + c)] =
              get(im.out, static_cast<size_t>(r2 * s.n + c), im.eo);
    }
  }
  return result;
}

}  // namespace fixbits::profile
