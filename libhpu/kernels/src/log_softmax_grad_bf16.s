// SPDX-License-Identifier: MIT
// dx = dy - exp(y) * sum(dy) over dimension 0 of each row, on BF16 computed in FP32
// Tensors: t0 = y (log-softmax output), t1 = dy (padding 0), t2 = dx, all [N, R1, R2].
.kernel log_softmax_grad_bf16
.tensors 3
.index_dims 3
.tensor 0, bf16
.tensor 1, bf16
.tensor 2, bf16
.meta "doc=dx = dy - exp(y) * sum(dy) over dimension 0 of each row, on BF16 computed in FP32"
.macro body
        vexp.f32 v0, v0
        vmul.f32 v0, v0, v3
        vsub.f32 v2, v1, v0
.endm
.include "rows_bf16.inc"

        row_sum_bf16 t1
        row_map2_bf16 t0, t1, t2
        halt
