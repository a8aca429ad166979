// SPDX-License-Identifier: MIT
// INT32 to FP32, round to nearest even
// Tensors: t0 = x (i32), t1 = y (f32). Index space: elementwise (README).
.include "types.inc"

        cast_same cast_i32_f32, vcvt.f32.i32, i32, f32, F32_LANES, "doc=INT32 to FP32, round to nearest even"
