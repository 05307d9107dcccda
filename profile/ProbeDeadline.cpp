// ProbeDeadline: see ProbeDeadline.h. The start time is taken when the wrapper is made.
#include "profile/ProbeDeadline.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_format.h"

namespace fixbits::profile {

std::function<absl::Status()> deadline_check(double limit_s, std::function<double()> now) {
  if (limit_s <= 0) return [] { return absl::OkStatus(); };
  if (!now) {
    now = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
  const double start = now();
  return [limit_s, now = std::move(now), start]() -> absl::Status {
    if (now() - start > limit_s) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "the probe passed its time limit of %.0f s (--probe-timeout-s)", limit_s));
    }
    return absl::OkStatus();
  };
}

namespace {
// Either form of a box (dense or sparse problems) behind the limit.
template <class Box>
Box deadline_box(Box box, double limit_s, std::function<double()> now) {
  if (limit_s <= 0) return box;
  std::function<absl::Status()> check = deadline_check(limit_s, std::move(now));
  return [box = std::move(box), check = std::move(check)](const auto& p) {
    using Answer = decltype(box(p));
    if (absl::Status s = check(); !s.ok()) return Answer(s);
    return box(p);
  };
}
}  // namespace

dsl::probe::GemmBlackBox with_deadline(dsl::probe::GemmBlackBox box, double limit_s,
                                       std::function<double()> now) {
  return deadline_box(std::move(box), limit_s, std::move(now));
}

dsl::probe::SparseBlackBox with_deadline(dsl::probe::SparseBlackBox box, double limit_s,
                                         std::function<double()> now) {
  return deadline_box(std::move(box), limit_s, std::move(now));
}

dsl::probe::SparseBatchBox with_deadline(dsl::probe::SparseBatchBox box, double limit_s,
                                         std::function<double()> now) {
  return deadline_box(std::move(box), limit_s, std::move(now));
}

}  // namespace fixbits::profile
