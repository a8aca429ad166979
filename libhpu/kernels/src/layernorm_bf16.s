// SPDX-License-Identifier: MIT
// Layer norm over dimension 0 of each row on BF16, computed in FP32 as
// layernorm_f32: y = (x - mean) * rstd * gamma + beta rounded to BF16 once;
// mean and rstd stored in FP32 for the backward pass.
// Tensors: t0 = x bf16 [N, R1, R2] (padding 0), t1 = gamma bf16 [N], t2 = beta bf16 [N],
// t3 = y bf16 [N, R1, R2], t4 = mean f32 [1, R1, R2], t5 = rstd f32 [1, R1, R2];
// scalar 0 = eps (FP32). Index space: (1, R1, R2).
.kernel layernorm_bf16
.tensors 6
.scalars 1
.index_dims 3
.tensor 0, bf16
.tensor 1, bf16
.tensor 2, bf16
.tensor 3, bf16
.tensor 4, f32
.tensor 5, f32
.meta "doc=layer norm forward over dimension 0 on BF16 in FP32, mean and rstd saved in FP32"
.include "rows_bf16.inc"

// v4 += (x - mean)^2 over the lanes below N (v6 the lanes' element indexes)
.macro var_half P
        vcvt.f32.bf16 v0, v20, \P
        vsub.f32 v0, v0, v3
        vcmp.lt.i32 vp1, v6, s4
        (!vp1) vmov.f32 v0, 0.0
        vmac.f32 v4, v0, v0
        vadd.i32 v6, v6, F32_LANES
.endm

.macro norm_half P
        vcvt.f32.bf16 v0, v20, \P
        vcvt.f32.bf16 v1, v21, \P
        vcvt.f32.bf16 v2, v22, \P
        vsub.f32 v0, v0, v3
        vmul.f32 v0, v0, v4
        vfma.f32 v5, v0, v1, v2
        vcvt.bf16.f32 v23, v5, \P
.endm

        row_sum_bf16 t0
        ln_mean
var:
        ld.t.bf16 v20, t0, i1 ; iadd i1, i1, 0, BF16_LANES
        var_half 0
        var_half 1
        loop s2, var
        ln_rstd
norm:
        ld.t.bf16 v20, t0, i1
        ld.t.bf16 v21, t1, i2
        ld.t.bf16 v22, t2, i2
        norm_half 0
        norm_half 1
        iadd i1, i1, 0, BF16_LANES ; st.t.bf16 t3, i1, v23
        iadd i2, i2, 0, BF16_LANES
        loop s2, norm
        halt
