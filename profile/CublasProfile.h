// CublasProfile: the arch profiles of cuBLASLt, (arch, shape) -> the GemmDesc whose
// reference bits equal cuBLASLt's output (reference §4). The table is the file
// profile/data/cublas_<arch>.tsv.gz (fixbits-cublas-scan's output, gzip'ed), linked into
// the library (EmbeddedTable.h), so a clean clone needs no data file at run time.
//
// How far to trust it (fixbits-cublas-match on the H200, 10,000 random shapes per dtype,
// two input draws each; docs/cublas.md, "Session 9"): of the shapes whose class has a
// descriptor, cublas() gave cuBLAS's bytes on 85.3% (f16), 84.0% (bf16) and 100% (fp8);
// almost every miss is the map choosing another class than cuBLASLt's heuristic does
// between its grid points. cublas_answer(), which asks the heuristic, gave 98.6%, 98.7%
// and 100%. 11-13% of f16/bf16 shapes fall in classes without a descriptor
// (FailedPrecondition naming the class). Either way the descriptor fixes the bits: the
// kernel's output is the same on every run; it is cuBLAS's only where the match says so.
//
// Contract:
//   cublas(arch, shape) looks `shape` (its M, N, K, dtypes and layout) up in the
//   embedded table of `arch` (CublasTable.h, "semantics of a lookup"). Errors name the
//   field: InvalidArgument for an arch with no table compiled in; FailedPrecondition
//   when the committed table holds no scan yet (or a class without a validated descriptor);
//   NotFound for a dtype/layout family the table lacks; OutOfRange naming
//   GemmShape.m, .n or .k outside the scanned range.
//   cublas(arch, {m, n, k}, dtype) is the same for cuBLASLt's usual call of that input
//   dtype: f16 -> f16 and bf16 -> bf16 with A and B row-major (torch's a @ b), fp8
//   (e4m3) -> f16 in the TN layout cuBLASLt requires.
// Example:
//   absl::StatusOr<dsl::GemmDesc> d = profile::cublas(profile::sm90, {1, 4096, 4096}, DType::kF16);
//   auto programs = dsl::gemm(*d);   // output bytes equal cuBLAS's for 1x4096x4096
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "dsl/GemmDesc.h"
#include "profile/CublasTable.h"
#include "runtime/CublasLt.h"

namespace fixbits::profile {

enum class Arch : uint8_t { kSm90 };
inline constexpr Arch sm90 = Arch::kSm90;
std::string_view arch_name(Arch a);  // "sm_90"

struct Mnk {
  int64_t m = 0, n = 0, k = 0;
};

// The usual cuBLASLt problem of `dtype` inputs (see the contract), at m x n x k.
absl::StatusOr<runtime::GemmShape> usual_shape(Mnk shape, DType dtype);

// The embedded table of `arch`, parsed once.
absl::StatusOr<const CublasTable*> cublas_table(Arch arch);

absl::StatusOr<dsl::GemmDesc> cublas(Arch arch, const runtime::GemmShape& shape);
absl::StatusOr<dsl::GemmDesc> cublas(Arch arch, Mnk shape, DType dtype);

// The same from the answer cuBLASLt's heuristic gives `shape` at run time, asked
// through `lt` (runtime/CublasLt.h, loaded with dlopen): the embedded table's class of
// that answer (lookup_answer), so the map's resolution between its grid lines is not
// in the way. For applications that have cuBLASLt at hand; the heuristic's refusal and
// a table without that answer's class are returned as errors.
absl::StatusOr<dsl::GemmDesc> cublas_answer(Arch arch, const runtime::GemmShape& shape,
                                            runtime::CublasLt& lt);

}  // namespace fixbits::profile
