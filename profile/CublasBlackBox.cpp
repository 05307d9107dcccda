// CublasBlackBox: see CublasBlackBox.h. One dense call, for a 1 x 1 x K probe problem
// on a row-major A and row-major B of shape M x N x K:
//   A: row 0 <- p.a (K elements, the first K of the buffer: a plain upload)
//   B: column 0 <- p.b (K elements at pitch N: staged, then PitchedCopy)
//   cublasLtMatmul(full shape) ; D[0][0] -> out
// Rows/columns written by the previous call and not by this one are overwritten with
// zeros (the "dirty" counts), so the matrices stay zero outside the probe's slice.
//
// The same problem as a SparseProblem {a_fill = 0, b_fill = fill_b, a: 3 marks,
// b: 1 entry (an fp8 probe's r; f16/bf16 probes mark A alone)}, once A's row 0 holds 0 and B's column 0 holds fill_b (the fill state,
// written densely by the first call and kept):
//   A[0][k1], A[0][k2], A[0][k3] <- marks ; B[k4][0] <- entry    (4 element copies)
//   cublasLtMatmul(full shape) ; D[0][0] -> out
//   A[0][k1], A[0][k2], A[0][k3] <- 0 ; B[k4][0] <- fill_b        (the fill again)
// or, where ByteScatter loads, the same writes as 8 one-byte records (f16: 2 bytes
// an element) in one uploaded list, with the 8 fill bytes after it:
//   upload [patch list | restore list] ; scatter(patch list)
//   cublasLtMatmul(full shape) ; D[0][0] -> out ; scatter(restore list)
#include "profile/CublasBlackBox.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "runtime/ByteScatter.h"
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

// Marks this many elements apart or closer go in one copy, the gap written with the
// fill it already holds: a small copy costs its latency, not its bytes.
constexpr uint64_t kMergeGap = 32;

// A of the shape seen as its m rows, or B as its n columns: `lines` lines of K
// elements each, the lines the probe's problem writes.
struct Operand {
  Buffer buf;
  size_t bytes = 0;       // element bytes
  int64_t lines = 0;      // shape.m for A, shape.n for B
  bool line_major = true; // a line's K elements are adjacent (A row-major, B column-major)
  // Invariant: lines >= dirty are all zero; when `fill` is set, lines < dirty all hold
  // *fill (the sparse fill state). Unset after a dense upload or a failed patch.
  int64_t dirty = 0;
  std::optional<uint32_t> fill = 0;  // create() zeroes the buffer

  // Element offset of (line, kk) in the buffer.
  uint64_t at(int64_t line, int64_t kk, int64_t k) const {
    return static_cast<uint64_t>(line_major ? line * k + kk : kk * lines + line);
  }
};

// One element of a sparse operand at its place in an Operand's buffer.
struct Mark {
  int64_t block = 0;  // which launch's lines (line / shape lines of the problem)
  int64_t line = 0;   // line within that launch
  uint64_t at = 0;    // element offset in the buffer
  uint32_t bits = 0;
};

// Elements [at, at + count) of a buffer, written from `first` on in a host scratch.
struct Patch {
  uint64_t at = 0;
  size_t first = 0, count = 0;
};

}  // namespace

struct CublasBlackBox::Impl {
  std::shared_ptr<CublasLt> lt;
  GemmShape shape;
  MatmulReport report;
  size_t eo = 0;   // element bytes of D
  Operand a, b;    // A by rows, B by columns
  Buffer d, staging;
  Buffer batch_d;  // run_sparse_batch's outputs, one D a problem
  std::optional<PitchedCopy> copy;  // loaded on first strided upload
  // How run_sparse writes entries, decided by its first call: ByteScatter when it
  // loads (CUDA), per-entry copies otherwise (unset until then).
  std::optional<bool> use_scatter;
  std::optional<ByteScatter> scatter;
  Buffer lists;                        // device copy of a launch's patch + restore lists
  std::vector<ByteWrite> writes;       // a launch's patch writes
  std::vector<ByteWrite> restores;     // the fill bytes back over them
  std::vector<ByteWrite> a_restores;   // A's part of `restores`, kept over a row pass
  absl::Mutex mu;
  int64_t calls = 0, launches = 0;
  std::vector<uint8_t> host;  // upload scratch
  std::vector<uint8_t> out;   // download scratch

