; EXPECT: differs: A's strip loop stops one strip (1024 elements) early
; hand-written from codegen-gcn-sum-f32-pinned-w2e1-vs-w2e8.a.s (docs/verify.md, Trip counts): a gfx942 loop's s_cmp exit test is read as a count
	.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
	.amdhsa_code_object_version 6
	.text
	.globl	fixbits_sum_f32_f32_pinned_s1024_w2_e1_l64
	.p2align	8
	.type	fixbits_sum_f32_f32_pinned_s1024_w2_e1_l64,@function
fixbits_sum_f32_f32_pinned_s1024_w2_e1_l64:
	s_load_dword s30, s[0:1], 0x10
	s_load_dwordx4 s[20:23], s[0:1], 0x0
	s_ashr_i32 s3, s2, 31
	s_waitcnt lgkmcnt(0)
	s_cmp_lt_i32 s30, 1
	s_cbranch_scc1 .LBB0_25
	v_and_b32_e32 v1, 63, v0
	s_mul_hi_i32 s25, s30, s2
	s_mul_i32 s24, s30, s2
	v_lshlrev_b32_e32 v26, 3, v0
	s_mov_b32 s31, 0
	v_cmp_eq_u32_e32 vcc, 0, v1
	v_lshrrev_b32_e32 v27, 4, v0
	s_mov_b64 s[26:27], 0
	v_bfrev_b32_e32 v1, 1
	v_mov_b32_e32 v11, 0
	s_branch .LBB0_3
.LBB0_2:
	s_or_b64 exec, exec, s[0:1]
	s_xor_b64 s[0:1], s[26:27], -1
	s_and_b64 s[4:5], s[26:27], exec
	s_cselect_b32 s4, 16, 0
	v_mov_b32_e32 v2, s4
	s_cselect_b32 s4, 20, 4
	v_mov_b32_e32 v3, s4
	s_waitcnt lgkmcnt(0)
	s_barrier
	ds_read_b32 v2, v2
	ds_read_b32 v3, v3
	s_addk_i32 s31, 0x400
	s_add_i32 s33, s31, 0x400
	s_cmp_ge_i32 s33, s30
	s_mov_b64 s[26:27], s[0:1]
	s_waitcnt lgkmcnt(0)
	v_add_f32_e32 v2, v2, v3
	v_add_f32_e32 v1, v1, v2
	s_cbranch_scc1 .LBB0_26
