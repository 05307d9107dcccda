; EXPECT: error: .amdhsa_kernel is never closed
	.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
	.text
	.type	k,@function
k:
	s_endpgm
	.rodata
	.amdhsa_kernel k
		.amdhsa_user_sgpr_count 8
