// LaneSweep: the step function a lane sweep's observations become (the device part,
// sweep_lanes, runs in fixbits-cublas-lanes on the GPU).
#include "profile/LaneSweep.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace fixbits::profile {
namespace {

TEST(LaneSweepTest, ObservationsBecomeTheFewestSteps) {
  // Session 12's gemvNSP blocks: (x, 32) to N = 8448, (24, 26) at 8449-9000, (16, 24) at
  // 10000, (24, 20) from 11194.
  const std::vector<std::pair<int64_t, int>> seen = {
      {5, 32}, {128, 32}, {8448, 32}, {8449, 26}, {9000, 26}, {10000, 24}, {11194, 20}, {12672, 20}};
  absl::StatusOr<std::vector<LaneStep>> steps = lane_steps(seen);
  ASSERT_TRUE(steps.ok()) << steps.status();
  EXPECT_EQ(*steps, (std::vector<LaneStep>{{1, 32}, {8449, 26}, {10000, 24}, {11194, 20}}));
  for (const auto& [n, lanes] : seen) EXPECT_EQ(lanes_at(*steps, n), lanes) << n;
  EXPECT_EQ(lanes_at(*steps, 1), 32);       // below the first seen N: its count
  EXPECT_EQ(lanes_at(*steps, 9500), 26);    // between two seen Ns: the lower one's
  EXPECT_EQ(lanes_at(*steps, 40000), 20);   // past the last: the last count
  EXPECT_EQ(to_string(*steps), "lanes@1:32,8449:26,10000:24,11194:20");
  // A count that comes back starts a new step.
  steps = lane_steps({{1, 32}, {2, 16}, {3, 32}});
  ASSERT_TRUE(steps.ok());
  EXPECT_EQ(steps->size(), 3u);
}

TEST(LaneSweepTest, BadObservationsAreNamed) {
  absl::StatusOr<std::vector<LaneStep>> s = lane_steps({});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  s = lane_steps({{10, 32}, {10, 26}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("N = 10"), std::string_view::npos) << s.status();
  s = lane_steps({{10, 32}, {11, 0}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("0 lanes"), std::string_view::npos) << s.status();
  EXPECT_FALSE(lane_steps({{0, 32}}).ok());
  EXPECT_FALSE(lane_steps({{1, 65}}).ok());
}

}  // namespace
}  // namespace fixbits::profile
