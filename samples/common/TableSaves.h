// TableSaves: when a long-running cuBLAS sample (fixbits-cublas-scan) writes its table
// while it probes, so a run that a time limit stops keeps what it found.
//
// Contract: due() is true when more than `every_s` seconds have passed since the last
// write, or when a probe has ended since the last write and more than `after_probe_s`
// seconds have passed. The caller asks before each probe starts (and at each progress
// line) and writes the whole table when it is due; a probe's result therefore reaches
// the disk before a later probe has run more than after_probe_s seconds, however long
// that later probe runs. Session 30's slice 0 ran class 82's five quick probes in its
// first 20 s and then class 364's, which the call's time limit stopped 300 s later:
// with only the 30 s rule nothing had been written, and the five descriptors were lost
// with the slice's table ("cannot be read").
// Example: TableSaves{}.due(20.0, 0.0, true) -> true; due(20.0, 0.0, false) -> false.
#pragma once

namespace fixbits::samples {

struct TableSaves {
  double every_s = 30;      // the longest a run of quick work goes unwritten
  // A finished probe waits at most this long (plus one probe's start). Session 35's
  // table is 13 MB of text (`fixbits-cublas-scan --merge`, which reads it twice and
  // writes it once, takes 2.3 s on the 2-core build machine), so a write every 2 s
  // would cost a run of quick probes a large share of its time; every 10 s, little.
  double after_probe_s = 10;

  bool due(double now_s, double last_save_s, bool probed_since_save) const {
    const double since = now_s - last_save_s;
    return since > every_s || (probed_since_save && since > after_probe_s);
  }
};

}  // namespace fixbits::samples
