// CublasProfile: see CublasProfile.h. The table text comes from EmbeddedTable (the
// gzip'ed file linked into the library); it is inflated and parsed on first use and
// kept for the process.
#include "profile/CublasProfile.h"

#include "absl/strings/str_format.h"
#include "profile/EmbeddedTable.h"

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

absl::StatusOr<dsl::GemmDesc> cublas(Arch arch, const runtime::GemmShape& shape) {
  absl::StatusOr<const CublasTable*> t = cublas_table(arch);
  if (!t.ok()) return t.status();
  return lookup(**t, shape);
}

absl::StatusOr<dsl::GemmDesc> cublas(Arch arch, Mnk shape, DType dtype) {
  absl::StatusOr<runtime::GemmShape> s = usual_shape(shape, dtype);
  if (!s.ok()) return s.status();
  return cublas(arch, *s);
}

absl::StatusOr<dsl::GemmDesc> cublas_answer(Arch arch, const runtime::GemmShape& shape,
                                            runtime::CublasLt& lt) {
  absl::StatusOr<const CublasTable*> t = cublas_table(arch);
  if (!t.ok()) return t.status();
  absl::StatusOr<runtime::MatmulReport> heur = lt.heuristic(shape);
  if (!heur.ok()) return heur.status();
  return lookup_answer(**t, shape, answer_of(heur->algo));
}

}  // namespace fixbits::profile
