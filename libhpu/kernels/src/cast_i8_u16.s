// SPDX-License-Identifier: MIT
// INT8 to UINT16, wrapping modulo 2^16 (no saturation)
// Tensors: t0 = x (i8), t1 = y (u16). Index space: elementwise (README).
.include "types.inc"

        cast_widen2 cast_i8_u16, vcvt.u16.i8, i8, u16, I8_LANES, "doc=INT8 to UINT16, wrapping modulo 2^16 (no saturation)"
