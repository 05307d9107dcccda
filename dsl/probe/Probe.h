// Probe: recovers the GemmDesc a black-box GEMM follows at one K (reference §4,
// "recovering one point"): runtime profiling names the family (options.family);
// the ±L / r experiments of Experiments.h read the groupings off the K axis; what
// is left is separated by running each remaining candidate's own reference
// (reference::gemm) against the black box on fresh random draws until one survives.
//
// Contract:
//   recover_gemm_desc(box, opts) returns a valid GemmDesc D such that
//   reference::gemm(D) equals the black box, bit for bit, on every experiment the
//   probe ran:
//     * opts.random_draws random problems (the first 1 x 1 x K, the rest 4 x 4 x K);
//     * the pair walk: r at 0, +L/-L at m, m+1 (boundaries r's accumulator crosses);
//     * the trailing walk: +L/-L at m, m+1, r at m+2 (instruction ends, even fp8);
//     * cut families: the pair walk from r at the start of the last outermost part
//       (where a short part's short turn shows), and an r walk per candidate span
//       p: +L at 0, -L at p, r at m (reads a level's fold);
//     * GEMV: the pairwise lane-fold experiments and the strided experiment of the
//       candidate's lane map (+L/-L at lane 0's first/last element, r walks), and the
//       r walks with -L at tile * 2, 4, ..., 64 (+L at 0), which tell a lane map from
//       one with fewer lanes.
//   At K = 1 and 2 no walk fits (r plus a pair need three indices): the random draws
//   alone judge, and what they cannot see comes back canonical (at K = 1 every family
//   rounds one exact product; cuBLAS's K = 1 class of session 13 had no descriptor
//   only because the probe refused K < 3).
//   Among candidates that agree on all of them, the first in this order is
//   returned: fewer cut levels, scalar_fma before scalar_mul_add before the matrix
//   instruction, fast accumulation before two roundings, shorter steps first (0 =
//   instruction_k), short turn last before first, partial/merge f32 before f16
//   before bf16, lanes in opts.gemv_lanes' order (by default fewer lanes first). So a field no experiment can see comes back at
//   that canonical value (e.g. fma vs mul+add for f16 inputs, whose products are
//   exact in f32; the step of a fast-accumulating loop whose short turn is last;
//   mma_sync vs wgmma, which opts names).
//   Failure: InvalidArgument for unusable options; NotFound naming the experiment
//   that rejected the last candidate when no descriptor in the family reproduces the
//   black box; the black box's own errors pass through, naming the experiment.
// Search space: split spans >= 2 seen at this K (a span >= K is reported as K), or,
//   for split_k, a segment split (segment_cuts: 2..16 segments of whole tiles; where
//   tiles give the same partition, 64 first; after the span's nests), up
//   to opts.max_levels (<= 4) cut levels and 64 nests; GEMV without k_cuts (and with
//   one split cut when opts.gemv_split), over
//   the lane counts opts.gemv_lanes (default: the powers of two 1..64); the
//   epilogue fields at their defaults (the probe asks for the bare product).
// Cost: about K placements per walk (a few walks), each 1 x 1 x K; one black-box
//   call each, or one call per batch of an Instrument with BatchLimits.
// Example:
//   probe::ProbeOptions o{.a_dtype = DType::kF16, .b_dtype = DType::kF16,
//                         .out_dtype = DType::kF16, .family = GemmFamily::kSplitK, .k = 576};
//   absl::StatusOr<GemmDesc> d = probe::recover_gemm_desc(cublas_box, o);
//   // -> split_k cuts=[192:chain] ... (the reference's K = 576 example)
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/GemmDesc.h"
#include "dsl/probe/Experiments.h"