.LBB0_3:
	v_add_u32_e32 v2, s31, v26
	v_add_u32_e32 v4, 1, v2
	v_ashrrev_i32_e32 v3, 31, v2
	v_add_u32_e32 v6, 2, v2
	v_ashrrev_i32_e32 v5, 31, v4
	v_lshl_add_u64 v[30:31], s[24:25], 0, v[2:3]
	v_add_u32_e32 v8, 3, v2
	v_cmp_gt_i32_e64 s[14:15], s30, v4
	v_ashrrev_i32_e32 v7, 31, v6
	v_lshl_add_u64 v[22:23], s[24:25], 0, v[4:5]
	v_lshl_add_u64 v[4:5], v[30:31], 0, 1
	v_add_u32_e32 v12, 4, v2
	v_ashrrev_i32_e32 v9, 31, v8
	v_lshl_add_u64 v[20:21], s[24:25], 0, v[6:7]
	v_cmp_eq_u64_e64 s[16:17], v[22:23], v[4:5]
	v_lshl_add_u64 v[4:5], v[30:31], 0, 2
	v_add_u32_e32 v14, 5, v2
	v_cmp_gt_i32_e64 s[12:13], s30, v6
	v_ashrrev_i32_e32 v13, 31, v12
	v_lshl_add_u64 v[6:7], s[24:25], 0, v[8:9]
	v_cmp_eq_u64_e64 s[18:19], v[20:21], v[4:5]
	v_lshl_add_u64 v[4:5], v[30:31], 0, 3
	v_add_u32_e32 v24, 6, v2
	v_ashrrev_i32_e32 v15, 31, v14
	v_lshl_add_u64 v[18:19], s[24:25], 0, v[12:13]
	s_and_b64 s[18:19], s[16:17], s[18:19]
	v_cmp_eq_u64_e64 s[16:17], v[6:7], v[4:5]
	v_lshl_add_u64 v[4:5], v[30:31], 0, 4
	v_add_u32_e32 v28, 7, v2
	v_ashrrev_i32_e32 v25, 31, v24
	v_lshl_add_u64 v[16:17], s[24:25], 0, v[14:15]
	s_and_b64 s[18:19], s[16:17], s[18:19]
	v_cmp_eq_u64_e64 s[16:17], v[18:19], v[4:5]
	v_lshl_add_u64 v[4:5], v[30:31], 0, 5
	v_cmp_gt_i32_e64 s[6:7], s30, v14
	v_ashrrev_i32_e32 v29, 31, v28
	v_lshl_add_u64 v[14:15], s[24:25], 0, v[24:25]
	s_and_b64 s[18:19], s[16:17], s[18:19]
	v_cmp_eq_u64_e64 s[16:17], v[16:17], v[4:5]
	v_lshl_add_u64 v[4:5], v[30:31], 0, 6
	v_cmp_gt_i32_e64 s[8:9], s30, v12
	v_lshl_add_u64 v[12:13], s[24:25], 0, v[28:29]
	s_and_b64 s[18:19], s[16:17], s[18:19]
	v_cmp_eq_u64_e64 s[16:17], v[14:15], v[4:5]
	v_lshl_add_u64 v[4:5], v[30:31], 0, 7
	s_and_b64 s[18:19], s[16:17], s[18:19]
	v_cmp_eq_u64_e64 s[16:17], v[12:13], v[4:5]
	s_and_b64 s[16:17], s[16:17], s[18:19]
	s_and_b64 s[16:17], s[14:15], s[16:17]
	v_cmp_gt_i32_e64 s[10:11], s30, v8
	s_and_b64 s[16:17], s[12:13], s[16:17]
	s_and_b64 s[16:17], s[10:11], s[16:17]
	s_and_b64 s[16:17], s[8:9], s[16:17]
	v_cmp_gt_i32_e64 s[4:5], s30, v24
	s_and_b64 s[16:17], s[6:7], s[16:17]
	v_cmp_gt_i32_e64 s[0:1], s30, v28
	s_and_b64 s[16:17], s[4:5], s[16:17]
	v_lshl_add_u64 v[24:25], v[30:31], 2, s[20:21]
	s_and_b64 s[16:17], s[0:1], s[16:17]
	v_and_b32_e32 v10, 15, v24
	s_xor_b64 s[18:19], s[16:17], -1
	v_cmp_ne_u64_e64 s[16:17], 0, v[10:11]
	s_or_b64 s[16:17], s[18:19], s[16:17]
	s_and_saveexec_b64 s[18:19], s[16:17]
	s_xor_b64 s[18:19], exec, s[18:19]
	s_cbranch_execz .LBB0_21
	v_bfrev_b32_e32 v3, 1
	v_cmp_gt_i32_e64 s[16:17], s30, v2
	v_mov_b32_e32 v2, v3
	s_and_saveexec_b64 s[28:29], s[16:17]
	s_cbranch_execz .LBB0_6
	global_load_dword v2, v[24:25], off
.LBB0_6:
	s_or_b64 exec, exec, s[28:29]
	s_and_saveexec_b64 s[16:17], s[14:15]
	s_cbranch_execz .LBB0_8
	v_lshl_add_u64 v[4:5], v[22:23], 2, s[20:21]
	global_load_dword v3, v[4:5], off
.LBB0_8:
	s_or_b64 exec, exec, s[16:17]
	v_bfrev_b32_e32 v5, 1
	v_mov_b32_e32 v4, v5
	s_and_saveexec_b64 s[14:15], s[12:13]
	s_cbranch_execz .LBB0_10
	v_lshl_add_u64 v[8:9], v[20:21], 2, s[20:21]
	global_load_dword v4, v[8:9], off
.LBB0_10:
	s_or_b64 exec, exec, s[14:15]
	s_and_saveexec_b64 s[12:13], s[10:11]
	s_cbranch_execz .LBB0_12
	v_lshl_add_u64 v[6:7], v[6:7], 2, s[20:21]
	global_load_dword v5, v[6:7], off
.LBB0_12:
	s_or_b64 exec, exec, s[12:13]
	v_bfrev_b32_e32 v7, 1
	v_mov_b32_e32 v6, v7
	s_and_saveexec_b64 s[10:11], s[8:9]
	s_cbranch_execz .LBB0_14
	v_lshl_add_u64 v[8:9], v[18:19], 2, s[20:21]
	global_load_dword v6, v[8:9], off
