// TuneReduce: see TuneReduce.h.
#include "jit/TuneReduce.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "absl/strings/str_format.h"
#include "jit/ReduceCandidates.h"
#include "runtime/KernelCache.h"
#include "runtime/LaunchTiming.h"

namespace fixbits::jit {
namespace {

// Builds (codegen, verifier, driver load) every candidate on `threads` threads and drops
// the runners: the kernels stay loaded in jit's table, so the timing loop's create finds
// them. A failure here is found again, and recorded, by the loop. With the kernel cache
// off nothing stays loaded, so nothing is built ahead.
// A thread takes no candidate once `in_budget()` is false.
template <class InBudget>
void prebuild(const std::shared_ptr<runtime::Device>& dev, const dsl::ReduceDesc& desc,
              const std::vector<dsl::ReduceConfig>& candidates, int threads, InBudget in_budget) {
  threads = std::min<int>(threads, static_cast<int>(candidates.size()));
  if (threads < 2 || !runtime::KernelCache::global().options().enabled) return;
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t i = next++; i < candidates.size() && in_budget(); i = next++) {
        (void)ReduceRunner::create(dev, desc, candidates[i]);
      }
    });
  }
  for (std::thread& th : pool) th.join();
}

}  // namespace

absl::StatusOr<TunedReduce> tune_reduce(const std::shared_ptr<runtime::Device>& device,
                                        const dsl::ReduceDesc& desc, const ReduceRunner& inputs,
                                        const TuneReduceOptions& options) {
  if (device == nullptr) return absl::InvalidArgumentError("tune_reduce: device is null.");
  if (absl::Status s = dsl::validate(desc); !s.ok()) return s;
  if (inputs.rows() <= 0 || inputs.cols() <= 0) {
    return absl::InvalidArgumentError("tune_reduce: inputs has no uploaded problem (call upload() first).");
  }
  if (options.timed < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("TuneReduceOptions.timed %d is not >= 1.", options.timed));
  }
  if (options.batch < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("TuneReduceOptions.batch %d is not >= 1.", options.batch));
  }
  if (options.build_threads < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("TuneReduceOptions.build_threads %d is negative.", options.build_threads));
  }
  if (!(options.budget_seconds >= 0)) {  // NaN too
    return absl::InvalidArgumentError(
        absl::StrFormat("TuneReduceOptions.budget_seconds %g is not >= 0.", options.budget_seconds));
  }
  std::vector<dsl::ReduceConfig> candidates;
  if (options.candidates) {
    candidates = *options.candidates;
  } else {
    CandidateOptions o;
    o.multiprocessors = device->info().multiprocessor_count;
    o.lanes = device->info().warp_size > 0 ? device->info().warp_size : 32;
    candidates = reduce_candidates(desc, inputs.rows(), inputs.cols(), o);
  }
  if (candidates.empty()) return absl::InvalidArgumentError("tune_reduce: TuneReduceOptions.candidates is empty.");
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  using Clock = std::chrono::steady_clock;
  const auto seconds_since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  TunedReduce out;
  const Clock::time_point build_start = Clock::now();
  const auto in_budget = [&] {
    return options.budget_seconds == 0 || seconds_since(build_start) < options.budget_seconds;
  };
  prebuild(device, desc, candidates, options.build_threads > 0 ? options.build_threads : std::min(cores, 16),
           in_budget);
  out.build_seconds = seconds_since(build_start);
  const Clock::time_point timing_start = Clock::now();
  bool found = false;
  for (const dsl::ReduceConfig& c : candidates) {
    absl::StatusOr<float> us = absl::UnknownError("not run");
    absl::StatusOr<ReduceRunner> r = absl::UnknownError("not built");
    if (found && !in_budget()) {
      us = absl::DeadlineExceededError(absl::StrFormat(
          "not run: TuneReduceOptions.budget_seconds %g was spent before this candidate.", options.budget_seconds));
    } else if (r = ReduceRunner::create(device, desc, c); !r.ok()) {  // may refuse this shape
      us = r.status();
    } else if (absl::Status shared = r->share_inputs(inputs); !shared.ok()) {
      us = shared;
    } else {
      absl::StatusOr<float> ms = runtime::median_launch_ms(
          *device, [&r] { return r->launch(); }, options.timed, options.batch);
      us = ms.ok() ? absl::StatusOr<float>(*ms * 1000.0f) : ms.status();
    }
    TriedReduce tried{.config = c, .us = std::move(us), .occupancy = {}};
    if (r.ok()) {
      // A driver without a calculator leaves it empty; it never fails the candidate.
      absl::StatusOr<std::vector<runtime::Occupancy>> occ = r->occupancy();
      if (occ.ok()) tried.occupancy = *std::move(occ);
    }
    if (options.on_candidate) options.on_candidate(tried);
    if (tried.us.ok() && (!found || *tried.us < out.us)) {
      found = true;
      out.config = c;
      out.us = *tried.us;
    }
    out.tried.push_back(std::move(tried));
  }
  out.timing_seconds = seconds_since(timing_start);
  if (!found) {
    return absl::NotFoundError(absl::StrFormat("tune_reduce: none of the %d candidates ran; the first: %s",
                                               out.tried.size(), out.tried.front().us.status().ToString()));
  }
  return out;
}

}  // namespace fixbits::jit
