// SPDX-License-Identifier: MIT
// UINT16 to INT16, wrapping modulo 2^16 (no saturation)
// Tensors: t0 = x (u16), t1 = y (i16). Index space: elementwise (README).
.include "types.inc"

        cast_same cast_u16_i16, vcvt.i16.u16, u16, i16, I16_LANES, "doc=UINT16 to INT16, wrapping modulo 2^16 (no saturation)"
