// SPDX-License-Identifier: MIT
// out = a sub b elementwise on UINT16 (wrapping), either input broadcast (size-1 dims or stride 0)
// Tensors: t0 = a, t1 = b, t2 = out. Index space: elementwise (README).
.macro body
        vsub.u16 v2, v0, v1
.endm
.include "types.inc"

        binop_kernel sub_u16, u16, I16_LANES, "doc=out = a sub b elementwise on UINT16 (wrapping), either input broadcast (size-1 dims or stride 0)"
