// CublasTable: one arch profile of cuBLASLt (reference §4, "how the points become a
// function"): the classes of its cost model's answers (CublasClass.h) with the
// GemmDesc the probes recovered and validated for each, the variants (CublasKey.h)
// each class holds, and a compact map from any shape inside the scanned range to its
// variant and split count. Written as text (TSV) by fixbits-cublas-scan and read back
// by profile::cublas().
//
// Semantics of a lookup (shape s of family f = family_of(s)):
//   1. the map of f has ascending grids ms, ns; s.m must lie in [ms.front, ms.back],
//      s.n in [ns.front, ns.back] and s.k in [first run's k0, kmax]; the cell is
//      (largest ms <= s.m, largest ns <= s.n);
//   2. the cell's K runs (k0 ascending, each "variant v with split count P from k0 on",
//      boundaries found exactly by bisection at scan time) give (v, P): the last run
//      with k0 <= s.k;
//   3. v's class's descriptor, recovered at the class's first probe, is carried to
//      (s.k, P) level by level by its span rules:
//        fixed      the span does not depend on K;
//        whole      the span is K (one part);
//        split/<G>  span = min(K, round_up(ceil(K / P), G)), P the run's split count;
//        parts/<c>  span = ceil(K / c): the level cuts K into c parts whatever K is
//                   (an intra-kernel split; the H200's spans 65, 65, 5 at K = 257,
//                   259, 17 are parts/4).
//      A gemv class may carry a lane rule instead (lanes_by_n): its descriptor's lane
//      count at s.n is the last step's with n0 <= s.n, and its lane_fold keeps the
//      offsets below that count's next power of two, in the class's order (cuBLAS's
//      gemvNSP kernel deals K to blockDim.y lanes, and blockDim.y follows N: 32 up to
//      N = 8448 on the H200, then 26, 24, 20; profile/LaneSweep.h reads it). A gemv
//      class may also carry a tile cap C (lane_tile_cap): its lanes are strided with
//      lane_tile = min(C, ceil(K / lanes)), i.e. one run of K per lane while that fits
//      C, tiles of C beyond (the H200's gemv custom 92 kernels: runs of 11, 12, 45 at
//      K = 341, 359, 1430, tiles of 64 at K = 4097). "tile@run" (kUncappedTile): runs of
//      ceil(range / lanes) at every range, a split's last part in the span's runs.
// Invariant: write_table -> parse_table gives an equal table; parse_table checks every
// cross reference (class and variant indices, each variant inside its class, each
// probe's and open probe's variant inside its class, open probes only without desc, split
// counts > 1 exactly for split variants (runs, probes and seen points), grid and run order, split rules only on level
// 0 of split classes) and names the line and field of the first error, so a lookup on a
// parsed table never indexes out of range.
// Errors of a lookup: NotFound for a family the table lacks, OutOfRange naming the
// GemmShape field outside the scanned range, FailedPrecondition for a class whose
// descriptor was not recovered or not validated (the note says why) or a cell cuBLASLt
// refused.
//
// Text form, version 2 (tab-separated; '#' lines are comments). Version 1 (one key per
// full answer, split count inside the key) is refused with a message saying to rescan.
//   fixbits-cublas-table 2
//   arch     sm_90
//   library  <cublasLtGetVersion()>
//   command  <the command line that produced the table>
//   class    <index> <family> <CublasClass text> <probes|-> <rules|-> <desc|-> <note|->
//            probes: <variant>@<M>x<N>x<K>/<P>,...  (the first is where desc was recovered)
//            rules: span rules, one per cut level, comma-separated; then, for a gemv
//            class, its lane rule lanes@<n0>:<lanes>,<n0>:<lanes>,... (first n0 = 1)
//            and/or its tile cap tile@<C>, and for any class its layout
//            (layout@contiguous|strided, KLayout), joined by ';' (after a ',' when
//            the class has span rules too: "split/1,tile@1", "parts/2,layout@contiguous")
//   probed   <class index> <variant>@<M>x<N>x<K>/<P> <desc>
//            after its class line, one a probe: a class without desc keeps the probes
//            that found a descriptor before a run stopped its visit early (the budget,
//            a later probe's time limit), each with that descriptor as found there; a
//            scan that resumes the table starts the class from them (OpenProbe)
//   other    <class index> <variant>@<M>x<N>x<K>/<P>,... <desc>
//            after its class line, at most one, only for a class bound to one layout:
//            the tree its probes at the other layout found (OtherLayout), no K cuts
//   variant  <index> <family> <CublasKey text> <class index> <shapes>
//   seen     <variant index> <variant>@<M>x<N>x<K>/<P>,...
//            after its variant line, at most one: shapes where the heuristic gave the
//            variant that no map run shows (TableVariant::seen)
//   map      <family> m|n <v,v,...>     map <family> kmax <v>     map <family> refusal <text>
//   runs     <family> <m index> <n index> <k0>:<variant>[/<P>],...  (variant -1: refused)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/GemmDesc.h"
#include "profile/CublasClass.h"
#include "profile/CublasKey.h"
#include "runtime/CublasLt.h"

