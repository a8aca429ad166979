// SPDX-License-Identifier: MIT
// Layer norm over dimension 0 of each row: y = (x - mean) * rstd * gamma + beta,
// rstd = 1 / sqrt(var + eps), var the biased variance; mean and rstd are
// stored for the backward pass.
// Tensors: t0 = x [N, R1, R2] (padding 0), t1 = gamma [N], t2 = beta [N],
// t3 = y [N, R1, R2], t4 = mean [1, R1, R2], t5 = rstd [1, R1, R2];
// scalar 0 = eps (FP32). Index space: (1, R1, R2).
.kernel layernorm_f32
.tensors 6
.scalars 1
.index_dims 3
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.tensor 3, f32
.tensor 4, f32
.tensor 5, f32
.meta "doc=layer norm forward over dimension 0, mean and rstd saved"
.include "tpclib.inc"

        row_sum t0                              // v3 = sum, s1 = vectors, i0 = (0, r1, r2)
        ln_mean                                 // v3 = mean
var:                                            // v4 = lane sums of (x - mean)^2, lanes < N only
        ld.t.f32 v0, t0, i1 ; iadd i1, i1, 0, F32_LANES
        vsub.f32 v0, v0, v3
        vcmp.lt.i32 vp1, v6, s4
        (!vp1) vmov.f32 v0, 0.0
        vmac.f32 v4, v0, v0
        loop s2, var ; vadd.i32 v6, v6, F32_LANES
        ln_rstd                                 // v4 = rstd, i2 = gamma's coordinate
norm:
        ld.t.f32 v0, t0, i1
        ld.t.f32 v1, t1, i2 ; vsub.f32 v0, v0, v3
        ld.t.f32 v2, t2, i2 ; vmul.f32 v0, v0, v4
        vfma.f32 v5, v0, v1, v2
        iadd i1, i1, 0, F32_LANES ; st.t.f32 t3, i1, v5
        iadd i2, i2, 0, F32_LANES
        loop s2, norm
        halt
