// gemm_index_test.cpp — the integer rules that let GEMM fragment addresses stay affine
// across warp counts (docs/verify.md "GEMM"), each with the case it must keep apart:
// a parameter stride times a coordinate expands term by term (the same address reached by
// mul or mad is one leaf; another row is not); bfe.u32 is a shift and a mask (bfe.s32 stays
// opaque); or with a constant that may share bits is (a & ~c) + c (xor is not); a value
// every thread computes from parameters alone (K mod 64) is one symbol named by its
// expression (K mod 32 is another).
#include <string>

#include "gtest/gtest.h"
#include "verify/Signature.h"

namespace fixbits::verify {
namespace {

// One thread per (row = tid/4, k = tid%4) loads a[row*sm + k] (param 0, f32, sm = param 2 in
// elements) and stores it to out + 4*tid (param 1); `index` leaves the element index of the
// load in %rd5 (64-bit), from %r1 = tid.x, %rd7 = sm and %r8 = K (param 3).
std::string kernel(const std::string& index) {
  return R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1, .param .u64 k_param_2, .param .u32 k_param_3)
.maxntid 128
{
	.reg .pred %p<4>;
	.reg .b32 %r<20>;
	.reg .b64 %rd<20>;
	ld.param.b64 %rd1, [k_param_0];
	ld.param.b64 %rd2, [k_param_1];
	ld.param.b64 %rd7, [k_param_2];
	ld.param.b32 %r8, [k_param_3];
	mov.u32 %r1, %tid.x;
)" + index + R"(
	shl.b64 %rd6, %rd5, 2;
	add.s64 %rd8, %rd1, %rd6;
	ld.global.b32 %r2, [%rd8];
	mul.wide.u32 %rd9, %r1, 4;
	add.s64 %rd10, %rd2, %rd9;
	st.global.b32 [%rd10], %r2;
	ret;
}
)";
}

bool same(const std::string& a, const std::string& b) {
  auto e = equivalent(a, b);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() && e->equivalent;
}

// (row + 1) * sm + k with row = tid >> 2 and k = tid & 3, by `mul` of (row + 1).
const std::string kRowPlusOneByMul = kernel(
    "\tshr.u32 %r3, %r1, 2;\n\tadd.s32 %r4, %r3, 1;\n\tcvt.u64.u32 %rd3, %r4;\n\tmul.lo.s64 %rd4, %rd3, %rd7;\n"
    "\tand.b32 %r5, %r1, 3;\n\tcvt.u64.u32 %rd11, %r5;\n\tadd.s64 %rd5, %rd4, %rd11;\n");

TEST(GemmIndex, ParameterStrideTimesCoordinateIsAffine) {
  // The same element by mad: row * sm + sm, operands in the other order.
  const std::string by_mad = kernel(
      "\tshr.u32 %r3, %r1, 2;\n\tcvt.u64.u32 %rd3, %r3;\n\tmad.lo.s64 %rd4, %rd7, %rd3, %rd7;\n"
      "\tand.b32 %r5, %r1, 3;\n\tcvt.u64.u32 %rd11, %r5;\n\tadd.s64 %rd5, %rd11, %rd4;\n");
  EXPECT_TRUE(same(kRowPlusOneByMul, by_mad));
  // Row instead of row + 1: another element.
  const std::string row = kernel(
      "\tshr.u32 %r3, %r1, 2;\n\tcvt.u64.u32 %rd3, %r3;\n\tmul.lo.s64 %rd4, %rd3, %rd7;\n"
      "\tand.b32 %r5, %r1, 3;\n\tcvt.u64.u32 %rd11, %r5;\n\tadd.s64 %rd5, %rd4, %rd11;\n");
  EXPECT_FALSE(same(kRowPlusOneByMul, row));
  // k * sm + row + 1 (the transposed element) is another element too.
  const std::string transposed = kernel(
      "\tshr.u32 %r3, %r1, 2;\n\tadd.s32 %r4, %r3, 1;\n\tcvt.u64.u32 %rd3, %r4;\n"
      "\tand.b32 %r5, %r1, 3;\n\tcvt.u64.u32 %rd11, %r5;\n\tmul.lo.s64 %rd4, %rd11, %rd7;\n"
      "\tadd.s64 %rd5, %rd4, %rd3;\n");
  EXPECT_FALSE(same(kRowPlusOneByMul, transposed));
}

