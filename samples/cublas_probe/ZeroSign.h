// ZeroSign: the sign cuBLAS gives a sum whose every product is -0.0, against the
// sign the descriptor's reference gives, per shape.
//
// Why: the match found bf16 output-type split shapes at K = 2-3 where cuBLAS writes
// +0.0 and the descriptor -0.0 (docs/cublas.md). A sum of -0.0 products is -0.0 only
// when nothing in its chain adds a +0.0: an accumulator seeded with +0.0, an empty
// split part (K < P * span) merged as +0.0, a +0.0 zero-padding product. The ±L/r
// probe never draws such a sum, so this experiment asks for it directly.
//
// A second input set, "tiny", makes every product a tiny negative f32 (A = -t,
// B = +t, zero_sign_inputs) so a split part is a nonzero f32 that a narrow partial
// rounds to -0.0: it tells a merge seeded with +0.0 from one seeded with part 0
// even when every part is nonempty.
//
// Contract: for each shape and each input set (zero: A = -1.0, B = +0.0, every
// product -0.0; tiny as above), the inputs go through the full-shape kernel
// (CublasBlackBox), D[0][0] is read back, and reference::gemm of the descriptor
// profile::cublas_answer gives the shape on the same inputs. One line per shape:
//   zero-sign <shape> P=<split> <answer algo> zero: cuBLAS 0x.... descriptor 0x....
//   same|DIFFER; tiny: ...  (descriptor)
// (or why the shape was not compared), then a summary of the sign pairs per input
// set. Device and library errors of one shape are printed on its line; the function
// never aborts.
#pragma once

#include <cstdint>
#include <cstdio>
#include <vector>

#include "dsl/FloatFormat.h"
#include "runtime/CublasLt.h"

namespace fixbits::samples {

struct ZeroSignSummary {
  int compared = 0, differ = 0, skipped = 0;
};

// The experiment's input sets for input dtype `in`: A and B each one repeated value.
struct ZeroSignInputs {
  const char* name;
  uint32_t a, b;  // bit patterns of `in`
};
std::vector<ZeroSignInputs> zero_sign_inputs(DType in);

ZeroSignSummary print_zero_signs(const std::shared_ptr<runtime::CublasLt>& lt,
                                 const std::vector<runtime::GemmShape>& shapes, std::FILE* out);

// Shapes for the experiment: up to `per_class` probe points (first and last) of
// every class of the embedded sm_90 table that has a descriptor.
std::vector<runtime::GemmShape> zero_sign_table_shapes(int per_class);

}  // namespace fixbits::samples
