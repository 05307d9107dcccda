// Reference: the exact output bits a descriptor defines, computed on the CPU with
// real binary32 operations (fma where the descriptor says fused).
//
// Invariant: reference::gemm / reference::reduce are the definition of a
// descriptor's bits; every GPU kernel fixbits emits is tested against them with
// memcmp. Inputs are given as raw bit patterns of their dtype (uint32_t each, low
// bits used) so fp8/fp16/bf16 need no host type. Outputs likewise.
// Bad input (wrong sizes, invalid descriptor) returns InvalidArgument naming it.
//
// Points the descriptor headers leave open, fixed here (GPU kernels must match):
//   gemm: an empty K range (or a level with no parts) is +0.0; a short group is
//     padded with +0.0 * +0.0 products; matrix instructions see `in` = a_dtype;
//     split-K merge is r = M(P(p_0)), r = M(r (+)f32 P(p_j)) with P/M rounding to
//     partial_dtype/merge_dtype (RNE, overflow to inf); kRelu is max(e, +0.0) with
//     -0.0 and NaN giving +0.0; c/alpha/beta are read only when alpha_beta, bias
//     only when bias; tf32 inputs ignore their low 13 bits; any other input
//     pattern wider than its dtype is an error.
//   reduce: an empty line gives the identity (-0.0 / -inf / +inf); max/min order
//     -0.0 below +0.0 and propagate NaN; kRmsNorm divides by f32(n) and takes w with
//     one value per line element (cols for kRow, rows for kColumn), in_dtype bits.
//   Both: an f32 output NaN is written as 0x7fffffff (PTX's canonical NaN); narrower
//     outputs use FloatFormat's NaN, the pattern cvt writes (f16/bf16 0x7fff, ...).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/GemmDesc.h"
#include "dsl/ReduceDesc.h"
#include "dsl/reference/MmaModel.h"

namespace fixbits::dsl::reference {

struct GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  bool a_row_major = true;   // a is m x k
  bool b_row_major = true;   // b is k x n
  std::vector<uint32_t> a, b;  // bits in desc.a_dtype / desc.b_dtype
  std::vector<uint32_t> c;     // m x n row-major, out_dtype bits; used when alpha_beta
  std::vector<uint32_t> bias;  // n values, f32 bits; used when desc.bias
  float alpha = 1.0f, beta = 0.0f;
};

// One cut level's fold of its part results at f32, as GemmDesc.h defines it: kChain
// left to right; kTreeUp/kTreeDown a butterfly over the part index padded with -0.0.
// An empty list folds to +0.0.
float fold_parts(std::vector<float> parts, Fold f);

// The lane fold of families gemv and dot (GemmDesc.h): for each offset d in order, every
// lane l sets v[l] = v[l] (+)f32 v[l ^ d], keeping its value when l ^ d is no lane.
// Returns lane 0's value (+0.0 for no lanes).
float fold_lanes(std::span<const float> v, const std::vector<int>& fold);

// m x n row-major output, out_dtype bits. `model` defaults to the sm_90 model.
absl::StatusOr<std::vector<uint32_t>> gemm(const GemmDesc& desc, const GemmProblem& p,
                                           const MmaModel* model = nullptr);

// One K index of a sparse element (below): its a and b bits.
struct SparseEntry {
  int64_t k = 0;
  uint32_t a = 0, b = 0;
};

// The bits gemm(desc, p)[0] gives for the 1 x 1 x K problem p whose a[k], b[k] are
// a_fill, b_fill except at `entries` (ascending, distinct, in [0, k)), equal for every
// descriptor and fill, computed without visiting every index: a run of fill-only steps
// (scalar steps, matrix instructions, mainloop turns, cut parts, merge steps) is
// applied until it stops changing the value. With a = +0 fill (the probe's
// placements) the cost is about entries x depth, not K. Bad input (entry order or
// range, patterns wider than their dtype, invalid desc) is InvalidArgument naming it.
absl::StatusOr<uint32_t> gemm_sparse_element(const GemmDesc& desc, int64_t k, uint32_t a_fill,
                                             uint32_t b_fill, std::span<const SparseEntry> entries,
                                             const MmaModel* model = nullptr);

// gemm_sparse_element for many entry sets of one descriptor, K and fill: the values of
// fill-only steps are kept between calls (the probe's judge asks one candidate about
// thousands of placements). Not thread-safe; `model` (null: sm_90) must outlive it.
class SparseElement {
 public:
  static absl::StatusOr<SparseElement> create(const GemmDesc& desc, int64_t k, uint32_t a_fill,
                                              uint32_t b_fill, const MmaModel* model = nullptr);
  SparseElement(SparseElement&&) noexcept;
  SparseElement& operator=(SparseElement&&) noexcept;
  ~SparseElement();
  absl::StatusOr<uint32_t> eval(std::span<const SparseEntry> entries);

  struct Impl;

 private:
  explicit SparseElement(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct ReduceProblem {
  int64_t rows = 0, cols = 0;  // kRow reduces each row's `cols` elements
  std::vector<uint32_t> x;     // rows x cols row-major, in_dtype bits
  std::vector<uint32_t> w;     // kRmsNorm weight: `cols` values (kRow), in_dtype bits
  float eps = 1e-6f;           // kRmsNorm
};

// Free order (desc.order == kFree), the physical order an unconstrained compiler
// builds for `free_layout` = (E elems_per_thread, L lanes, W warps):
//   1. The block walks the line in chunks of E*L*W elements. Thread (w, l) holds
//      chunk elements [(w*L + l)*E, +E) of every chunk and folds all of them
//      sequentially, chunk by chunk, in index order, into one accumulator that
//      starts at the identity (elements past the line's end are skipped).
//   2. Each warp folds its lanes with a butterfly counting DOWN: for d = L/2, ..., 1
//      every lane sets v[l] = v[l] (+) v[l ^ d]; the warp's result is v[0].
//   3. Warp results are folded sequentially: r = r_0; r = r (+) r_w, w = 1..W-1.
// Example, E=2 L=2 W=1, x[0..8): thread 0 folds x0,x1,x4,x5; thread 1 x2,x3,x6,x7;
// the warp adds the two. The pinned order would give ((x0+x1)+(x2+x3))+((x4+x5)+(x6+x7)).
//
// kSum/kMax/kMin: one value per reduced line (rows for kRow, cols for kColumn),
// out_dtype bits. kRmsNorm/kSoftmax: same shape as x. `free_layout` is used only
// when desc.order == kFree.
absl::StatusOr<std::vector<uint32_t>> reduce(const ReduceDesc& desc, const ReduceProblem& p,
                                             const FreeLayout& free_layout = {});

// OK, or InvalidArgument naming the bad FreeLayout field: elems_per_thread in
// [1, 4096], lanes a power of two in [1, 64], warps in [1, 32].
absl::Status validate_free_layout(const FreeLayout& f);

}  // namespace fixbits::dsl::reference
