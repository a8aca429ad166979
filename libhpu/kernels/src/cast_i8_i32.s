// SPDX-License-Identifier: MIT
// INT8 to INT32, exact
// Tensors: t0 = x (i8), t1 = y (i32). Index space: elementwise (README).
.include "types.inc"

        cast_widen4 cast_i8_i32, vcvt.i32.i8, i8, i32, "doc=INT8 to INT32, exact"
