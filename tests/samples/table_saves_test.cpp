// Tests of samples/common/TableSaves.h: the scan's rule for writing its table while it
// probes.
#include "samples/common/TableSaves.h"

#include "gtest/gtest.h"

namespace fixbits::samples {
namespace {

TEST(TableSaves, AProbeThatEndedIsWrittenBeforeTheNextLongOne) {
  // Session 30's slice 0: five quick probes in the first 20 s, then a probe that ran
  // until the time limit. The sixth probe's start must write the five.
  EXPECT_TRUE(TableSaves{}.due(20.0, 0.0, /*probed_since_save=*/true));
  // Nothing ended since the last write: the 30 s rule alone.
  EXPECT_FALSE(TableSaves{}.due(20.0, 0.0, /*probed_since_save=*/false));
  EXPECT_TRUE(TableSaves{}.due(30.5, 0.0, /*probed_since_save=*/false));
}

TEST(TableSaves, QuickProbesInARowAreNotEachWritten) {
  // A class of 0.5 s probes: one write per after_probe_s (10 s), not one per probe.
  EXPECT_FALSE(TableSaves{}.due(105.0, 100.0, true));
  EXPECT_TRUE(TableSaves{}.due(110.5, 100.0, true));
}

TEST(TableSaves, TheLimitsAreTheCallersOwn) {
  const TableSaves never_between{.every_s = 1e9, .after_probe_s = 1e9};
  EXPECT_FALSE(never_between.due(1000.0, 0.0, true));
  const TableSaves each_probe{.every_s = 30, .after_probe_s = 0};
  EXPECT_TRUE(each_probe.due(0.1, 0.0, true));
  EXPECT_FALSE(each_probe.due(0.1, 0.0, false));
}

}  // namespace
}  // namespace fixbits::samples
