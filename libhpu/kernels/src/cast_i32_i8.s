// SPDX-License-Identifier: MIT
// INT32 to INT8, wrapping modulo 2^8 (no saturation)
// Tensors: t0 = x (i32), t1 = y (i8). Index space: elementwise (README).
.include "types.inc"

        cast_narrow4 cast_i32_i8, vcvt.i8.i32, i32, i8, "doc=INT32 to INT8, wrapping modulo 2^8 (no saturation)"
