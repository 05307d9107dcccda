// LaunchTiming: see LaunchTiming.h.
#include "runtime/LaunchTiming.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_format.h"

namespace fixbits::runtime {

absl::StatusOr<float> batch_launch_ms(const Device& dev, const LaunchFn& launch, int batch) {
  if (batch < 1) return absl::InvalidArgumentError(absl::StrFormat("batch is %d; it must be at least 1", batch));
  absl::StatusOr<Event> start = dev.create_event();
  if (!start.ok()) return start.status();
  absl::StatusOr<Event> stop = dev.create_event();
  if (!stop.ok()) return stop.status();
  if (absl::Status s = start->record(); !s.ok()) return s;
  for (int i = 0; i < batch; ++i) {
    if (absl::Status s = launch(); !s.ok()) return s;
  }
  if (absl::Status s = stop->record(); !s.ok()) return s;
  if (absl::Status s = stop->synchronize(); !s.ok()) return s;
  absl::StatusOr<float> ms = stop->elapsed_ms_since(*start);
  if (!ms.ok()) return ms.status();
  return *ms / static_cast<float>(batch);
}

absl::StatusOr<float> median_launch_ms(const Device& dev, const LaunchFn& launch, int timed,
                                       int batch, int warmup) {
  if (timed < 1) return absl::InvalidArgumentError(absl::StrFormat("timed is %d; it must be at least 1", timed));
  if (batch < 1) return absl::InvalidArgumentError(absl::StrFormat("batch is %d; it must be at least 1", batch));
  if (warmup < 0) return absl::InvalidArgumentError(absl::StrFormat("warmup is %d; it must not be negative", warmup));
  for (int i = 0; i < warmup; ++i) {
    if (absl::Status s = launch(); !s.ok()) return s;
  }
  std::vector<float> t;
  t.reserve(static_cast<size_t>(timed));
  for (int i = 0; i < timed; ++i) {
    absl::StatusOr<float> ms = batch_launch_ms(dev, launch, batch);
    if (!ms.ok()) return ms.status();
    t.push_back(*ms);
  }
  const auto mid = t.begin() + timed / 2;
  std::nth_element(t.begin(), mid, t.end());
  return *mid;
}

}  // namespace fixbits::runtime
