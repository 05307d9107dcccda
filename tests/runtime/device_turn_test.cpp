// Tests of runtime/DeviceTurn: processes that open one lock file take turns; a turn is
// given back by its guard and by a process that dies holding it.
#include "runtime/DeviceTurn.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace fixbits::runtime {
namespace {

std::string lock_path(const char* name) {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp != nullptr ? tmp : "/tmp") + "/fixbits_device_turn_" + name + "_" +
         std::to_string(getpid());
}

// Exit code of a child process that opens `path` itself and tries the turn: 0 when it
// got it, 1 when another process had it, 2 when the file did not open.
int child_tries(const std::string& path) {
  const pid_t pid = fork();
  if (pid == 0) {
    absl::StatusOr<DeviceTurn> t = DeviceTurn::open(path);
    if (!t.ok()) _exit(2);
    _exit(t->try_hold().held() ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 3;
}

TEST(DeviceTurnTest, ProcessesTakeTurns) {
  const std::string path = lock_path("turns");
  absl::StatusOr<DeviceTurn> t = DeviceTurn::open(path);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(child_tries(path), 0) << "nobody holds it yet";
  {
    DeviceTurn::Held h = t->hold();
    EXPECT_TRUE(h.held());
    EXPECT_EQ(child_tries(path), 1) << "this process holds it";
    DeviceTurn::Held moved = std::move(h);
    EXPECT_TRUE(moved.held());
    EXPECT_FALSE(h.held());  // NOLINT(bugprone-use-after-move): the moved-from guard gave it up
    EXPECT_EQ(child_tries(path), 1) << "a moved guard still holds it";
  }
  EXPECT_EQ(child_tries(path), 0) << "the guard gave it back";
  unlink(path.c_str());
}

TEST(DeviceTurnTest, ATurnHeldByADeadProcessIsFree) {
  const std::string path = lock_path("dead");
  const pid_t pid = fork();
  if (pid == 0) {
    absl::StatusOr<DeviceTurn> t = DeviceTurn::open(path);
    if (!t.ok()) _exit(2);
    DeviceTurn::Held h = t->hold();
    _exit(h.held() ? 0 : 1);  // dies holding it
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(child_tries(path), 0);
  unlink(path.c_str());
}

TEST(DeviceTurnTest, EmptyPathIsAlwaysFreeAndABadPathIsNamed) {
  absl::StatusOr<DeviceTurn> free_turn = DeviceTurn::open("");
  ASSERT_TRUE(free_turn.ok());
  EXPECT_TRUE(free_turn->hold().held());
  EXPECT_TRUE(free_turn->try_hold().held());
  absl::StatusOr<DeviceTurn> bad = DeviceTurn::open("/nonexistent-dir/x/turn");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("/nonexistent-dir/x/turn"), std::string::npos)
      << bad.status();
}

}  // namespace
}  // namespace fixbits::runtime
