// SPDX-License-Identifier: MIT
// out = index of the first maximum of x over dimension 0 of each row, or
// of the first NaN if the row has one (as numpy and PyTorch)
// Tensors: t0 = x [N, R1, R2] (padding -inf), t1 = out i32 [1, R1, R2]. Index space: (1, R1, R2).
.kernel argmax_f32
.tensors 2
.index_dims 3
.tensor 0, f32
.tensor 1, i32
.meta "doc=out = index of the first maximum of x over dimension 0 of each row, or"
.include "tpclib.inc"

        row_max t0
        vext.f32 s4, v1, 0
        cmp.ne.f32 sp2, s4, s4
        mov s2, s1
        imov i1, i0
        mov s6, 0
        mov s7, 0xffffffff
find:
        ld.t.f32 v0, t0, i1 ; iadd i1, i1, 0, F32_LANES
        vcmp.eq.f32 vp1, v0, v1
        (sp2) vcmp.ne.f32 vp1, v0, v0
        vpfirst s3, vp1
        cmp.ne.u32 sp1, s3, 0xffffffff
        (sp1) jmp found
        add.u32 s6, s6, F32_LANES
        loop s2, find
        jmp done
found:
        add.u32 s7, s6, s3
done:
        halt ; st.ts.i32 t1, i0, s7
