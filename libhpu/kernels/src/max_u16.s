// SPDX-License-Identifier: MIT
// out = a max b elementwise on UINT16 (unsigned), either input broadcast (size-1 dims or stride 0)
// Tensors: t0 = a, t1 = b, t2 = out. Index space: elementwise (README).
.macro body
        vmax.u16 v2, v0, v1
.endm
.include "types.inc"

        binop_kernel max_u16, u16, I16_LANES, "doc=out = a max b elementwise on UINT16 (unsigned), either input broadcast (size-1 dims or stride 0)"
