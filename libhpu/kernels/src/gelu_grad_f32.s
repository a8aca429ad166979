// SPDX-License-Identifier: MIT
// gradient of gelu on FP32: dx = dy * (Phi(x) + x * phi(x)); t0 = x
// Tensors: t0, t1 = dy, t2 = dx.
.kernel gelu_grad_f32
.tensors 3
.index_dims 4
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.meta "doc=gradient of gelu on FP32: dx = dy * (Phi(x) + x * phi(x)); t0 = x"
.macro args
.endm
.macro body
        vmul.f32 v3, v0, bits(0x3f3504f3)
        verf.f32 v3, v3
        vadd.f32 v3, v3, 1.0
        vmul.f32 v3, v3, 0.5
        vmul.f32 v4, v0, v0
        vmul.f32 v4, v4, -0.5
        vexp.f32 v4, v4
        vmul.f32 v4, v4, bits(0x3ecc422a)
        vmac.f32 v3, v4, v0
        vmul.f32 v2, v3, v1
.endm
.include "ew.inc"

        ew2 f32, F32_LANES
