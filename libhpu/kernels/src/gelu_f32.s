// SPDX-License-Identifier: MIT
// y = x / 2 * (1 + erf(x / sqrt 2)) (exact GELU) on FP32
// Tensors: t0 = x, t1 = y. Index space: elementwise (README).
.kernel gelu_f32
.tensors 2
.index_dims 4
.tensor 0, f32
.tensor 1, f32
.meta "doc=y = x / 2 * (1 + erf(x / sqrt 2)) (exact GELU) on FP32"
.macro args
.endm
.macro body
        vmul.f32 v3, v0, bits(0x3f3504f3)
        verf.f32 v3, v3
        vadd.f32 v3, v3, 1.0
        vmul.f32 v2, v0, 0.5
        vmul.f32 v2, v2, v3
.endm
.include "ew.inc"

        ew1 f32, F32_LANES
