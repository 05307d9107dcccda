// Tests for LaunchTiming (runtime/LaunchTiming.h) on a FakeDriver whose events answer
// scripted elapsed times: the batch divides, the median is of the batches, warm-up
// launches are untimed, failures pass through, and bad counts name their field.
#include "runtime/LaunchTiming.h"

#include "gtest/gtest.h"
#include "tests/runtime/FakeDriver.h"

namespace fixbits::runtime {
namespace {

class LaunchTimingTest : public ::testing::Test {
 protected:
  LaunchFn counting() {
    return [this] {
      ++launches;
      return absl::OkStatus();
    };
  }
  std::shared_ptr<testing::FakeDriver> driver = std::make_shared<testing::FakeDriver>();
  Device device{driver};
  int launches = 0;
};

TEST_F(LaunchTimingTest, BatchDividesTheEventTimeByTheLaunches) {
  driver->elapsed_ms = {12.0f};
  absl::StatusOr<float> ms = batch_launch_ms(device, counting(), 4);
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_FLOAT_EQ(*ms, 3.0f);
  EXPECT_EQ(launches, 4);
  EXPECT_EQ(driver->destroyed_events, 2);
}

TEST_F(LaunchTimingTest, MedianIsOfTheBatchesAfterUntimedWarmUps) {
  // Five batches of 10; per launch 1, 5, 2, 4, 3 ms: the median is 3, not the mean or
  // the first or last.
  driver->elapsed_ms = {10.0f, 50.0f, 20.0f, 40.0f, 30.0f};
  absl::StatusOr<float> ms = median_launch_ms(device, counting(), 5, 10, 2);
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_FLOAT_EQ(*ms, 3.0f);
  EXPECT_EQ(launches, 2 + 5 * 10);
  EXPECT_TRUE(driver->elapsed_ms.empty());
}

TEST_F(LaunchTimingTest, EvenCountsTakeTheUpperMedian) {
  driver->elapsed_ms = {4.0f, 1.0f, 3.0f, 2.0f};
  absl::StatusOr<float> ms = median_launch_ms(device, counting(), 4, 1, 0);
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_FLOAT_EQ(*ms, 3.0f);
  EXPECT_EQ(launches, 4);
}

TEST_F(LaunchTimingTest, AFailingLaunchStopsTheTimingWithItsStatus) {
  int calls = 0;
  LaunchFn third_fails = [&calls] {
    return ++calls == 3 ? absl::InternalError("cuLaunchKernel failed: too many resources")
                        : absl::OkStatus();
  };
  absl::StatusOr<float> ms = median_launch_ms(device, third_fails, 5, 10, 1);
  ASSERT_FALSE(ms.ok());
  EXPECT_EQ(ms.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(ms.status().message().find("too many resources"), std::string_view::npos);
  EXPECT_EQ(calls, 3);  // the warm-up and two of the first batch's launches, then none
}

TEST_F(LaunchTimingTest, BadCountsNameTheirFieldAndLaunchNothing) {
  const struct {
    int timed, batch, warmup;
    const char* field;
  } cases[] = {{0, 10, 3, "timed"}, {5, 0, 3, "batch"}, {5, 10, -1, "warmup"}};
  for (const auto& c : cases) {
    absl::StatusOr<float> ms = median_launch_ms(device, counting(), c.timed, c.batch, c.warmup);
    ASSERT_FALSE(ms.ok()) << c.field;
    EXPECT_EQ(ms.status().code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_NE(ms.status().message().find(c.field), std::string_view::npos) << ms.status();
  }
  absl::StatusOr<float> ms = batch_launch_ms(device, counting(), 0);
  ASSERT_FALSE(ms.ok());
  EXPECT_NE(ms.status().message().find("batch"), std::string_view::npos) << ms.status();
  EXPECT_EQ(launches, 0);
}

}  // namespace
}  // namespace fixbits::runtime
