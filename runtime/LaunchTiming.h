// LaunchTiming: how long one launch takes on the device, from a pair of events around a
// batch of back-to-back launches (the one timing rule of the tuner and the benches).
//
// Why a batch: a single launch of a 20 us kernel between two events counts the event and
// launch latency (about 2-4 us on an H100) as kernel time, which a 600 us copy does not
// feel. Launches in one batch still pay each launch's ramp-up and tail.
//
// Contract:
//   * batch_launch_ms(dev, launch, batch) records an event, calls launch() `batch` times,
//     records a second event, waits for it and answers the elapsed milliseconds divided
//     by `batch`. The first failing launch's (or event's) status is returned as it is.
//   * median_launch_ms(dev, launch, timed, batch, warmup) calls launch() `warmup` times
//     untimed, then answers the median of `timed` batch_launch_ms values (the upper
//     median when `timed` is even).
//   * batch < 1, timed < 1 or warmup < 0 is InvalidArgument naming the field; nothing is
//     launched then.
// Example: median_launch_ms(*dev, [&] { return runner.launch(); }, 20, 10)
#pragma once

#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/Device.h"

namespace fixbits::runtime {

using LaunchFn = std::function<absl::Status()>;

absl::StatusOr<float> batch_launch_ms(const Device& dev, const LaunchFn& launch, int batch);

absl::StatusOr<float> median_launch_ms(const Device& dev, const LaunchFn& launch, int timed,
                                       int batch, int warmup = 3);

}  // namespace fixbits::runtime
