// SPDX-License-Identifier: MIT
// dx = y * (dy - sum(dy * y)) over dimension 0 of each row, on BF16 computed in FP32
// Tensors: t0 = y (softmax output), t1 = dy, t2 = dx, all [N, R1, R2], padding 0.
.kernel softmax_grad_bf16
.tensors 3
.index_dims 3
.tensor 0, bf16
.tensor 1, bf16
.tensor 2, bf16
.meta "doc=dx = y * (dy - sum(dy * y)) over dimension 0 of each row, on BF16 computed in FP32"
.macro body
        vsub.f32 v1, v1, v3
        vmul.f32 v2, v0, v1
.endm
.include "rows_bf16.inc"

        row_dot_bf16 t0, t1
        row_map2_bf16 t0, t1, t2
        halt
