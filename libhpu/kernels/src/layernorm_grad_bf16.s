// SPDX-License-Identifier: MIT
// Layer norm backward on BF16, the input gradient, computed in FP32 as
// layernorm_grad_f32: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),
// g = dy * gamma, xhat = (x - mean) * rstd, rounded to BF16 once.
// Tensors: t0 = x bf16 [N, R1, R2], t1 = gamma bf16 [N], t2 = dy bf16 [N, R1, R2]
// (padding 0), t3 = mean f32 [1, R1, R2], t4 = rstd f32 [1, R1, R2] (as the forward
// stored them), t5 = dx bf16 [N, R1, R2]. Index space: (1, R1, R2).
.kernel layernorm_grad_bf16
.tensors 6
.index_dims 3
.tensor 0, bf16
.tensor 1, bf16
.tensor 2, bf16
.tensor 3, f32
.tensor 4, f32
.tensor 5, bf16
.meta "doc=layer norm backward on BF16 in FP32: dx from x, gamma, dy, mean, rstd"
.include "rows_bf16.inc"

// v0 = xhat, v1 = g of half P of x (v20), dy (v21) and gamma (v22)
.macro terms P
        vcvt.f32.bf16 v0, v20, \P
        vcvt.f32.bf16 v1, v21, \P
        vcvt.f32.bf16 v2, v22, \P
        vsub.f32 v0, v0, s10
        vmul.f32 v0, v0, s11
        vmul.f32 v1, v1, v2
.endm

// the next BF16 vectors of x, dy (i1) and gamma (i3)
.macro loads
        ld.t.bf16 v20, t0, i1
        ld.t.bf16 v21, t2, i1 ; iadd i1, i1, 0, BF16_LANES
        ld.t.bf16 v22, t1, i3 ; iadd i3, i3, 0, BF16_LANES
.endm

.macro sums_half P
        terms \P
        vadd.f32 v6, v6, v1
        vmac.f32 v7, v1, v0
.endm

.macro dx_half P
        terms \P
        vmul.f32 v0, v0, v7
        vsub.f32 v1, v1, v6
        vsub.f32 v1, v1, v0
        vmul.f32 v1, v1, s11
        vcvt.bf16.f32 v23, v1, \P
.endm

        iid i0
        row_vectors_bf16 s1, t0
        lng_begin
sums:
        loads
        sums_half 0
        sums_half 1
        loop s2, sums
        lng_means
dx:
        loads
        dx_half 0
        dx_half 1
        iadd i4, i4, 0, BF16_LANES ; st.t.bf16 t5, i4, v23
        loop s2, dx
        halt
