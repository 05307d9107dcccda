// ptx_parser_test.cpp — statement structure of PTX, and Status (never a crash) on bad text.
#include "verify/PtxParser.h"

#include "gtest/gtest.h"

namespace fixbits::verify {
namespace {

constexpr const char* kPtx = R"(//
.version 8.0
.target sm_90a
.address_size 64
.extern .func (.param .b32 r) helper (.param .b32 a);
.global .align 4 .b8 table[16] = {0, 0, 128, 63};
.visible .entry k(
	.param .u64 .ptr .global .align 1 k_param_0,
	.param .u32 k_param_1
)
.reqntid 128, 1, 1
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<9>;
	.shared .align 16 .b8 tile[512];
	/* block comment; with a semicolon */
	ld.param.b64 	%rd1, [k_param_0];
	@!%p1 bra 	$L__BB0_2;
	ld.global.v4.b32 	{%r1, %r2, %r3, %r4}, [%rd1+16];
	{ .reg .b32 inner; mov.b32 inner, %r1; }
$L__BB0_2:
	shfl.sync.bfly.b32 	%r5|%p2, %r1, 1, 31, -1;
	frobnicate.weird.op %r6, %r5, [%rd1];
	ret;
}
)";

// A cluster kernel (sm_90): the cluster shape after .maxntid is not the block's y/z
// bound, and the cluster barrier parses as two plain instructions.
TEST(PtxParser, ClusterDirectivesAreNotLaunchBounds) {
  constexpr const char* kCluster = R"(.version 8.6
.target sm_90a
.address_size 64
.visible .entry c(
	.param .u64 .ptr .global .align 1 c_param_0
)
.maxntid 256
.explicitcluster
.reqnctapercluster 4, 2, 1
{
	barrier.cluster.arrive;
	barrier.cluster.wait;
	ret;
}
)";
  auto m = parse_ptx(kCluster);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->functions.size(), 1u);
  const Function& f = m->functions[0];
  EXPECT_EQ(f.launch_bound[0], 256);
  EXPECT_EQ(f.launch_bound[1], 0);  // not the cluster's 2
  EXPECT_EQ(f.launch_bound[2], 0);
  EXPECT_FALSE(f.launch_bound_exact);
  ASSERT_EQ(f.body.size(), 3u);
  EXPECT_EQ(f.body[0].opcode, "barrier.cluster.arrive");
  EXPECT_EQ(f.body[1].opcode, "barrier.cluster.wait");
}

TEST(PtxParser, ReadsHeaderDeclarationsAndBody) {
  auto m = parse_ptx(kPtx);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->version, "8.0");
  EXPECT_EQ(m->target, "sm_90a");
  EXPECT_EQ(m->address_size, 64);
  ASSERT_EQ(m->functions.size(), 1u);  // the prototype declares nothing to walk
  const Function& f = m->functions[0];
  EXPECT_EQ(f.name, "k");
  EXPECT_TRUE(f.is_entry);
  ASSERT_EQ(f.params.size(), 2u);
  EXPECT_EQ(f.params[1], "k_param_1");
  EXPECT_EQ(f.launch_bound[0], 128);
  EXPECT_EQ(f.launch_bound[1], 1);
  EXPECT_TRUE(f.launch_bound_exact);
  ASSERT_EQ(f.locals.size(), 1u);
  EXPECT_EQ(f.locals[0].space, "shared");
  EXPECT_EQ(f.locals[0].name, "tile");
  EXPECT_EQ(f.locals[0].bytes, 512);
  ASSERT_EQ(m->globals.size(), 1u);
  EXPECT_EQ(m->globals[0].name, "table");

  std::vector<std::string> ops;
  for (const Instr& i : f.body) ops.push_back(i.label.empty() ? i.opcode : i.label + ":");
  std::vector<std::string> want = {"ld.param.b64", "bra", "ld.global.v4.b32", "mov.b32", "$L__BB0_2:",
                                   "shfl.sync.bfly.b32", "frobnicate.weird.op", "ret"};
  EXPECT_EQ(ops, want);
  const Instr& bra = f.body[1];
  EXPECT_EQ(bra.guard, "%p1");
  EXPECT_TRUE(bra.guard_negated);
  const Instr& ld = f.body[2];
  ASSERT_EQ(ld.operands.size(), 2u);
  EXPECT_EQ(ld.operands[0], "{%r1, %r2, %r3, %r4}");
  EXPECT_EQ(ld.operands[1], "[%rd1+16]");
  EXPECT_EQ(f.body[5].operands[0], "%r5|%p2");
  EXPECT_EQ(f.body[6].operands.size(), 3u);  // unknown opcodes keep their operands
}

TEST(PtxParser, MalformedTextIsAStatusNamingTheLine) {
  struct Case {
    const char* text;
    const char* needle;
  } cases[] = {
      {".version 8.0\n.visible .entry k()\n{\n ret;\n", "missing '}'"},
      {".version 8.0\n.visible .entry k()\n{\n ld.global.f32 %f1, [%rd1;\n}\n", "line 4"},
      {".version 8.0\n}\n", "closes nothing"},
      {".version 8.0\n.visible .entry ()\n{\n}\n", "has no name"},
      {".version 8.0\n.visible .entry k()\n{\n mov.b32 %r1, %r2\n}\n", "missing its ';'"},
      {".version 8.0\n.visible .entry k()\n{\n @ bra L;\n}\n", "predicate register"},
      {".version 8.0\n{ }\n", "follows no function header"},
      // Found by the fuzzer: a .func return list that never closes before the body.
      {".version 8.0\nx)\n.visible .func (frror\n{\n}\n", "not closed"},
  };
  for (const Case& c : cases) {
    auto m = parse_ptx(c.text);
    ASSERT_FALSE(m.ok()) << c.text;
    SCOPED_TRACE(c.text);
    EXPECT_NE(std::string(m.status().message()).find(c.needle), std::string::npos)
        << m.status().message();
  }
}

TEST(PtxParser, EmptyAndCommentOnlyTextHaveNoFunctions) {
  for (const char* t : {"", "// nothing\n", "/* unterminated comment"}) {
    auto m = parse_ptx(t);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_TRUE(m->functions.empty());
  }
}

TEST(PtxParser, OverSizeInputIsRejected) {
  std::string big(kMaxInputBytes + 1, ' ');
  auto m = parse_ptx(big);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("over the limit"), std::string::npos);
}

}  // namespace
}  // namespace fixbits::verify
