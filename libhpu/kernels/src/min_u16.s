// SPDX-License-Identifier: MIT
// out = a min b elementwise on UINT16 (unsigned), either input broadcast (size-1 dims or stride 0)
// Tensors: t0 = a, t1 = b, t2 = out. Index space: elementwise (README).
.macro body
        vmin.u16 v2, v0, v1
.endm
.include "types.inc"

        binop_kernel min_u16, u16, I16_LANES, "doc=out = a min b elementwise on UINT16 (unsigned), either input broadcast (size-1 dims or stride 0)"
