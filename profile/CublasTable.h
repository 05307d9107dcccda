// CublasTable: one arch profile of cuBLASLt (reference §4, "how the points become a
// function"): the distinct bit-deciding keys its cost model answered over a scanned
// (M, N, K) grid, the GemmDesc the probe recovered for each, and a compact map from
// any shape inside the scanned range to its key. Written as text (TSV) by
// fixbits-cublas-scan and read back by profile::cublas().
//
// Semantics of a lookup (shape s of family f = family_of(s)):
//   1. the map of f has ascending grids ms, ns; s.m must lie in [ms.front, ms.back],
//      s.n in [ns.front, ns.back] and s.k in [first run's k0, kmax]; the cell is
//      (largest ms <= s.m, largest ns <= s.n);
//   2. the cell's K runs (k0 ascending, each "key index from k0 on", boundaries found
//      exactly by bisection at scan time) give the key: the last run with k0 <= s.k;
//   3. the key's descriptor, recovered at its representative shape, is carried to
//      s.k level by level by its span rules:
//        fixed        the span does not depend on K;
//        whole        the span is K (one part);
//        split<P>/<G> span = min(K, round_up(ceil(K / P), G)), P = the key's split count.
// Invariant: write_table -> parse_table gives an equal table; parse_table checks every
// cross reference (key indices, grid order, run order) and names the line and field
// of the first error, so a lookup on a parsed table never indexes out of range.
// Errors of a lookup: NotFound for a family the table lacks, OutOfRange naming the
// GemmShape field outside the scanned range, FailedPrecondition for a key whose
// descriptor was not recovered (the note says why) or a cell cuBLASLt refused.
//
// Text form (tab-separated; '#' lines are comments):
//   fixbits-cublas-table 1
//   arch     sm_90
//   library  <cublasLtGetVersion()>
//   command  <the command line that produced the table>
//   key      <index> <family> <CublasKey text> <MxNxK> <shapes> <probed Ks|-> <rules|-> <desc|-> <note|->
//   map      <family> m|n <v,v,...>     map <family> kmax <v>     map <family> refusal <text>
//   runs     <family> <m index> <n index> <k0>:<key index>,...
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/GemmDesc.h"
#include "profile/CublasKey.h"
#include "runtime/CublasLt.h"

namespace fixbits::profile {

struct SpanRule {
  enum class Kind : uint8_t { kFixed, kWhole, kSplit };
  Kind kind = Kind::kFixed;
  int64_t parts = 0;    // kSplit: P
  int64_t granule = 1;  // kSplit: G
  bool operator==(const SpanRule&) const = default;
};
std::string to_string(const SpanRule& r);  // "fixed", "whole", "split3/64"
absl::StatusOr<SpanRule> parse_span_rule(std::string_view text);
// The span rule `r` gives a level at depth K; `fixed_span` is the recovered span.
int64_t apply_span_rule(const SpanRule& r, int64_t fixed_span, int64_t k);

struct TableKey {
  std::string family;
  CublasKey key;
  int64_t m = 0, n = 0, k = 0;  // the representative shape (the one probed first)
  int64_t shapes = 0;           // scanned shapes that got this key
  std::vector<int64_t> probed_k;
  std::optional<dsl::GemmDesc> desc;  // recovered at the representative
  std::vector<SpanRule> rules;        // one per desc->k_cuts level
  std::string note;                   // why there is no desc, or what the probe saw
  bool operator==(const TableKey&) const = default;
};

struct FamilyMap {
  std::string family;
  std::vector<int64_t> ms, ns;  // ascending, >= 1
  int64_t k_max = 0;
  // runs[mi * ns.size() + ni]: (k0, key index), k0 ascending; the first k0 is the
  // smallest K scanned. Key index -1: cuBLASLt's heuristic refused the shape.
  std::string refusal;  // the first refusal's message, "" when none
  std::vector<std::vector<std::pair<int64_t, int>>> runs;
  bool operator==(const FamilyMap&) const = default;
};

struct CublasTable {
  std::string arch;     // "sm_90"
  std::string library;  // cublasLtGetVersion() as text
  std::string command;  // how the table was produced
  std::vector<TableKey> keys;
  std::vector<FamilyMap> maps;
  bool operator==(const CublasTable&) const = default;
};

std::string write_table(const CublasTable& t);
absl::StatusOr<CublasTable> parse_table(std::string_view text);

// The index into t.keys of the key the map gives `s` (semantics 1-2 above).
absl::StatusOr<int> lookup_key(const CublasTable& t, const runtime::GemmShape& s);
// Semantics 3: the key's descriptor carried to s.k.
absl::StatusOr<dsl::GemmDesc> desc_for(const TableKey& key, const runtime::GemmShape& s);
// lookup_key then desc_for.
absl::StatusOr<dsl::GemmDesc> lookup(const CublasTable& t, const runtime::GemmShape& s);
// The index of (family, key) in t.keys, or -1.
int find_key(const CublasTable& t, std::string_view family, const CublasKey& key);

}  // namespace fixbits::profile