  // A scratch buffer (staging, lists, batch_d) of at least `bytes`, doubled as it grows.
  absl::Status grow(Buffer& buf, size_t bytes) {
    if (buf.size() >= bytes) return absl::OkStatus();
    absl::StatusOr<Buffer> b = lt->device()->alloc(std::max(bytes, buf.size() * 2));
    if (!b.ok()) return b.status();
    buf = *std::move(b);
    return absl::OkStatus();
  }

  // host's first `bytes` (encoded byte-scatter lists) into `lists`.
  absl::Status upload_lists(size_t bytes) {
    if (bytes == 0) return absl::OkStatus();
    if (absl::Status st = grow(lists, bytes); !st.ok()) return st;
    return lists.copy_from_host(host.data(), bytes);
  }

  // From D's bytes in `out`, the rows x cols block starting at element `base` (rows
  // shape.n apart) into result at (i0, j0) of a problem `n` wide.
  void read_block(size_t base, int64_t rows, int64_t cols, int64_t i0, int64_t j0, int64_t n,
                  std::vector<uint32_t>& result) const {
    for (int64_t r2 = 0; r2 < rows; ++r2)
      for (int64_t c = 0; c < cols; ++c)
        result[static_cast<size_t>((i0 + r2) * n + j0 + c)] =
            get(out, base + static_cast<size_t>(r2 * shape.n + c), eo);
  }

  // Writes host bytes laid out as `rows` lines of `width` bytes into `dst` at pitch
  // `pitch` (contiguous when pitch == width: a plain upload from the buffer start).
  absl::Status write_slice(Buffer& dst, uint64_t rows, uint64_t width, uint64_t pitch) {
    const uint64_t bytes = rows * width;
    if (pitch == width) return dst.copy_from_host(host.data(), bytes);
    if (absl::Status s = grow(staging, bytes); !s.ok()) return s;
    if (absl::Status s = staging.copy_from_host(host.data(), bytes); !s.ok()) return s;
    if (!copy.has_value()) {
      absl::StatusOr<PitchedCopy> c = PitchedCopy::load(*lt->device());
      if (!c.ok()) return c.status();
      copy = *std::move(c);
    }
    return copy->run(dst.address(), pitch, staging.address(), width, width, rows);
  }

