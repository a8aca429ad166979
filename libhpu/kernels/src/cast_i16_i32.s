// SPDX-License-Identifier: MIT
// INT16 to INT32, exact
// Tensors: t0 = x (i16), t1 = y (i32). Index space: elementwise (README).
.include "types.inc"

        cast_widen2 cast_i16_i32, vcvt.i32.i16, i16, i32, I16_LANES, "doc=INT16 to INT32, exact"
