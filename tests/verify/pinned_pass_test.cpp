// pinned_pass_test.cpp — the rules that merge one pinned reduction across layouts
// (docs/verify.md "Partition of our reductions"), each with the case it must keep apart:
// a loop latch laid out above its header, or a loop laid out below the block its exit
// leaves to, reads as the plain loop; a pass chaining m
// contiguous strips in index order is the one-strip loop, while the same strip twice, the
// strips in reverse order, or a gap between them split; unpacking a wide load gives the
// narrow loads it contains, in little-endian order; double-buffered exchange slots read as
// the single buffer, and the other buffer's slot does not.
#include <string>

#include "gtest/gtest.h"
#include "verify/Signature.h"

namespace fixbits::verify {
namespace {

// One thread's kernel over in[] (param 0, %rd1) and out[] (param 1, %rd2), %r10 = -0.0
// and %r11 = 0 before `code`.
std::string kernel(const std::string& code) {
  return R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)
.reqntid 1
{
	.reg .pred %p<4>;
	.reg .b16 %rs<8>;
	.reg .b32 %r<40>;
	.reg .b64 %rd<10>;
	ld.param.b64 %rd1, [k_param_0];
	ld.param.b64 %rd2, [k_param_1];
	mov.b32 %r10, 0f80000000;
	mov.b32 %r11, 0;
)" + code + "}\n";
}

// One thread walking in[] in strips; the sum lands in out[0].
std::string loop_kernel(const std::string& pre, const std::string& body) {
  return kernel(pre + body + "\tst.global.b32 [%rd2], %r10;\n\tret;\n");
}

// Strip j of the current pass: the balanced pair x[i+2j] + x[i+2j+1] into %r(20+j).
std::string strip(int j, int first_elem) {
  const std::string r = std::to_string(20 + j), a = std::to_string(4 * first_elem),
                    b = std::to_string(4 * first_elem + 4);
  return "\tld.global.b32 %r" + std::to_string(30 + 2 * j) + ", [%rd4+" + a + "];\n\tld.global.b32 %r" +
         std::to_string(31 + 2 * j) + ", [%rd4+" + b + "];\n\tadd.rn.f32 %r" + r + ", %r" +
         std::to_string(30 + 2 * j) + ", %r" + std::to_string(31 + 2 * j) + ";\n";
}

std::string pass(const std::string& strips_and_chain, int step) {
  return "$L_head:\n\tmul.wide.u32 %rd3, %r11, 4;\n\tadd.s64 %rd4, %rd1, %rd3;\n" + strips_and_chain +
         "\tadd.s32 %r11, %r11, " + std::to_string(step) +
         ";\n\tsetp.lt.u32 %p1, %r11, 4096;\n\t@%p1 bra $L_head;\n";
}

bool same(const std::string& a, const std::string& b) {
  auto e = equivalent(a, b);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() && e->equivalent;
}

const std::string kOneStrip =
    loop_kernel("", pass(strip(0, 0) + "\tadd.rn.f32 %r10, %r10, %r20;\n", 2));

TEST(PinnedPass, LatchLaidOutAboveTheHeaderIsThePlainLoop) {
  const std::string rotated = loop_kernel(
      "\tbra.uni $L_head;\n$L_latch:\n\tadd.rn.f32 %r10, %r10, %r20;\n\tadd.s32 %r11, %r11, 2;\n"
      "\tsetp.lt.u32 %p1, %r11, 4096;\n\t@%p1 bra $L_head;\n\tbra.uni $L_exit;\n",
      "$L_head:\n\tmul.wide.u32 %rd3, %r11, 4;\n\tadd.s64 %rd4, %rd1, %rd3;\n" + strip(0, 0) +
          "\tbra.uni $L_latch;\n$L_exit:\n");
  EXPECT_TRUE(same(kOneStrip, rotated));
  // The same layout accumulating with another rounding still splits.
  std::string rz = rotated;
  rz.replace(rz.find("add.rn.f32 %r10"), 10, "add.rz.f32");
  EXPECT_FALSE(same(kOneStrip, rz));
}

