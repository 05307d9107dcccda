// gcn_parser_test.cpp — AMDGCN statement structure, kernel descriptors, launch bounds.
#include "verify/GcnParser.h"

#include "gtest/gtest.h"

namespace fixbits::verify {
namespace {

constexpr const char* kGcn = R"(	.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
	.text
	.globl	k                               ; -- Begin function k
	.type	k,@function
k:                                      ; @k
	s_load_dwordx4 s[0:3], s[4:5], 0x0
	v_mov_b32_dpp v4, v2 row_shr:1 row_mask:0xf bank_mask:0xf
	global_load_dword v2, v[2:3], off offset:16
.LBB0_1:
	s_cbranch_scc1 .LBB0_1
	s_waitcnt vmcnt(0) lgkmcnt(0)
	s_endpgm
.Lfunc_end0:
	.size	k, .Lfunc_end0-k
	.amdhsa_kernel k
		.amdhsa_user_sgpr_count 8
		.amdhsa_user_sgpr_dispatch_ptr 1
		.amdhsa_user_sgpr_queue_ptr 1
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_system_sgpr_workgroup_id_x 1
	.end_amdhsa_kernel
	.amdgpu_metadata
---
amdhsa.kernels:
  - .args:
      - .name:           in
    .max_flat_workgroup_size: 256
    .name:           k
...
	.end_amdgpu_metadata
)";

TEST(GcnParser, ReadsKernelDescriptorBoundAndBody) {
  auto m = parse_gcn(kGcn);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->target, "\"amdgcn-amd-amdhsa--gfx942\"");
  ASSERT_EQ(m->functions.size(), 1u);
  const Function& f = m->functions[0];
  EXPECT_TRUE(f.is_entry);
  EXPECT_EQ(f.launch_bound[0], 256);
  EXPECT_EQ(f.gcn_kernarg_sgpr, 4);
  EXPECT_EQ(f.gcn_workgroup_id_x_sgpr, 8);
  ASSERT_EQ(f.body.size(), 7u);
  const Instr& dpp = f.body[1];
  EXPECT_EQ(dpp.opcode, "v_mov_b32_dpp");
  ASSERT_EQ(dpp.operands.size(), 2u);
  EXPECT_EQ(dpp.operands[1], "v2");
  ASSERT_EQ(dpp.modifiers.size(), 3u);
  EXPECT_EQ(dpp.modifiers[0], "row_shr:1");
  EXPECT_EQ(f.body[2].operands[2], "off");
  EXPECT_EQ(f.body[2].modifiers[0], "offset:16");
  EXPECT_EQ(f.body[3].label, ".LBB0_1");
  EXPECT_EQ(f.body[4].operands[0], ".LBB0_1");
}

TEST(GcnParser, MalformedTextIsAStatus) {
  auto a = parse_gcn("\t.type k,@function\nk:\n\tv_add_f32 v0, v[1:2, v3\n");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(std::string(a.status().message()).find("line 3"), std::string::npos) << a.status();
  auto b = parse_gcn("\t.amdhsa_kernel ghost\n\t.end_amdhsa_kernel\n");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(std::string(b.status().message()).find("ghost"), std::string::npos);
  auto c = parse_gcn("\t.amdhsa_kernel k\n");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(std::string(c.status().message()).find("never closed"), std::string::npos);
}

}  // namespace
}  // namespace fixbits::verify
