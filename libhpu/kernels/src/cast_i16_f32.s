// SPDX-License-Identifier: MIT
// INT16 to FP32, exact
// Tensors: t0 = x (i16), t1 = y (f32). Index space: elementwise (README).
.include "types.inc"

        cast_widen2 cast_i16_f32, vcvt.f32.i16, i16, f32, I16_LANES, "doc=INT16 to FP32, exact"
