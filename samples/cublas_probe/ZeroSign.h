// ZeroSign: the sign cuBLAS gives a sum whose every product is -0.0, against the
// sign the descriptor's reference gives, per shape.
//
// Why: the match found bf16 output-type split shapes at K = 2-3 where cuBLAS writes
// +0.0 and the descriptor -0.0 (docs/cublas.md). A sum of -0.0 products is -0.0 only
// when nothing in its chain adds a +0.0: an accumulator seeded with +0.0, an empty
// split part (K < P * span) merged as +0.0, a +0.0 zero-padding product. The ±L/r
// probe never draws such a sum, so this experiment asks for it directly.
//
// Contract: for each shape, A = -1.0 everywhere and B = +0.0 everywhere (every
// product -0.0; fp8: the same values in its format) through the full-shape kernel
// (CublasBlackBox), D[0][0] read back, and reference::gemm of the descriptor
// profile::cublas_answer gives the shape on the same inputs. One line per shape:
//   zero-sign <shape> P=<split> <answer algo> cuBLAS 0x.... descriptor 0x.... same|DIFFER
// (or why the shape was not compared), then a summary of the sign pairs. Device and
// library errors of one shape are printed on its line; the function never aborts.
#pragma once

#include <cstdio>
#include <vector>

#include "runtime/CublasLt.h"

namespace fixbits::samples {

struct ZeroSignSummary {
  int compared = 0, differ = 0, skipped = 0;
};

ZeroSignSummary print_zero_signs(const std::shared_ptr<runtime::CublasLt>& lt,
                                 const std::vector<runtime::GemmShape>& shapes, std::FILE* out);

// Shapes for the experiment: up to `per_class` probe points (first and last) of
// every class of the embedded sm_90 table that has a descriptor.
std::vector<runtime::GemmShape> zero_sign_table_shapes(int per_class);

}  // namespace fixbits::samples
