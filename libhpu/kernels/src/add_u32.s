// SPDX-License-Identifier: MIT
// out = a add b elementwise on UINT32 (wrapping), either input broadcast (size-1 dims or stride 0)
// Tensors: t0 = a, t1 = b, t2 = out. Index space: elementwise (README).
.macro body
        vadd.u32 v2, v0, v1
.endm
.include "types.inc"

        binop_kernel add_u32, u32, F32_LANES, "doc=out = a add b elementwise on UINT32 (wrapping), either input broadcast (size-1 dims or stride 0)"
