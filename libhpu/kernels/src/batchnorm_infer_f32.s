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
.include "bn.inc"

        bn_infer_begin
row:
        ld.t.f32 v0, t0, i1
        bn_infer_y
        iadd i1, i1, 0, F32_LANES ; st.t.f32 t5, i1, v0
        loop s1, row
        halt
