// CublasProfile: the arch profiles of cuBLASLt, (arch, shape) -> the GemmDesc whose
// reference bits equal cuBLASLt's output (reference §4). As the reference has it, the
// descriptor depends on the shape only through the answer of cuBLASLt's cost model (its
// heuristic), and the arch profile is a table from each answer's class to a descriptor:
// profile/data/cublas_<arch>.tsv.gz (fixbits-cublas-scan's output, gzip'ed), linked into
// the library (EmbeddedTable.h), so a clean clone needs no data file at run time.
//
// How far to trust it (fixbits-cublas-match on the H200, 10,000 random f16 and bf16
// shapes and 1,000 fp8 ones, two input draws each; docs/cublas.md, "Session 15", run 4,
// on exactly the committed table): of the shapes whose class has a descriptor, cublas()
// (cuBLASLt's answer) gave cuBLAS's bytes on all of them (9,945 f16, 9,954 bf16, 1,000
// fp8); cublas_map() (the table's sampled map of the answers) on 85.7%, 85.1% and 100%,
// almost every miss the map choosing another class than the heuristic between its grid
// points. 0.55% (f16), 0.46% (bf16) and 0% (fp8) of the draws fall in classes without a
// descriptor (FailedPrecondition naming the class): cuBLAS's gemv2T (custom 11), split
// gemv custom 100 and 92, and gemv custom 12. Either way the descriptor fixes the
// bits: the kernel's output is the same on every run; it is cuBLAS's only where the match
// says so. On the H200 again (session 21, the committed table with 311 descriptors),
// cublas() gave cuBLAS's bytes on all 10,000 bf16, 10,000 f16 and 1,000 fp8 shapes (none
// in a class without a descriptor), cublas_map() on 85.2%, 85.7% and 100%; an H100
// (session 20) gave the same rates, so the descriptors carry across sm_90 parts and the
// map's misses are its own. Session 22's scan (on an H100) gave 14 more classes a
// descriptor (325 of 365; fp8's four split classes among them), and the match on that
// table, on the H100, was again 10,000 / 10,000 / 1,000 through cublas(). Session 23's
// (an H100 again) took it to 337, most of them classes cuBLASLt answers only at
// K > 65536; the match on that table was identical on every shape it compared
// (10,000 f16, 9,938 bf16 and 628 fp8, the last two cut by its time budget). Session 37
// widened the maps from M, N <= 16384 to 65536 (profile/WidenMap.h; 394 of 395 classes),
// and the gate_up layers and all 60 model shapes gave cuBLAS's bytes. Session 38 refitted
// the classes a wider match (M, N to 65536, 2^25 elements) found differing (395 of 396),
// after which those draws were identical on every shape with a descriptor; a class
// bounded to one operand layout (KLayout, CublasTable.h) refuses the other with
// FailedPrecondition, unless the table holds the tree its probes there found
// (OtherLayout, session 42), which it then serves at any K. Session 39 gave the last class its descriptor (396 of 396) and
// refitted one more split class from new wide draws (seed 39), on which cublas() was
// then identical on every shape with a descriptor. Use cublas() wherever a GPU is at
// hand.
//
// Contract:
//   cublas(arch, shape): cuBLASLt's heuristic answer for `shape` (its M, N, K, dtypes and
//   layout; the default 32 MiB workspace), asked on runtime::cuda(0) through one
//   process-wide CublasLt opened on first use, then the class of that answer in the
//   embedded table of `arch`, its descriptor carried to the answer's K and split count
//   (lookup_answer, CublasTable.h). The table and the shape are checked first, so these
//   errors do not depend on the machine: InvalidArgument for an arch with no table
//   compiled in; FailedPrecondition when the committed table holds no scan yet; NotFound
//   for a dtype/layout family the table lacks; OutOfRange naming GemmShape.m, .n or .k
//   outside the scanned range. Then FailedPrecondition when there is no CUDA device, no
//   cuBLASLt, or a device of another arch (the message passes the cause through and
//   names cublas_map(); the open's outcome is kept for the process, never retried); the
//   heuristic's refusal as it returns it; NotFound or FailedPrecondition when the
//   answer has no class in the table or its class no validated descriptor.
//   cublas(arch, {m, n, k}, dtype) is the same for cuBLASLt's usual call of that input
//   dtype: f16 -> f16 and bf16 -> bf16 with A and B row-major (torch's a @ b), fp8
//   (e4m3) -> f16 in the TN layout cuBLASLt requires.
//   cublas_answer(arch, shape, lt) is cublas() through the caller's own handle `lt`.
//   cublas_map(arch, shape) needs no GPU: the class the table's map gives `shape`
//   (lookup, CublasTable.h, "semantics of a lookup"), with the same table and shape
//   errors, plus FailedPrecondition for a map cell cuBLASLt refused at scan time or a
//   class without a validated descriptor. cublas_map(arch, {m, n, k}, dtype) likewise.
// Example:
//   absl::StatusOr<dsl::GemmDesc> d = profile::cublas(profile::sm90, {1, 4096, 4096}, DType::kF16);
//   auto programs = dsl::gemm(*d);   // output bytes equal cuBLAS's for 1x4096x4096
//   // No GPU at hand: profile::cublas_map(profile::sm90, {1, 4096, 4096}, DType::kF16).
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

// cuBLASLt's answer for `shape` through the process-wide handle (see the contract).
absl::StatusOr<dsl::GemmDesc> cublas(Arch arch, const runtime::GemmShape& shape);
absl::StatusOr<dsl::GemmDesc> cublas(Arch arch, Mnk shape, DType dtype);

// The same through the caller's own cuBLASLt handle `lt` (runtime/CublasLt.h), e.g.
// one that also runs the GEMMs; its device must be of `arch`.
absl::StatusOr<dsl::GemmDesc> cublas_answer(Arch arch, const runtime::GemmShape& shape,
                                            runtime::CublasLt& lt);

// The table's map alone, without cuBLASLt (see the contract and the measured accuracy).
absl::StatusOr<dsl::GemmDesc> cublas_map(Arch arch, const runtime::GemmShape& shape);
absl::StatusOr<dsl::GemmDesc> cublas_map(Arch arch, Mnk shape, DType dtype);

}  // namespace fixbits::profile
