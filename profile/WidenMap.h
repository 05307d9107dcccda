// WidenMap: grows one family's map of a finished table (CublasTable.h) to larger M and N
// (the scan's --max-mn) without asking cuBLASLt's heuristic again at a cell it holds.
// Session 36's gemm_bench --desc=cublas found every gate_up layer of the model shapes
// (N = 28672, 37888, 57344) outside the table's M, N <= 16384, and a rescan of the whole
// map would replace the H200's answers the table was scanned with by those of whichever
// GPU is lent.
//
// Contract of widen_map(table, state, family, options, heuristic, progress):
//   * the new grid lines are default_grid(options.per_octave, options.max_mn)'s M and N
//     lines above the map's last M (N) line, plus with options.refine > 0 the first M
//     (N) of each new answer between neighbouring lines at or above that last line
//     (refine_grid, asked against the default lines of the other axis);
//   * only the new cells are scanned (scan_heuristic's K grid of default_grid up to the
//     map's kmax and its bisection): every old cell keeps its runs, and the map's grids
//     stay ascending with the old lines first. Refinement alone asks at the old last
//     line (the lower side of its first gap);
//   * an answer whose key the table holds is that variant (its class unchanged); a new
//     key joins the table by join_key (JoinKey.h): a new variant of the one class of its
//     family that contains it (the class "gained" it), or of a class that holds no
//     earlier variant, new (no descriptor, a note saying where it came from) unless this
//     widening made it already;
//   * state.shapes (sized to the table's variants, e.g. by rebuild_shapes) gets every new
//     cell's points (VariantShapes' best cell per (K, P)); a variant no run of the wider
//     map shows keeps up to kSeenPoints of the points the new cells met it at;
//   * variants' shape counts grow by the new cells' answers; a refusal message is kept
//     when the map had none.
// Errors: NotFound when the table has no map of the family; InvalidArgument naming
// WidenOptions.max_mn when it does not pass both the map's last M and its last N line,
// or WidenOptions.per_octave / refine when out of range; the heuristic's failure to
// answer any new shape is scan_heuristic's FailedPrecondition. On error the table is
// unchanged.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "profile/CublasScan.h"
#include "profile/CublasTable.h"
#include "runtime/CublasLt.h"

namespace fixbits::profile {

struct WidenOptions {
  int per_octave = 2;          // the grid the table was scanned with (its K grid too)
  int64_t max_mn = 65536;      // the new last M and N line
  int refine = 3;              // refine_grid's points per gap; 0: the default lines only
};

struct WidenStats {
  int64_t heuristic_calls = 0;
  int64_t new_m_lines = 0, new_n_lines = 0;
  int64_t new_cells = 0;
  std::vector<int> new_variants;            // table indices of keys first met in the new cells
  std::vector<int> new_classes;             // classes made for some of them (no descriptor)
  std::map<int, std::vector<int>> gained;   // an earlier class -> its new variants
};

absl::StatusOr<WidenStats> widen_map(CublasTable& table, ScanState& state,
                                     const runtime::GemmShape& family, const WidenOptions& options,
                                     const HeuristicFn& heuristic, const ProgressFn& progress = {});

// The probes a widening asks for, into *options (fixbits-cublas-scan --widen-mn): every
// class it made joins only_classes; each earlier class that gained variants gets
// extra_points at up to `per_class` of them, the most-used first, each at
// widen_probe_point(options' min_probe_k, max_probe_k, max_probe_mnk), so its visit
// probes them first and checks its old probes with them. Returns how many points it
// added.
int64_t plan_widen_probes(const CublasTable& table, const ScanState& state,
                          const WidenStats& stats, size_t per_class, ProbeOptions* options);

// Where to probe a variant a wider map added to an earlier class (plan_widen_probes
// hands it to ProbeOptions::extra_points): of the variant's points with
// M * N * K <= max_mnk, one with K in [min_k, max_k] if any (else the whole set), the
// fewest trailing zero bits of K first (a short turn or part shows there, as the probe
// chooser ranks), then the smallest K; its cell is the best the scan kept for that
// (K, P). nullopt when the variant has no point within max_mnk.
std::optional<ProbePoint> widen_probe_point(int variant, const VariantShapes& shapes,
                                            int64_t min_k, int64_t max_k, int64_t max_mnk);

}  // namespace fixbits::profile
