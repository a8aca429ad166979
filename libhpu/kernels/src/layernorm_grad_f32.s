// SPDX-License-Identifier: MIT
// Layer norm backward, the input gradient: with xhat = (x - mean) * rstd and
// g = dy * gamma, dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) over
// dimension 0 of each row (layernorm_grad_params_f32 gives dgamma, dbeta).
// Tensors: t0 = x [N, R1, R2], t1 = gamma [N], t2 = dy [N, R1, R2]
// (padding 0), t3 = mean [1, R1, R2], t4 = rstd [1, R1, R2] (as the forward
// stored them), t5 = dx [N, R1, R2]. Index space: (1, R1, R2).
.kernel layernorm_grad_f32
.tensors 6
.index_dims 3
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.tensor 3, f32
.tensor 4, f32
.tensor 5, f32
.meta "doc=layer norm backward: dx from x, gamma, dy, mean, rstd"
.include "tpclib.inc"

        iid i0
        row_vectors_f32 s1, t0
        lng_begin
sums:                                           // v6 = sum g, v7 = sum g * xhat
        ld.t.f32 v0, t0, i1
        ld.t.f32 v1, t2, i1 ; iadd i1, i1, 0, F32_LANES ; vsub.f32 v0, v0, s10
        ld.t.f32 v2, t1, i3 ; iadd i3, i3, 0, F32_LANES ; vmul.f32 v0, v0, s11
        vmul.f32 v1, v1, v2
        vadd.f32 v6, v6, v1
        loop s2, sums ; vmac.f32 v7, v1, v0
        lng_means
dx:
        ld.t.f32 v0, t0, i1
        ld.t.f32 v1, t2, i1 ; iadd i1, i1, 0, F32_LANES ; vsub.f32 v0, v0, s10
        ld.t.f32 v2, t1, i3 ; iadd i3, i3, 0, F32_LANES ; vmul.f32 v0, v0, s11
        vmul.f32 v1, v1, v2
        vmul.f32 v0, v0, v7
        vsub.f32 v1, v1, v6
        vsub.f32 v1, v1, v0
        vmul.f32 v1, v1, s11
        iadd i4, i4, 0, F32_LANES ; st.t.f32 t5, i4, v1
        loop s2, dx
        halt