namespace fixbits::dsl::probe {

struct ProbeOptions {
  DType a_dtype = DType::kF16;
  DType b_dtype = DType::kF16;
  DType out_dtype = DType::kF16;           // f32, f16 or bf16
  GemmFamily family = GemmFamily::kPlain;  // from runtime profiling
  // The matrix instruction the kernel issues, if it issues one (from its name);
  // under the sm_90 model mma_sync and wgmma give the same bits.
  Instruction matrix_instruction = Instruction::kMmaSync;
  // Products one matrix instruction folds: 0 = the dtype's (matrix_instruction_k);
  // 8 = mma.sync m16n8k8 (f16/bf16 with matrix_instruction mma_sync only: the s1688
  // kernels CUTLASS's sm75 path builds and cuBLAS still launches on sm_90).
  int instruction_k = 0;
  int64_t k = 0;           // the K of the shape probed, >= 1
  // Family dot: the first kernel's blocks, cuBLASLt's split count for the shape (the
  // grid is an answer of the cost model, not something the walks can see).
  int64_t blocks = 0;
  // Family gemv: the lane counts to try, in order; empty = the powers of two 1..64.
  // A caller that read the kernel's blockDim.y from cuBLAS's launch record passes it
  // (gemvNSP deals K to 20, 24 or 26 lanes above N = 8448; the default search does
  // not try counts that are no power of two, which would multiply its cost). Each
  // in [1, 64].
  std::vector<int> gemv_lanes;
  // Family gemv: also try one split cut (cuBLAS's split gemv answers: the gemv kernel
  // over gridDim.z parts, then splitKreduce), with the spans the pair walk allows and
  // every partial/merge dtype, after every unsplit candidate.
  bool gemv_split = false;
  // Split candidates (family split_k, and gemv with its cut): the (partial_dtype,
  // merge_dtype) pairs tried, in order; empty: every pair of f32, f16 and bf16. cuBLAS's
  // reduction scheme names one (profile::probe_key tries it first: compute_type ->
  // (f32, f32), output_type -> (out, f32), in place -> (f32, out), as in every one of the
  // 170 validated split classes of session 15's table), which cuts a split search's
  // candidates ninefold.
  std::vector<std::pair<DType, DType>> split_dtypes;
  int max_levels = 3;      // deepest k_cuts nest searched, in [1, 4]
  int random_draws = 6;    // fresh draws every surviving candidate must match
  uint64_t seed = 0x5eed;  // of the random draws
  // Asked before each candidate is judged; a non-OK status ends the search with that
  // status (not NotFound: the caller's limit, not evidence about the box). The CPU
  // search of a long K can take minutes (device runs 3-4 of session 7: 66 s at
  // K = 4096), longer than any black-box call, so a time limit must be checked here.
  std::function<absl::Status()> keep_going;
};

// One level of a nest as the pair walk sees it, over the leading part [0, range).
struct LevelMatch {
  int64_t span = 0;
  std::vector<Fold> folds;  // every fold whose prediction matches the walk
};

// The smallest span s in [2, range) (with the folds) whose predicted walk over
// m in [s-1, range-2] equals `walk` there; span 0 when none does. `chain_only`
// restricts to kChain (the split of kSplitK).
LevelMatch match_level(const std::vector<Outcome>& walk, int64_t range, bool chain_only,
                       const ProbeValues& v, DType out);

// Family split_k's segment splits (KCut.segments, GemmDesc.h) whose predicted walk
// equals `walk` from their first boundary on: counts 2..16 segments of tiles 64, 128,
// 32, 256 or 16 (in this order), one cut per partition of [0, k) (the first that
// makes it) but an equal split's partition. candidate_nests offers them, each alone,
// after the nests of the span that matches (which may be two segments' length).
std::vector<KCut> segment_cuts(const std::vector<Outcome>& walk, int64_t k, const ProbeValues& v,
                               DType out);

// Every nest (outermost first) the pair walk allows, fewest levels first.
std::vector<std::vector<KCut>> candidate_nests(const std::vector<Outcome>& walk, int64_t k,
                                               GemmFamily family, int max_levels,
                                               const ProbeValues& v, DType out);

// The GEMV lane fold of `lanes` lanes whose first elements sit at `first_index[l]`
// (-1: lane holds nothing), from one experiment per pair of offsets: +L in lane 0,
// -L in lane d, r in lane e; r is lost iff the round of e precedes the round of d.
// Offsets whose lane holds nothing are unobservable and go last, counting up.
absl::StatusOr<std::vector<int>> recover_lane_fold(Instrument& inst, int64_t k, int lanes,
                                                   const std::vector<int64_t>& first_index);

// The ProbeOptions.instruction_k values a search of `family` with a_dtype `a` tries, in
// order: 0 (the dtype's own), then 8 (mma.sync m16n8k8) for f16/bf16 inputs in a matrix
// family (gemv's leaves are scalar). With 8, matrix_instruction must be mma_sync.
std::vector<int> searched_instruction_ks(DType a, GemmFamily family);

// Every (partial, merge) pair a split search tries when ProbeOptions.split_dtypes is
// empty (f32, f16 and bf16 each), leaving out those in `tried`, in the search's order:
// what a second search after a narrowed first one still has to try.
std::vector<std::pair<DType, DType>> split_dtypes_without(const std::vector<std::pair<DType, DType>>& tried);

absl::StatusOr<GemmDesc> recover_gemm_desc(const GemmBlackBox& box, const ProbeOptions& opts);
// The same search on a caller's instrument: its black box, its batch limits (one
// call answers many placements) and its memo (placements already run are not run
// again, so the searches of several families at one K share their walks). Its
// dtypes must equal opts' (InvalidArgument naming them otherwise).
absl::StatusOr<GemmDesc> recover_gemm_desc(Instrument& inst, const ProbeOptions& opts);

// Whether `candidate` passes every experiment recover_gemm_desc would run at opts.k
// against a black box that computes `truth` (its CPU reference): the random draws, the
// pair and trailing walks, the tail walks and r walks at both descriptors' spans. So
// two descriptors the probe recovered at different K can be told apart from two that
// differ only in a field one K cannot see (a K-loop step whose short turn is empty at
// that K recovers as the canonical step 0). opts' dtypes and family are truth's.
absl::StatusOr<bool> reproduces(const GemmDesc& candidate, const GemmDesc& truth,
                                const ProbeOptions& opts, std::string* why);

// The same for many candidates against one truth: the truth's walks are run once (the
// cost, about K^2 reference steps) and kept; each candidate adds the walks of its own
// spans. A candidate is judged on every experiment run so far for any candidate, so
// the answer never accepts what reproduces() would reject.
class ProbeReplay {
 public:
  static absl::StatusOr<std::unique_ptr<ProbeReplay>> create(const GemmDesc& truth,
                                                             const ProbeOptions& opts);
  ~ProbeReplay();
  absl::StatusOr<bool> accepts(const GemmDesc& candidate, std::string* why);

  struct State;

 private:
  explicit ProbeReplay(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

}  // namespace fixbits::dsl::probe
