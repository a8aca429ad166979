// SPDX-License-Identifier: MIT
// softmax cross-entropy from BF16 logits with integer labels, per row, in FP32:
// loss[r] = log(sum(exp(x[:, r]))) - x[label[r], r] (FP32);
// dx[:, r] = (softmax(x[:, r]) - onehot(label[r])) * scale, rounded to BF16.
// Tensors: t0 = x bf16 [C, R1, R2] (padding -inf), t1 = labels i32 [1, R1, R2],
// t2 = loss f32 [1, R1, R2], t3 = dx bf16 [C, R1, R2]; scalar 0 = scale (FP32, e.g. 1/B).
// A label outside [0, C) raises TPC_ASSERT with the label as its value.
// Index space: (1, R1, R2).
.kernel cross_entropy_bf16
.tensors 4
.scalars 1
.index_dims 3
.tensor 0, bf16
.tensor 1, i32
.tensor 2, f32
.tensor 3, bf16
.meta "doc=softmax cross-entropy from BF16 logits with integer labels, per row, in FP32:"
// v6 = the element index of each lane of the half
.macro body
        vsub.f32 v0, v0, v1
        vexp.f32 v0, v0
        vmul.f32 v2, v0, v5
        vcmp.eq.i32 vp1, v6, s10
        (vp1) vsub.f32 v2, v2, s11
        vadd.i32 v6, v6, F32_LANES
.endm
.include "rows_bf16.inc"

        ce_label bf16
        row_max_bf16 t0
        vcvt.f32.bf16 v1, v1, 0
        row_sum_exp_bf16 t0
        ce_loss
        viota.i32 v6
        row_map1_bf16 t0, t3
        halt