.LBB0_14:
	s_or_b64 exec, exec, s[10:11]
	s_and_saveexec_b64 s[8:9], s[6:7]
	s_cbranch_execz .LBB0_16
	v_lshl_add_u64 v[8:9], v[16:17], 2, s[20:21]
	global_load_dword v7, v[8:9], off
.LBB0_16:
	s_or_b64 exec, exec, s[8:9]
	v_bfrev_b32_e32 v9, 1
	v_mov_b32_e32 v8, v9
	s_and_saveexec_b64 s[6:7], s[4:5]
	s_cbranch_execz .LBB0_18
	v_lshl_add_u64 v[14:15], v[14:15], 2, s[20:21]
	global_load_dword v8, v[14:15], off
.LBB0_18:
	s_or_b64 exec, exec, s[6:7]
	s_and_saveexec_b64 s[4:5], s[0:1]
	s_xor_b64 s[0:1], exec, s[4:5]
	s_cbranch_execz .LBB0_20
	v_lshl_add_u64 v[12:13], v[12:13], 2, s[20:21]
	global_load_dword v9, v[12:13], off
.LBB0_20:
	s_or_b64 exec, exec, s[0:1]
.LBB0_21:
	s_andn2_saveexec_b64 s[0:1], s[18:19]
	s_cbranch_execz .LBB0_23
	global_load_dwordx4 v[2:5], v[24:25], off
	global_load_dwordx4 v[6:9], v[24:25], off offset:16
.LBB0_23:
	s_or_b64 exec, exec, s[0:1]
	s_waitcnt vmcnt(0)
	v_add_f32_e32 v2, v2, v3
	v_add_f32_e32 v3, v4, v5
	v_add_f32_e32 v4, v6, v7
	v_add_f32_e32 v5, v8, v9
	v_add_f32_e32 v2, v2, v3
	v_add_f32_e32 v3, v4, v5
	v_add_f32_e32 v2, v2, v3
	v_bfrev_b32_e32 v3, 1
	s_nop 1
	v_mov_b32_dpp v3, v2 row_shr:1 row_mask:0xf bank_mask:0xf
	v_add_f32_e32 v2, v2, v3
	v_bfrev_b32_e32 v3, 1
	s_nop 1
	v_mov_b32_dpp v3, v2 row_shr:2 row_mask:0xf bank_mask:0xf
	v_add_f32_e32 v2, v2, v3
	v_bfrev_b32_e32 v3, 1
	s_nop 1
	v_mov_b32_dpp v3, v2 row_shr:4 row_mask:0xf bank_mask:0xf
	v_add_f32_e32 v2, v2, v3
	v_bfrev_b32_e32 v3, 1
	s_nop 1
	v_mov_b32_dpp v3, v2 row_shr:8 row_mask:0xf bank_mask:0xf
	v_add_f32_e32 v2, v2, v3
	v_bfrev_b32_e32 v3, 1
	s_nop 1
	v_mov_b32_dpp v3, v2 row_bcast:15 row_mask:0xa bank_mask:0xf
	v_add_f32_e32 v2, v2, v3
	v_bfrev_b32_e32 v3, 1
	s_nop 1
	v_mov_b32_dpp v3, v2 row_bcast:31 row_mask:0xc bank_mask:0xf
	v_add_f32_e32 v2, v2, v3
	s_nop 0
	v_readlane_b32 s4, v2, 63
	s_and_saveexec_b64 s[0:1], vcc
	s_cbranch_execz .LBB0_2
	s_and_b64 s[6:7], s[26:27], exec
	s_cselect_b32 s5, 16, 0
	v_or_b32_e32 v2, s5, v27
	v_mov_b32_e32 v3, s4
	ds_write_b32 v2, v3
	s_branch .LBB0_2
.LBB0_25:
	v_bfrev_b32_e32 v1, 1
.LBB0_26:
	v_cmp_eq_u32_e32 vcc, 0, v0
	s_and_saveexec_b64 s[0:1], vcc
	s_cbranch_execz .LBB0_28
	s_lshl_b64 s[0:1], s[2:3], 2
	s_add_u32 s0, s22, s0
	s_addc_u32 s1, s23, s1
	v_mov_b32_e32 v0, 0
	global_store_dword v0, v1, s[0:1]