TEST(GemmIndex, UnsignedBitFieldExtractIsAShiftAndAMask) {
  auto with_row = [](const std::string& row) {
    return kernel(row + "\tcvt.u64.u32 %rd5, %r3;\n");
  };
  const std::string shr_and = with_row("\tshr.u32 %r9, %r1, 2;\n\tand.b32 %r3, %r9, 7;\n");
  EXPECT_TRUE(same(shr_and, with_row("\tbfe.u32 %r3, %r1, 2, 3;\n")));
  EXPECT_FALSE(same(shr_and, with_row("\tbfe.u32 %r3, %r1, 1, 3;\n")));   // another field
  EXPECT_FALSE(same(shr_and, with_row("\tbfe.u32 %r3, %r1, 2, 4;\n")));   // a wider field
  EXPECT_FALSE(same(shr_and, with_row("\tbfe.s32 %r3, %r1, 2, 3;\n")));   // sign-extending: opaque
}

TEST(GemmIndex, OrWithAConstantThatMayShareBitsClearsThenAdds) {
  // (8 * (tid & 1)) | 8 is 8 for every thread: the element a[8].
  const std::string literal = kernel("\tmov.b64 %rd5, 8;\n");
  const std::string ored = kernel("\tand.b32 %r3, %r1, 1;\n\tshl.b32 %r4, %r3, 3;\n\tor.b32 %r5, %r4, 8;\n"
                                  "\tcvt.u64.u32 %rd5, %r5;\n");
  EXPECT_TRUE(same(literal, ored));
  // xor is not or: (8 * (tid & 1)) ^ 8 is 8 only for even threads.
  const std::string xored = kernel("\tand.b32 %r3, %r1, 1;\n\tshl.b32 %r4, %r3, 3;\n\txor.b32 %r5, %r4, 8;\n"
                                   "\tcvt.u64.u32 %rd5, %r5;\n");
  EXPECT_FALSE(same(literal, xored));
}

// K mod 2^b the way LLVM writes a signed remainder, into %r13; the load reads a[K mod 2^b + tid].
std::string k_mod(int bits, const std::string& regs_tail, bool swap = false) {
  const std::string mask = std::to_string(-(1 << bits)), shift = std::to_string(32 - bits);
  return kernel("\tshr.s32 %r10" + regs_tail + ", %r8, 31;\n\tshr.u32 %r11" + regs_tail + ", %r10" + regs_tail +
                ", " + shift + ";\n\tadd.s32 %r12, %r8, %r11" + regs_tail + ";\n\tand.b32 %r14, %r12, " + mask +
                ";\n\tsub.s32 %r13, %r8, %r14;\n\tadd.s32 %r15, " + (swap ? "%r1, %r13" : "%r13, %r1") +
                ";\n\tcvt.s64.s32 %rd5, %r15;\n");
}

TEST(GemmIndex, LaunchUniformValueIsOneSymbolNamedByItsExpression) {
  // The same expression in other registers, added to tid in the other order: one value
  // (as opaque tokens the two sums were two expressions).
  EXPECT_TRUE(same(k_mod(6, ""), k_mod(6, "9", /*swap=*/true)));
  // K mod 32 is another expression: split.
  EXPECT_FALSE(same(k_mod(6, ""), k_mod(5, "")));
  // A thread-dependent opaque value is not launch-uniform: mul.hi of tid stays opaque and
  // differs from mul.hi of another operand.
  const std::string hi_tid = kernel("\tmul.hi.u32 %r3, %r1, %r8;\n\tcvt.u64.u32 %rd5, %r3;\n");
  const std::string hi_k = kernel("\tmul.hi.u32 %r3, %r8, %r8;\n\tadd.s32 %r4, %r3, %r1;\n\tcvt.u64.u32 %rd5, %r4;\n");
  EXPECT_FALSE(same(hi_tid, hi_k));
}

}  // namespace
}  // namespace fixbits::verify
