// SPDX-License-Identifier: MIT
// out = a - floor(a / b) b, the sign of b (torch.remainder, Python's %) on INT32, exact; a zero divisor raises TPC_ASSERT (value 0).
// Tensors: t0 = a, t1 = b (both broadcast), t2 = out. Index space: elementwise (README).
.include "intdiv.inc"

.macro body
        idiv_core
        imod_floor
.endm

        binop_kernel remainder_i32, i32, F32_LANES, "doc=out = a - floor(a / b) b, the sign of b (torch.remainder, Python's %) on INT32"
