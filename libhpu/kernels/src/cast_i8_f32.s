// SPDX-License-Identifier: MIT
// INT8 to FP32, exact
// Tensors: t0 = x (i8), t1 = y (f32). Index space: elementwise (README).
.include "types.inc"

        cast_widen4 cast_i8_f32, vcvt.f32.i8, i8, f32, "doc=INT8 to FP32, exact"
