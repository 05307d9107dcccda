// ScanSlices: one table from the tables of a sliced probe run (ProbeOptions::slice,
// fixbits-cublas-scan --jobs): N processes resumed the same table, each probed its own
// slice of the classes, and each wrote the whole table back.
//
// Contract:
//   merge_scan_slices(base, slices): `base` is the table every slice started from,
//   re-keyed as they re-keyed it (rekey_table). The result is base with
//     * each class a slice changed (descriptor, rules, probes or note differ from
//       base's) taken from that slice;
//     * the classes a slice added (its class splits, past base's classes) appended in
//       slice order, and every variant the slice moved to another class pointed at
//       that class's place in the result.
//   Slices visit disjoint classes, so no class is changed by two; if two do change one
//   (a caller's mistake, e.g. slices of different runs), the result is InvalidArgument
//   naming the class and both slices, never a silent pick. A slice whose variants or
//   maps differ from base's (not a slice of this base) is InvalidArgument naming the
//   slice and the field.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "profile/CublasTable.h"

namespace fixbits::profile {

absl::StatusOr<CublasTable> merge_scan_slices(const CublasTable& base,
                                              const std::vector<CublasTable>& slices);

}  // namespace fixbits::profile
