// SPDX-License-Identifier: MIT
// softmax cross-entropy from logits with integer labels, per row
// loss[r] = log(sum(exp(x[:, r]))) - x[label[r], r];
// dx[:, r] = (softmax(x[:, r]) - onehot(label[r])) * scale.
// Tensors: t0 = x [C, R1, R2] (padding -inf), t1 = labels i32 [1, R1, R2],
// t2 = loss [1, R1, R2], t3 = dx [C, R1, R2]; scalar 0 = scale (FP32, e.g. 1/B).
// A label outside [0, C) raises TPC_ASSERT with the label as its value.
// Index space: (1, R1, R2).
.kernel cross_entropy_f32
.tensors 4
.scalars 1
.index_dims 3
.tensor 0, f32
.tensor 1, i32
.tensor 2, f32
.tensor 3, f32
.meta "doc=softmax cross-entropy from logits with integer labels, per row"
.include "tpclib.inc"

        ce_label f32
        row_max t0
        row_sum_exp t0
        ce_loss
        mov s2, s1 ; viota.i32 v6
        imov i1, i0
grad:
        ld.t.f32 v0, t0, i1
        vsub.f32 v0, v0, v1
        vexp.f32 v0, v0
        vmul.f32 v0, v0, v5
        vcmp.eq.i32 vp1, v6, s10
        (vp1) vsub.f32 v0, v0, s11
        iadd i1, i1, 0, F32_LANES ; vadd.i32 v6, v6, F32_LANES ; st.t.f32 t3, i1, v0
        loop s2, grad
        halt
