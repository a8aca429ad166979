// SPDX-License-Identifier: MIT
// y = (u >= p) ? x * scale : 0 on BF16, computed in FP32 and rounded once,
// with dropout_f32's mask: u from FP32 draws, draw n of a member for its
// n-th 64 elements, so both kernels drop the same elements for one seed.
// Tensors: t0 = x, t1 = y; scalars (FP32): 0 p, 1 scale = 1 / (1 - p).
// Index space: elementwise (README); all tensors dense and of one shape.
.kernel dropout_bf16
.tensors 2
.scalars 2
.index_dims 4
.tensor 0, bf16
.tensor 1, bf16
.meta "doc=y = (u >= p) ? x * scale : 0 on BF16, computed in FP32, dropout_f32's mask"
.macro args
        ldarg s8, 0
        ldarg s9, 1
.endm
.macro body
        vrandu.f32 v1
        vcmp.ge.f32 vp1, v1, s8
        vmul.f32 v2, v0, s9
        (!vp1) vmov.f32 v2, 0.0
.endm
.include "ew.inc"

        ew1_bf16w
