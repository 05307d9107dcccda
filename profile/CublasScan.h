// CublasScan: builds a CublasTable from cuBLASLt's cost model (reference §4): first
// every (M, N, K) of a grid is asked for its heuristic answer (no launch), reduced to
// its variant and split count (CublasKey.h), with the K boundaries between grid points
// found exactly by bisection; each variant joins the coarse class of its key
// (CublasClass.h). Then each class is probed at a few shapes, its span rules fitted
// and its coarseness validated. The library is reached only through the two functions
// given, so the same code runs against cuBLASLt (samples/cublas_scan) and against
// fakes (tests).
//
// Contract:
//   scan_heuristic(table, state, family, grid, heuristic, progress):
//     * asks heuristic(shape) for every shape of grid.ms x grid.ns x grid.ks (dtypes and
//       layout from `family`), plus log2(gap) bisection calls per K boundary (a change
//       of variant or of split count), at K multiples of grid.k_multiple;
//     * appends the family's map, its new variants and their coarse classes to `table`
//       (first-seen order); an error from the heuristic marks the shape refused
//       (variant -1) and keeps the first message; it fails only when every shape is
//       refused or on bad input.
//     Bisection assumes at most one change per probed interval side: between two grid
//     Ks with answers A and B it finds the last K of A's run, then repeats on the rest.
//     A variant met only at a bisection midpoint that a later run hid has no run in the
//     map; it keeps up to kSeenPoints of its shapes in TableVariant::seen instead.
//   probe_classes(table, state, probe, options, progress): per class without a
//     descriptor that this state saw (classes of an earlier scan keep theirs), most
//     scanned shapes first, until options.budget_s (a class's stale note from an
//     earlier table is dropped; a class of state.kept starts from its kept probes,
//     which count towards its probes and are never probed again):
//     * it probes up to `class_probes` points (a split class: 1 + `fit_probes`), each
//       a (variant, K, split count) of the class at its best cell (VariantShapes), K in
//       [min_probe_k, max_probe_k] first (else the largest K in [1, min_probe_k);
//       with small_probe_k, after probes at K >= min_probe_k, K in [small_probe_k,
//       min_probe_k) first, else the K nearest that range),
//       chosen in this order: variants differing from the probed ones in the most
//       fields outside the class's mask; for split classes a new ceil(K / P); the
//       most-used variant; K with the fewest trailing zero bits (a short turn or a short
//       part shows there); the smallest K;
//     * each probe is handed the descriptors the class's probes found so far (kept and
//       open probes, a revalidated class's carried ones, a split parent's hand-down,
//       this visit's), in probe order (ProbeFn's found_before): the probes of one class
//       mostly find one descriptor, and the search that found it is the one to try
//       first (probe_key);
//     * after each probe it checks the class: every probe must give the same descriptor
//       up to spans (or every one fail), and one span rule per level must reproduce
//       every probed span (fit_span_rules). When probe j disagrees with the ones before,
//       the class is split by the fields outside its mask in which j's variant differs
//       from theirs (CublasClass.h), the probes so far are handed to the parts, and each
//       part is checked and probed again. When those variants are equal (the descriptor
//       depends on K or P beyond any rule) the class keeps no descriptor and a note;
//     * a probe error other than NotFound is the instrument's (black box, device): that
//       point is dropped and noted, never counted as a disagreement (at most 3 per
//       class visit; a probe past its time limit, DeadlineExceeded, ends the visit at
//       once, and such a class is probed after every other on a later resume);
//     * a class (plain, or one cut level) whose probes other K-loop steps explain as
//       well (they group the products of every probed leaf range alike), a gemv class
//       whose probes other lane layouts or turns explain so (GemvGrouping.h: turns of
//       512 hide below K = 529), or a split
//       class whose probed spans several split rules fit (granules split/G, and
//       split/G'/A with A the class's own granule or alignment, or G its granule), gets
//       up to three more probes, each at the point that tells the most of them apart,
//       the cheapest of those (ProbeStats.separating); with ProbeOptions::heuristic such
//       points may lie between grid points. A validated class with such a point is
//       revalidated for it; a class waiting for its revalidation keeps its descriptor
//       until its visit;
//     * a class whose probes all agree gets the first probe's descriptor, the rules and
//       the probe list; one that ran out of budget, or had no probe-able shape, keeps
//       no descriptor and a note saying why, and so does a split class whose probes saw
//       one ceil(K / P) only (its span fits every granule up to it). A coarse key is
//       therefore never trusted without probes: a class is as fine as its probes showed
//       it must be.
//   rekey_table(table, state) (--resume, with a table written earlier): gives every
//     variant the class class_of(key, key_mask(key) | its old class's mask) (the key of
//     today's CublasClass.h, keeping any split the old probes forced). A class whose
//     variants are exactly an old class's keeps that class's index, descriptor, probes,
//     rules and note. Every other class (one that lost or gained variants) has no
//     descriptor; the old probes at its variants, each with the old descriptor carried
//     to the probe's (K, P) by the old rules (what the probe found, by the fit), go to
//     state.kept[class], where probe_classes checks them like a split's hand-down and
//     counts them towards the class's probes: it is validated again. The part holding
//     the old class's first probe (else its first variant) keeps the old index; the
//     others are appended.
//   rebuild_shapes(table, state, per_octave, families): the shapes the probe chooser
//     needs, which the table does not store: for each (M, N) cell corner of each map
//     (of `families`; all when empty), each run's k0 and each K of the family's
//     default_grid(per_octave) up to the map's kmax inside the run give the run's
//     variant the point (K, P) at (M, N) (the best cell per (K, P), as the scan keeps:
//     VariantShapes), and each variant's seen points (TableVariant::seen) theirs.
//     Variants of other families get no shapes, so probe_classes leaves them.
//   fit_span_rules(...): per cut level, for level 0 of a split class the largest granule
//     G in 1024..1 with span = min(K, round_up(ceil(K / P), G)) at every probe
//     (split/G), else the first split/G/A of split_rules() (granule A at K that are
//     multiples of A, G elsewhere; none when every probe's P is no count of parts:
//     split_count_unset, SPLITK_NUM -1, which makes no split); else "whole" when every
//     probe saw span == K, else "fixed" when all agree; anything else is
//     FailedPrecondition naming the level and
//     the spans. descs[0] must have the most levels: a probe with fewer (an inner cut
//     its K did not show) is left out of the levels it lacks. probe_classes fits with
//     each probe's replay: a rule whose span differs from a probe's fits that probe
//     when the probe's experiments cannot tell the two spans apart.
// Example: a split class probed at (K, P) = (577, 3) (span 256) and (1000, 4) (span
//   256): G = 1024 gives 577 at K = 577 (no); G = 256 gives 256 and 256 (yes), so the
//   rule is split/256; a third probe at (500, 3) (span 192) moves it to split/64
//   (G = 128 would give 256 there).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
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
// Recovers the descriptor of `key` (a variant) at the full shape s. found_before: the
// descriptors the probes of key's class found so far, in probe order (empty: none), which
// the sample hands on to probe_key's found_before.
using ProbeFn = std::function<absl::StatusOr<dsl::GemmDesc>(
    const runtime::GemmShape&, const CublasKey&, const std::vector<dsl::GemmDesc>& found_before)>;
