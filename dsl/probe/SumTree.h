// SumTree: the whole summation tree a black-box GEMM builds for one output element,
// recovered by experiment, for kernels no GemmDesc family models yet (a first look
// at cuBLAS's dot/GEMV path, whose reduction spans blocks and kernels).
//
// Contract:
//   * The tree is the one induced on a window of leaves [first, first + length) of
//     the K axis (or on an explicit list of leaves): every product outside it is zero,
//     so the tree shows how its products meet, whatever the kernel does with the zeros.
//   * Experiment (the count form of the ±L pair, as FPRev uses it): +L at pivot i,
//     -L at j, a small "one" at every other leaf of the set being split. A one that
//     meets an L before the two cancel is lost (absorbed), so the output counts the
//     ones outside the subtree of LCA(i, j). Values: L = 2^30 (a = ±2^15 times
//     b = 2^15), one = 2^-7 (a = 2^-22 times b = 2^15); every partial sum of ones is
//     under ulp_f32(2^30) / 2 = 2^6 and exact, so the count is exact for any binary
//     tree of f32 roundings. b is 2^15 at every k (one shared column), so the
//     experiments of one pivot run as rows of one problem (the box batches them).
//   * Limits: the inputs must hold 2^15 and 2^-22 (f16: a subnormal, exact; bf16,
//     f32) and the output must hold every count times 2^-7 exactly: `length` is at
//     most 2^(mantissa bits + 1) of out_dtype (the list's size likewise) (f16: 2048, bf16: 256, f32: 4096 by the
//     instrument's own cap). Kernels that hold a partial sum below f32 (an f16 or
//     bf16 partial) overflow at L and are reported, not mis-read.
//   * A result that is not a count, or counts that do not nest into one binary tree
//     around the pivot, return FailedPrecondition naming the pivot and the leaf: the
//     kernel is not a binary tree of f32 roundings on this window. A matrix
//     instruction's exact sum of its group is read as a nest from the group's first
//     leaf (its products are aligned to the largest and the ones fall below it, as if
//     added one by one after it): session 10's wgmma trees show groups of 16 that way. More than
//     `max_rows` experiment rows in all is ResourceExhausted. Bad options are
//     InvalidArgument naming the field.
//   * The text form is canonical: a leaf is its K index, an inner node "(x y)" with
//     the child holding the smaller leaf first, so two kernels with one tree print
//     the same text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/FloatFormat.h"
#include "dsl/probe/Experiments.h"

namespace fixbits::dsl::probe {

struct SumTreeOptions {
  int64_t k = 0;        // the GEMM's K (the box's shape)
  int64_t first = 0;    // the window's first leaf
  int64_t length = 0;   // leaves in the window (>= 1)
  // Non-empty: these leaves instead of the window (ascending, distinct, in [0, k)): a
  // tree over leaves far apart (two passes of a grid-stride loop, the first element of
  // every block) without the counts of a window that spans them.
  std::vector<int64_t> leaves;
  int64_t max_rows = 1 << 20;  // experiment rows in all
  int64_t rows_per_call = 512; // experiment rows per black-box call
};

struct SumTree {
  struct Node {
    int64_t leaf = -1;          // the K index of a leaf; -1 for an inner node
    int left = -1, right = -1;  // children of an inner node (left holds the smaller leaf)
    int64_t min_leaf = 0;       // the smallest leaf below
    int64_t leaves = 1;         // leaves below
  };
  std::vector<Node> nodes;
  int root = -1;
  int64_t rows = 0;   // experiment rows run
  int64_t calls = 0;  // black-box calls
};

absl::StatusOr<SumTree> recover_sum_tree(const GemmBlackBox& box, DType a, DType b, DType out,
                                         const SumTreeOptions& options);

// The canonical text (see the contract), e.g. "((0 4) (1 5))".
std::string to_string(const SumTree& t);

}  // namespace fixbits::dsl::probe
