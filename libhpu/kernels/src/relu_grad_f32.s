// SPDX-License-Identifier: MIT
// gradient of relu on FP32: dx = x > 0 ? dy : 0; t0 = x
// Tensors: t0, t1 = dy, t2 = dx.
.kernel relu_grad_f32
.tensors 3
.index_dims 4
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.meta "doc=gradient of relu on FP32: dx = x > 0 ? dy : 0; t0 = x"
.macro args
.endm
.macro body
        vcmp.gt.f32 vp1, v0, 0.0
        vsel.f32 v2, vp1, v1, 0.0
.endm
.include "ew.inc"

        ew2 f32, F32_LANES
