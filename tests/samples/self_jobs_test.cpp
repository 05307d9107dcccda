// Tests of samples/common/SelfJobs.h: the jobs are this test binary run again with a
// filter that picks one helper "test" (which does nothing unless the environment asks
// it to); a SIGTERM that reaches the parent while it waits is passed on to the jobs,
// and run_self_jobs returns with their codes instead of the parent dying.
#include "samples/common/SelfJobs.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace fixbits::samples {
namespace {

// A job: exits 7, or sleeps 60 s, as FIXBITS_SELF_JOBS_TEST asks; run by ctest on its
// own it is skipped.
TEST(SelfJobsHelper, Job) {
  const char* what = std::getenv("FIXBITS_SELF_JOBS_TEST");
  if (what == nullptr) GTEST_SKIP() << "a job of SelfJobsTest, run only by it";
  if (std::string(what) == "exit7") _exit(7);
  if (std::string(what) == "sleep") {
    std::this_thread::sleep_for(std::chrono::seconds(60));
    _exit(0);
  }
}

std::vector<SelfJob> helper_jobs(int n) {
  std::vector<SelfJob> jobs;
  for (int i = 0; i < n; ++i) jobs.push_back({.args = {"--gtest_filter=SelfJobsHelper.Job"}});
  return jobs;
}

TEST(SelfJobsTest, ReturnsEveryJobsExitCode) {
  setenv("FIXBITS_SELF_JOBS_TEST", "exit7", 1);
  const std::vector<int> codes = run_self_jobs("self_jobs_test", "self_jobs_test", helper_jobs(3));
  unsetenv("FIXBITS_SELF_JOBS_TEST");
  EXPECT_EQ(codes, (std::vector<int>{7, 7, 7}));
  EXPECT_EQ(stopped_by_signal(), 0);
}

// A process that runs sleeping jobs gets SIGTERM after 0.5 s: it must come back from
// run_self_jobs within seconds (the jobs stopped, each code 1: not a normal exit) and
// report the signal, exiting 0 itself. Without the forwarding it dies of the signal
// (or waits out the 60 s sleeps).
TEST(SelfJobsTest, ATermSignalStopsTheJobsAndTheParentCarriesOn) {
  const pid_t parent = fork();
  if (parent == 0) {
    setenv("FIXBITS_SELF_JOBS_TEST", "sleep", 1);
    const std::vector<int> codes =
        run_self_jobs("self_jobs_test", "self_jobs_test", helper_jobs(3));
    const bool ok = codes == std::vector<int>{1, 1, 1} && stopped_by_signal() == SIGTERM;
    _exit(ok ? 0 : 3);
  }
  ASSERT_GT(parent, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto t0 = std::chrono::steady_clock::now();
  kill(parent, SIGTERM);
  int status = 0;
  waitpid(parent, &status, 0);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(WIFEXITED(status)) << "the parent died of the signal";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "codes or stopped_by_signal() were wrong";
  EXPECT_LT(waited, 10.0);
}

}  // namespace
}  // namespace fixbits::samples
