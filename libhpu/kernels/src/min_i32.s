// SPDX-License-Identifier: MIT
// out = a min b elementwise on I32 (signed), either input broadcast (size-1 dims or stride 0)
// Tensors: t0 = a, t1 = b, t2 = out. Index space: elementwise (README).
.kernel min_i32
.tensors 3
.index_dims 4
.tensor 0, i32
.tensor 1, i32
.tensor 2, i32
.meta "doc=out = a min b elementwise on I32 (signed), either input broadcast (size-1 dims or stride 0)"
.macro args
.endm
.macro body
        vmin.i32 v2, v0, v1
.endm
.include "ew.inc"

        ew2 i32, F32_LANES
