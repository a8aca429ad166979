// SPDX-License-Identifier: MIT
// INT16 to INT8, wrapping modulo 2^8 (no saturation)
// Tensors: t0 = x (i16), t1 = y (i8). Index space: elementwise (README).
.include "types.inc"

        cast_narrow2 cast_i16_i8, vcvt.i8.i16, i16, i8, I16_LANES, "doc=INT16 to INT8, wrapping modulo 2^8 (no saturation)"
