// SPDX-License-Identifier: MIT
// out = a add b elementwise on I32 (wrapping), either input broadcast (size-1 dims or stride 0)
// Tensors: t0 = a, t1 = b, t2 = out. Index space: elementwise (README).
.kernel add_i32
.tensors 3
.index_dims 4
.tensor 0, i32
.tensor 1, i32
.tensor 2, i32
.meta "doc=out = a add b elementwise on I32 (wrapping), either input broadcast (size-1 dims or stride 0)"
.macro args
.endm
.macro body
        vadd.i32 v2, v0, v1
.endm
.include "ew.inc"

        ew2 i32, F32_LANES
