// EmbeddedTable: the text of the committed arch profile of cuBLASLt on sm_90
// (profile/data/cublas_sm90.tsv.gz, fixbits-cublas-scan's output compressed with gzip),
// whose bytes are linked into the library, so a program needs no data file at run time.
//
// Contract: embedded_cublas_sm90_text() inflates the linked bytes on every call and
// returns the table text (profile::parse_table's input); a damaged or truncated stream
// is DataLoss naming the file, never a crash. gunzip(bytes, what) is the inflation
// itself: one or more gzip members, `what` names the input in errors.
// Example: absl::StatusOr<CublasTable> t = parse_table(*embedded_cublas_sm90_text());
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace fixbits::profile {

absl::StatusOr<std::string> gunzip(std::string_view bytes, std::string_view what);
absl::StatusOr<std::string> embedded_cublas_sm90_text();

}  // namespace fixbits::profile
