// SPDX-License-Identifier: MIT
// UINT8 to INT8, wrapping modulo 2^8 (no saturation)
// Tensors: t0 = x (u8), t1 = y (i8). Index space: elementwise (README).
.include "types.inc"

        cast_same cast_u8_i8, vcvt.i8.u8, u8, i8, I8_LANES, "doc=UINT8 to INT8, wrapping modulo 2^8 (no saturation)"
