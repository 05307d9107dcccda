// Experiments: the numerical instrument of black-box reconstruction (reference §4).
// Two extreme values of opposite sign, +L and -L, and one tiny value r are placed
// on an otherwise empty K axis of a 1 x 1 GEMM; whether r reaches the output tells
// whether r met one L in some rounding before the two L cancelled.
//
// Contract:
//   * probe_values(a, b) gives L and r as exact products a*b of representable
//     inputs, chosen so that r is lost in ANY rounding it shares with one L (an
//     f32 add: r < ulp_f32(L)/2; a matrix instruction: r is at or below its
//     alignment quantum) and r survives alone (representable in f16/bf16/f32
//     partials and outputs). The constants (documented, never tuned per kernel):
//       f16, bf16, tf32, f32 inputs: L = 2^10 (a = 2^14, b = 2^-4),
//                                    r = 2^-15 (a = 2^-11, b = 2^-4);  the paper's pair
//                                    of products, with every b the fill 2^-4
//       f8e4m3, f8e5m2 inputs:       L = 2^8  (a = 2^8,  b = 1),
//                                    r = 2^-18 (a = 2^-9, b = 2^-9)
//     (fp8: 2^8 is the largest power of two E4M3 holds; 2^-18 < ulp_f32(2^8)/2 =
//     2^-16 and under the fp8 instruction's 13-bit alignment quantum 2^-5. Its r
//     needs a b of its own; E4M3 has no b that takes both products.)
//     Only the products reach the sums (a kernel multiplies exactly, or rounds
//     2^14 * 2^-4 and 2^-11 * 2^-4 to themselves), so the factors are free. With b
//     the fill at every index, a placement lives in A alone: placements whose r sits
//     at different indices share B's one column and batch into one call (below), where
//     r's own b factor gave each r index a column of its own (one placement per call
//     at an N = 1 shape).
//   * classify() reads an output as kZero (±0), kR (exactly r in out_dtype) or
//     kOther. out_dtype must be f32, f16 or bf16 (fp8 outputs cannot hold r).
//   * Batching (BatchLimits): placements run together share one black-box call of a
//     rows x cols problem. Each placement gets a row of its own (A row = its a vector)
//     and reads D[row][col], where col is the column holding its b vector (placements
//     with equal b vectors share a column). With `swap` and equal a/b dtypes, when
//     cols > rows the roles turn: each placement gets a column (B column = its a
//     vector) and rows hold the distinct b vectors; the products a[k]*b[k] are the
//     same exact values either way. Assumed, as for the random draws: an output
//     element's bits do not depend on where in D it sits or on the other rows and
//     columns. Limits of 1 x 1 (the default) give one call per placement, as before.
//   * With a SparseBatchBox (use_sparse_batch_box), the same batches go BatchLimits::
//     problems at a time into one call; outcomes are the same, calls fewer.
//   * A placement already run (same marks) is answered from the instrument's memo,
//     not run again: the walks of several families of one probe share it.
//   * A black-box error or an output of the wrong size comes back as a Status naming
//     the experiment.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/FloatFormat.h"
#include "dsl/GemmDesc.h"
#include "dsl/reference/Reference.h"

namespace fixbits::dsl::probe {

// The library under test: computes out = A x B for a problem (no epilogue: the
// probe always passes alpha = 1, beta = 0, no c, no bias) and returns out_dtype bits.
using GemmBlackBox =
    std::function<absl::StatusOr<std::vector<uint32_t>>(const reference::GemmProblem&)>;

struct ProbeValues {
  float L = 0, r = 0;                   // the products
  uint32_t L_a = 0, L_b = 0, r_a = 0, r_b = 0;  // their factors, as input bits
  uint32_t fill_b = 0;  // b of every index without a mark (2^-4; fp8: 1.0), in b's dtype
};
ProbeValues probe_values(DType a, DType b);

enum class Outcome : uint8_t { kZero, kR, kOther };
Outcome classify(DType out, float r, uint32_t out_bits);
const char* outcome_name(Outcome o);

// One placement on a K axis: value per index, 0 = empty, 'r', '+' (+L), '-' (-L).
struct Placement {
  int64_t k = 0;
  std::vector<std::pair<int64_t, char>> marks;
};

// The 1 x 1 x K problem of a placement (a: 1 x K, b: K x 1, both row-major).
reference::GemmProblem make_problem(const Placement& p, DType a, DType b);

// A placement's marks as the entries of reference::gemm_sparse_element over the fill
// a = +0, b = v.fill_b (ascending K; marks outside [0, p.k) are left out, a later mark at
// one index wins): make_problem writes these into its fill, the judge evaluates them.
// v = probe_values(a, b).
std::vector<reference::SparseEntry> sparse_entries(const Placement& p, const ProbeValues& v,
                                                   DType a);

// A problem whose elements are all one fill value per operand except a few listed
// entries: how a batch of placements (rows of zeros with three marks each, b columns
// of ones with r's factor at one index) reaches a black box without K x placements
// elements on either side. a is m x k, b is k x n; an entry's (row, col) is its
// position in that matrix. Entry positions are distinct per operand, in any order.
struct SparseProblem {
  struct Entry {
    int64_t row = 0, col = 0;
    uint32_t bits = 0;
  };
  int64_t m = 0, n = 0, k = 0;
  uint32_t a_fill = 0, b_fill = 0;  // bits of every element not listed
  std::vector<Entry> a, b;
  // The outputs (row, col) the caller reads; empty: all. A box may leave the others 0
  // (the reference box computes only these; a device computes them all anyway).
  std::vector<std::pair<int64_t, int64_t>> reads;
};
// The same problem with every element written out (row-major a and b).
reference::GemmProblem densify(const SparseProblem& p);
// A black box that takes the sparse form (CublasBlackBox::as_sparse_black_box uploads
// only the entries; the reference evaluates only the entries' K indices).
using SparseBlackBox = std::function<absl::StatusOr<std::vector<uint32_t>>(const SparseProblem&)>;
// The sparse form through the reference of `d`: gemm_sparse_element per output.
SparseBlackBox reference_sparse_box(const GemmDesc& d);
// Several sparse problems in one call, answered in order, each as the one-problem box
// answers it (CublasBlackBox::as_sparse_batch_box queues every launch before it reads
// any output back).
using SparseBatchBox = std::function<absl::StatusOr<std::vector<std::vector<uint32_t>>>(
    const std::vector<SparseProblem>&)>;
// A batch box that answers each problem through `one`, in order (the first error ends
// the call): e.g. one_by_one(reference_sparse_box(d)) on the CPU.
SparseBatchBox one_by_one(SparseBlackBox one);

// The largest problem one batched black-box call may have (both >= 1).
struct BatchLimits {
  int64_t rows = 1, cols = 1;
  bool swap = true;  // let a placement take a column when columns are the wider side
  // Problems (each one batch of placements) one call of a SparseBatchBox takes (>= 1).
  int64_t problems = 1;
};

class Instrument {
 public:
  Instrument(GemmBlackBox box, DType a, DType b, DType out, BatchLimits limits = {})
      : box_(std::move(box)), a_(a), b_(b), out_(out), v_(probe_values(a, b)),
        limits_(limits) {}

