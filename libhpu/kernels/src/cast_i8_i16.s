// SPDX-License-Identifier: MIT
// INT8 to INT16, exact
// Tensors: t0 = x (i8), t1 = y (i16). Index space: elementwise (README).
.include "types.inc"

        cast_widen2 cast_i8_i16, vcvt.i16.i8, i8, i16, I8_LANES, "doc=INT8 to INT16, exact"
