// gcn_walk_test.cpp — AMDGCN transfer functions on hand-written gfx942 kernels: DPP folded
// into an add equals a DPP mov then an add, kernel arguments and the packed work-item id
// give affine addresses, and rounding-relevant modifiers split.
#include <string>

#include "gtest/gtest.h"
#include "verify/Signature.h"

namespace fixbits::verify {
namespace {

// 16 lanes each load in[64*wg + lane] and reduce over a row with `body`; lane 15 stores.
std::string gcn(const std::string& body) {
  return std::string(R"(	.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
	.text
	.type	k,@function
k:
	s_load_dwordx4 s[0:3], s[4:5], 0x0
	v_and_b32_e32 v0, 0x3ff, v0
	v_lshl_or_b32 v0, s8, 6, v0
	v_lshlrev_b32_e32 v1, 2, v0
	s_waitcnt lgkmcnt(0)
	global_load_dword v2, v1, s[0:1]
	s_waitcnt vmcnt(0)
)") + body + R"(
	global_store_dword v1, v2, s[2:3]
	s_endpgm
.Lfunc_end0:
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
  - .max_flat_workgroup_size: 64
    .name:           k
...
	.end_amdgpu_metadata
)";
}

bool same(const std::string& a, const std::string& b) {
  auto e = equivalent(a, b);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() && e->equivalent;
}

TEST(GcnWalk, DppOperandEqualsDppMoveThenAdd) {
  const std::string fused = gcn(
      "\tv_add_f32_dpp v2, v2, v2 row_shr:1 row_mask:0xf bank_mask:0xf\n"
      "\tv_add_f32_dpp v2, v2, v2 row_shr:2 row_mask:0xf bank_mask:0xf");
  const std::string split = gcn(
      "\tv_mov_b32_dpp v3, v2 row_shr:1 row_mask:0xf bank_mask:0xf\n\tv_add_f32_e32 v2, v2, v3\n"
      "\tv_mov_b32_dpp v4, v2 row_shr:2 row_mask:0xf bank_mask:0xf\n\tv_add_f32_e32 v2, v4, v2");
  EXPECT_TRUE(same(fused, split));
  auto s = signature(fused);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->kernels[0].roots, 1);
  // The order 2 then 1 is another tree; a clamp modifier is another operation.
  EXPECT_FALSE(same(fused, gcn("\tv_add_f32_dpp v2, v2, v2 row_shr:2 row_mask:0xf bank_mask:0xf\n"
                               "\tv_add_f32_dpp v2, v2, v2 row_shr:1 row_mask:0xf bank_mask:0xf")));
  EXPECT_FALSE(same(split, gcn("\tv_mov_b32_dpp v3, v2 row_shr:1 row_mask:0xf bank_mask:0xf\n"
                               "\tv_add_f32_e64 v2, v2, v3 clamp\n"
                               "\tv_mov_b32_dpp v4, v2 row_shr:2 row_mask:0xf bank_mask:0xf\n"
                               "\tv_add_f32_e32 v2, v4, v2")));
}

TEST(GcnWalk, StoreBufferAndUnknownOpcodes) {
  const std::string a = gcn("\tv_exp_f32_e32 v2, v2");
  EXPECT_TRUE(same(a, a));
  EXPECT_FALSE(same(a, gcn("\tv_log_f32_e32 v2, v2")));
  EXPECT_FALSE(same(a, gcn("\tv_frobnicate_b32 v2, v2")));
  // Storing into the input buffer (s[0:1]) instead of the output (s[2:3]) is another root.
  std::string other = a;
  other.replace(other.find("global_store_dword v1, v2, s[2:3]"), 34, "global_store_dword v1, v2, s[0:1]");
  EXPECT_FALSE(same(a, other));
}

}  // namespace
}  // namespace fixbits::verify
