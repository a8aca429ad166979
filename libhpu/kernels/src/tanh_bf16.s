// SPDX-License-Identifier: MIT
// y = tanh(x) on BF16, computed in FP32
// Tensors: t0 = x, t1 = y. Index space: elementwise (README).
.kernel tanh_bf16
.tensors 2
.index_dims 4
.tensor 0, bf16
.tensor 1, bf16
.meta "doc=y = tanh(x) on BF16, computed in FP32"
.macro args
.endm
.macro body
        vtanh.f32 v2, v0
.endm
.include "ew.inc"

        ew1_bf16w
