// SPDX-License-Identifier: MIT
// UINT8 to INT32, exact
// Tensors: t0 = x (u8), t1 = y (i32). Index space: elementwise (README).
.include "types.inc"

        cast_widen4 cast_u8_i32, vcvt.i32.u8, u8, i32, "doc=UINT8 to INT32, exact"
