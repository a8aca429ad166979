// SPDX-License-Identifier: MIT
// y = softmax(x) over dimension 0 of each row, on BF16 computed in FP32
// Tensors: t0 = x [N, R1, R2] with padding -inf, t1 = y. Index space: (1, R1, R2).
.kernel softmax_bf16
.tensors 2
.index_dims 3
.tensor 0, bf16
.tensor 1, bf16
.meta "doc=y = softmax(x) over dimension 0 of each row, on BF16 computed in FP32"
.macro body
        vsub.f32 v0, v0, v1
        vexp.f32 v0, v0
        vmul.f32 v2, v0, v3
.endm
.include "rows_bf16.inc"

        row_max_bf16 t0
        vcvt.f32.bf16 v1, v1, 0
        row_sum_exp_bf16 t0
        vrcp.f32 v3, v3
        row_map1_bf16 t0, t1
        halt
