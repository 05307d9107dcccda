// CublasScan: builds a CublasTable from cuBLASLt's cost model (reference §4): first
// every (M, N, K) of a grid is asked for its heuristic answer (no launch), reduced to
// its CublasKey, with the K boundaries between grid points found exactly by bisection;
// then each distinct key is probed at a representative shape and its span rules are
// fitted. The library is reached only through the two functions given, so the same
// code runs against cuBLASLt (samples/cublas_scan) and against fakes (tests).
//
// Contract:
//   scan_heuristic(table, family, grid, heuristic, progress):
//     * asks heuristic(shape) for every shape of grid.ms x grid.ns x grid.ks (dtypes and
//       layout from `family`), plus log2(gap) bisection calls per K boundary, at K
//       multiples of grid.k_multiple;
//     * appends the family's map and its new keys to `table` (keys in first-seen
//       order); an error from the heuristic marks the shape refused (key -1) and keeps
//       the first message; it fails only when every shape is refused or on bad input.
//     Bisection assumes at most one change per probed interval side: between two grid
//     Ks with keys A and B it finds the last K of A's run, then repeats on the rest.
//   probe_keys(table, probe, options, progress):
//     * per key without a descriptor that this state saw (keys of an earlier scan
//       keep their note), most-used keys first, until options.budget_s:
//       the representative K is, among the key's scanned Ks in [min_probe_k,
//       max_probe_k], the one with the fewest trailing zero bits (smallest first), or
//       the largest K in [3, min_probe_k) when none is; its M, N are the smallest
//       M*N seen with that K. Split keys (splitk > 1) get up to fit_probes more Ks
//       in the same order to fit their span rule;
//     * a key no shape of which fits, or whose probe failed, keeps a note saying why.
//   fit_span_rules(...): per cut level, "whole" when every probe saw span == K, the
//     largest granule G in 1024..1 that reproduces every probed span for level 0 of a
//     split key (split<splitk>/G), else "fixed" when all probes agree; anything else
//     is an error naming the level and the spans.
// Example: a key with splitk = 3 probed at K = 576 (span 192) and K = 1000 (span 384):
//   G = 128 gives round_up(192, 128) = 256 at K = 576 (no); G = 64 gives 192 and
//   round_up(ceil(1000 / 3) = 334, 64) = 384 (yes), so the rule is split3/64.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/GemmDesc.h"
#include "dsl/probe/Experiments.h"
#include "profile/CublasTable.h"
#include "runtime/CublasLt.h"

namespace fixbits::profile {

struct ScanGrid {
  std::vector<int64_t> ms, ns, ks;  // ascending, >= 1
  int64_t k_multiple = 1;  // K (and refine_grid's N) bisection stays on multiples (fp8: 16)
};

// Log-spaced values in [lo, hi]: every power of two, `per_octave - 1` points between
// consecutive powers, and the odd neighbours 2^i - 1, 2^i + 1 (from 4 on), all
// rounded to multiples of `multiple`; lo and hi included.
std::vector<int64_t> log_grid(int64_t lo, int64_t hi, int per_octave, int64_t multiple = 1);
// The default grid of one family: M, N in [1, max_mn], K in [1, max_k] (fp8: K and N
// multiples of 16, which cuBLASLt's fp8 kernels need for their leading dimensions).
ScanGrid default_grid(const runtime::GemmShape& family, int per_octave = 2,
                      int64_t max_mn = 16384, int64_t max_k = int64_t{1} << 19);

using HeuristicFn =
    std::function<absl::StatusOr<runtime::AlgoConfig>(const runtime::GemmShape&)>;
using ProbeFn = std::function<absl::StatusOr<dsl::GemmDesc>(const runtime::GemmShape&,
                                                             const CublasKey&)>;
// Called now and then: a phase name, work done and total (total may grow).
using ProgressFn = std::function<void(std::string_view phase, int64_t done, int64_t total)>;

// Shapes seen per key: for every distinct K, the smallest M*N (then M) with the key.
struct KeyShapes {
  std::map<int64_t, std::pair<int64_t, int64_t>> by_k;  // K -> (M, N)
};
struct ScanState {
  std::vector<KeyShapes> shapes;  // parallel to table.keys
  int64_t heuristic_calls = 0;
};

absl::Status scan_heuristic(CublasTable& table, ScanState& state, const runtime::GemmShape& family,
                            const ScanGrid& grid, const HeuristicFn& heuristic,
                            const ProgressFn& progress = {});

// Before a scan: the M and N boundaries between grid lines. Asks the heuristic at every
// grid point (no K bisection); for each pair of neighbouring M values whose keys differ
// at some (N, K) of the grid, bisects M at up to `points_per_gap` of those (N, K)
// (spread over them) and adds each first M of a new key to the grid; the same for N.
// The returned grid holds the old lines and the new ones (one pass: the new lines are
// not refined again). *calls counts the heuristic calls.
absl::StatusOr<ScanGrid> refine_grid(const runtime::GemmShape& family, const ScanGrid& grid,
                                     const HeuristicFn& heuristic, int points_per_gap,
                                     int64_t* calls, const ProgressFn& progress = {});

struct ProbeOptions {
  int64_t min_probe_k = 256;  // below it fields like the mainloop step hide
  int64_t max_probe_k = 4096;
  double budget_s = 300;
  int fit_probes = 2;
};
absl::Status probe_keys(CublasTable& table, const ScanState& state, const ProbeFn& probe,
                        const ProbeOptions& options, const ProgressFn& progress = {});

// One key's probe at shape `s` through `box` (the full-shape black box): the family
// the key suggests first (split_k when splitk > 1, else plain), then the other of the
// two, then gemv; the first family that yields a descriptor wins. The error of the
// last family tried names all three attempts.
absl::StatusOr<dsl::GemmDesc> probe_key(const dsl::probe::GemmBlackBox& box,
                                        const runtime::GemmShape& s, const CublasKey& key,
                                        dsl::Instruction matrix_instruction);

// The rules for `descs` recovered at `ks` (parallel; descs[0] is the representative).
absl::StatusOr<std::vector<SpanRule>> fit_span_rules(const CublasKey& key,
                                                     const std::vector<int64_t>& ks,
                                                     const std::vector<dsl::GemmDesc>& descs);

}  // namespace fixbits::profile
