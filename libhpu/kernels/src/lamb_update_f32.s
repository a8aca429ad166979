// SPDX-License-Identifier: MIT
// LAMB, launch 1 of 3: the moments and the update direction, with each
// member's partial squared norms. m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g g;
// u = (m c1) / (sqrt(v c2) + eps) + wd w (c1, c2 the bias corrections);
// part[member, 0] = sum of w^2, part[member, 1] = sum of u^2 over the member.
// Launch 2 is reduce_sum_f32 over part's rows ([P, 2] -> norms [1, 2]),
// launch 3 lamb_apply_f32.
// Tensors: t0 = w, t1 = g, t2 = m, t3 = v (m, v updated), t4 = u [N],
// t5 = part [P, 2], P = ceil(N / 256); scalars (FP32): 0 b1, 1 b2, 2 eps,
// 3 wd, 4 c1, 5 c2. Index space: (ceil(N / 256)), N the flat size.
.kernel lamb_update_f32
.tensors 6
.scalars 6
.index_dims 1
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.tensor 3, f32
.tensor 4, f32
.tensor 5, f32
.meta "doc=LAMB step 1: moments, update direction, partial norms"
.include "opt.inc"

        ew_base
        lamb_args
        mov s0, EW_ELEMS / F32_LANES
step:
        ld.t.f32 v0, t0, i0
        ld.t.f32 v1, t1, i0 ; vmac.f32 v10, v0, v0
        ld.t.f32 v2, t2, i0 ; vmul.f32 v4, v1, s16
        ld.t.f32 v3, t3, i0 ; vmac.f32 v4, v2, s8
        vmul.f32 v5, v1, v1 ; st.t.f32 t2, i0, v4
        vmul.f32 v5, v5, s17
        vmac.f32 v5, v3, s9
        vmul.f32 v6, v5, s13 ; st.t.f32 t3, i0, v5
        vsqrt.f32 v6, v6
        vadd.f32 v6, v6, s10
        vmul.f32 v7, v4, s12
        vdiv.f32 v7, v7, v6
        vmac.f32 v7, v0, s11
        vmac.f32 v11, v7, v7 ; st.t.f32 t4, i0, v7
        iadd i0, i0, 0, F32_LANES
        loop s0, step
        lamb_part
