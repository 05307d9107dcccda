// LaneSweep: a gemv class's lane count as a function of N, read from cuBLAS's own launch
// records (runtime::KernelRecorder). cuBLAS's gemvNSP kernel deals K to blockDim.y lanes
// and picks its block by N (session 12, H200: (x, 32) up to N = 8448, then (24, 26),
// (16, 24), (24, 20)), so one descriptor per class cannot hold; the table carries the
// count as a step function of N (CublasTable.h's lanes_by_n).
//
// Contract:
//   * lane_steps(seen): (N, lanes) observations, N strictly ascending, become the fewest
//     steps that give every seen N its count: a step starts at each seen N whose count
//     differs from the previous seen N's, the first at n0 = 1 (the smallest seen N's
//     count holds below it). An N between two seen ones takes the lower one's count.
//     InvalidArgument when `seen` is empty, not ascending, or has a count outside [1, 64].
//   * sweep_lanes(lt, table, cls, options): for each K of options.ks, asks cuBLASLt's
//     heuristic for M = 1 and every N of [n_first, n_last] (the class's dtypes and
//     layout); each N whose answer is class `cls` (class_of_answer) runs once under the
//     recorder, and its lane count is blockDim.y of the one kernel of that launch whose
//     name holds "gemv". Two Ks that give one N different counts are an error naming the
//     N (the rule is by N alone), as are a launch without exactly one such kernel, no N
//     in the class, and passing options.budget_s (DeadlineExceeded: how far it got).
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "profile/CublasTable.h"
#include "runtime/CublasLt.h"

namespace fixbits::profile {

absl::StatusOr<std::vector<LaneStep>> lane_steps(const std::vector<std::pair<int64_t, int>>& seen);

struct LaneSweepOptions {
  int64_t n_first = 1, n_last = 16384;
  std::vector<int64_t> ks = {64, 1000};
  double budget_s = 300;
};

struct LaneSweep {
  std::vector<LaneStep> steps;
  int64_t shapes_in_class = 0;  // (N, K) points whose answer was the class
  int64_t shapes_asked = 0;     // heuristic calls
  double seconds = 0;
};

absl::StatusOr<LaneSweep> sweep_lanes(runtime::CublasLt& lt, const CublasTable& table, int cls,
                                      const LaneSweepOptions& options);

}  // namespace fixbits::profile