namespace fixbits::profile {

inline constexpr int kTableVersion = 2;

struct SpanRule {
  enum class Kind : uint8_t { kFixed, kWhole, kSplit, kParts };
  Kind kind = Kind::kFixed;
  int64_t granule = 1;  // kSplit: G; kParts: the part count c
  // kSplit, > granule: the granule is this A instead when K is a multiple of A
  // ("split/8/64"). Session 8: id 23/24 tile 11 split classes round ceil(K/P) up to 64
  // at K = 2240 and 4096 and to 8 at every other K seen (289, 4264, 51534, ...: the
  // CPU replay of the match's differing elements and the probes' spans).
  int64_t aligned = 0;
  bool operator==(const SpanRule&) const = default;
};
// "fixed", "whole", "split/64", "split/8/64", "parts/4"
std::string to_string(const SpanRule& r);
absl::StatusOr<SpanRule> parse_span_rule(std::string_view text);
// Whether a split count is cuBLASLt's SPLITK_NUM read as a negative int32 (-1, i.e.
// 4294967295: class 146, id 42, session 23) rather than a count of parts. Probes of
// such an answer show no split: one chain over the whole K.
inline bool split_count_unset(uint32_t splitk) { return splitk >= 0x80000000u; }

// The span rule `r` gives a level at depth K with split count `splitk`; `fixed_span`
// is the recovered span.
int64_t apply_span_rule(const SpanRule& r, int64_t fixed_span, int64_t k, int64_t splitk);
// The split rules the fit and the separating probe consider, in the fit's order:
// split/G for G = 1024, 512, ..., 1 (coarsest first), then split/G/A for A = 2, 4, ...,
// 1024 (the least alignment that explains the aligned K first) and G = A/2, ..., 1.
const std::vector<SpanRule>& split_rules();

// Where one probe of a class ran: a variant of the class at a full shape.
struct ProbePoint {
  int variant = 0;
  int64_t m = 0, n = 0, k = 0;
  uint32_t splitk = 1;
  bool operator==(const ProbePoint&) const = default;
};

// One step of a gemv class's lane rule: from N = n0 on, K goes to `lanes` lanes.
struct LaneStep {
  int64_t n0 = 1;
  int lanes = 32;
  bool operator==(const LaneStep&) const = default;
};
// "lanes@1:32,8449:26"; parse_lane_rule takes the same text (InvalidArgument naming
// what is wrong: steps must start at n0 = 1, ascend strictly, lanes in [1, 64]).
std::string to_string(const std::vector<LaneStep>& steps);
absl::StatusOr<std::vector<LaneStep>> parse_lane_rule(std::string_view text);
// The lane count the rule gives at n (the last step with n0 <= n); 0 for no steps.
int lanes_at(const std::vector<LaneStep>& steps, int64_t n);
// `lanes` lanes for a gemv descriptor d: its lane_fold keeps the offsets below
// lane_slots(lanes), in d's order. Other families, or lanes < 1, come back unchanged.
dsl::GemmDesc with_lanes(dsl::GemmDesc d, int lanes);
// The range a gemv descriptor deals to its lanes at depth k: k, or for a split gemv
// (one cut: the gemv kernel on gridDim.z parts) the part span, which is the K each
// part's kernel is launched with (min(k, span)).
int64_t gemv_range(const dsl::GemmDesc& d, int64_t k);
// The run of one lane when each takes a single run of that range: ceil(gemv_range(d, k)
// / d.lanes), the tile an uncapped (or not yet capped) tile rule gives at depth k.
int64_t gemv_run(const dsl::GemmDesc& d, int64_t k);
// The tile cap of a gemv class whose lanes take one tile of ceil(range / lanes) each
// however long the range ("tile@run" in the text form): no cap any range reaches. A split
// gemv then deals its last, shorter part in the span's tile, not in runs of its own.
inline constexpr int64_t kUncappedTile = int64_t{1} << 30;
// A gemv descriptor d under tile cap `cap` at depth k: strided lanes of lane_tile
// min(cap, ceil(gemv_range(d, k) / d.lanes)) (at least 1). Other families, or cap < 1,
// unchanged. For a split gemv d must already carry its span at k.
dsl::GemmDesc with_tile_cap(dsl::GemmDesc d, int64_t cap, int64_t k);

// A probe of a class that has no descriptor yet: where it ran and the descriptor it
// found there (at that K and split count, under no rule). Session 28's device run 4
// spent three probes of 130 to 145 s on class 13 and kept none when the budget ended
// the visit; a later scan starts from such probes.
struct OpenProbe {
  ProbePoint at;
  dsl::GemmDesc desc;
  bool operator==(const OpenProbe&) const = default;
};

// Where a class's descriptor holds, by whether both K vectors are contiguous
// (dot_contiguous): everywhere, or only at the layout its probes ran at, when a probe at
// the other layout found a different tree with the same variant (session 38: class 114,
// cuBLAS's id 13 custom 56 kernel, cuts K into two contiguous halves at N = 1 and deals
// it to strided lanes at M = 1). Written "layout@contiguous" / "layout@strided" in the
// rules column's ';' group.
enum class KLayout { kAny, kContiguous, kStrided };
// The layout of a shape's K vectors (dot_contiguous), and of an m x n point of a table
// family ("f16:f16:nn"; strided for a family text that does not parse).
KLayout layout_at(const runtime::GemmShape& s);
KLayout layout_at(const std::string& family, int64_t m, int64_t n);
// How the table text and the messages name a layout: "contiguous", "strided", "any".
const char* layout_name(KLayout l);

// A layout-bound class's tree at the other layout (session 42, for class 114: cuBLAS's
// id 13 custom 56 kernel deals K to 2 strided lanes of 64 at M = 1): the descriptor
// the probes there found, one with no K cuts (so it holds at any K as it stands), and
// those probes, each reproduced by it. Written as an "other" line after the class's.
struct OtherLayout {
  std::vector<ProbePoint> probes;
  dsl::GemmDesc desc;
  bool operator==(const OtherLayout&) const = default;
};

struct TableClass {
  std::string family;
  CublasClass cls;
  // The probes that agree on desc (the first is where it was recovered); every one
  // is reproduced by desc carried by the rules.
  std::vector<ProbePoint> probes;
  std::optional<dsl::GemmDesc> desc;  // at probes[0]'s K and split count
  std::vector<SpanRule> rules;        // one per desc->k_cuts level
  std::vector<LaneStep> lanes_by_n;   // gemv only: the lane count by N (empty: desc's)
  int64_t lane_tile_cap = 0;          // gemv only: the strided tile cap (0: desc's tile;
                                      // kUncappedTile: the range's run, "tile@run")
  KLayout layout = KLayout::kAny;     // where desc holds (every probe and open probe
                                      // is at it; a visit cut short keeps it with them)
  std::string note;                   // why there is no desc, or what the probes saw
  std::vector<OpenProbe> open_probes;  // only without desc: the probes a stopped visit
                                       // finished, in the order they ran
  std::optional<OtherLayout> other;   // only with layout != kAny: the tree at the other
  bool operator==(const TableClass&) const = default;
};

// Whether c's descriptor holds at the layout of an m x n point of its family: always
// for KLayout::kAny.
bool holds_at_layout(const TableClass& c, int64_t m, int64_t n);

struct TableVariant {
  std::string family;
  CublasKey key;
  int cls = 0;          // index into CublasTable::classes; the class contains key
  int64_t shapes = 0;   // scanned shapes that got this variant
  // Where the heuristic gave this variant though no run of the map shows it (a K
  // bisection's midpoint whose answer a narrower run then hid: session 29's classes 76
  // and 149, one scanned shape each), so a resumed scan still has a shape to probe it
  // at. Each point names this variant. Written as a `seen` line after the variant's.
  std::vector<ProbePoint> seen;
  bool operator==(const TableVariant&) const = default;
};

struct MapRun {
  int64_t k0 = 1;
  int variant = 0;      // -1: cuBLASLt's heuristic refused the shape
  uint32_t splitk = 1;  // > 1 exactly when the variant is a split one
  bool operator==(const MapRun&) const = default;
};

struct FamilyMap {
  std::string family;
  std::vector<int64_t> ms, ns;  // ascending, >= 1
  int64_t k_max = 0;
  std::string refusal;  // the first refusal's message, "" when none
  // runs[mi * ns.size() + ni], k0 ascending; the first k0 is the smallest K scanned.
  std::vector<std::vector<MapRun>> runs;
  bool operator==(const FamilyMap&) const = default;
};

struct CublasTable {
  std::string arch;     // "sm_90"
  std::string library;  // cublasLtGetVersion() as text
  std::string command;  // how the table was produced
  std::vector<TableClass> classes;
  std::vector<TableVariant> variants;
  std::vector<FamilyMap> maps;
  bool operator==(const CublasTable&) const = default;
};

std::string write_table(const CublasTable& t);
absl::StatusOr<CublasTable> parse_table(std::string_view text);

// Semantics 1-2: the run the map gives `s` (variant and split count).
absl::StatusOr<MapRun> lookup_run(const CublasTable& t, const runtime::GemmShape& s);
// Family dot (cuBLAS's dot_kernel + reduce_1Block_kernel) carried to a shape: `blocks`
// is the split count (the dot kernel's grid), and the class's tile holds where both K
// vectors are contiguous (A row-major or M = 1; B column-major or N = 1); elsewhere each
// thread takes one element (session 10's trees: 1x2xK threads took one element, 1x1xK
// and 2x1xK pairs). Other families come back unchanged.
dsl::GemmDesc dot_at_shape(dsl::GemmDesc d, const runtime::GemmShape& s, uint32_t splitk);
// Whether both of s's K vectors are contiguous (the dot family's tile holds there).
bool dot_contiguous(const runtime::GemmShape& s);
// The same for an m x n point of a table family ("f16:f16:nn"); false for a family text
// that does not parse.
bool dot_contiguous(const std::string& family, int64_t m, int64_t n);
// Semantics 3: the class's descriptor carried to s.k and `splitk` (and dot_at_shape). A
// dot class recovered at a strided point (its first probe) knows no tile for contiguous
// shapes, and a class whose descriptor holds at one layout (KLayout) none at the other,
// unless it has the other layout's tree (OtherLayout): FailedPrecondition saying so.
absl::StatusOr<dsl::GemmDesc> desc_for(const TableClass& c, const runtime::GemmShape& s,
                                       uint32_t splitk);
// A gemv class's own rules carried to a point (N = n, K = k): the lane count its lane
// rule gives n (with_lanes), then its tile cap at k (with_tile_cap); what desc_for does
// for them, and what the scan explains each of the class's probes with.
dsl::GemmDesc with_gemv_rules(dsl::GemmDesc d, const TableClass& c, int64_t n, int64_t k);
// lookup_run then desc_for.
absl::StatusOr<dsl::GemmDesc> lookup(const CublasTable& t, const runtime::GemmShape& s);
// The class that runs cuBLASLt's answer `key` for s: its variant's class when the table
// holds the variant, else the one class of s's family that contains the key
// (CublasClass.h); NotFound when none does, FailedPrecondition when two do.
absl::StatusOr<int> class_of_answer(const CublasTable& t, const runtime::GemmShape& s,
                                    const CublasKey& key);
// Semantics 3 for an answer cuBLASLt gave at run time instead of the map's (steps 1-2):
// the class of answer.key carried to (s.k, answer.splitk). It needs no map cell, so it
// also serves shapes between the scanned grid lines exactly (profile::cublas_answer).
absl::StatusOr<dsl::GemmDesc> lookup_answer(const CublasTable& t, const runtime::GemmShape& s,
                                            const CublasAnswer& answer);
// The index of (family, key) in t.variants, or -1.
int find_variant(const CublasTable& t, std::string_view family, const CublasKey& key);
// The map of `family` in t.maps, or nullptr.
const FamilyMap* find_map(const CublasTable& t, std::string_view family);
// Scanned shapes of a class: the sum over its variants.
int64_t class_shapes(const CublasTable& t, int cls);

}  // namespace fixbits::profile
