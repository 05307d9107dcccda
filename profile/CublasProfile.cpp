// CublasProfile: see CublasProfile.h. The table text comes from EmbeddedTable (the
// gzip'ed file linked into the library); it is inflated and parsed on first use and
// kept for the process, as is the process-wide cuBLASLt handle of cublas().
//
//   cublas(sm90, 1x4096x4096 f16)      -> table checks, shape in the scanned range
//     -> process_cublaslt()            -> CublasLt on runtime::cuda(0), opened once
//     -> desc_of_answer(...)           -> heuristic answer {id, tile, ..., splitk}
//                                      -> lookup_answer: its class's GemmDesc at (K, P)
//   cublas_map(sm90, 1x4096x4096 f16)  -> table checks -> lookup (map cell, K run)
#include "profile/CublasProfile.h"

#include <memory>

#include "absl/strings/str_format.h"
#include "profile/EmbeddedTable.h"
#include "runtime/Runtime.h"

namespace fixbits::profile {
namespace {

struct Parsed {
  absl::StatusOr<CublasTable> table;
};

const Parsed& sm90_table() {
  // A function-local static: the first use from two threads parses once.
  static const Parsed* parsed = [] {
    absl::StatusOr<std::string> text = embedded_cublas_sm90_text();
    return new Parsed{text.ok() ? parse_table(*text) : absl::StatusOr<CublasTable>(text.status())};
  }();
  return *parsed;
}

}  // namespace

std::string_view arch_name(Arch a) {
  switch (a) {
    case Arch::kSm90: return "sm_90";
  }
  return "?";
}

absl::StatusOr<runtime::GemmShape> usual_shape(Mnk shape, DType dtype) {
  runtime::GemmShape s{.m = shape.m, .n = shape.n, .k = shape.k};
  switch (dtype) {
    case DType::kF16:
    case DType::kBF16:
      s.a_dtype = s.b_dtype = s.out_dtype = dtype;
      break;
    case DType::kF8E4M3:
      s.a_dtype = s.b_dtype = dtype;
      s.out_dtype = DType::kF16;
      s.b_row_major = false;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrFormat(
          "profile::cublas was given dtype %s; the arch profiles cover f16, bf16 and f8e4m3 "
          "(pass a full GemmShape for other output types).", dtype_name(dtype)));
  }
  return s;
}

absl::StatusOr<const CublasTable*> cublas_table(Arch arch) {
  if (arch != Arch::kSm90) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "profile::cublas was given arch %d; only sm_90 has a cuBLAS table.",
        static_cast<int>(arch)));
  }
  const Parsed& p = sm90_table();
  if (!p.table.ok()) {
    return absl::InternalError(absl::StrFormat(
        "The embedded cuBLAS table for sm_90 (profile/data/cublas_sm90.tsv.gz) cannot be read: %s",
        p.table.status().message()));
  }
  if (p.table->maps.empty()) {
    return absl::FailedPreconditionError(
        "The committed cuBLAS table for sm_90 (profile/data/cublas_sm90.tsv.gz) holds no scan yet; "
        "run fixbits-cublas-scan on an H200 and commit its output (docs/cublas.md).");
  }
  return &*p.table;
}

