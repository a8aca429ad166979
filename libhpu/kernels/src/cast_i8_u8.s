// SPDX-License-Identifier: MIT
// INT8 to UINT8, wrapping modulo 2^8 (no saturation)
// Tensors: t0 = x (i8), t1 = y (u8). Index space: elementwise (README).
.include "types.inc"

        cast_same cast_i8_u8, vcvt.u8.i8, i8, u8, I8_LANES, "doc=INT8 to UINT8, wrapping modulo 2^8 (no saturation)"
