// SPDX-License-Identifier: MIT
// Batch norm 2-D on BF16, inference: batchnorm_infer_f32 on the widened x,
// y rounded once to BF16.
// Tensors: t0 = x bf16 [W, H, C, N], t1 = gamma, t2 = beta,
// t3 = running_mean, t4 = running_var (f32 [C]), t5 = y bf16; scalar 0 =
// eps (FP32). Index space: (1, H, C, N), a member per row.
.kernel batchnorm_infer_bf16
.tensors 6
.scalars 1
.index_dims 4
.tensor 0, bf16
.tensor 1, f32
.tensor 2, f32
.tensor 3, f32
.tensor 4, f32
.tensor 5, bf16
.meta "doc=batch norm 2-D forward on BF16, inference: running statistics, FP32 inside"
.include "bn.inc"

.macro half P
        vcvt.f32.bf16 v0, v20, \P
        bn_infer_y
        vcvt.bf16.f32 v21, v0, \P
.endm

        bn_infer_begin
        add.u32 s1, s1, 1
        shr.u32 s1, s1, 1                       // BF16 vectors
row:
        ld.t.bf16 v20, t0, i1
        half 0
        half 1
        iadd i1, i1, 0, BF16_LANES ; st.t.bf16 t5, i1, v21
        loop s1, row
        halt
