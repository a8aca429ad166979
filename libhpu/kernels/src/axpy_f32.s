// SPDX-License-Identifier: MIT
// out = alpha * x + y on FP32, one rounding (fused)
// Tensors: t0 = x, t1 = y, t2 = out (may be y); scalar 0 = alpha (FP32).
.kernel axpy_f32
.tensors 3
.scalars 1
.index_dims 4
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.meta "doc=out = alpha * x + y on FP32, one rounding (fused)"
.macro args
        ldarg s8, 0
        vmov.f32 v3, s8
.endm
.macro body
        vfma.f32 v2, v3, v0, v1
.endm
.include "ew.inc"

        ew2 f32, F32_LANES
