// SPDX-License-Identifier: MIT
// Batch norm 2-D backward, per channel c over N, H, W (M elements), from
// the forward's stored mean and rstd: xhat = (x - mean) * rstd,
// dbeta = sum dy, dgamma = sum dy * xhat,
// dx = gamma * rstd * (dy - dbeta / M - xhat * dgamma / M).
// Tensors: t0 = x [W, H, C, N], t1 = dy [W, H, C, N] (padding 0),
// t2 = mean [C], t3 = rstd [C], t4 = gamma [C], t5 = dx [W, H, C, N],
// t6 = dgamma [C], t7 = dbeta [C]. Index space: (C).
.kernel batchnorm_grad_f32
.tensors 8
.index_dims 1
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.tensor 3, f32
.tensor 4, f32
.tensor 5, f32
.tensor 6, f32
.tensor 7, f32
.meta "doc=batch norm 2-D backward: dx, dgamma, dbeta"
.include "bn.inc"

.macro add_g                                    // v5 += dy, v12 += dy * xhat
        ld.t.f32 v0, t0, i1
        ld.t.f32 v1, t1, i1 ; vsub.f32 v0, v0, s10
        vmul.f32 v0, v0, s11
        vadd.f32 v5, v5, v1
        vmac.f32 v12, v1, v0
.endm

.macro fold_row2                                // both sums' levels: v12 -> v11 -> v10
        fold_row
        vadd.f32 v11, v11, v12
        vmov.f32 v12, 0.0
.endm

.macro fold_plane2
        fold_plane
        vadd.f32 v10, v10, v11
        vmov.f32 v11, 0.0
.endm

.macro dx_vec
        ld.t.f32 v0, t0, i1
        ld.t.f32 v1, t1, i1 ; vsub.f32 v0, v0, s10
        vmul.f32 v0, v0, s11                    // xhat
        vmul.f32 v0, v0, v14
        vsub.f32 v1, v1, v13
        vsub.f32 v1, v1, v0
        vmul.f32 v1, v1, v15
        st.t.f32 t5, i1, v1
.endm

        chan_base t0
        ld.ts.f32 s10, t2, i6                   // mean
        ld.ts.f32 s11, t3, i6                   // rstd
        ld.ts.f32 s15, t4, i6 ; vmov.f32 v10, 0.0
        mul.f32 s15, s15, s11 ; vmov.f32 v11, 0.0
        vmov.f32 v12, 0.0
        sum_clear
        chan_pass add_g, fold_row2, fold_plane2
        vredsum.f32 v3, v3                      // dbeta
        vredsum.f32 v10, v10                    // dgamma
        vext.f32 s16, v3, 0
        vext.f32 s17, v10, 0 ; st.ts.f32 t7, i6, s16
        vdiv.f32 v13, v3, s6 ; st.ts.f32 t6, i6, s17    // mean of dy
        vdiv.f32 v14, v10, s6                   // mean of dy * xhat
        vmov.f32 v15, s15                       // gamma * rstd
        chan_pass dx_vec, no_hook, no_hook
        halt