  // value(l, kk) for l < count into o's first `count` lines; lines up to o.dirty are
  // zeroed. Leaves o.dirty = count and the fill state unset.
  template <typename Value>
  absl::Status upload(Operand& o, int64_t count, Value value) {
    const int64_t k = shape.k, up = std::max(count, o.dirty);
    o.fill.reset();
    o.dirty = up;  // until the write is known to have landed
    if (up == 0) return absl::OkStatus();
    const size_t e = o.bytes;
    host.assign(static_cast<size_t>(up * k) * e, 0);
    absl::Status st;
    if (o.line_major) {  // line l at l * k: one contiguous write
      for (int64_t l = 0; l < count; ++l)
        for (int64_t kk = 0; kk < k; ++kk) put(host, l * k + kk, value(l, kk), e);
      st = write_slice(o.buf, 1, static_cast<uint64_t>(up * k) * e, static_cast<uint64_t>(up * k) * e);
    } else {  // (l, kk) at kk * lines + l: k pieces of `up` elements at pitch `lines`
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t l = 0; l < count; ++l) put(host, kk * up + l, value(l, kk), e);
      st = write_slice(o.buf, k, up * e, o.lines * e);
    }
    if (st.ok()) o.dirty = count;
    return st;
  }

  // Makes o's first `count` lines hold `bits` (the rest zero), densely, unless the
  // fill state already says so.
  absl::Status ensure_fill(Operand& o, uint32_t bits, int64_t count) {
    if (o.fill == bits && (bits == 0 || o.dirty >= count)) return absl::OkStatus();
    const int64_t lines = bits == 0 ? 0 : std::max(count, o.dirty);
    if (absl::Status st = upload(o, lines, [bits](int64_t, int64_t) { return bits; }); !st.ok()) {
      return st;
    }
    o.fill = bits;
    return absl::OkStatus();
  }

  // Writes marks [first, last) (sorted by `at`, none holding the fill) into o, nearby
  // ones in one copy; `patches` says what restore() must put back. The fill state is
  // unset until restore() succeeds.
  absl::Status patch(Operand& o, const std::vector<Mark>& marks, size_t first, size_t last,
                     uint32_t fill, std::vector<Patch>& patches) {
    patches.clear();
    host.clear();
    const size_t e = o.bytes;
    // Elements [from, to) hold the fill: lines < o.dirty do (ensure_fill), lines past
    // it are zero. A gap between two marks of one k index (or of line-major lines)
    // lies between two marked lines, which are < o.dirty; one across a k index wraps
    // through the last lines.
    auto holds_fill = [&](uint64_t from, uint64_t to) {
      if (to - from > kMergeGap) return false;
      if (fill == 0 || o.line_major || o.dirty >= o.lines) return true;
      const uint64_t stride = static_cast<uint64_t>(o.lines);
      return from / stride == to / stride;
    };
    int64_t lines = 0;
    for (size_t i = first; i < last; ++i) {
      const Mark& m = marks[i];
      lines = std::max(lines, m.line + 1);
      if (patches.empty() || !holds_fill(patches.back().at + patches.back().count, m.at)) {
        patches.push_back(Patch{.at = m.at, .first = host.size() / e, .count = 0});
      }
      Patch& p = patches.back();
      while (p.at + p.count < m.at) {  // the gap: the fill it holds
        host.resize(host.size() + e);
        put(host, p.first + p.count++, fill, e);
      }
      host.resize(host.size() + e);
      put(host, p.first + p.count++, m.bits, e);
    }
    if (patches.empty()) return absl::OkStatus();
    o.fill.reset();
    o.dirty = std::max(o.dirty, lines);
    for (const Patch& p : patches) {
      if (absl::Status st = o.buf.copy_from_host(p.at * e, host.data() + p.first * e, p.count * e);
          !st.ok()) {
        return st;
      }
    }
    return absl::OkStatus();
  }

  // Puts the fill back over every element patch() wrote; the fill state holds again.
  absl::Status restore(Operand& o, const std::vector<Patch>& patches, uint32_t fill) {
    if (patches.empty()) return absl::OkStatus();
    const size_t e = o.bytes;
    size_t longest = 0;
    for (const Patch& p : patches) longest = std::max(longest, p.count);
    host.resize(longest * e);
    for (size_t i = 0; i < longest; ++i) put(host, i, fill, e);
    for (const Patch& p : patches) {
      if (absl::Status st = o.buf.copy_from_host(p.at * e, host.data(), p.count * e); !st.ok()) {
        return st;
      }
    }
    o.fill = fill;
    return absl::OkStatus();
  }

  // Decides, once, whether run_sparse scatters (ByteScatter loads) or copies.
  bool scatters() {
    if (!use_scatter.has_value()) {
      absl::StatusOr<ByteScatter> sc = ByteScatter::load(*lt->device());
      use_scatter = sc.ok();
      if (sc.ok()) scatter = *std::move(sc);
    }
    return *use_scatter;
  }

  // Marks [first, last) of o as byte writes at absolute device addresses: their bits
  // into `patch_out`, the fill into `fill_back`. Like patch(), unsets the fill state (set
  // again once the restore is launched) and widens o.dirty over the marked lines.
  void add_writes(Operand& o, const std::vector<Mark>& marks, size_t first, size_t last,
                  uint32_t fill, std::vector<ByteWrite>& patch_out,
                  std::vector<ByteWrite>& fill_back) {
    if (first == last) return;
    int64_t lines = 0;
    for (size_t i = first; i < last; ++i) {
      const Mark& m = marks[i];
      lines = std::max(lines, m.line + 1);
      const uint64_t address = o.buf.address() + m.at * o.bytes;
      append_element_writes(patch_out, address, m.bits, o.bytes);
      append_element_writes(fill_back, address, fill, o.bytes);
    }
    o.fill.reset();
    o.dirty = std::max(o.dirty, lines);
  }

  // `writes` and `restores` in one upload (the restore list 8-byte aligned after the
  // patch list), scatter the patch, launch and read D, scatter the restore. All on the
  // default stream, where cuBLASLt runs too (CublasLt::matmul with no stream), so the
  // order holds; the synchronous read of D waits for the patch and the matmul, and the
  // next upload waits for the restore.
  absl::Status scatter_launch_restore(int64_t rows, int64_t cols, int64_t i0, int64_t j0,
                                      int64_t n, std::vector<uint32_t>& result) {
    const size_t restore_at = (byte_scatter_list_bytes(writes.size()) + 7) / 8 * 8;
    const size_t bytes = restore_at + byte_scatter_list_bytes(restores.size());
    host.clear();
    encode_byte_scatter_list(writes, host, 0);
    encode_byte_scatter_list(restores, host, restore_at);
    if (absl::Status st = upload_lists(bytes); !st.ok()) return st;
    if (absl::Status st = scatter->run(0, lists.address(), writes.size()); !st.ok()) return st;
    if (absl::Status st = launch_and_read(rows, cols, i0, j0, n, result); !st.ok()) return st;
    return scatter->run(0, lists.address() + restore_at, restores.size());
  }

  // One full-shape launch; D's first rows x cols block into result at (i0, j0) of a
  // problem `n` wide.
  absl::Status launch_and_read(int64_t rows, int64_t cols, int64_t i0, int64_t j0, int64_t n,
                               std::vector<uint32_t>& result) {
    absl::StatusOr<MatmulReport> r = lt->matmul(shape, a.buf, b.buf, d);
    if (!r.ok()) return r.status();
    ++launches;
    // D row-major: the first `rows` rows are the first rows * shape.n elements.
    out.resize(static_cast<size_t>(rows * shape.n) * eo);
    if (absl::Status st = d.copy_to_host(out.data(), out.size()); !st.ok()) return st;
    read_block(0, rows, cols, i0, j0, n, result);
    return absl::OkStatus();
  }

  // run_sparse_batch's queue for problems [first, last): all checked, each inside the
  // shape, all of one fill, the box scattering. d_bytes: one problem's D, aligned.
  absl::Status run_queued(const dsl::probe::SparseProblem* first, const dsl::probe::SparseProblem* last,
                          uint64_t d_bytes, std::vector<std::vector<uint32_t>>& results);
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
  impl->a.bytes = cublaslt_element_bytes(shape.a_dtype);
  impl->a.lines = shape.m;
  impl->a.line_major = shape.a_row_major;
  impl->b.bytes = cublaslt_element_bytes(shape.b_dtype);
  impl->b.lines = shape.n;
  impl->b.line_major = !shape.b_row_major;
  impl->eo = cublaslt_element_bytes(shape.out_dtype);
  const Device& dev = *impl->lt->device();
  const uint64_t a_bytes = static_cast<uint64_t>(shape.m * shape.k) * impl->a.bytes;
  const uint64_t b_bytes = static_cast<uint64_t>(shape.k * shape.n) * impl->b.bytes;
  const uint64_t d_bytes = static_cast<uint64_t>(shape.m * shape.n) * impl->eo;
  struct Alloc {
    Buffer* buf;
    uint64_t bytes;
  };
  for (Alloc x : {Alloc{&impl->a.buf, a_bytes}, Alloc{&impl->b.buf, b_bytes},
                  Alloc{&impl->d, d_bytes}}) {
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
bool CublasBlackBox::scatters_sparse_entries() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->use_scatter.value_or(false);
}

