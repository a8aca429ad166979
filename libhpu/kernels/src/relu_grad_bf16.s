// SPDX-License-Identifier: MIT
// gradient of relu on BF16, computed in FP32: dx = x > 0 ? dy : 0; t0 = x
// Tensors: t0, t1 = dy, t2 = dx.
.kernel relu_grad_bf16
.tensors 3
.index_dims 4
.tensor 0, bf16
.tensor 1, bf16
.tensor 2, bf16
.meta "doc=gradient of relu on BF16, computed in FP32: dx = x > 0 ? dy : 0; t0 = x"
.macro args
.endm
.macro body
        vcmp.gt.f32 vp1, v0, 0.0
        vsel.f32 v2, vp1, v1, 0.0
.endm
.include "ew.inc"

        ew2_bf16w
