// Autotuner: the search of §6.2 -- compile every candidate configuration, partition
// them by the verifier's signature, keep only those bitwise equivalent to a
// reference, and benchmark only those.
//
// Contract:
//   - runtime does not know how kernels are built: a candidate is a name plus a
//     function returning its kernel text (PTX or AMDGCN); timing is a caller function
//     (CUDA events on a device, a fake clock in tests).
//   - Every candidate is built once, in list order, and signed by the hook in
//     Options (default TreeSignatureHook). A build or verification error is recorded
//     against that candidate (pruned, with the reason) and never stops the search.
//   - The reference signature is, in order of preference: Options::reference_signature,
//     the signature of Options::reference_text, else that of the first candidate (in
//     list order) that built and verified.
//   - Candidates whose signature differs from the reference are pruned unbenchmarked.
//     The timer runs once per kept candidate, in list order; a timer error or a time
//     that is not a finite number >= 0 prunes that candidate.
//   - The chosen candidate has the least time; ties go to the earliest in list order.
//   - Classes list candidates with equal signatures, ordered by their first member;
//     members are in list order. Everything is deterministic for deterministic inputs.
//   - Bad arguments (no candidates, an empty or repeated name, a missing build
//     function, a hook that checks nothing) are InvalidArgument; no kept candidate
//     with a valid time is NotFound naming why each was pruned.
//
// Example:
//   std::vector<TuneCandidate> cs;
//   for (int w : {1, 2, 4, 8}) cs.push_back({absl::StrCat("w", w), [w] { return ptx_for(w); }});
//   auto r = runtime::autotune(cs, [&](const CompiledCandidate& c) { return time_on_gpu(c); },
//                              {.target = "sm_90a"});
//   // r->chosen is the fastest candidate bitwise equivalent to cs[0].
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/VerifyHook.h"

namespace fixbits::runtime {

struct TuneCandidate {
  std::string name;  // unique among the candidates, e.g. "warps=8 elems=4"
  std::function<absl::StatusOr<std::string>()> build;  // the kernel text
};

// A candidate that built and verified.
struct CompiledCandidate {
  size_t index = 0;  // position in the candidate list
  std::string name;
  std::string text;
  std::string signature;  // the hook's signature of `text`
};

enum class PruneReason : uint8_t {
  kBuildFailed,    // build() returned an error
  kVerifyFailed,   // the hook rejected the text
  kNotEquivalent,  // signature differs from the reference
  kTimingFailed,   // the timer returned an error or an invalid time
};
std::string_view prune_reason_name(PruneReason r);  // "build failed", ...

struct PrunedCandidate {
  size_t index = 0;
  std::string name;
  PruneReason reason = PruneReason::kBuildFailed;
  std::string why;  // a full sentence
};

struct EquivalenceClass {
  std::string signature;
  std::vector<std::string> members;  // candidate names, in list order
};

struct Partition {
  std::vector<CompiledCandidate> compiled;  // in list order
  std::vector<EquivalenceClass> classes;    // ordered by first member
  std::vector<PrunedCandidate> failed;      // build / verify failures, in list order
};

struct TuneOptions {
  std::string target = "sm_90a";  // passed to the hook ("gfx942" reads AMDGCN)
  // The hook that signs texts; null means a TreeSignatureHook. Must check().
  std::shared_ptr<const VerifyHook> hook;
  // The reference, when not the first candidate: a signature, or a text to sign.
  std::optional<std::string> reference_signature;
  std::optional<std::string> reference_text;
};

struct CandidateTime {
  size_t index = 0;
  std::string name;
  double time = 0;  // whatever unit the timer returns
};

struct TuneResult {
  std::string chosen;  // the fastest kept candidate
  size_t chosen_index = 0;
  double chosen_time = 0;
  std::string reference_signature;
  std::string reference_source;  // "candidate '<name>'", "the caller's text", "the caller's signature"
  Partition partition;
  std::vector<std::string> kept;        // benchmarked candidates, in list order
  std::vector<CandidateTime> timings;   // valid times, in list order
  std::vector<PrunedCandidate> pruned;  // every pruned candidate, in list order
};

using CandidateTimer = std::function<absl::StatusOr<double>(const CompiledCandidate&)>;

// Builds and signs every candidate and partitions them by signature.
absl::StatusOr<Partition> partition_candidates(const std::vector<TuneCandidate>& candidates,
                                               const TuneOptions& options = {});

// partition_candidates, then keep the reference's class and time it (see above).
absl::StatusOr<TuneResult> autotune(const std::vector<TuneCandidate>& candidates,
                                    const CandidateTimer& timer, const TuneOptions& options = {});

}  // namespace fixbits::runtime