dsl::probe::GemmBlackBox CublasBlackBox::as_black_box() {
  std::shared_ptr<CublasBlackBox> self = shared_from_this();
  return [self](const dsl::reference::GemmProblem& p) { return self->run(p); };
}

dsl::probe::SparseBlackBox CublasBlackBox::as_sparse_black_box() {
  std::shared_ptr<CublasBlackBox> self = shared_from_this();
  return [self](const dsl::probe::SparseProblem& p) { return self->run_sparse(p); };
}

namespace {

absl::Status check_bits(uint32_t bits, size_t bytes, const std::string& what) {
  if (bytes >= 4 || bits < (uint32_t{1} << (8 * bytes))) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("%s is 0x%x, wider than its %d-byte dtype.", what, bits, bytes));
}

// `name` is "a" (m x k, row = i, col = kk) or "b" (k x n, row = kk, col = j).
absl::Status check_entries(const std::vector<dsl::probe::SparseProblem::Entry>& v,
                           int64_t rows, int64_t cols, size_t bytes, const char* name,
                           const char* shape_name) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].row < 0 || v[i].row >= rows || v[i].col < 0 || v[i].col >= cols) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "SparseProblem.%s[%d] is at (row %d, col %d), outside the %s = %d x %d operand.", name,
          i, v[i].row, v[i].col, shape_name, rows, cols));
    }
    if (absl::Status st = check_bits(v[i].bits, bytes,
                                     absl::StrFormat("SparseProblem.%s[%d].bits", name, i));
        !st.ok()) {
      return st;
    }
  }
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto pos = [&](size_t i) { return std::pair(v[i].row, v[i].col); };
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return std::pair(pos(x), x) < std::pair(pos(y), y); });
  for (size_t i = 1; i < order.size(); ++i) {
    if (pos(order[i - 1]) == pos(order[i])) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "SparseProblem.%s[%d] and %s[%d] are both at (row %d, col %d); a position may be "
          "listed once.",
          name, order[i - 1], name, order[i], v[order[i]].row, v[order[i]].col));
    }
  }
  return absl::OkStatus();
}

