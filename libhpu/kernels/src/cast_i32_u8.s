// SPDX-License-Identifier: MIT
// INT32 to UINT8, wrapping modulo 2^8 (no saturation)
// Tensors: t0 = x (i32), t1 = y (u8). Index space: elementwise (README).
.include "types.inc"

        cast_narrow4 cast_i32_u8, vcvt.u8.i32, i32, u8, "doc=INT32 to UINT8, wrapping modulo 2^8 (no saturation)"
