// SPDX-License-Identifier: MIT
// UINT16 to INT8, wrapping modulo 2^8 (no saturation)
// Tensors: t0 = x (u16), t1 = y (i8). Index space: elementwise (README).
.include "types.inc"

        cast_narrow2 cast_u16_i8, vcvt.i8.u16, u16, i8, I16_LANES, "doc=UINT16 to INT8, wrapping modulo 2^8 (no saturation)"
