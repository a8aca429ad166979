// SPDX-License-Identifier: MIT
// INT16 to UINT8, wrapping modulo 2^8 (no saturation)
// Tensors: t0 = x (i16), t1 = y (u8). Index space: elementwise (README).
.include "types.inc"

        cast_narrow2 cast_i16_u8, vcvt.u8.i16, i16, u8, I16_LANES, "doc=INT16 to UINT8, wrapping modulo 2^8 (no saturation)"
