// SPDX-License-Identifier: MIT
// y = x / 2 * (1 + erf(x / sqrt 2)) (exact GELU) on BF16, computed in FP32
// Tensors: t0 = x, t1 = y. Index space: elementwise (README).
.kernel gelu_bf16
.tensors 2
.index_dims 4
.tensor 0, bf16
.tensor 1, bf16
.meta "doc=y = x / 2 * (1 + erf(x / sqrt 2)) (exact GELU) on BF16, computed in FP32"
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

        ew1_bf16w
