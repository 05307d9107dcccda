// profile/ProbeDeadline on a fake clock: the wrapped black box answers until the limit,
// then returns DeadlineExceeded without calling the box; a probe through it reports the
// error as the instrument's (not NotFound), so the scan drops the point.
#include "profile/ProbeDeadline.h"

#include <gtest/gtest.h>

#include "dsl/reference/Reference.h"
#include "profile/CublasScan.h"

namespace fixbits::profile {
namespace {

TEST(ProbeDeadline, AnswersUntilTheLimitThenStops) {
  double t = 100.0;
  int calls = 0;
  const dsl::probe::GemmBlackBox box = [&](const dsl::reference::GemmProblem&)
      -> absl::StatusOr<std::vector<uint32_t>> {
    ++calls;
    return std::vector<uint32_t>{7};
  };
  const dsl::probe::GemmBlackBox limited = with_deadline(box, 60, [&] { return t; });
  const dsl::reference::GemmProblem p{};
  t = 159.0;
  absl::StatusOr<std::vector<uint32_t>> r = limited(p);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, std::vector<uint32_t>{7});
  t = 160.5;
  r = limited(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(r.status().message().find("time limit of 60 s"), absl::string_view::npos) << r.status();
  EXPECT_EQ(calls, 1);
}

TEST(ProbeDeadline, NoLimitIsTheBoxItself) {
  int calls = 0;
  const dsl::probe::GemmBlackBox box = [&](const dsl::reference::GemmProblem&)
      -> absl::StatusOr<std::vector<uint32_t>> {
    ++calls;
    return std::vector<uint32_t>{};
  };
  double t = 0;
  const dsl::probe::GemmBlackBox same = with_deadline(box, 0, [&] { return t; });
  t = 1e9;
  EXPECT_TRUE(same(dsl::reference::GemmProblem{}).ok());
  EXPECT_EQ(calls, 1);
}

TEST(ProbeDeadline, AProbePastItsLimitIsAnInstrumentErrorNotNoDescriptor) {
  double t = 0;
  const dsl::probe::GemmBlackBox box = [&](const dsl::reference::GemmProblem& p)
      -> absl::StatusOr<std::vector<uint32_t>> {
    t += 1.0;  // every experiment takes a second
    return dsl::reference::gemm(dsl::GemmDesc{}, p);
  };
  const runtime::GemmShape s{.m = 1, .n = 1, .k = 300};
  absl::StatusOr<dsl::GemmDesc> d =
      probe_key(with_deadline(box, 3, [&] { return t; }), s, CublasKey{}, dsl::Instruction::kMmaSync);
  ASSERT_FALSE(d.ok());
  EXPECT_FALSE(absl::IsNotFound(d.status())) << d.status();
  // With room enough, the same probe recovers the descriptor.
  t = 0;
  d = probe_key(with_deadline(box, 1e9, [&] { return t; }), s, CublasKey{}, dsl::Instruction::kMmaSync);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, dsl::GemmDesc{});
}

}  // namespace
}  // namespace fixbits::profile
