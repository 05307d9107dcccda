// signature_test.cpp — what the checker merges and what it must keep apart, on small
// hand-written PTX kernels: commutativity merges, rounding/order/opaque text splits,
// thread predicates drop while data predicates stay, and errors are Statuses.
#include "verify/Signature.h"

#include <string>

#include "gtest/gtest.h"

namespace fixbits::verify {
namespace {

// A kernel reading two floats per thread at in + 8*tid and storing one result at out + 4*tid.
std::string kernel(const std::string& body, const std::string& bound = ".maxntid 64") {
  return R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)
)" + bound + R"(
{
	.reg .pred %p<4>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<10>;
	ld.param.b64 %rd1, [k_param_0];
	ld.param.b64 %rd2, [k_param_1];
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd3, %r1, 8;
	add.s64 %rd4, %rd1, %rd3;
	ld.global.b32 %r2, [%rd4];
	ld.global.b32 %r3, [%rd4+4];
	mul.wide.u32 %rd5, %r1, 4;
	add.s64 %rd6, %rd2, %rd5;
)" + body + R"(
	ret;
}
)";
}

bool same(const std::string& a, const std::string& b) {
  auto e = equivalent(a, b);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() && e->equivalent;
}

TEST(Signature, CommutedOperandsAreEquivalent) {
  EXPECT_TRUE(same(kernel("add.rn.f32 %r4, %r2, %r3;\n st.global.b32 [%rd6], %r4;"),
                   kernel("add.rn.f32 %r9, %r3, %r2;\n st.global.b32 [%rd6], %r9;")));
  // Different index arithmetic reaching the same address gives the same leaf.
  EXPECT_TRUE(same(kernel("add.rn.f32 %r4, %r2, %r3;\n st.global.b32 [%rd6], %r4;"),
                   kernel("shl.b32 %r7, %r1, 3;\n cvt.u64.u32 %rd7, %r7;\n add.s64 %rd8, %rd1, %rd7;\n"
                          "ld.global.b32 %r8, [%rd8+4];\n add.rn.f32 %r4, %r8, %r2;\n st.global.b32 [%rd6], %r4;")));
}

TEST(Signature, ANegativeOffsetIsAnOffsetOfItsRegister) {
  // LLVM writes a negative offset as "+-": [%rd7+-4] with %rd7 = %rd4 + 8 is in + 8*tid + 4,
  // the leaf %r3 reads. (Read as a register "%rd7+", it was an unknown named by its
  // number, so two kernels that differ only in register numbering signed apart.)
  const std::string plain = kernel("add.rn.f32 %r4, %r2, %r3;\n st.global.b32 [%rd6], %r4;");
  // The second operand loaded from `address`, %rd7 or %rd9 being in + 8*tid + 8.
  auto second_from = [](const std::string& address) {
    return kernel("add.s64 %rd7, %rd4, 8;\n add.s64 %rd9, %rd4, 8;\n ld.global.b32 %r8, " + address +
                  ";\n add.rn.f32 %r4, %r2, %r8;\n st.global.b32 [%rd6], %r4;");
  };
  EXPECT_TRUE(same(plain, second_from("[%rd7+-4]")));
  EXPECT_TRUE(same(plain, second_from("[%rd9 + -4]")));
  EXPECT_FALSE(same(plain, second_from("[%rd7+-8]")));  // another offset, another leaf
}

TEST(Signature, RoundingModeAndOperationSplit) {
  const std::string rn = kernel("add.rn.f32 %r4, %r2, %r3;\n st.global.b32 [%rd6], %r4;");
  EXPECT_FALSE(same(rn, kernel("add.rz.f32 %r4, %r2, %r3;\n st.global.b32 [%rd6], %r4;")));
  EXPECT_FALSE(same(rn, kernel("add.rn.ftz.f32 %r4, %r2, %r3;\n st.global.b32 [%rd6], %r4;")));
  EXPECT_FALSE(same(rn, kernel("sub.rn.f32 %r4, %r2, %r3;\n st.global.b32 [%rd6], %r4;")));
  // Subtraction does not commute.
  EXPECT_FALSE(same(kernel("sub.rn.f32 %r4, %r2, %r3;\n st.global.b32 [%rd6], %r4;"),
                    kernel("sub.rn.f32 %r4, %r3, %r2;\n st.global.b32 [%rd6], %r4;")));
}

