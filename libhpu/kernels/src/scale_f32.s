// SPDX-License-Identifier: MIT
// y = alpha * x on FP32
// Tensors: t0 = x, t1 = y; scalar 0 = alpha (FP32).
.kernel scale_f32
.tensors 2
.scalars 1
.index_dims 4
.tensor 0, f32
.tensor 1, f32
.meta "doc=y = alpha * x on FP32"
.macro args
        ldarg s8, 0
.endm
.macro body
        vmul.f32 v2, v0, s8
.endm
.include "ew.inc"

        ew1 f32, F32_LANES
