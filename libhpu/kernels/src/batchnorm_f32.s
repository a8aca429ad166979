// SPDX-License-Identifier: MIT
// Batch norm 2-D, training forward, per channel c over N, H, W (M = N H W
// elements): mean, var (biased), rstd = 1 / sqrt(var + eps),
// y = (x - mean) * rstd * gamma + beta; mean and rstd stored for the
// backward; the running statistics updated as PyTorch does,
// r = (1 - momentum) r + momentum s, with the unbiased variance
// (sum of squares / (M - 1)) for running_var. M = 1 raises TPC_ASSERT
// with value 1 (PyTorch refuses it too).
// Tensors: t0 = x [W, H, C, N] (padding 0), t1 = gamma [C], t2 = beta [C],
// t3 = y [W, H, C, N], t4 = mean [C], t5 = rstd [C], t6 = running_mean [C],
// t7 = running_var [C] (both updated); scalars 0 = eps, 1 = momentum (FP32).
// Index space: (C).
.kernel batchnorm_f32
.tensors 8
.scalars 2
.index_dims 1
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.tensor 3, f32
.tensor 4, f32
.tensor 5, f32
.tensor 6, f32
.tensor 7, f32
.meta "doc=batch norm 2-D forward, training: batch statistics, running statistics updated"
.include "bn.inc"

.macro add_x
        ld.t.f32 v0, t0, i1
        vadd.f32 v5, v5, v0
.endm

.macro add_sq                                   // (x - mean)^2 of the lanes w < W
        ld.t.f32 v0, t0, i1 ; vcmp.lt.i32 vp1, v6, s4
        vsub.f32 v0, v0, v9
        (vp1) vmac.f32 v5, v0, v0
.endm

.macro norm
        ld.t.f32 v0, t0, i1
        vsub.f32 v0, v0, v9
        vmul.f32 v0, v0, v10
        vfma.f32 v0, v0, v1, v2
        st.t.f32 t3, i1, v0
.endm

        chan_base t0
        cmp.gt.u32 sp1, s5, 1
        assert sp1, s5
        sub.u32 s7, s5, 1
        cvt.f32.u32 s7, s7                      // M - 1
        ldarg s8, 0                             // eps
        ldarg s9, 1                             // momentum
        sum_clear
        chan_pass add_x, fold_row, fold_plane
        vredsum.f32 v3, v3
        vdiv.f32 v9, v3, s6                     // mean
        sum_clear
        chan_pass add_sq, fold_row, fold_plane
        vredsum.f32 v3, v3                      // sum of squares
        vdiv.f32 v10, v3, s6                    // var
        vadd.f32 v10, v10, s8
        vrsqrt.f32 v10, v10                     // rstd
        vdiv.f32 v11, v3, s7                    // the unbiased variance
        ld.ts.f32 s10, t6, i6 ; mov s11, 1.0
        ld.ts.f32 s12, t7, i6 ; sub.f32 s11, s11, s9
        mul.f32 s10, s10, s11
        mul.f32 s12, s12, s11
        vmov.f32 v12, s10
        vmov.f32 v13, s12
        vmac.f32 v12, v9, s9                    // (1 - momentum) r + momentum mean, fused
        vmac.f32 v13, v11, s9
        vext.f32 s10, v12, 0
        vext.f32 s12, v13, 0 ; st.ts.f32 t6, i6, s10
        vext.f32 s13, v9, 0 ; st.ts.f32 t7, i6, s12
        vext.f32 s14, v10, 0 ; st.ts.f32 t4, i6, s13
        ld.ts.f32 s15, t1, i6 ; st.ts.f32 t5, i6, s14
        ld.ts.f32 s16, t2, i6 ; vmov.f32 v1, s15
        vmov.f32 v2, s16
        chan_pass norm, no_hook, no_hook
        halt
