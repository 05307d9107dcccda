// tensor_ops_test.cpp — wgmma K loops, cp.async/ldmatrix staging and global reductions in
// the walk: an exact MMA chain drops its chunk size (§6.2), staging through shared memory
// keeps which global buffer feeds which operand, and an atomic reduction is its own root.
#include <string>

#include "gtest/gtest.h"
#include "verify/Signature.h"

namespace fixbits::verify {
namespace {

// A wgmma K loop issuing `per_iter` m64n8k16 steps per iteration.
std::string wgmma_loop(int per_iter, const char* op = "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16") {
  std::string s = R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry g(.param .u64 g_param_0, .param .u64 g_param_1, .param .u64 g_param_2, .param .u64 g_param_3)
.reqntid 128
{
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<20>;
	ld.param.b64 %rd10, [g_param_0];
	ld.param.b64 %rd11, [g_param_1];
	ld.param.b64 %rd12, [g_param_2];
	ld.param.b64 %rd13, [g_param_3];
	mov.b32 %r1, 0f00000000;
	mov.b32 %r2, 0f00000000;
	mov.b32 %r3, 0f00000000;
	mov.b32 %r4, 0f00000000;
	mov.b64 %rd1, 0;
$L__loop:
	wgmma.fence.sync.aligned;
)";
  for (int i = 0; i < per_iter; ++i) {
    const std::string k = std::to_string(2 * i);
    s += "\tadd.s64 %rd2, %rd10, %rd1;\n\tadd.s64 %rd4, %rd2, " + k + ";\n";
    s += "\tadd.s64 %rd3, %rd11, %rd1;\n\tadd.s64 %rd5, %rd3, " + k + ";\n";
    s += std::string("\t") + op + " {%r1, %r2, %r3, %r4}, %rd4, %rd5, 1, 1, 1, 0, 0;\n";
  }
  s += "\twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;\n";
  s += "\tadd.s64 %rd1, %rd1, " + std::to_string(2 * per_iter) + ";\n";
  s += R"(	setp.lt.u64 %p1, %rd1, %rd13;
	@%p1 bra $L__loop;
	st.global.v4.b32 [%rd12], {%r1, %r2, %r3, %r4};
	ret;
}
)";
  return s;
}

TEST(TensorOps, WgmmaChainDropsItsChunkSize) {
  auto a = equivalent(wgmma_loop(1), wgmma_loop(2));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->equivalent) << a->explanation;
  auto b = equivalent(wgmma_loop(1), wgmma_loop(4));
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->equivalent) << b->explanation;
  // Another instruction shape is another tree.
  auto c = equivalent(wgmma_loop(1), wgmma_loop(1, "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16"));
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->equivalent);
  EXPECT_NE(c->explanation.find("mma-chain"), std::string::npos) << c->explanation;
  auto sig = signature(wgmma_loop(2));
  ASSERT_TRUE(sig.ok());
  EXPECT_EQ(sig->kernels[0].roots, 4);  // four accumulator elements, four distinct trees
}

// One mma.sync over fragments staged global -> shared (cp.async) -> registers (ldmatrix).
std::string staged_mma(const char* a_param, const char* b_param, const char* store = "st.global.b32") {
  return std::string(R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry s(.param .u64 s_param_0, .param .u64 s_param_1, .param .u64 s_param_2)
.reqntid 32
{
	.reg .b32 %r<20>;
	.reg .b64 %rd<10>;
	.shared .align 16 .b8 sa[512];
	.shared .align 16 .b8 sb[256];
	ld.param.b64 %rd1, [)") + a_param + R"(];
	ld.param.b64 %rd2, [)" + b_param + R"(];
	ld.param.b64 %rd3, [s_param_2];
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd4, %r1, 16;
	add.s64 %rd5, %rd1, %rd4;
	add.s64 %rd6, %rd2, %rd4;
	mov.u32 %r2, sa;
	mov.u32 %r3, sb;
	shl.b32 %r4, %r1, 4;
	add.s32 %r5, %r2, %r4;
	add.s32 %r6, %r3, %r4;
	cp.async.ca.shared.global [%r5], [%rd5], 16;
	cp.async.ca.shared.global [%r6], [%rd6], 16;
	cp.async.commit_group;
	cp.async.wait_group 0;
	bar.sync 0;
	ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r7, %r8, %r9, %r10}, [%r5];
	ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r11, %r12}, [%r6];
	mov.b32 %r13, 0f00000000;
	mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%r14, %r15, %r16, %r17}, {%r7, %r8, %r9, %r10}, {%r11, %r12}, {%r13, %r13, %r13, %r13};
	)" + store + R"( [%rd3], %r14;
	ret;
}
)";
}

