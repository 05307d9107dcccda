// Autotuner: see Autotuner.h. Three steps, each a function:
//   build_and_sign   -- every candidate once, failures recorded, never fatal;
//   classes_of       -- group by signature, ordered by first member;
//   time_and_choose  -- time the reference class, least time wins, earliest on ties.
// Example: candidates a (sig S), b (build error), c (sig T), d (sig S), reference a:
//   classes {S: a, d}, {T: c}; pruned b (build failed), c (not equivalent);
//   timer runs on a and d only.
#include "runtime/Autotuner.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/TreeSignatureHook.h"

namespace fixbits::runtime {
namespace {

absl::Status check_arguments(const std::vector<TuneCandidate>& candidates, const VerifyHook& hook) {
  if (candidates.empty()) {
    return absl::InvalidArgumentError("The autotuner was given no candidate configurations.");
  }
  if (!hook.checks()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "The autotuner needs a checking verify hook to partition candidates, but hook '%s' "
        "checks nothing.",
        std::string(hook.name())));
  }
  absl::flat_hash_set<std::string> names;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const TuneCandidate& c = candidates[i];
    if (c.name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("Autotuner candidate %d has an empty name.", i));
    }
    if (!names.insert(c.name).second) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "Autotuner candidate %d repeats the name '%s'; names must be unique.", i, c.name));
    }
    if (!c.build) {
      return absl::InvalidArgumentError(
          absl::StrFormat("Autotuner candidate '%s' has no build function.", c.name));
    }
  }
  return absl::OkStatus();
}

Partition build_and_sign(const std::vector<TuneCandidate>& candidates, const VerifyHook& hook,
                         const std::string& target) {
  Partition p;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const TuneCandidate& c = candidates[i];
    absl::StatusOr<std::string> text = c.build();
    if (!text.ok()) {
      p.failed.push_back({i, c.name, PruneReason::kBuildFailed,
                          absl::StrFormat("Candidate '%s' failed to build: %s", c.name,
                                          text.status().ToString())});
      continue;
    }
    absl::StatusOr<std::string> sig = hook.signature(*text, target);
    if (!sig.ok() || sig->empty()) {
      p.failed.push_back(
          {i, c.name, PruneReason::kVerifyFailed,
           absl::StrFormat("Candidate '%s' failed verification by '%s': %s", c.name, std::string(hook.name()),
                           sig.ok() ? "the hook returned an empty signature."
                                    : sig.status().ToString())});
      continue;
    }
    p.compiled.push_back({i, c.name, *std::move(text), *std::move(sig)});
  }
  return p;
}

std::vector<EquivalenceClass> classes_of(const std::vector<CompiledCandidate>& compiled) {
  std::vector<EquivalenceClass> classes;
  absl::flat_hash_map<std::string, size_t> slot;
  for (const CompiledCandidate& c : compiled) {
    auto [it, fresh] = slot.try_emplace(c.signature, classes.size());
    if (fresh) classes.push_back({c.signature, {}});
    classes[it->second].members.push_back(c.name);
  }
  return classes;
}

std::string why_pruned(const std::vector<PrunedCandidate>& pruned) {
  std::string s;
  for (const PrunedCandidate& p : pruned) {
    absl::StrAppend(&s, s.empty() ? "" : "; ", p.name, ": ", std::string(prune_reason_name(p.reason)));
  }
  return s;
}

}  // namespace

std::string_view prune_reason_name(PruneReason r) {
  switch (r) {
    case PruneReason::kBuildFailed: return "build failed";
    case PruneReason::kVerifyFailed: return "verification failed";
    case PruneReason::kNotEquivalent: return "not equivalent to the reference";
    case PruneReason::kTimingFailed: return "timing failed";
  }
  return "unknown";
}

absl::StatusOr<Partition> partition_candidates(const std::vector<TuneCandidate>& candidates,
                                               const TuneOptions& options) {
  std::shared_ptr<const VerifyHook> hook =
      options.hook ? options.hook : std::make_shared<TreeSignatureHook>();
  if (absl::Status s = check_arguments(candidates, *hook); !s.ok()) return s;
  Partition p = build_and_sign(candidates, *hook, options.target);
  p.classes = classes_of(p.compiled);
  return p;
}

absl::StatusOr<TuneResult> autotune(const std::vector<TuneCandidate>& candidates,
                                    const CandidateTimer& timer, const TuneOptions& options) {
  if (!timer) return absl::InvalidArgumentError("The autotuner was given no timing function.");
  std::shared_ptr<const VerifyHook> hook =
      options.hook ? options.hook : std::make_shared<TreeSignatureHook>();
  TuneOptions resolved = options;
  resolved.hook = hook;
  absl::StatusOr<Partition> partition = partition_candidates(candidates, resolved);
  if (!partition.ok()) return partition.status();

  TuneResult r;
  r.partition = *std::move(partition);
  // The reference signature.
  if (options.reference_signature.has_value()) {
    if (options.reference_signature->empty()) {
      return absl::InvalidArgumentError("The autotuner's reference_signature is empty.");
    }
    r.reference_signature = *options.reference_signature;
    r.reference_source = "the caller's signature";
  } else if (options.reference_text.has_value()) {
    absl::StatusOr<std::string> sig = hook->signature(*options.reference_text, options.target);
    if (!sig.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "The autotuner's reference_text failed verification: %s", sig.status().ToString()));
    }
    r.reference_signature = *sig;
    r.reference_source = "the caller's text";
  } else if (!r.partition.compiled.empty()) {
    r.reference_signature = r.partition.compiled.front().signature;
    r.reference_source = absl::StrCat("candidate '", r.partition.compiled.front().name, "'");
  }

  // Keep the reference's class; merge failures and exclusions back into list order.
  std::vector<PrunedCandidate> pruned = r.partition.failed;
  bool have_best = false;
  for (const CompiledCandidate& c : r.partition.compiled) {
    if (c.signature != r.reference_signature) {
      pruned.push_back({c.index, c.name, PruneReason::kNotEquivalent,
                        absl::StrFormat("Candidate '%s' has signature %s, not the reference's %s "
                                        "(from %s).",
                                        c.name, c.signature, r.reference_signature,
                                        r.reference_source)});
      continue;
    }
    r.kept.push_back(c.name);
    absl::StatusOr<double> t = timer(c);
    if (!t.ok() || !std::isfinite(*t) || *t < 0) {
      pruned.push_back({c.index, c.name, PruneReason::kTimingFailed,
                        t.ok() ? absl::StrFormat("Candidate '%s' was timed at %g, which is not a "
                                                 "finite time >= 0.",
                                                 c.name, *t)
                               : absl::StrFormat("Candidate '%s' could not be timed: %s", c.name,
                                                 t.status().ToString())});
      continue;
    }
    r.timings.push_back({c.index, c.name, *t});
    if (!have_best || *t < r.chosen_time) {  // strict: the earliest wins a tie
      have_best = true;
      r.chosen = c.name;
      r.chosen_index = c.index;
      r.chosen_time = *t;
    }
  }
  std::stable_sort(pruned.begin(), pruned.end(),
                   [](const PrunedCandidate& a, const PrunedCandidate& b) { return a.index < b.index; });
  r.pruned = std::move(pruned);
  if (!have_best) {
    return absl::NotFoundError(absl::StrFormat(
        "No autotuner candidate is both equivalent to the reference (%s) and timed; pruned: %s.",
        r.reference_source.empty() ? "none: no candidate built and verified"
                                   : r.reference_source,
        why_pruned(r.pruned)));
  }
  return r;
}

}  // namespace fixbits::runtime