// A problem's K must be the shape's; its m and n at least 1 (larger than the shape's
// runs in several launches). `problem` names the type in the message.
absl::Status check_extents(const char* problem, int64_t k, int64_t m, int64_t n,
                           const GemmShape& s) {
  if (k != s.k) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s.k is %d but this cuBLASLt black box runs the shape %s (k = %d).", problem, k,
        to_string(s), s.k));
  }
  if (m < 1 || n < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s has m = %d, n = %d; the cuBLASLt black box needs both >= 1.", problem, m, n));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<uint32_t>> CublasBlackBox::run(const dsl::reference::GemmProblem& p) {
  Impl& im = *impl_;
  const GemmShape& s = im.shape;
  if (absl::Status st = check_extents("GemmProblem", p.k, p.m, p.n, s); !st.ok()) return st;
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
    for (size_t i = 0; i < v.size(); ++i) {
      if (absl::Status st = check_bits(v[i], bytes, absl::StrFormat("GemmProblem.%s[%d]", name, i));
          !st.ok()) {
        return st;
      }
    }
    return absl::OkStatus();
  };
  if (absl::Status st = check_width(p.a, im.a.bytes, "a"); !st.ok()) return st;
  if (absl::Status st = check_width(p.b, im.b.bytes, "b"); !st.ok()) return st;

  absl::MutexLock lock(&im.mu);
  ++im.calls;
  std::vector<uint32_t> result(static_cast<size_t>(p.m * p.n));
  for (int64_t i0 = 0; i0 < p.m; i0 += s.m) {
    const int64_t rows = std::min(s.m, p.m - i0);
    auto a_at = [&](int64_t r, int64_t kk) {  // row i0 + r of p's A
      const int64_t i = i0 + r;
      return p.a_row_major ? p.a[static_cast<size_t>(i * p.k + kk)]
                           : p.a[static_cast<size_t>(kk * p.m + i)];
    };
    if (absl::Status st = im.upload(im.a, rows, a_at); !st.ok()) return st;
    for (int64_t j0 = 0; j0 < p.n; j0 += s.n) {
      const int64_t cols = std::min(s.n, p.n - j0);
      auto b_at = [&](int64_t c, int64_t kk) {  // column j0 + c of p's B
        const int64_t j = j0 + c;
        return p.b_row_major ? p.b[static_cast<size_t>(kk * p.n + j)]
                             : p.b[static_cast<size_t>(j * p.k + kk)];
      };
      if (absl::Status st = im.upload(im.b, cols, b_at); !st.ok()) return st;
      if (absl::Status st = im.launch_and_read(rows, cols, i0, j0, p.n, result); !st.ok()) {
        return st;
      }
    }
  }
  return result;
}