TEST(Signature, StoreBufferAndOffsetCountButNotTheStoringThread) {
  const std::string plain = kernel("add.rn.f32 %r4, %r2, %r3;\n st.global.b32 [%rd6], %r4;");
  EXPECT_FALSE(same(plain, kernel("add.rn.f32 %r4, %r2, %r3;\n st.global.b32 [%rd6+4], %r4;")));
  EXPECT_FALSE(same(plain, kernel("add.rn.f32 %r4, %r2, %r3;\n add.s64 %rd9, %rd1, %rd5;\n"
                                  "st.global.b32 [%rd9], %r4;")));
  // The same buffer reached from another thread's coordinates: one root.
  EXPECT_TRUE(same(plain, kernel("add.rn.f32 %r4, %r2, %r3;\n st.global.b32 [%rd2], %r4;")));
}

TEST(Signature, ExactLaunchBoundMakesTheBlockExtentAConstant) {
  // out + 4*(ntid.x) under .reqntid 64 is out + 256: the same root as the literal offset.
  const std::string lit = kernel("add.rn.f32 %r4, %r2, %r3;\n st.global.b32 [%rd2+256], %r4;", ".reqntid 64");
  const std::string ext = kernel("add.rn.f32 %r4, %r2, %r3;\n mov.u32 %r9, %ntid.x;\n"
                                 "mul.wide.u32 %rd9, %r9, 4;\n add.s64 %rd8, %rd2, %rd9;\n"
                                 "st.global.b32 [%rd8], %r4;", ".reqntid 64");
  EXPECT_TRUE(same(lit, ext));
  // Under .maxntid the extent is unknown: a symbol, so another root.
  EXPECT_FALSE(same(kernel("add.rn.f32 %r4, %r2, %r3;\n st.global.b32 [%rd2+256], %r4;"),
                    kernel("add.rn.f32 %r4, %r2, %r3;\n mov.u32 %r9, %ntid.x;\n"
                           "mul.wide.u32 %rd9, %r9, 4;\n add.s64 %rd8, %rd2, %rd9;\n"
                           "st.global.b32 [%rd8], %r4;")));
}

TEST(Signature, AssociationSplits) {
  const std::string left = kernel(
      "ld.global.b32 %r5, [%rd4+8];\n add.rn.f32 %r6, %r2, %r3;\n add.rn.f32 %r7, %r6, %r5;\n"
      "st.global.b32 [%rd6], %r7;");
  const std::string right = kernel(
      "ld.global.b32 %r5, [%rd4+8];\n add.rn.f32 %r6, %r3, %r5;\n add.rn.f32 %r7, %r2, %r6;\n"
      "st.global.b32 [%rd6], %r7;");
  auto e = equivalent(left, right);
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->equivalent);
  EXPECT_NE(e->explanation.find("first differing node"), std::string::npos);
  EXPECT_NE(e->explanation.find("line"), std::string::npos);
}

TEST(Signature, ThreadPredicatesDropDataPredicatesStay) {
  const std::string plain = kernel("add.rn.f32 %r4, %r2, %r3;\n st.global.b32 [%rd6], %r4;");
  // A store guarded by a test of the thread index: a launch fact, dropped.
  EXPECT_TRUE(same(plain, kernel("setp.lt.u32 %p1, %r1, 32;\n add.rn.f32 %r4, %r2, %r3;\n"
                                 "@%p1 st.global.b32 [%rd6], %r4;")));
  // The same guard on a loaded value is data and stays in the tree.
  EXPECT_FALSE(same(plain, kernel("setp.lt.f32 %p1, %r2, 0f00000000;\n add.rn.f32 %r4, %r2, %r3;\n"
                                  "@%p1 st.global.b32 [%rd6], %r4;")));
  // A branch around an update, on data, guards what is written in between.
  EXPECT_FALSE(same(plain, kernel("add.rn.f32 %r4, %r2, %r3;\n setp.gt.f32 %p2, %r3, %r2;\n"
                                  "@%p2 bra $L__skip;\n add.rn.f32 %r4, %r4, %r2;\n$L__skip:\n"
                                  "st.global.b32 [%rd6], %r4;")));
}

TEST(Signature, UnknownInstructionsMatchOnTheirText) {
  const std::string a = kernel("ex2.approx.ftz.f32 %r4, %r2;\n st.global.b32 [%rd6], %r4;");
  EXPECT_TRUE(same(a, a));
  EXPECT_FALSE(same(a, kernel("ex2.approx.f32 %r4, %r2;\n st.global.b32 [%rd6], %r4;")));
  EXPECT_FALSE(same(kernel("quux.f32 %r4, %r2;\n st.global.b32 [%rd6], %r4;"),
                    kernel("quuy.f32 %r4, %r2;\n st.global.b32 [%rd6], %r4;")));
}

