// SPDX-License-Identifier: MIT
// out = a / b rounded down (torch.div rounding_mode='floor', floor_divide) on INT32, exact; a zero divisor raises TPC_ASSERT (value 0).
// Tensors: t0 = a, t1 = b (both broadcast), t2 = out. Index space: elementwise (README).
.include "intdiv.inc"

.macro body
        idiv_core
        idiv_floor
.endm

        binop_kernel div_floor_i32, i32, F32_LANES, "doc=out = a / b rounded down (torch.div rounding_mode='floor', floor_divide) on INT32"