namespace {

// run_sparse's checks of `p` against the box's shape and dtypes, naming the field.
absl::Status check_sparse(const dsl::probe::SparseProblem& p, const GemmShape& s, size_t a_bytes,
                          size_t b_bytes) {
  if (absl::Status st = check_extents("SparseProblem", p.k, p.m, p.n, s); !st.ok()) return st;
  if (absl::Status st = check_bits(p.a_fill, a_bytes, "SparseProblem.a_fill"); !st.ok()) return st;
  if (absl::Status st = check_bits(p.b_fill, b_bytes, "SparseProblem.b_fill"); !st.ok()) return st;
  if (absl::Status st = check_entries(p.a, p.m, p.k, a_bytes, "a", "m x k"); !st.ok()) return st;
  return check_entries(p.b, p.k, p.n, b_bytes, "b", "k x n");
}

// p's entries of A (by_row) or B as marks in o's buffer, by launch, then by offset;
// those that hold the fill need no write.
std::vector<Mark> marks_of(const dsl::probe::SparseProblem& p, const Operand& o, bool by_row,
                           uint32_t fill, int64_t k) {
  std::vector<Mark> out;
  const int64_t lines = o.lines;
  for (const dsl::probe::SparseProblem::Entry& e : by_row ? p.a : p.b) {
    if (e.bits == fill) continue;
    const int64_t line = by_row ? e.row : e.col, kk = by_row ? e.col : e.row;
    out.push_back(Mark{.block = line / lines, .line = line % lines, .at = o.at(line % lines, kk, k),
                       .bits = e.bits});
  }
  std::sort(out.begin(), out.end(), [](const Mark& x, const Mark& y) {
    return std::pair(x.block, x.at) < std::pair(y.block, y.at);
  });
  return out;
}

// The most bytes of D one queued batch holds (run_sparse_batch splits larger ones).
constexpr uint64_t kBatchOutputBytes = uint64_t{256} << 20;

}  // namespace

