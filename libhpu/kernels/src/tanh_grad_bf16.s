// SPDX-License-Identifier: MIT
// gradient of tanh on BF16, computed in FP32: dx = dy * (1 - y * y); t0 = y, the forward output
// Tensors: t0, t1 = dy, t2 = dx.
.kernel tanh_grad_bf16
.tensors 3
.index_dims 4
.tensor 0, bf16
.tensor 1, bf16
.tensor 2, bf16
.meta "doc=gradient of tanh on BF16, computed in FP32: dx = dy * (1 - y * y); t0 = y, the forward output"
.macro args
.endm
.macro body
        vmul.f32 v3, v0, v0
        vneg.f32 v3, v3
        vadd.f32 v3, v3, 1.0
        vmul.f32 v2, v1, v3
.endm
.include "ew.inc"

        ew2_bf16w
