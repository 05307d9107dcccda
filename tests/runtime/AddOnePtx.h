// AddOnePtx: one hand-written elementwise PTX kernel shared by the runtime tests:
// the driver GPU test runs it, the tree-signature hook test signs it.
// Invariant: add_one(p_data, p_n) sets data[i] = data[i] + 1.0f (add.rn.f32) for i < n.
#pragma once

namespace fixbits::runtime::testing {

constexpr const char* kAddOnePtx = R"(
.version 8.0
.target sm_90
.address_size 64

.visible .entry add_one(
    .param .u64 p_data,
    .param .u32 p_n
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .f32 %f<3>;
    .reg .b64 %rd<5>;

    ld.param.u64 %rd1, [p_data];
    ld.param.u32 %r1, [p_n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r5, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    add.rn.f32 %f2, %f1, 0f3F800000;
    st.global.f32 [%rd4], %f2;
DONE:
    ret;
}
)";

}  // namespace fixbits::runtime::testing
