// loop_seed_test.cpp — what a fold keeps of the values around it (docs/verify.md "Loops"),
// each with the case it must keep apart: a main loop's fold that seeds a remainder loop
// stays in the remainder's fold (a main loop in another rounding, or no main loop at all,
// splits; the same two loops in other registers merge); a fold whose update reads another
// carried value (a second accumulator, an operand loaded one iteration ahead) carries that
// value's update (updating it another way splits).
#include <string>

#include "gtest/gtest.h"
#include "verify/Signature.h"

namespace fixbits::verify {
namespace {

// One thread: acc (%r10) over a[i] * b[i] (params 0, 1), stored to out[0] (param 2).
std::string kernel(const std::string& loops) {
  return R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 k_param_0, .param .u64 k_param_1, .param .u64 k_param_2)
.reqntid 1
{
	.reg .pred %p<4>;
	.reg .b32 %r<40>;
	.reg .b64 %rd<20>;
	ld.param.b64 %rd1, [k_param_0];
	ld.param.b64 %rd2, [k_param_1];
	ld.param.b64 %rd3, [k_param_2];
	mov.b32 %r10, 0f00000000;
	mov.b32 %r11, 0;
)" + loops + R"(
	st.global.b32 [%rd3], %r10;
	ret;
}
)";
}

// acc = fma(a[i + j], b[i + j], acc) into %r10, loads into %r(20+2j), %r(21+2j).
std::string step(int j, const std::string& fma = "fma.rn.f32") {
  const std::string off = std::to_string(4 * j), x = std::to_string(20 + 2 * j), y = std::to_string(21 + 2 * j);
  return "\tld.global.b32 %r" + x + ", [%rd5+" + off + "];\n\tld.global.b32 %r" + y + ", [%rd6+" + off +
         "];\n\t" + fma + " %r10, %r" + x + ", %r" + y + ", %r10;\n";
}

std::string loop(const std::string& label, const std::string& body, int step_elems, int bound) {
  return "$" + label + ":\n\tmul.wide.u32 %rd4, %r11, 4;\n\tadd.s64 %rd5, %rd1, %rd4;\n\tadd.s64 %rd6, %rd2, %rd4;\n" +
         body + "\tadd.s32 %r11, %r11, " + std::to_string(step_elems) + ";\n\tsetp.lt.u32 %p1, %r11, " +
         std::to_string(bound) + ";\n\t@%p1 bra $" + label + ";\n";
}

const std::string kRemainder = loop("L_rem", step(0), 1, 301);
const std::string kMainAndRemainder = kernel(loop("L_main", step(0) + step(1), 2, 300) + kRemainder);

bool same(const std::string& a, const std::string& b) {
  auto e = equivalent(a, b);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() && e->equivalent;
}

TEST(LoopSeed, MainLoopSeedingTheRemainderLoopStays) {
  // Another rounding in the main loop only: the bits differ, so must the signatures.
  EXPECT_FALSE(same(kMainAndRemainder,
                    kernel(loop("L_main", step(0) + step(1, "fma.rz.f32"), 2, 300) + kRemainder)));
  // No main loop at all (the remainder loop seeded by the literal 0).
  EXPECT_FALSE(same(kMainAndRemainder, kernel(kRemainder)));
  // The same two loops under other labels: one value.
  EXPECT_TRUE(same(kMainAndRemainder, kernel(loop("L_a", step(0) + step(1), 2, 300) + loop("L_b", step(0), 1, 301))));
}

// acc = fma(a[i], b[i], carry); carry = `update`(acc, a[i]): two carried values.
std::string two_carried(const std::string& update, const std::string& carry_reg = "%r12") {
  return kernel("\tmov.b32 " + carry_reg + ", 0f3f800000;\n" +
                loop("L", "\tld.global.b32 %r20, [%rd5];\n\tld.global.b32 %r21, [%rd6];\n\tfma.rn.f32 %r10, %r20, %r21, " +
                              carry_reg + ";\n\t" + update + " " + carry_reg + ", %r10, %r20;\n",
                     1, 300));
}

TEST(LoopSeed, FoldCarriesTheUpdateOfEveryCarriedValueItReads) {
  const std::string add = two_carried("add.rn.f32");
  EXPECT_FALSE(same(add, two_carried("mul.rn.f32")));
  EXPECT_FALSE(same(add, two_carried("add.rz.f32")));
  // The same recurrence in another register: one value.
  EXPECT_TRUE(same(add, two_carried("add.rn.f32", "%r13")));
}

}  // namespace
}  // namespace fixbits::verify