  // Placements go to `sparse` instead of the dense box from now on (one call per batch,
  // the same batches); random draws (call()) still go to the dense box.
  void use_sparse_box(SparseBlackBox sparse) { sparse_ = std::move(sparse); }
  // Placements go to `batch` instead, BatchLimits::problems batches a call (the same
  // batches, the same outcomes, fewer calls); random draws still go to the dense box.
  void use_sparse_batch_box(SparseBatchBox batch) { sparse_batch_ = std::move(batch); }

  const ProbeValues& values() const { return v_; }
  DType a_dtype() const { return a_; }
  DType b_dtype() const { return b_; }
  DType out_dtype() const { return out_; }
  int64_t calls() const { return calls_; }      // black-box calls so far (a batch call: one)
  int64_t placements() const { return runs_; }  // placements answered by the box

  // Runs one placement; `what` names the experiment in errors.
  absl::StatusOr<Outcome> run(const Placement& p, const std::string& what);
  // Runs placements (all of one K) in as few calls as the limits allow; the
  // outcomes in order. `what(i)` names placement i in errors.
  absl::StatusOr<std::vector<Outcome>> run_all(const std::vector<Placement>& ps,
                                               const std::function<std::string(size_t)>& what);
  // Raw call (random draws): the black box's bits for `problem`.
  absl::StatusOr<std::vector<uint32_t>> call(const reference::GemmProblem& problem,
                                             const std::string& what);

  // The pair walk: r at 0, +L at m, -L at m + 1 for m = 1 .. K-2. Result index m
  // (index 0 unused, kR).
  absl::StatusOr<std::vector<Outcome>> pair_walk(int64_t k);

 private:
  using Marks = std::vector<std::pair<int64_t, char>>;
  // A placement's a and b vectors as the K indices where they differ from the fill
  // (a = +0, b = fill_b), ascending.
  using Sparse = std::vector<std::pair<int64_t, uint32_t>>;
  struct Vectors {
    Sparse a, b;
  };
  Vectors vectors_of(const Placement& p) const;
  // The problem of placements `idx` (none memoized, all fitting the limits), whose
  // vectors are vecs[i]: placement t reads output reads[t].
  SparseProblem batch_problem(const std::vector<Vectors>& vecs, int64_t k, const std::vector<size_t>& idx,
                              bool swapped) const;
  // The outcomes of placements `idx` from their problem's output bits.
  void take_outcomes(const SparseProblem& prob, const std::vector<uint32_t>& bits,
                     const std::vector<size_t>& idx, std::vector<Outcome>* out);
  // One call for placements `idx`.
  absl::Status run_batch(const std::vector<Vectors>& vecs, int64_t k, const std::vector<size_t>& idx,
                         bool swapped, const std::function<std::string(size_t)>& what,
                         std::vector<Outcome>* out);
  // One SparseBatchBox call for the problems of several batches (placements idxs[j]).
  absl::Status run_batches(const std::vector<SparseProblem>& probs,
                           const std::vector<std::vector<size_t>>& idxs,
                           const std::function<std::string(size_t)>& what, std::vector<Outcome>* out);

  GemmBlackBox box_;
  SparseBlackBox sparse_;
  SparseBatchBox sparse_batch_;
  DType a_, b_, out_;
  ProbeValues v_;
  BatchLimits limits_;
  int64_t calls_ = 0, runs_ = 0;
  int64_t memo_k_ = -1;                 // the K the memo holds placements of
  std::map<Marks, Outcome> memo_;       // sorted marks -> outcome
};

}  // namespace fixbits::dsl::probe