namespace {

// What cublas() says when it cannot ask cuBLASLt: the cause, then the way without it.
absl::Status no_answer(std::string_view cause) {
  return absl::FailedPreconditionError(absl::StrFormat(
      "profile::cublas asks cuBLASLt's heuristic on CUDA device 0 for the shape's answer, and "
      "%s. profile::cublas_map() gives the descriptor from the embedded table alone, without "
      "a GPU: it matched cuBLAS's bytes on 86.14%% (f16), 84.67%% (bf16) and 100%% (fp8) of "
      "the shapes with a descriptor, against 99.25%%, 98.87%% and 100%% for cuBLASLt's answer "
      "(docs/cublas.md, Session 10).", cause));
}

// The process's cuBLASLt handle, opened on first use on runtime::cuda(0); the outcome,
// handle or FailedPrecondition, is kept for the process and never retried. A
// function-local static: its initialisation runs once even when two threads call
// first, and it is not changed after (CublasLt itself is thread-safe). Never deleted,
// so no cuBLASLt call runs during static destruction.
const absl::StatusOr<std::shared_ptr<runtime::CublasLt>>& process_cublaslt() {
  using Handle = absl::StatusOr<std::shared_ptr<runtime::CublasLt>>;
  static const Handle* handle = []() -> Handle* {
    absl::StatusOr<std::shared_ptr<runtime::Device>> dev = runtime::cuda(0);
    if (!dev.ok()) {
      return new Handle(no_answer(absl::StrFormat("there is no CUDA device: %s",
                                                  dev.status().message())));
    }
    absl::StatusOr<std::shared_ptr<runtime::CublasLt>> lt = runtime::CublasLt::open(*dev);
    if (!lt.ok()) {
      return new Handle(no_answer(absl::StrFormat("cuBLASLt cannot be opened there: %s",
                                                  lt.status().message())));
    }
    return new Handle(*std::move(lt));
  }();
  return *handle;
}

// The table of `arch`, once `shape` is known to lie in its scanned range: the map's
// family and range errors of lookup_run (CublasTable.h), which a lookup of cuBLASLt's
// answer keeps so its measured accuracy holds. A map cell refused at scan time is no
// error here (FailedPrecondition is lookup_run's only status for it): the heuristic
// answers for itself.
absl::StatusOr<const CublasTable*> table_for(Arch arch, const runtime::GemmShape& shape) {
  absl::StatusOr<const CublasTable*> t = cublas_table(arch);
  if (!t.ok()) return t.status();
  absl::StatusOr<MapRun> run = lookup_run(**t, shape);
  if (!run.ok() && run.status().code() != absl::StatusCode::kFailedPrecondition) {
    return run.status();
  }
  return t;
}

// The body of cublas() and cublas_answer(): `lt`'s heuristic answer for `shape`, looked
// up in `table` (lookup_answer). heuristic_uncached: the process-wide handle answers
// many shapes and runs none, so it keeps no plan per shape (the answer is the same).
absl::StatusOr<dsl::GemmDesc> desc_of_answer(Arch arch, const CublasTable& table,
                                             const runtime::GemmShape& shape,
                                             runtime::CublasLt& lt) {
  const std::string& device_arch = lt.device()->info().arch;
  if (device_arch != arch_name(arch)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "profile::cublas was asked for the %s profile, and cuBLASLt's device is %s: its "
        "heuristic answers for %s. profile::cublas_map() gives the %s descriptor from the "
        "table alone.", arch_name(arch), device_arch, device_arch, arch_name(arch)));
  }
  absl::StatusOr<runtime::MatmulReport> heur = lt.heuristic_uncached(shape);
  if (!heur.ok()) return heur.status();
  return lookup_answer(table, shape, answer_of(heur->algo));
}

}  // namespace

absl::StatusOr<dsl::GemmDesc> cublas(Arch arch, const runtime::GemmShape& shape) {
  absl::StatusOr<const CublasTable*> t = table_for(arch, shape);
  if (!t.ok()) return t.status();
  const absl::StatusOr<std::shared_ptr<runtime::CublasLt>>& lt = process_cublaslt();
  if (!lt.ok()) return lt.status();
  return desc_of_answer(arch, **t, shape, **lt);
}

absl::StatusOr<dsl::GemmDesc> cublas(Arch arch, Mnk shape, DType dtype) {
  absl::StatusOr<runtime::GemmShape> s = usual_shape(shape, dtype);
  if (!s.ok()) return s.status();
  return cublas(arch, *s);
}

absl::StatusOr<dsl::GemmDesc> cublas_answer(Arch arch, const runtime::GemmShape& shape,
                                            runtime::CublasLt& lt) {
  absl::StatusOr<const CublasTable*> t = table_for(arch, shape);
  if (!t.ok()) return t.status();
  return desc_of_answer(arch, **t, shape, lt);
}

absl::StatusOr<dsl::GemmDesc> cublas_map(Arch arch, const runtime::GemmShape& shape) {
  absl::StatusOr<const CublasTable*> t = cublas_table(arch);
  if (!t.ok()) return t.status();
  return lookup(**t, shape);
}

absl::StatusOr<dsl::GemmDesc> cublas_map(Arch arch, Mnk shape, DType dtype) {
  absl::StatusOr<runtime::GemmShape> s = usual_shape(shape, dtype);
  if (!s.ok()) return s.status();
  return cublas_map(arch, *s);
}

}  // namespace fixbits::profile