absl::StatusOr<std::vector<uint32_t>> CublasBlackBox::run_sparse(
    const dsl::probe::SparseProblem& p) {
  Impl& im = *impl_;
  const GemmShape& s = im.shape;
  if (absl::Status st = check_sparse(p, s, im.a.bytes, im.b.bytes); !st.ok()) return st;
  // [first, last) of the marks of launch `block`, from `first` on.
  auto block_end = [](const std::vector<Mark>& v, size_t first, int64_t block) {
    while (first < v.size() && v[first].block == block) ++first;
    return first;
  };

  absl::MutexLock lock(&im.mu);
  ++im.calls;
  const std::vector<Mark> a_marks = marks_of(p, im.a, true, p.a_fill, s.k);
  const std::vector<Mark> b_marks = marks_of(p, im.b, false, p.b_fill, s.k);
  if (absl::Status st = im.ensure_fill(im.a, p.a_fill, std::min(s.m, p.m)); !st.ok()) return st;
  if (absl::Status st = im.ensure_fill(im.b, p.b_fill, std::min(s.n, p.n)); !st.ok()) return st;
  std::vector<uint32_t> result(static_cast<size_t>(p.m * p.n));
  if (im.scatters()) {
    // Per launch one list of byte writes (A's entries on the row pass's first launch,
    // B's on every launch) and one of the fill back (B's, and A's on the pass's last).
    size_t a_first = 0;
    for (int64_t i0 = 0; i0 < p.m; i0 += s.m) {
      const int64_t rows = std::min(s.m, p.m - i0);
      while (a_first < a_marks.size() && a_marks[a_first].block < i0 / s.m) ++a_first;
      const size_t a_last = block_end(a_marks, a_first, i0 / s.m);
      size_t b_first = 0;
      for (int64_t j0 = 0; j0 < p.n; j0 += s.n) {
        const int64_t cols = std::min(s.n, p.n - j0);
        const bool last_col_pass = j0 + s.n >= p.n;
        while (b_first < b_marks.size() && b_marks[b_first].block < j0 / s.n) ++b_first;
        const size_t b_last = block_end(b_marks, b_first, j0 / s.n);
        im.writes.clear();
        im.restores.clear();
        if (j0 == 0) {
          im.a_restores.clear();
          im.add_writes(im.a, a_marks, a_first, a_last, p.a_fill, im.writes, im.a_restores);
        }
        im.add_writes(im.b, b_marks, b_first, b_last, p.b_fill, im.writes, im.restores);
        if (last_col_pass) {
          im.restores.insert(im.restores.end(), im.a_restores.begin(), im.a_restores.end());
        }
        if (absl::Status st = im.scatter_launch_restore(rows, cols, i0, j0, p.n, result);
            !st.ok()) {
          return st;
        }
        if (b_first < b_last) im.b.fill = p.b_fill;
        if (last_col_pass && a_first < a_last) im.a.fill = p.a_fill;
      }
    }
    return result;
  }
  std::vector<Patch> a_patches, b_patches;
  size_t a_first = 0;
  for (int64_t i0 = 0; i0 < p.m; i0 += s.m) {
    const int64_t rows = std::min(s.m, p.m - i0);
    while (a_first < a_marks.size() && a_marks[a_first].block < i0 / s.m) ++a_first;
    const size_t a_last = block_end(a_marks, a_first, i0 / s.m);
    if (absl::Status st = im.patch(im.a, a_marks, a_first, a_last, p.a_fill, a_patches); !st.ok()) {
      return st;
    }
    size_t b_first = 0;
    for (int64_t j0 = 0; j0 < p.n; j0 += s.n) {
      const int64_t cols = std::min(s.n, p.n - j0);
      while (b_first < b_marks.size() && b_marks[b_first].block < j0 / s.n) ++b_first;
      const size_t b_last = block_end(b_marks, b_first, j0 / s.n);
      if (absl::Status st = im.patch(im.b, b_marks, b_first, b_last, p.b_fill, b_patches);
          !st.ok()) {
        return st;
      }
      if (absl::Status st = im.launch_and_read(rows, cols, i0, j0, p.n, result); !st.ok()) {
        return st;
      }
      if (absl::Status st = im.restore(im.b, b_patches, p.b_fill); !st.ok()) return st;
    }
    if (absl::Status st = im.restore(im.a, a_patches, p.a_fill); !st.ok()) return st;
  }
  return result;
}

absl::StatusOr<std::vector<std::vector<uint32_t>>> CublasBlackBox::run_sparse_batch(
    const std::vector<dsl::probe::SparseProblem>& ps) {
  Impl& im = *impl_;
  const GemmShape& s = im.shape;
  for (const dsl::probe::SparseProblem& p : ps) {
    if (absl::Status st = check_sparse(p, s, im.a.bytes, im.b.bytes); !st.ok()) return st;
  }
  std::vector<std::vector<uint32_t>> results;
  if (ps.empty()) return results;
  bool queue = true;
  for (const dsl::probe::SparseProblem& p : ps) {
    queue = queue && p.m <= s.m && p.n <= s.n && p.a_fill == ps[0].a_fill && p.b_fill == ps[0].b_fill;
  }
  if (queue) {
    absl::MutexLock lock(&im.mu);
    queue = im.scatters();
  }
  if (!queue) {
    for (const dsl::probe::SparseProblem& p : ps) {
      absl::StatusOr<std::vector<uint32_t>> r = run_sparse(p);
      if (!r.ok()) return r.status();
      results.push_back(*std::move(r));
    }
    return results;
  }
  // D of one problem: the whole shape's output (each problem its own), every one at a
  // 256-byte boundary, the alignment cuBLASLt's heuristic assumes of its pointers (its
  // preference's default minimum alignments) and that a fresh buffer has.
  const uint64_t d_bytes = (static_cast<uint64_t>(s.m * s.n) * im.eo + 255) / 256 * 256;
  const size_t per = static_cast<size_t>(std::max<uint64_t>(1, kBatchOutputBytes / d_bytes));
  for (size_t at = 0; at < ps.size(); at += per) {
    if (absl::Status st = im.run_queued(ps.data() + at, ps.data() + std::min(ps.size(), at + per), d_bytes,
                                        results);
        !st.ok()) {
      return st;
    }
  }
  return results;
}

