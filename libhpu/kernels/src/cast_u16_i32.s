// SPDX-License-Identifier: MIT
// UINT16 to INT32, exact
// Tensors: t0 = x (u16), t1 = y (i32). Index space: elementwise (README).
.include "types.inc"

        cast_widen2 cast_u16_i32, vcvt.i32.u16, u16, i32, I16_LANES, "doc=UINT16 to INT32, exact"