TEST(Signature, KernelsWithoutRootsStayApart) {
  auto a = signature(kernel("add.rn.f32 %r4, %r2, %r3;"));
  auto b = signature(kernel("mul.rn.f32 %r4, %r2, %r3;"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(a->hex, b->hex);
  ASSERT_EQ(a->kernels.size(), 1u);
  EXPECT_EQ(a->kernels[0].roots, 0);
  EXPECT_EQ(a->kernels[0].name, "k");
  EXPECT_EQ(a->hex.size(), 16u);
}

// `count` butterfly levels counting up from offset 1 over the value in `acc`.
std::string count_up(std::string acc, int count) {
  std::string s;
  for (int i = 0, o = 1; i < count; ++i, o *= 2) {
    const std::string x = "%r" + std::to_string(10 + 2 * i), y = "%r" + std::to_string(11 + 2 * i);
    s += "shfl.sync.bfly.b32 " + x + ", " + acc + ", " + std::to_string(o) + ", 31, -1;\n";
    s += "add.rn.f32 " + y + ", " + acc + ", " + x + ";\n";
    acc = y;
  }
  return s + "st.global.b32 [%rd6], " + acc + ";";
}

TEST(Signature, PinnedShuffleTreeCollapsesAcrossLayouts) {
  // 32 elements: one per lane over 32 lanes, or two per lane (summed first) over 16 lanes.
  const std::string one_per_lane = kernel(
      "mul.wide.u32 %rd7, %r1, 4;\n add.s64 %rd8, %rd1, %rd7;\n ld.global.b32 %r5, [%rd8];\n" +
          count_up("%r5", 5),
      ".maxntid 32");
  const std::string two_per_lane = kernel("add.rn.f32 %r5, %r2, %r3;\n" + count_up("%r5", 4), ".maxntid 16");
  auto e = equivalent(one_per_lane, two_per_lane);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(e->equivalent) << e->explanation;
  // Two per lane but strided by the lane count (element t and t+16) is another tree.
  const std::string strided = kernel(
      "mul.wide.u32 %rd7, %r1, 4;\n add.s64 %rd8, %rd1, %rd7;\n ld.global.b32 %r7, [%rd8];\n"
      "ld.global.b32 %r8, [%rd8+64];\n add.rn.f32 %r5, %r7, %r8;\n" + count_up("%r5", 4),
      ".maxntid 16");
  EXPECT_FALSE(same(one_per_lane, strided));
  // The same tree shape over the range shifted by one element reads other data.
  const std::string shifted = kernel(
      "mul.wide.u32 %rd7, %r1, 4;\n add.s64 %rd8, %rd1, %rd7;\n ld.global.b32 %r5, [%rd8+4];\n" +
          count_up("%r5", 5),
      ".maxntid 32");
  EXPECT_FALSE(same(one_per_lane, shifted));
  // Counting down from 16 is another tree.
  std::string down = kernel(
      "mul.wide.u32 %rd7, %r1, 4;\n add.s64 %rd8, %rd1, %rd7;\n ld.global.b32 %r2, [%rd8];\n"
      "shfl.sync.bfly.b32 %r4, %r2, 16, 31, -1;\n add.rn.f32 %r5, %r2, %r4;\n"
      "shfl.sync.bfly.b32 %r6, %r5, 8, 31, -1;\n add.rn.f32 %r7, %r5, %r6;\n"
      "shfl.sync.bfly.b32 %r8, %r7, 4, 31, -1;\n add.rn.f32 %r9, %r7, %r8;\n"
      "shfl.sync.bfly.b32 %r10, %r9, 2, 31, -1;\n add.rn.f32 %r11, %r9, %r10;\n"
      "shfl.sync.bfly.b32 %r12, %r11, 1, 31, -1;\n add.rn.f32 %r13, %r11, %r12;\n"
      "st.global.b32 [%rd6], %r13;",
      ".maxntid 32");
  auto d = equivalent(one_per_lane, down);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->equivalent);
  EXPECT_NE(d->explanation.find("balanced"), std::string::npos) << d->explanation;
}

TEST(Signature, TargetDetectionAndErrors) {
  EXPECT_EQ(*detect_target(".version 8.0\n"), Target::kPtx);
  EXPECT_EQ(*detect_target("\ts_endpgm\n"), Target::kGcn);
  auto bad = signature("hello");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("neither PTX"), std::string::npos);
  auto a_bad = equivalent("hello", kernel("ret;"));
  ASSERT_FALSE(a_bad.ok());
  EXPECT_EQ(std::string(a_bad.status().message()).rfind("kernel A:", 0), 0u);
  auto no_entry = signature(".version 8.0\n.visible .func f()\n{\nret;\n}\n");
  ASSERT_FALSE(no_entry.ok());
  EXPECT_NE(std::string(no_entry.status().message()).find("no kernel entry"), std::string::npos);
  // Forcing the wrong target is an error too, not a crash.
  auto forced = signature(kernel("ret;"), Target::kGcn);
  EXPECT_FALSE(forced.ok());
}

}  // namespace
}  // namespace fixbits::verify
