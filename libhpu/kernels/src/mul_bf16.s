// SPDX-License-Identifier: MIT
// out = a mul b elementwise on BF16, either input broadcast (size-1 dims or stride 0)
// Tensors: t0 = a, t1 = b, t2 = out. Index space: elementwise (README).
.kernel mul_bf16
.tensors 3
.index_dims 4
.tensor 0, bf16
.tensor 1, bf16
.tensor 2, bf16
.meta "doc=out = a mul b elementwise on BF16, either input broadcast (size-1 dims or stride 0)"
.macro args
.endm
.macro body
        vmul.bf16 v2, v0, v1
.endm
.include "ew.inc"

        ew2 bf16, BF16_LANES
