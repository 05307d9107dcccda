// Tests for TreeSignatureHook (runtime/TreeSignatureHook.h) on PTX and AMDGCN from our
// codegen: it returns the checker's signature, picks the ISA from the target, turns
// unreadable text into a "failed verification" error with the checker's code, is the
// default hook the loader runs, and is skipped by FIXBITS_VERIFY=off.
#include "runtime/TreeSignatureHook.h"

#include <stdlib.h>

#include <cctype>

#include "gtest/gtest.h"
#include "tests/runtime/AddOnePtx.h"
#include "runtime/KernelLoader.h"
#include "tests/runtime/FakeDriver.h"
#include "tests/runtime/ReducePtx.h"
#include "verify/Signature.h"

namespace fixbits::runtime {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::TreeOrder;
using testing::kAddOnePtx;
using testing::reduce_text;

ReduceDesc pinned_sum() { return ReduceDesc{}; }
ReduceDesc free_sum() {
  ReduceDesc d;
  d.order = TreeOrder::kFree;
  return d;
}

class TreeSignatureHookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("FIXBITS_VERIFY");
    set_verify_hook(nullptr);
  }
  void TearDown() override {
    unsetenv("FIXBITS_VERIFY");
    set_verify_hook(nullptr);
  }
  TreeSignatureHook hook;
};

TEST(TreeSignatureHookIdentity, NamesTheCheckerSourcesItWasBuiltFrom) {
  // "tree-signature@" and 16 hex digits of the verify/ sources' hash (generated at
  // build time): the key under which a disk entry's stored proof is trusted.
  const std::string id = TreeSignatureHook().identity();
  ASSERT_EQ(id.size(), std::string("tree-signature@").size() + 16) << id;
  EXPECT_EQ(id.substr(0, 15), "tree-signature@");
  for (char c : id.substr(15)) EXPECT_TRUE(std::isxdigit(static_cast<unsigned char>(c))) << id;
  EXPECT_EQ(id, TreeSignatureHook().identity());
}

TEST_F(TreeSignatureHookTest, TargetPicksTheIsa) {
  EXPECT_EQ(verify_target("sm_90a"), verify::Target::kPtx);
  EXPECT_EQ(verify_target("sm_100"), verify::Target::kPtx);
  EXPECT_EQ(verify_target("gfx942"), verify::Target::kGcn);
  EXPECT_EQ(verify_target("gfx1100"), verify::Target::kGcn);
}

TEST_F(TreeSignatureHookTest, ReturnsTheCheckersSignatureOfOurPtx) {
  absl::StatusOr<std::string> ptx = reduce_text(pinned_sum(), {.warps = 4, .elems_per_thread = 4});
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  absl::StatusOr<std::string> sig = hook.signature(*ptx, "sm_90a");
  ASSERT_TRUE(sig.ok()) << sig.status();
  absl::StatusOr<verify::Signature> direct = verify::signature(*ptx, verify::Target::kPtx);
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ(*sig, direct->hex);
  EXPECT_FALSE(sig->empty());
}

TEST_F(TreeSignatureHookTest, PinnedConfigsShareASignatureAndFreeOrderDoesNot) {
  // Same warp count, different elements per thread (the checker does not yet merge
  // across warp counts for our codegen: docs/verify.md, "Partition of our reductions").
  absl::StatusOr<std::string> a = reduce_text(pinned_sum(), {.warps = 2, .elems_per_thread = 1});
  absl::StatusOr<std::string> b = reduce_text(pinned_sum(), {.warps = 2, .elems_per_thread = 16});
  absl::StatusOr<std::string> f = reduce_text(free_sum(), {.warps = 8, .elems_per_thread = 4});
  ASSERT_TRUE(a.ok() && b.ok() && f.ok());
  ASSERT_NE(*a, *b) << "the two configurations should compile to different texts";
  absl::StatusOr<std::string> sa = hook.signature(*a, "sm_90a");
  absl::StatusOr<std::string> sb = hook.signature(*b, "sm_90a");
  absl::StatusOr<std::string> sf = hook.signature(*f, "sm_90a");
  ASSERT_TRUE(sa.ok() && sb.ok() && sf.ok());
  EXPECT_EQ(*sa, *sb);
  EXPECT_NE(*sa, *sf);
}

TEST_F(TreeSignatureHookTest, ReadsAmdgcnForGfxTargets) {
  absl::StatusOr<std::string> gcn =
      reduce_text(pinned_sum(), {.warps = 2, .elems_per_thread = 2, .lanes = 64},
                  codegen::Target::kAmdgpuGfx942);
  ASSERT_TRUE(gcn.ok()) << gcn.status();
  absl::StatusOr<std::string> sig = hook.signature(*gcn, "gfx942");
  ASSERT_TRUE(sig.ok()) << sig.status();
  absl::StatusOr<verify::Signature> direct = verify::signature(*gcn, verify::Target::kGcn);
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ(*sig, direct->hex);
  // The same text read as PTX (the wrong ISA for an sm_ target) is rejected.
  absl::StatusOr<std::string> wrong = hook.signature(*gcn, "sm_90a");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("The sm_90a kernel failed verification"),
            absl::string_view::npos)
      << wrong.status();
}

