// CublasBlackBox: cuBLASLt, at one fixed shape, as the probe's black box
// (dsl::probe::GemmBlackBox, or SparseBlackBox for problems given by their entries),
// so recover_gemm_desc() runs against the real library.
//
// Contract:
//   * The box owns device matrices of the FULL shape (m x k, k x n, m x n), zeroed
//     once, and runs the algorithm cuBLASLt's heuristic picks for that full shape on
//     every call (CublasLt caches it): the probe measures the kernel the shape gets,
//     not the one a 1 x 1 GEMM would get.
//   * Invariant between calls: A holds data only in its first `a dirty` rows and B
//     only in its first `b dirty` columns, the rest of both is zero; after a sparse
//     call those rows/columns all hold the call's fill (the "fill state"), after a
//     dense call whatever it uploaded (fill state unknown).
//   * run(p): p (p.m x p.n x p.k, bit patterns in the shape's dtypes, either operand
//     layout) must have p.k == shape.k. Its rows are written into the first rows of A
//     and its columns into the first columns of B (a strided slice goes through
//     PitchedCopy), rows/columns dirty from before are zeroed, and D's first
//     p.m x p.n block is read back as out_dtype bits (row-major). When p.m > shape.m
//     or p.n > shape.n the problem runs in several launches of shape.m rows /
//     shape.n columns each; every output element is computed by the full-shape
//     kernel at a position (i < shape.m, j < shape.n). Uploads (rows + cols) x K
//     elements per launch.
//   * run_sparse(p) returns exactly run(densify(p)), in the same launches. It writes
//     a fill densely only when the fill state does not already cover it (another
//     fill, more rows/columns than held, or a dense call in between: rare, the
//     probe's fills are constant); then per launch it writes only the entries that
//     differ from the fill, launches, reads D, and writes the fill back over them.
//     How the entries are written is decided by the first run_sparse call, once per
//     box (scatters_sparse_entries() says which):
//       - ByteScatter (when ByteScatter::load succeeds: a CUDA device): per launch
//         one host-to-device copy of a patch list and a restore list (each byte of an
//         entry one record, at its absolute device address), a scatter launch before
//         the matmul and one after the read, all on the default stream cuBLASLt runs
//         on. Cost per launch: one small copy and two tiny launches.
//       - otherwise (a HIP device, or a driver that cannot load its PTX, like a CPU
//         test driver that does not emulate it): one synchronous copy per run of
//         nearby entries, and one each to restore them: O(entries) small copies.
//     Plus, either way, a dense fill when the state changes. Rows/columns past p.m /
//     p.n may hold the fill instead of zero; no element read back depends on them.
//   * run_sparse_batch(ps) returns {run_sparse(p) for p in ps}, each in its own
//     launch, but with every launch queued before any output is read: one upload of
//     all the patch and restore lists, then per problem a scatter, the matmul into a
//     D of its own and a scatter back, then one download of every D. Two synchronous
//     copies per batch instead of two per problem (session 28: a probe at 1x17x417649
//     made 200,000 calls of about 0.15 ms; the copies' share of that is inferred, not
//     measured). Problems
//     that do not fit the shape, differ in fill from the batch's first, or meet a box
//     that cannot scatter are run one by one with run_sparse.
//   * Assumed, not checked: an output element's bits do not depend on where in D it
//     sits (the probe reads elements (0..3, 0..3)), nor on A's other rows or B's
//     other columns. The sample checks it on full-shape draws at positions spread
//     over D.
//   * Bad problems (wrong k, wrong sizes, a pattern wider than its dtype, alpha/beta,
//     c or bias asked for; for sparse ones an entry out of range or listed twice) are
//     InvalidArgument naming the field; device errors pass through (a failed sparse
//     call leaves the fill state unknown, so the next one rewrites it). Calls are
//     serialized (one lock).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/probe/Experiments.h"
#include "dsl/reference/Reference.h"
#include "runtime/CublasLt.h"

namespace fixbits::profile {

using runtime::CublasLt;
using runtime::GemmShape;
using runtime::MatmulReport;

class CublasBlackBox : public std::enable_shared_from_this<CublasBlackBox> {
 public:
  static absl::StatusOr<std::shared_ptr<CublasBlackBox>> create(std::shared_ptr<CublasLt> lt,
                                                                const GemmShape& shape);
  ~CublasBlackBox();

  // out = A x B for `p`, p.m x p.n row-major out_dtype bits.
  absl::StatusOr<std::vector<uint32_t>> run(const dsl::reference::GemmProblem& p);

  // run(densify(p)), uploading only p's entries (see the contract).
  absl::StatusOr<std::vector<uint32_t>> run_sparse(const dsl::probe::SparseProblem& p);

  absl::StatusOr<std::vector<std::vector<uint32_t>>> run_sparse_batch(
      const std::vector<dsl::probe::SparseProblem>& ps);

  // The probe's view of run() / run_sparse() / run_sparse_batch(); the function keeps
  // this box alive.
  dsl::probe::GemmBlackBox as_black_box();
  dsl::probe::SparseBlackBox as_sparse_black_box();
  dsl::probe::SparseBatchBox as_sparse_batch_box();

  const GemmShape& shape() const;
  const MatmulReport& report() const;  // the heuristic's answer for shape()
  int64_t calls() const;               // problems run so far (run, run_sparse, each of a batch)
  int64_t launches() const;            // cublasLtMatmul launches so far
  // Whether run_sparse writes its entries with ByteScatter (false before its first call).
  bool scatters_sparse_entries() const;

  struct Impl;

 private:
  explicit CublasBlackBox(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fixbits::profile
