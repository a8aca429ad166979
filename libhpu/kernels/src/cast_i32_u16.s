// SPDX-License-Identifier: MIT
// INT32 to UINT16, wrapping modulo 2^16 (no saturation)
// Tensors: t0 = x (i32), t1 = y (u16). Index space: elementwise (README).
.include "types.inc"

        cast_narrow2 cast_i32_u16, vcvt.u16.i32, i32, u16, F32_LANES, "doc=INT32 to UINT16, wrapping modulo 2^16 (no saturation)"