// A loop laid out below the block its exit leaves to, as LLVM lays out a cluster softmax
// row's masked tail loop: entered from above (`@%p2 bra $L_done` skips it), its latch
// above its header, its exit `@%p1 bra $L_done` a branch back up. The fix-up moves the
// loop up below the branch into it, so it reads as the loop laid out in order; before,
// the exit read as a back edge and the store as a loop body over the sum's hole, and
// accumulating with add.rz signed as add.rn.
const std::string kSkipUnlessThreadZero =
    "\tmov.u32 %r12, %tid.x;\n\tsetp.ne.u32 %p2, %r12, 0;\n\t@%p2 bra $L_done;\n\tbra.uni $L_entry;\n";
const std::string kStripPair =
    "\tmul.wide.u32 %rd3, %r11, 4;\n\tadd.s64 %rd4, %rd1, %rd3;\n" + strip(0, 0);
const std::string kStoreAndReturn = "$L_done:\n\tst.global.b32 [%rd2], %r10;\n\tbra.uni $L_ret;\n";

std::string latch(const std::string& accumulate) {
  return "\t" + accumulate + " %r10, %r10, %r20;\n\tadd.s32 %r11, %r11, 2;\n\tsetp.ge.u32 %p1, %r11, 4096;\n";
}

std::string loop_below_its_exit(const std::string& accumulate) {
  return kernel(kSkipUnlessThreadZero + kStoreAndReturn + "$L_entry:\n\tbra.uni $L_head;\n$L_latch:\n" +
                latch(accumulate) + "\t@%p1 bra $L_done;\n$L_head:\n" + kStripPair +
                "\tbra.uni $L_latch;\n$L_ret:\n\tret;\n");
}

TEST(PinnedPass, LoopLaidOutBelowItsExitIsTheLoopInOrder) {
  const std::string in_order = kernel(kSkipUnlessThreadZero + "$L_entry:\n$L_head:\n" + kStripPair +
                                      latch("add.rn.f32") + "\t@!%p1 bra $L_head;\n" + kStoreAndReturn +
                                      "$L_ret:\n\tret;\n");
  EXPECT_TRUE(same(in_order, loop_below_its_exit("add.rn.f32")));
  EXPECT_FALSE(same(in_order, loop_below_its_exit("add.rz.f32")));
  EXPECT_FALSE(same(loop_below_its_exit("add.rn.f32"), loop_below_its_exit("add.rz.f32")));
}

TEST(PinnedPass, ContiguousStripsInIndexOrderAreTheOneStripLoop) {
  const std::string two = loop_kernel(
      "", pass(strip(0, 0) + strip(1, 2) + "\tadd.rn.f32 %r12, %r10, %r20;\n\tadd.rn.f32 %r10, %r12, %r21;\n", 4));
  EXPECT_TRUE(same(kOneStrip, two));
  const std::string four = loop_kernel(
      "", pass(strip(0, 0) + strip(1, 2) + strip(2, 4) + strip(3, 6) +
                   "\tadd.rn.f32 %r12, %r10, %r20;\n\tadd.rn.f32 %r13, %r12, %r21;\n"
                   "\tadd.rn.f32 %r14, %r13, %r22;\n\tadd.rn.f32 %r10, %r14, %r23;\n",
               8));
  EXPECT_TRUE(same(kOneStrip, four));
}

TEST(PinnedPass, OtherStripChainsSplit) {
  // Reverse order: strip 1 is added before strip 0.
  const std::string reversed = loop_kernel(
      "", pass(strip(0, 0) + strip(1, 2) + "\tadd.rn.f32 %r12, %r10, %r21;\n\tadd.rn.f32 %r10, %r12, %r20;\n", 4));
  EXPECT_FALSE(same(kOneStrip, reversed));
  // The same strip twice.
  const std::string twice = loop_kernel(
      "", pass(strip(0, 0) + strip(1, 0) + "\tadd.rn.f32 %r12, %r10, %r20;\n\tadd.rn.f32 %r10, %r12, %r21;\n", 4));
  EXPECT_FALSE(same(kOneStrip, twice));
  // A gap: the second strip starts one element late, the pass still advances by 4.
  const std::string gap = loop_kernel(
      "", pass(strip(0, 0) + strip(1, 3) + "\tadd.rn.f32 %r12, %r10, %r20;\n\tadd.rn.f32 %r10, %r12, %r21;\n", 4));
  EXPECT_FALSE(same(kOneStrip, gap));
  // Two strips but a step of 6: one strip of every three is skipped.
  const std::string skip = loop_kernel(
      "", pass(strip(0, 0) + strip(1, 2) + "\tadd.rn.f32 %r12, %r10, %r20;\n\tadd.rn.f32 %r10, %r12, %r21;\n", 6));
  EXPECT_FALSE(same(kOneStrip, skip));
}

