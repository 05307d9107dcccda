// CublasBlackBox: cuBLASLt, at one fixed shape, as the probe's black box
// (dsl::probe::GemmBlackBox), so recover_gemm_desc() runs against the real library.
//
// Contract:
//   * The box owns device matrices of the FULL shape (m x k, k x n, m x n), zeroed
//     once, and runs the algorithm cuBLASLt's heuristic picks for that full shape on
//     every call (CublasLt caches it): the probe measures the kernel the shape gets,
//     not the one a 1 x 1 GEMM would get.
//   * A probe problem p (p.m x p.n x p.k, bit patterns in the shape's dtypes, either
//     operand layout) must have p.k == shape.k. Its rows are written into the first
//     rows of A and its columns into the first columns of B (a strided slice goes
//     through PitchedCopy), the rest of both matrices is zero, and D's first p.m x p.n
//     block is read back as out_dtype bits (row-major). When p.m > shape.m or
//     p.n > shape.n the problem runs in several launches of shape.m rows / shape.n
//     columns each; every output element is computed by the full-shape kernel at a
//     position (i < shape.m, j < shape.n).
//   * Assumed, not checked: an output element's bits do not depend on where in D it
//     sits (the probe reads elements (0..3, 0..3)). The sample checks it on full-shape
//     draws at positions spread over D.
//   * Bad problems (wrong k, wrong sizes, a pattern wider than its dtype, alpha/beta,
//     c or bias asked for) are InvalidArgument naming the field; device errors pass
//     through. Calls are serialized (one lock).
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

  // The probe's view of run(); the function keeps this box alive.
  dsl::probe::GemmBlackBox as_black_box();

  const GemmShape& shape() const;
  const MatmulReport& report() const;  // the heuristic's answer for shape()
  int64_t calls() const;               // run() calls so far
  int64_t launches() const;            // cublasLtMatmul launches so far

  struct Impl;

 private:
  explicit CublasBlackBox(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fixbits::profile