absl::Status CublasBlackBox::Impl::run_queued(const dsl::probe::SparseProblem* first,
                                             const dsl::probe::SparseProblem* last, uint64_t d_bytes,
                                             std::vector<std::vector<uint32_t>>& results) {
  const GemmShape& s = shape;
  const size_t count = static_cast<size_t>(last - first);
  absl::MutexLock lock(&mu);
  calls += static_cast<int64_t>(count);
  const uint32_t a_fill = first->a_fill, b_fill = first->b_fill;
  int64_t rows = 0, cols = 0;
  for (const dsl::probe::SparseProblem* p = first; p != last; ++p) {
    rows = std::max(rows, p->m);
    cols = std::max(cols, p->n);
  }
  if (absl::Status st = ensure_fill(a, a_fill, rows); !st.ok()) return st;
  if (absl::Status st = ensure_fill(b, b_fill, cols); !st.ok()) return st;
  // Every problem's patch list then restore list (A's and B's entries in both), each
  // at an 8-byte boundary, in one upload.
  struct Lists {
    size_t patch_at = 0, patches = 0, restore_at = 0, restores = 0;
  };
  std::vector<Lists> at(count);
  host.clear();
  auto aligned = [&] { return (host.size() + 7) / 8 * 8; };
  for (size_t i = 0; i < count; ++i) {
    const std::vector<Mark> a_marks = marks_of(first[i], a, true, a_fill, s.k);
    const std::vector<Mark> b_marks = marks_of(first[i], b, false, b_fill, s.k);
    writes.clear();
    restores.clear();
    add_writes(a, a_marks, 0, a_marks.size(), a_fill, writes, restores);
    add_writes(b, b_marks, 0, b_marks.size(), b_fill, writes, restores);
    at[i].patch_at = aligned();
    at[i].patches = writes.size();
    encode_byte_scatter_list(writes, host, at[i].patch_at);
    at[i].restore_at = aligned();
    at[i].restores = restores.size();
    encode_byte_scatter_list(restores, host, at[i].restore_at);
  }
  if (absl::Status st = upload_lists(host.size()); !st.ok()) return st;
  const uint64_t all_d = d_bytes * count;
  if (absl::Status st = grow(batch_d, all_d); !st.ok()) return st;
  // Queued on the default stream, where cuBLASLt runs too: each problem's patch, its
  // matmul into its own D, its restore; the one read below waits for all of them.
  for (size_t i = 0; i < count; ++i) {
    if (at[i].patches > 0) {
      if (absl::Status st = scatter->run(0, lists.address() + at[i].patch_at, at[i].patches); !st.ok()) {
        return st;
      }
    }
    absl::StatusOr<MatmulReport> r = lt->matmul_at(s, a.buf.address(), b.buf.address(), batch_d.address() + i * d_bytes);
    if (!r.ok()) return r.status();
    ++launches;
    if (at[i].restores > 0) {
      if (absl::Status st = scatter->run(0, lists.address() + at[i].restore_at, at[i].restores); !st.ok()) {
        return st;
      }
    }
  }
  // Every patch has its restore queued: the operands hold the fill again.
  a.fill = a_fill;
  b.fill = b_fill;
  out.resize(static_cast<size_t>(all_d));
  if (absl::Status st = batch_d.copy_to_host(out.data(), out.size()); !st.ok()) return st;
  for (size_t i = 0; i < count; ++i) {
    std::vector<uint32_t> result(static_cast<size_t>(first[i].m * first[i].n));
    read_block(i * static_cast<size_t>(d_bytes / eo), first[i].m, first[i].n, 0, 0, first[i].n, result);
    results.push_back(std::move(result));
  }
  return absl::OkStatus();
}

dsl::probe::SparseBatchBox CublasBlackBox::as_sparse_batch_box() {
  std::shared_ptr<CublasBlackBox> self = shared_from_this();
  return [self](const std::vector<dsl::probe::SparseProblem>& ps) { return self->run_sparse_batch(ps); };
}

}  // namespace fixbits::profile
