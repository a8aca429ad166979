// SPDX-License-Identifier: MIT
// INT32 to INT16, wrapping modulo 2^16 (no saturation)
// Tensors: t0 = x (i32), t1 = y (i16). Index space: elementwise (README).
.include "types.inc"

        cast_narrow2 cast_i32_i16, vcvt.i16.i32, i32, i16, F32_LANES, "doc=INT32 to INT16, wrapping modulo 2^16 (no saturation)"
