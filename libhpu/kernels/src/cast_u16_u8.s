// SPDX-License-Identifier: MIT
// UINT16 to UINT8, wrapping modulo 2^8 (no saturation)
// Tensors: t0 = x (u16), t1 = y (u8). Index space: elementwise (README).
.include "types.inc"

        cast_narrow2 cast_u16_u8, vcvt.u8.u16, u16, u8, I16_LANES, "doc=UINT16 to UINT8, wrapping modulo 2^8 (no saturation)"
