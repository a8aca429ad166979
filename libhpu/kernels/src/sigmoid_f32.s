// SPDX-License-Identifier: MIT
// y = 1 / (1 + exp(-x)) on FP32
// Tensors: t0 = x, t1 = y. Index space: elementwise (README).
.kernel sigmoid_f32
.tensors 2
.index_dims 4
.tensor 0, f32
.tensor 1, f32
.meta "doc=y = 1 / (1 + exp(-x)) on FP32"
.macro args
.endm
.macro body
        vsigmoid.f32 v2, v0
.endm
.include "ew.inc"

        ew1 f32, F32_LANES