.LBB0_28:
	s_endpgm
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel fixbits_sum_f32_f32_pinned_s1024_w2_e1_l64
		.amdhsa_group_segment_fixed_size 24
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 20
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_dispatch_ptr 0
		.amdhsa_user_sgpr_queue_ptr 0
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_user_sgpr_dispatch_id 0
		.amdhsa_user_sgpr_kernarg_preload_length 0
		.amdhsa_user_sgpr_kernarg_preload_offset 0
		.amdhsa_user_sgpr_private_segment_size 0
		.amdhsa_uses_dynamic_stack 0
		.amdhsa_enable_private_segment 0
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 0
		.amdhsa_system_sgpr_workgroup_id_z 0
		.amdhsa_system_sgpr_workgroup_info 0
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 32
		.amdhsa_next_free_sgpr 32
		.amdhsa_accum_offset 32
		.amdhsa_reserve_vcc 1
		.amdhsa_float_round_mode_32 0
		.amdhsa_float_round_mode_16_64 0
		.amdhsa_float_denorm_mode_32 3
		.amdhsa_float_denorm_mode_16_64 3
		.amdhsa_dx10_clamp 1
		.amdhsa_ieee_mode 1
		.amdhsa_fp16_overflow 0
		.amdhsa_tg_split 0
		.amdhsa_exception_fp_ieee_invalid_op 0
		.amdhsa_exception_fp_denorm_src 0
		.amdhsa_exception_fp_ieee_div_zero 0
		.amdhsa_exception_fp_ieee_overflow 0
		.amdhsa_exception_fp_ieee_underflow 0
		.amdhsa_exception_fp_ieee_inexact 0
		.amdhsa_exception_int_div_zero 0
	.end_amdhsa_kernel
	.text
.Lfunc_end0:
	.size	fixbits_sum_f32_f32_pinned_s1024_w2_e1_l64, .Lfunc_end0-fixbits_sum_f32_f32_pinned_s1024_w2_e1_l64

	.set fixbits_sum_f32_f32_pinned_s1024_w2_e1_l64.num_vgpr, 32
	.set fixbits_sum_f32_f32_pinned_s1024_w2_e1_l64.num_agpr, 0
	.set fixbits_sum_f32_f32_pinned_s1024_w2_e1_l64.numbered_sgpr, 32
	.set fixbits_sum_f32_f32_pinned_s1024_w2_e1_l64.num_named_barrier, 0
	.set fixbits_sum_f32_f32_pinned_s1024_w2_e1_l64.private_seg_size, 0
	.set fixbits_sum_f32_f32_pinned_s1024_w2_e1_l64.uses_vcc, 1
	.set fixbits_sum_f32_f32_pinned_s1024_w2_e1_l64.uses_flat_scratch, 0
	.set fixbits_sum_f32_f32_pinned_s1024_w2_e1_l64.has_dyn_sized_stack, 0
	.set fixbits_sum_f32_f32_pinned_s1024_w2_e1_l64.has_recursion, 0
	.set fixbits_sum_f32_f32_pinned_s1024_w2_e1_l64.has_indirect_call, 0
	.p2alignl 6, 3212836864
	.fill 256, 4, 3212836864
	.section	.AMDGPU.gpr_maximums,"",@progbits
	.set amdgpu.max_num_vgpr, 0
	.set amdgpu.max_num_agpr, 0
	.set amdgpu.max_num_sgpr, 0
	.set amdgpu.max_num_named_barrier, 0
	.text
	.section	".note.GNU-stack","",@progbits
	.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     0
    .args:
      - .address_space:  global
        .name:           x
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .address_space:  global
        .name:           y
        .offset:         8
        .size:           8
        .value_kind:     global_buffer
      - .name:           cols
        .offset:         16
        .size:           4
        .value_kind:     by_value
    .group_segment_fixed_size: 24
    .kernarg_segment_align: 8
    .kernarg_segment_size: 20
    .max_flat_workgroup_size: 128
    .name:           fixbits_sum_f32_f32_pinned_s1024_w2_e1_l64
    .private_segment_fixed_size: 0
    .sgpr_count:     38
    .sgpr_spill_count: 0
    .symbol:         fixbits_sum_f32_f32_pinned_s1024_w2_e1_l64.kd
    .uses_dynamic_stack: false
    .vgpr_count:     32
    .vgpr_spill_count: 0
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--gfx942
amdhsa.version:
  - 1
  - 2
...

	.end_amdgpu_metadata