TEST(TensorOps, StagedOperandsKeepTheirSourceBuffers) {
  auto same = equivalent(staged_mma("s_param_0", "s_param_1"), staged_mma("s_param_0", "s_param_1"));
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(same->equivalent);
  auto swapped = equivalent(staged_mma("s_param_0", "s_param_1"), staged_mma("s_param_1", "s_param_0"));
  ASSERT_TRUE(swapped.ok());
  EXPECT_FALSE(swapped->equivalent) << "A and B operands swapped must not merge";
}

TEST(TensorOps, GlobalReductionIsARootOfItsOwn) {
  auto e = equivalent(staged_mma("s_param_0", "s_param_1"),
                      staged_mma("s_param_0", "s_param_1", "red.global.add.f32"));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_FALSE(e->equivalent);
}

}  // namespace
}  // namespace fixbits::verify

namespace fixbits::verify {
namespace {

// Row sum by an outer loop over 64-element blocks and an inner loop over their elements;
// `reset` restarts the inner accumulator per block and adds the block sums afterwards.
std::string nested(bool reset) {
  std::string s = R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry n(.param .u64 n_param_0, .param .u64 n_param_1, .param .u32 n_param_2)
{
	.reg .pred %p<3>;
	.reg .b32 %r<40>;
	.reg .b64 %rd<10>;
	ld.param.b64 %rd1, [n_param_0];
	ld.param.b64 %rd2, [n_param_1];
	ld.param.b32 %r30, [n_param_2];
	mov.b32 %r10, 0f00000000;
	mov.b32 %r20, 0;
$L__outer:
	mov.b32 %r21, 0;
	mov.b32 %r11, 0f00000000;
$L__inner:
	add.s32 %r22, %r20, %r21;
	mul.wide.u32 %rd3, %r22, 4;
	add.s64 %rd4, %rd1, %rd3;
	ld.global.b32 %r5, [%rd4];
)";
  s += reset ? "\tadd.rn.f32 %r11, %r11, %r5;\n" : "\tadd.rn.f32 %r10, %r10, %r5;\n";
  s += R"(	add.s32 %r21, %r21, 1;
	setp.lt.u32 %p1, %r21, 64;
	@%p1 bra $L__inner;
)";
  if (reset) s += "\tadd.rn.f32 %r10, %r10, %r11;\n";
  s += R"(	add.s32 %r20, %r20, 64;
	setp.lt.u32 %p2, %r20, %r30;
	@%p2 bra $L__outer;
	st.global.b32 [%rd2], %r10;
	ret;
}
)";
  return s;
}

TEST(Loops, NestedFoldsKeepTheirNesting) {
  auto e = equivalent(nested(false), nested(true));
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_FALSE(e->equivalent) << "continuing and restarting the inner sum are different trees";
  auto self = equivalent(nested(true), nested(true));
  ASSERT_TRUE(self.ok());
  EXPECT_TRUE(self->equivalent);
  auto sig = signature(nested(false));
  ASSERT_TRUE(sig.ok());
  EXPECT_EQ(sig->kernels[0].roots, 1);
}

}  // namespace
}  // namespace fixbits::verify
