// MatchTally: what the bit match (fixbits-cublas-match) counts, per family and per
// cuBLASLt answer, and the one text form in which a job of a parallel match (--jobs)
// hands its counts to the parent that prints them.
//
// Contract: MatchTallies::add(r) counts one judged shape; merge() adds another's counts
// (the first differing example of an answer is kept); to_text()/parse_tallies() round-
// trip exactly (tab-separated lines; an example's tabs and newlines become spaces);
// parse_tallies names the line that does not parse; print() writes the tables that
// fixbits-cublas-match has always printed (left of '|': the map's descriptor, as
// profile::cublas; right: cuBLASLt's own answer's, as profile::cublas_answer), then the
// answers whose descriptor differs and the answers without one, per answer.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "profile/match/CublasMatch.h"

namespace fixbits::profile {

struct Tally {
  int64_t shapes = 0, identical = 0, differ = 0, tail_dropped = 0, no_desc = 0, refused = 0;
  int64_t map_hits = 0, kernel = 0, reference = 0;
  // Differing shapes whose map entry was cuBLASLt's own variant: a wrong descriptor (or
  // class), not a map that is too coarse between its grid lines.
  int64_t differ_at_hit = 0;
  // The descriptor of cuBLASLt's own answer (lookup_answer): what the table's classes
  // give with no map in the way.
  int64_t ans_identical = 0, ans_differ = 0, ans_no_desc = 0;
};

// Per cuBLASLt answer (algo), the answer path's compared, differing and undescribed
// shapes.
struct AlgoTally {
  int64_t compared = 0, differ = 0;
  int64_t no_desc = 0;          // shapes of this answer without a descriptor
  int cls = -1;                 // the answer's table class (MatchResult::answer_class)
  std::string example;          // the first differing shape and its detail
  std::string no_desc_example;  // the first undescribed shape and why it has none
};

struct MatchTallies {
  std::map<std::string, Tally> by_family;  // "<dtype family> <descriptor family>"
  std::map<std::string, Tally> by_dtype;   // "<dtype family>"
  std::map<std::string, AlgoTally> by_algo;
  int64_t failures = 0;                    // shapes whose run failed
  int64_t compiled = 0;
  double compile_s = 0;

  // One judged shape of dtype family `dtype_family`, `shape` its text.
  void add(const std::string& dtype_family, const std::string& shape,
           const MatchResult& r);
  void merge(const MatchTallies& other);
  std::string to_text() const;
  // Shapes whose descriptor of cuBLASLt's own answer (profile::cublas(), the answer
  // path) gave other bytes: what fixbits-cublas-match's exit status judges (0 when none
  // differs and no run failed). map_differ() counts the map path's (cublas_map(), the
  // table's sampled map, coarse between its grid lines), reported, not judged.
  int64_t differ() const;
  int64_t map_differ() const;
  void print(int64_t show) const;
  // The table classes of the answers with a differing shape, ascending: what
  // fixbits-cublas-scan --classes revalidates (fixbits-cublas-match
  // --differing-classes-out writes them comma-separated).
  std::vector<int> differing_classes() const;
  // Each differing answer's first differing shape as fixbits-cublas-scan --probe-at takes
  // it ("MxNxK:in:out", ":tn" when B is column-major), in answer order; a shape whose
  // text is not runtime::to_string's (or has A column-major, which --probe-at cannot
  // say) is left out. fixbits-cublas-match --differing-shapes-out writes them
  // comma-separated.
  std::vector<std::string> differing_shapes() const;
  // The same for the answers without a descriptor (their first such shape each, most
  // shapes first): where fixbits-cublas-scan --probe-at looks next
  // (fixbits-cublas-match --no-desc-shapes-out).
  std::vector<std::string> no_desc_shapes() const;
};

absl::StatusOr<MatchTallies> parse_tallies(const std::string& text);

}  // namespace fixbits::profile
