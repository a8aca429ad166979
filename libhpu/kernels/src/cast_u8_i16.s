// SPDX-License-Identifier: MIT
// UINT8 to INT16, exact
// Tensors: t0 = x (u8), t1 = y (i16). Index space: elementwise (README).
.include "types.inc"

        cast_widen2 cast_u8_i16, vcvt.i16.u8, u8, i16, I8_LANES, "doc=UINT8 to INT16, exact"
