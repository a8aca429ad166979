// SPDX-License-Identifier: MIT
// y = alpha * x on BF16, computed in FP32 (alpha not rounded)
// Tensors: t0 = x, t1 = y; scalar 0 = alpha (FP32).
.kernel scale_bf16
.tensors 2
.scalars 1
.index_dims 4
.tensor 0, bf16
.tensor 1, bf16
.meta "doc=y = alpha * x on BF16, computed in FP32 (alpha not rounded)"
.macro args
        ldarg s8, 0
.endm
.macro body
        vmul.f32 v2, v0, s8
.endm
.include "ew.inc"

        ew1_bf16w
