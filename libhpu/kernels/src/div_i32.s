// SPDX-License-Identifier: MIT
// out = a / b rounded toward zero (torch.div rounding_mode='trunc') on INT32, exact; a zero divisor raises TPC_ASSERT (value 0).
// Tensors: t0 = a, t1 = b (both broadcast), t2 = out. Index space: elementwise (README).
.include "intdiv.inc"

.macro body
        idiv_core
        idiv_trunc
.endm

        binop_kernel div_i32, i32, F32_LANES, "doc=out = a / b rounded toward zero (torch.div rounding_mode='trunc') on INT32"