// Called now and then: a phase name, work done and total (total may grow).
using ProgressFn = std::function<void(std::string_view phase, int64_t done, int64_t total)>;

// Shapes seen per variant: for every distinct (K, split count), the cell a probe runs
// best at: the most placements per launch (min(M, 128) * min(N, 128)), then the
// smallest M*N, then the smallest M.
struct VariantShapes {
  std::map<std::pair<int64_t, uint32_t>, std::pair<int64_t, int64_t>> points;
};
// Every point of `from` into `into`, keeping for each (K, split count) the better cell
// as the scan does (more placements per launch, then the smaller M*N, then the smaller M).
void merge_shapes(VariantShapes& into, const VariantShapes& from);
// A probe of an earlier table's class: where it ran and the descriptor it gave there.
struct KeptProbe {
  ProbePoint at;
  dsl::GemmDesc desc;
};
struct ScanState {
  std::vector<VariantShapes> shapes;  // parallel to table.variants
  // By class index: the classes rekey_table changed, each with the old probes at its
  // variants (possibly none); probe_classes checks them before probing more.
  std::map<int, std::vector<KeptProbe>> kept;
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

struct RekeyStats {
  int64_t classes_before = 0, classes_after = 0;
  int64_t unchanged = 0;     // classes whose variants are exactly an old class's
  int64_t changed = 0;       // the others (in state.kept)
  int64_t descs_dropped = 0; // old classes with a descriptor that changed
  int64_t probes_kept = 0;   // old probes handed to changed classes
};
absl::StatusOr<RekeyStats> rekey_table(CublasTable& table, ScanState& state);
absl::Status rebuild_shapes(const CublasTable& table, ScanState& state, int per_octave,
                            const std::vector<std::string>& families = {});

// How many shapes a variant without a map run keeps (TableVariant::seen): spread over
// its K values, smallest and largest included.
inline constexpr int kSeenPoints = 4;

// find_points(table, state, family, per_octave, heuristic): the shapes a resumed table
// lost. Asks the heuristic over the family map's own grid again (its ms and ns, the K
// grid of default_grid(per_octave) up to its kmax: scan_heuristic's calls, into a
// scratch table) and gives every variant of the table that has neither a map run nor
// seen points the points the scratch scan met it at (up to kSeenPoints, in
// TableVariant::seen and in state's shapes). Run on the device that scanned the map,
// it reaches the variants a bisection hid (session 29: classes 76, 149, 199, 290, 352
// had no shape to probe). Answer keys the table does not hold are counted and the first
// few named: the heuristic here differs from the scan's (another GPU or cuBLASLt).
// NotFound when the table has no map of `family`.
struct FoundPoints {
  int64_t heuristic_calls = 0;
  int64_t without = 0;   // variants of the family with no map run and no seen points before
  int64_t found = 0;     // of those, variants that got points
  int64_t unknown = 0;   // scratch variants whose key the table lacks
  std::vector<std::string> unknown_keys;  // the first 8
};
absl::StatusOr<FoundPoints> find_points(CublasTable& table, ScanState& state,
                                        const runtime::GemmShape& family, int per_octave,
                                        const HeuristicFn& heuristic,
                                        const ProgressFn& progress = {});

struct ProbeOptions {
  int64_t min_probe_k = 256;  // below it fields like the mainloop step hide
  int64_t max_probe_k = 4096;
  double budget_s = 300;
  int class_probes = 2;  // probes per class without split (1 + validation probes)
  int fit_probes = 2;    // probes of a split class beyond its first
  // > 0: a class that already has a descriptor but fewer probes than this is probed
  // again up to this many (its earlier probes count and are checked with the new ones).
  int revalidate = 0;
  // > 0: after a class's probes at K >= min_probe_k, its next probe prefers a K in
  // [small_probe_k, min_probe_k) (the class's short-K shapes), if it has one; else the
  // nearest K to that range (the smallest above it).
  int64_t small_probe_k = 0;
  // Points whose M*N*K exceeds this are probed only when a class has no other point
  // (each probe experiment runs the full shape).
  int64_t max_probe_mnk = int64_t{1} << 31;
  // false: a class without a descriptor whose note records a probe that no descriptor
  // reproduced ("probe of variant <v> at <shape> failed: ...", written by an earlier
  // run of a resumed table) is concluded and not probed again; true: it is probed like
  // any other.
  bool retry_failed = false;
  // Non-empty: classes are probed in the order of how many of these shapes land in them
  // (profile::lookup_run), then by scanned shapes; the sample passes the bit match's
  // draws (draw_match_sequence), so the budget goes where the match's shapes are.
  // Empty: by scanned shapes only. Either way a class whose probe passed its time
  // limit in an earlier run goes last.
  std::vector<runtime::GemmShape> rank_shapes;
  // Set: every probe point is first put to cuBLASLt's heuristic, and a point where it
  // does not answer the class's variant with the point's split count is dropped as an
  // instrument failure (no evidence about the class). It also lets the separating
  // probe take K values between the scanned grid points, inside the map's runs of the
  // class's variants (where the map says the variant holds but no heuristic call was
  // made): session 8's device run 1 found the wmma class's only grid points at K mod 64
  // = K mod 32, so step 32 and step 64 had no separating grid point.
  HeuristicFn heuristic;
  // true: a validated class whose probes leave a separating point is revalidated for
  // it (about 60 of the 100 validated classes of session 8's table, one to three
  // probes each); false: only classes under `revalidate` probes are.
  bool separate_validated = true;
  // Non-empty: only these classes (table indices) are visited, and each of them that
  // has a descriptor is revalidated with at least one new probe (more up to
  // `revalidate`, then the separating probes): the device time goes to the classes a
  // match found differing.
  std::set<int> only_classes;
  // By class index: points probed first when the class is visited, before any point the
  // chooser picks (fixbits-cublas-scan --probe-at: a shape the match found differing,
  // probed at its own M, N, K and split count, where the class's own probes did not
  // look; point_of_shape makes them). Each such class is visited as if only_classes
  // listed it (a validated one is revalidated: its old probes are checked with the new
  // ones; one without a descriptor is probed even if an earlier run concluded it), and
  // while only_classes is empty, only these classes are visited. Each point's variant
  // must be a variant of its class.
  std::map<int, std::vector<ProbePoint>> extra_points;
  // slices > 1: this run visits only the classes at positions slice, slice + slices, ...
  // of the work list in its probing order (the same list in every run given the same
  // table and options), so `slices` processes with slice = 0 .. slices - 1 share one
  // scan's classes, each with the whole budget (fixbits-cublas-scan --jobs), and
  // merge_scan_slices (ScanSlices.h) puts their tables together.
  int slice = 0, slices = 1;
};
struct ProbeStats {
  int64_t probes = 0;     // probe calls made
  int64_t splits = 0;     // classes split because their probes disagreed
  int64_t validated = 0;  // classes that got a descriptor
  int64_t failed = 0;     // classes left without one (each with a note)
  int64_t instrument_errors = 0;  // probes whose black box failed (not NotFound)
  int64_t revalidated = 0;        // classes with a descriptor probed again (revalidate)
  int64_t concluded = 0;          // classes skipped: an earlier probe found no descriptor
  int64_t open_resumed = 0;       // open probes of an earlier run (TableClass::open_probes)
                                  // this run's classes started from, not probed again
  // Extra probes at a K where K-loop steps that explain a plain class's probes differ.
  int64_t separating = 0;
  // Class visits whose own CPU work (all but the probe calls) took over 5 s, each as
  // "class <c>: <total> s, probes <p> s, heuristic <h> s, separating <s> s, next point
  // <n> s": device runs 1-2 of session 9 lost 85-117 s between two probes.
  std::vector<std::string> slow_visits;
  // Classes of ProbeOptions::only_classes without a descriptor that no variant gives a
  // shape to probe at (no map run, no seen point); each gets a note saying so (with
  // slices, slice 0's stats and table alone).
  std::vector<int> no_shape;
};
absl::StatusOr<ProbeStats> probe_classes(CublasTable& table, const ScanState& state,
                                         const ProbeFn& probe, const ProbeOptions& options,
                                         const ProgressFn& progress = {});

// The probe point of shape `s` (its family's dtypes and layout) where cuBLASLt answered
// `answer`: the table's variant of s's family with the answer's key, at s's M, N, K and
// the answer's split count; *cls gets the variant's class. NotFound naming the family and
// the key when the table has no such variant (a scan that never met that answer).
absl::StatusOr<ProbePoint> point_of_shape(const CublasTable& table, const runtime::GemmShape& s,
                                          const runtime::AlgoConfig& answer, int* cls);

// One variant's probe at shape `s` through `box` (the full-shape black box): the family
// the key suggests first (split_k when key.split, else plain), then the other of the
// two, then gemv; the first family that yields a descriptor wins. The error of the
// last family tried names all three attempts. The families share one instrument
// (dsl/probe/Experiments.h): a placement runs once, and with `limits` beyond 1 x 1 one
// black-box call answers up to limits.rows x limits.cols placements (the caller keeps
// them within the shape: rows <= s.m, cols <= s.n, so a batch is one cuBLAS launch).
// f16/bf16 matrix families are searched with 16 and then 8 products per instruction.
// `keep_going` (dsl::probe::ProbeOptions) is asked before every candidate of every
// search; its error ends the probe (ProbeDeadline.h's deadline_check: a time limit).
// `splitk` > 1 (cuBLASLt's split count for s) also tries the dot family with that many
// blocks: first when M = 1 or N = 1 (cuBLAS's dot_kernel path), else last.
// `gemv_lanes` (dsl::probe::ProbeOptions): the lane counts the gemv search tries, e.g.
// the one a class's lane rule gives s.n (CublasTable.h); empty: powers of two.
// `sparse` (optional): the same box taking the sparse form (CublasBlackBox::
// as_sparse_black_box); the walks' placements go to it, so a walk's uploads do not grow
// as K^2 (the random draws still go to `box`). `sparse_batch` (optional): the box
// taking limits.problems batches a call (CublasBlackBox::as_sparse_batch_box); the
// walks go to it instead of `sparse`.
// `on_search` (optional) hears each search as it ends (ProbeSearch): a probe cut by its
// time limit has still said which searches it finished and how long each took.
// `found_before` (optional): descriptors earlier probes of the key's class found
// (ProbeFn's). Before the order above, for each distinct (family, instruction_k, and for
// a split search its (partial, merge) dtypes) among them, in the order given, the one
// search that found it runs (instruction_k 8 for an mma_sync ik=8 descriptor of f16/bf16,
// else 0; a family or instruction_k the order above would not search is skipped); the
// first that finds a descriptor wins. One that finds nothing is not made again in the
// order above, which otherwise follows unchanged; an error other than NotFound ends the
// probe. Each probe of session 34's id 24 split class 364 (8449x32x515933, partials f32
// merged at bf16, mma.sync k8) spent 190 s of its 322 s in the two 16-product split_k
// searches before the k8 one found the class's descriptor, though the probes before it
// had found the same: the separating probe did not fit in a device call.
// The (partial, merge) dtypes a split of cuBLAS's reduction scheme `reduction`
// (cublasLtReductionScheme_t: 1 in place, 2 compute type, 4 output type) writes, as
// every validated split class of session 15's table has them; empty for another value.
std::vector<std::pair<DType, DType>> reduction_dtypes(uint32_t reduction, DType out);

// One search of probe_key, as it ended: the family, products an instruction
// (ProbeOptions.instruction_k: 0 the dtype's, 8 mma.sync k8), how many (partial, merge)
// dtype pairs it tried (0: not a split search; 9: every pair), what it gave, its wall
// time, and whether it was a search of found_before (tried first, as the class's
// earlier probes found their descriptors).
struct ProbeSearch {
  dsl::GemmFamily family = dsl::GemmFamily::kPlain;
  int instruction_k = 0;
  size_t split_pairs = 0;
  absl::Status status;  // OK: it found the descriptor probe_key returns
  double seconds = 0;
  bool as_before = false;
};
using ProbeSearchNote = std::function<void(const ProbeSearch&)>;

// The scan's log line for one search (no newline): "search <family>[ with mma.sync k8][
// (<n> dtype pairs)][ (as the class's earlier probes)]: found|nothing|stopped in <s> s,
// <judged> candidates judged; <calls> box calls (<box_s> s) so far". Built with
// absl::StrFormat, so every field is type checked (sessions 31-32's device runs lost
// these lines: the scan passed the family's std::string to fprintf's %s).
std::string probe_search_line(const ProbeSearch& q, int64_t judged, int64_t box_calls, double box_s);

absl::StatusOr<dsl::GemmDesc> probe_key(const dsl::probe::GemmBlackBox& box,
                                        const runtime::GemmShape& s, const CublasKey& key,
                                        dsl::Instruction matrix_instruction,
                                        dsl::probe::BatchLimits limits = {},
                                        std::function<absl::Status()> keep_going = {},
                                        uint32_t splitk = 0, std::vector<int> gemv_lanes = {},
                                        dsl::probe::SparseBlackBox sparse = {},
                                        dsl::probe::SparseBatchBox sparse_batch = {},
                                        ProbeSearchNote on_search = {},
                                        std::vector<dsl::GemmDesc> found_before = {});

// The rules for `descs` recovered at (ks, splitks) (parallel; descs[0] is the first
// probe, with the most cut levels); `split` says whether level 0 is a split that
// follows the split count.
// also_fits (optional): asked when a rule gives probe j a span other than the one it
// saw at cut level `level`; true lets the rule fit that probe anyway (probe_classes
// passes the probe's replay: whether its descriptor with that span passes the probe's
// own experiments, i.e. the probe could not tell the two spans apart).
using SpanAlsoFits = std::function<bool(size_t j, size_t level, int64_t span)>;
absl::StatusOr<std::vector<SpanRule>> fit_span_rules(bool split, const std::vector<int64_t>& ks,
                                                     const std::vector<uint32_t>& splitks,
                                                     const std::vector<dsl::GemmDesc>& descs,
                                                     const SpanAlsoFits& also_fits = {});

}  // namespace fixbits::profile
