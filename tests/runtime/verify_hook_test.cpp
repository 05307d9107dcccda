// Tests for the verify-before-load hook (runtime/VerifyHook.h): the default hook is the
// tree-signature checker, UnverifiedHook marks texts unverified with no signature, a
// registered hook's signature or rejection is passed through, and FIXBITS_VERIFY=off
// skips it.
#include "runtime/VerifyHook.h"

#include <stdlib.h>

#include <atomic>

#include "gtest/gtest.h"
#include "verify/Signature.h"

namespace fixbits::runtime {
namespace {

// Signs a text with its length and rejects texts containing "bad".
class LengthHook final : public VerifyHook {
 public:
  std::string_view name() const override { return "length"; }
  absl::StatusOr<std::string> signature(std::string_view text,
                                        std::string_view target) const override {
    ++calls;
    if (text.find("bad") != std::string_view::npos) {
      return absl::InvalidArgumentError("the reduction tree differs from the descriptor.");
    }
    return "len:" + std::to_string(text.size()) + "@" + std::string(target);
  }
  mutable std::atomic<int> calls{0};
};

class EmptySignatureHook final : public VerifyHook {
 public:
  std::string_view name() const override { return "broken"; }
  absl::StatusOr<std::string> signature(std::string_view, std::string_view) const override {
    return std::string();
  }
};

class VerifyHookTest : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv("FIXBITS_VERIFY"); }
  void TearDown() override {
    set_verify_hook(nullptr);
    unsetenv("FIXBITS_VERIFY");
  }
};

// One thread adds two loaded values and stores the sum: one root, a two-leaf tree.
constexpr const char* kSumPtx = R"(
.version 8.0
.target sm_90a
.address_size 64
.visible .entry add_pair(.param .u64 p_x, .param .u64 p_y)
{
  .reg .f32 %f<4>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p_x];
  ld.param.u64 %rd2, [p_y];
  ld.global.f32 %f1, [%rd1];
  ld.global.f32 %f2, [%rd1+4];
  add.rn.f32 %f3, %f1, %f2;
  st.global.f32 [%rd2], %f3;
  ret;
}
)";

TEST_F(VerifyHookTest, DefaultHookIsTheTreeSignatureChecker) {
  EXPECT_EQ(verify_hook()->name(), "tree-signature");
  EXPECT_TRUE(verify_hook()->checks());
  absl::StatusOr<VerifyOutcome> v = verify_before_load(kSumPtx, "sm_90a");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->verified);
  EXPECT_EQ(v->hook_name, "tree-signature");
  absl::StatusOr<verify::Signature> direct = verify::signature(kSumPtx, verify::Target::kPtx);
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ(v->signature, direct->hex);

  // A text the checker cannot read stops the load, naming the hook and the target.
  absl::StatusOr<VerifyOutcome> bad = verify_before_load("ptx text", "sm_90a");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("The verify hook 'tree-signature' rejected the sm_90a "
                                        "kernel: The sm_90a kernel failed verification"),
            absl::string_view::npos)
      << bad.status();
}

TEST_F(VerifyHookTest, UnverifiedHookMarksUnverifiedWithoutSignature) {
  set_verify_hook(std::make_shared<UnverifiedHook>());
  EXPECT_EQ(verify_hook()->name(), "unverified");
  EXPECT_FALSE(verify_hook()->checks());
  absl::StatusOr<VerifyOutcome> v = verify_before_load("ptx text", "sm_90a");
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->verified);
  EXPECT_EQ(v->signature, "");
  EXPECT_EQ(v->hook_name, "unverified");
}

TEST_F(VerifyHookTest, RegisteredHookSignsAndRejects) {
  auto hook = std::make_shared<LengthHook>();
  set_verify_hook(hook);
  absl::StatusOr<VerifyOutcome> v = verify_before_load("abcd", "sm_90a");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->verified);
  EXPECT_EQ(v->signature, "len:4@sm_90a");
  EXPECT_EQ(v->hook_name, "length");

  absl::StatusOr<VerifyOutcome> bad = verify_before_load("a bad text", "sm_90a");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "The verify hook 'length' rejected the sm_90a kernel: the reduction tree differs "
            "from the descriptor.");
  EXPECT_EQ(hook->calls, 2);
}

TEST_F(VerifyHookTest, CheckingHookMustNotReturnAnEmptySignature) {
  set_verify_hook(std::make_shared<EmptySignatureHook>());
  absl::StatusOr<VerifyOutcome> v = verify_before_load("x", "gfx942");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(v.status().message().find("'broken' returned an empty signature"),
            absl::string_view::npos);
}

TEST_F(VerifyHookTest, VerifyOffSkipsTheHook) {
  auto hook = std::make_shared<LengthHook>();
  set_verify_hook(hook);
  setenv("FIXBITS_VERIFY", "off", 1);
  absl::StatusOr<VerifyOutcome> v = verify_before_load("a bad text", "sm_90a");
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->verified);
  EXPECT_EQ(v->signature, "");
  EXPECT_EQ(v->hook_name, "off");
  EXPECT_EQ(hook->calls, 0);
}

TEST_F(VerifyHookTest, ResettingRestoresTheDefaultHook) {
  set_verify_hook(std::make_shared<LengthHook>());
  set_verify_hook(nullptr);
  EXPECT_EQ(verify_hook()->name(), "tree-signature");
}

}  // namespace
}  // namespace fixbits::runtime