// No loop: out[0] = f32(lo) - f32(hi) of in[0..1] as f16.
std::string halves(const std::string& loads) {
  return loop_kernel("", loads + "\tcvt.f32.f16 %r2, %rs1;\n\tcvt.f32.f16 %r3, %rs2;\n\tsub.rn.f32 %r10, %r2, %r3;\n");
}

TEST(PinnedPass, UnpackedWideLoadIsItsNarrowLoads) {
  const std::string narrow = halves("\tld.global.b16 %rs1, [%rd1];\n\tld.global.b16 %rs2, [%rd1+2];\n");
  EXPECT_TRUE(same(narrow, halves("\tld.global.b32 %r5, [%rd1];\n\tmov.b32 {%rs1, %rs2}, %r5;\n")));
  // The first item is the low half: swapping the items swaps the operands of sub.
  EXPECT_FALSE(same(narrow, halves("\tld.global.b32 %r5, [%rd1];\n\tmov.b32 {%rs2, %rs1}, %r5;\n")));
  // A 32-bit word from another offset is other data.
  EXPECT_FALSE(same(narrow, halves("\tld.global.b32 %r5, [%rd1+4];\n\tmov.b32 {%rs1, %rs2}, %r5;\n")));
}

// Two warps: each stores its element into slot warp of a buffer, then thread code reads
// slots 0 and 1 back and adds them. `pick` sets %rd8 (the buffer the stores use), `loads`
// sets %r4 and %r5.
std::string two_warps(const std::string& pick, const std::string& loads) {
  return R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1)
.reqntid 64
{
	.shared .align 4 .b8 s0[8];
	.shared .align 4 .b8 s1[8];
	.reg .pred %p<4>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<12>;
	ld.param.b64 %rd1, [k_param_0];
	ld.param.b64 %rd2, [k_param_1];
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd3, %r1, 4;
	add.s64 %rd4, %rd1, %rd3;
	ld.global.b32 %r2, [%rd4];
	shr.u32 %r3, %r1, 5;
	mul.wide.u32 %rd5, %r3, 4;
	mov.u32 %r9, %ctaid.x;
	and.b32 %r9, %r9, 1;
	setp.eq.u32 %p1, %r9, 0;
	mov.u64 %rd6, s0;
	mov.u64 %rd7, s1;
)" + pick + R"(
	add.s64 %rd9, %rd8, %rd5;
	st.shared.b32 [%rd9], %r2;
	bar.sync 0;
)" + loads + R"(
	add.rn.f32 %r10, %r4, %r5;
	st.global.b32 [%rd2], %r10;
	ret;
}
)";
}

TEST(PinnedPass, DoubleBufferedSlotsAreTheSingleBuffer) {
  const std::string loads = "\tld.shared.b32 %r4, [%rd8];\n\tld.shared.b32 %r5, [%rd8+4];\n";
  const std::string single = two_warps("\tmov.u64 %rd8, s0;\n", loads);
  const std::string sel = "\tselp.b64 %rd8, %rd7, %rd6, %p1;\n";
  EXPECT_TRUE(same(single, two_warps(sel, loads)));
  // Reading slot 1 from each buffer and picking by the same predicate is the selected buffer.
  EXPECT_TRUE(same(single, two_warps(sel, "\tld.shared.b32 %r4, [%rd8];\n\tld.shared.b32 %r6, [s1+4];\n"
                                         "\tld.shared.b32 %r7, [s0+4];\n\tselp.f32 %r5, %r6, %r7, %p1;\n")));
  // Picking the other buffer's slot reads what the stores did not write: split.
  EXPECT_FALSE(same(single, two_warps(sel, "\tld.shared.b32 %r4, [%rd8];\n\tld.shared.b32 %r6, [s1+4];\n"
                                          "\tld.shared.b32 %r7, [s0+4];\n\tselp.f32 %r5, %r7, %r6, %p1;\n")));
  // Reading slot 0 twice is not slots 0 and 1.
  EXPECT_FALSE(same(single, two_warps(sel, "\tld.shared.b32 %r4, [%rd8];\n\tld.shared.b32 %r5, [%rd8];\n")));
}

}  // namespace
}  // namespace fixbits::verify
