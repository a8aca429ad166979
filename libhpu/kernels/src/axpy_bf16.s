// SPDX-License-Identifier: MIT
// out = alpha * x + y on BF16, fused in FP32, rounded once to BF16
// Tensors: t0 = x, t1 = y, t2 = out (may be y); scalar 0 = alpha (FP32).
.kernel axpy_bf16
.tensors 3
.scalars 1
.index_dims 4
.tensor 0, bf16
.tensor 1, bf16
.tensor 2, bf16
.meta "doc=out = alpha * x + y on BF16, fused in FP32, rounded once to BF16"
.macro args
        ldarg s8, 0
        vmov.f32 v3, s8
.endm
.macro body
        vfma.f32 v2, v3, v0, v1
.endm
.include "ew.inc"

        ew2_bf16w
