// SPDX-License-Identifier: MIT
// Batch norm 2-D, inference: y = (x - running_mean) * rsqrt(running_var +
// eps) * gamma + beta, per channel.
// Tensors: t0 = x [W, H, C, N], t1 = gamma [C], t2 = beta [C],
// t3 = running_mean [C], t4 = running_var [C], t5 = y [W, H, C, N];
// scalar 0 = eps (FP32). Index space: (1, H, C, N), a member per row.
.kernel batchnorm_infer_f32
.tensors 6
.scalars 1
.index_dims 4
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.tensor 3, f32
.tensor 4, f32
.tensor 5, f32
.meta "doc=batch norm 2-D forward, inference: running statistics"
.include "tpclib.inc"

        iid i0                                  // (0, h, c, n)
        iget s0, i0, 2
        iset i6, i6, 0, s0                      // (c)
        ld.ts.f32 s10, t3, i6
        ld.ts.f32 s11, t4, i6
        ld.ts.f32 s12, t1, i6
        ld.ts.f32 s13, t2, i6
        ldarg s14, 0 ; vmov.f32 v1, s12
        add.f32 s11, s11, s14 ; vmov.f32 v2, s13
        vmov.f32 v10, s11
        vrsqrt.f32 v10, v10                     // rstd
        row_vectors_f32 s1, t0
        imov i1, i0
row:
        ld.t.f32 v0, t0, i1
        vsub.f32 v0, v0, s10
        vmul.f32 v0, v0, v10
        vfma.f32 v0, v0, v1, v2
        iadd i1, i1, 0, F32_LANES ; st.t.f32 t5, i1, v0
        loop s1, row
        halt
