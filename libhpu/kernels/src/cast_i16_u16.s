// SPDX-License-Identifier: MIT
// INT16 to UINT16, wrapping modulo 2^16 (no saturation)
// Tensors: t0 = x (i16), t1 = y (u16). Index space: elementwise (README).
.include "types.inc"

        cast_same cast_i16_u16, vcvt.u16.i16, i16, u16, I16_LANES, "doc=INT16 to UINT16, wrapping modulo 2^16 (no saturation)"
