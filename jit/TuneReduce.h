// TuneReduce: the fastest configuration of one reduction for one shape on one device --
// what the bench's tuning does, as a library call an application makes once per shape
// (then it keeps the config, or the ReduceRunner built from it).
//
// Contract: tune_reduce builds every candidate's kernels (jit::reduce_candidates for this
// device unless the options name the list; on up to build_threads threads, through the
// kernel cache, so the timing loop finds them loaded), then for each candidate in list
// order: a ReduceRunner on the inputs, 3 untimed launches, `timed` batches of `batch`
// launches between two CUDA events, and the median batch's time per launch. A candidate
// this shape refuses (ReduceRunner::create or the input sharing fails) or whose launch
// fails is recorded with its Status and skipped; it never stops the search. The chosen
// candidate has the least median; ties go to the earliest in list order. With a
// budget_seconds, the candidates reached after it are recorded as not run, and the
// choice is among those timed (list the likeliest first).
//   - Bits: for a pinned descriptor every candidate gives the same bits (the knobs are
//     speed knobs of one written-down tree; tests/jit's GPU tests check them config by
//     config), so the choice changes speed only. For a free one the candidates may
//     differ, as free order allows.
//   - Errors: no device, an invalid descriptor, inputs whose runner was not uploaded, or
//     a bad option are InvalidArgument naming the argument or field; no candidate that
//     ran is NotFound with the first candidate's reason.
//   - Timing depends on the device and what else runs on it; the result is a measurement,
//     not a function of the arguments.
//
// Example:
//   auto r = jit::ReduceRunner::create(dev, desc, {.warps = 8});   // owns the inputs
//   r->upload(problem);
//   auto best = jit::tune_reduce(dev, desc, *r);
//   auto runner = jit::ReduceRunner::create(dev, desc, best->config);   // a cache hit
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/ReduceDesc.h"
#include "dsl/tile/ReduceProgram.h"
#include "jit/ReduceRunner.h"
#include "runtime/Device.h"

namespace fixbits::jit {

// One candidate's record: its median, or why it did not run, and what the driver's
// occupancy calculator says of its kernels (read for diagnosis; the choice is by time).
struct TriedReduce {
  dsl::ReduceConfig config;
  absl::StatusOr<float> us;  // median microseconds per launch, or why it did not run
  // ReduceRunner::occupancy() per phase; empty where the runner was not built or the
  // driver has no calculator.
  std::vector<runtime::Occupancy> occupancy;
};

struct TuneReduceOptions {
  // The configurations to time; unset: reduce_candidates(desc, rows, cols) with the
  // device's multiprocessors and warp size.
  std::optional<std::vector<dsl::ReduceConfig>> candidates;
  int timed = 20;          // timed batches per candidate, >= 1 (the median is kept)
  int batch = 10;          // launches per timed batch, >= 1
  int build_threads = 0;   // threads building before the timing loop; 0: the cores, at most 16
  // > 0: seconds from the call after which no candidate starts, to build ahead or to
  // time; those left are recorded DeadlineExceeded naming this field. The first
  // candidate that runs is timed whatever the budget, so a shape some candidate takes
  // always gets one. 0: no limit.
  double budget_seconds = 0;
  // Called after each candidate with its record (TunedReduce::tried's entry, before it
  // is kept there).
  std::function<void(const TriedReduce&)> on_candidate;
};

struct TunedReduce {
  dsl::ReduceConfig config;  // the fastest candidate
  float us = 0;              // its median, microseconds per launch
  using Tried = TriedReduce;
  std::vector<Tried> tried;  // every candidate, in list order
  // Wall-clock seconds of the two phases: building ahead (codegen, verifier and driver
  // load of every candidate on build_threads threads; 0 when nothing is built ahead),
  // then the loop that creates each runner and times it (a build the first phase did not
  // do, e.g. with the kernel cache off, counts here).
  double build_seconds = 0;
  double timing_seconds = 0;
};

// `inputs`: a runner that uploaded the problem to time on (any descriptor with desc's op,
// axis and dtypes, any config: its x, w and eps are shared; each candidate writes its own
// output).
absl::StatusOr<TunedReduce> tune_reduce(const std::shared_ptr<runtime::Device>& device,
                                        const dsl::ReduceDesc& desc, const ReduceRunner& inputs,
                                        const TuneReduceOptions& options = {});

}  // namespace fixbits::jit