TEST_F(TreeSignatureHookTest, UnreadableTextFailsVerificationWithTheCheckersCode) {
  for (const char* text : {"", "this is not assembly", ".version 8.0\n.target sm_90a\n"}) {
    SCOPED_TRACE(text);
    absl::StatusOr<verify::Signature> direct = verify::signature(text, verify::Target::kPtx);
    ASSERT_FALSE(direct.ok());
    absl::StatusOr<std::string> sig = hook.signature(text, "sm_90a");
    ASSERT_FALSE(sig.ok());
    EXPECT_EQ(sig.status().code(), direct.status().code());
    const std::string msg(sig.status().message());
    EXPECT_EQ(msg.rfind("The sm_90a kernel failed verification: the tree-signature checker "
                        "could not read it as PTX (",
                        0),
              0u)
        << msg;
    EXPECT_NE(msg.find(std::string(direct.status().message())), std::string::npos) << msg;
  }
}

TEST_F(TreeSignatureHookTest, TheLoaderVerifiesWithItByDefault) {
  absl::StatusOr<std::string> ptx = reduce_text(pinned_sum(), {.warps = 2, .elems_per_thread = 8});
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  absl::StatusOr<verify::Signature> direct = verify::signature(*ptx, verify::Target::kPtx);
  ASSERT_TRUE(direct.ok());
  ASSERT_FALSE(direct->kernels.empty());
  const std::string entry = direct->kernels.front().name;

  auto driver = std::make_shared<testing::FakeDriver>();
  Device device{driver};
  KernelCache cache({true, ""});
  absl::StatusOr<LoadedKernel> k =
      load_kernel(device, cache, CacheKey{"pinned-sum-w2e8", "sm_90a"},
                  [&]() -> absl::StatusOr<CacheEntry> { return CacheEntry{*ptx, entry, "", "", false, ""}; });
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_TRUE(k->entry->verified);
  EXPECT_TRUE(k->verify.verified);
  EXPECT_EQ(k->entry->signature, direct->hex);
  // A memory hit reuses the verdict this process stored when it built the entry.
  absl::StatusOr<LoadedKernel> again =
      load_kernel(device, cache, CacheKey{"pinned-sum-w2e8", "sm_90a"},
                  []() -> absl::StatusOr<CacheEntry> { return absl::InternalError("no rebuild"); });
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->source, CacheSource::kMemory);
  EXPECT_EQ(again->verify.hook_name, "memory cache");
  EXPECT_TRUE(again->verify.verified);
  EXPECT_EQ(again->verify.signature, direct->hex);

  // A text the checker cannot read never reaches the driver.
  const size_t images = driver->loaded_images.size();
  absl::StatusOr<LoadedKernel> bad =
      load_kernel(device, cache, CacheKey{"garbage", "sm_90a"}, []() -> absl::StatusOr<CacheEntry> {
        return CacheEntry{"not a kernel .entry x", "x", "", "", false, ""};
      });
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("failed verification"), absl::string_view::npos)
      << bad.status();
  EXPECT_EQ(driver->loaded_images.size(), images);
}

// The elementwise kernel driver_gpu_test loads through the default hook (AddOnePtx.h):
// a bounds predicate on the thread coordinate and one add per element.

TEST_F(TreeSignatureHookTest, SignsTheDriverTestsElementwiseKernel) {
  absl::StatusOr<std::string> sig = hook.signature(kAddOnePtx, "sm_90");
  ASSERT_TRUE(sig.ok()) << sig.status();
  EXPECT_FALSE(sig->empty());
  // Adding 2 instead of 1 is another computation: another signature.
  std::string two(kAddOnePtx);
  const size_t at = two.find("0f3F800000");
  ASSERT_NE(at, std::string::npos);
  two.replace(at, 10, "0f40000000");
  absl::StatusOr<std::string> sig2 = hook.signature(two, "sm_90");
  ASSERT_TRUE(sig2.ok()) << sig2.status();
  EXPECT_NE(*sig, *sig2);
}

TEST_F(TreeSignatureHookTest, VerifyOffSkipsTheDefaultHook) {
  setenv("FIXBITS_VERIFY", "off", 1);
  absl::StatusOr<VerifyOutcome> v = verify_before_load("this is not assembly", "sm_90a");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_FALSE(v->verified);
  EXPECT_EQ(v->signature, "");
  EXPECT_EQ(v->hook_name, "off");
}

}  // namespace
}  // namespace fixbits::runtime
