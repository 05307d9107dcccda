// ProbeDeadline: a black box that stops answering after a time limit, so one probe
// cannot take a whole device call (device run 12: one probe ran about 495 s).
//
// Contract: with_deadline(box, limit_s) answers exactly as `box` until `limit_s`
// seconds have passed since it was made (measured by `now`, steady_clock seconds by
// default); from then on every call returns DeadlineExceeded naming the limit and
// does not call `box`. The probe takes any error that is not NotFound as the
// instrument's, so the scan drops that point instead of reading it as "no descriptor".
// limit_s <= 0 means no limit (the box itself is returned).
// Example: probe_key(with_deadline(box->as_black_box(), 60), shape, key, instr, limits,
//                    deadline_check(60)).
#pragma once

#include <functional>

#include "absl/status/status.h"

#include "dsl/probe/Experiments.h"

namespace fixbits::profile {

dsl::probe::GemmBlackBox with_deadline(dsl::probe::GemmBlackBox box, double limit_s,
                                       std::function<double()> now = {});

// The same for a black box of the sparse form.
dsl::probe::SparseBlackBox with_deadline(dsl::probe::SparseBlackBox box, double limit_s,
                                         std::function<double()> now = {});
// And for a batch box (several sparse problems a call).
dsl::probe::SparseBatchBox with_deadline(dsl::probe::SparseBatchBox box, double limit_s,
                                         std::function<double()> now = {});

// The same limit for the probe's CPU search (dsl::probe::ProbeOptions::keep_going):
// OK until `limit_s` seconds have passed since it was made, then DeadlineExceeded with
// the message with_deadline gives. limit_s <= 0: always OK.
std::function<absl::Status()> deadline_check(double limit_s, std::function<double()> now = {});

}  // namespace fixbits::profile
