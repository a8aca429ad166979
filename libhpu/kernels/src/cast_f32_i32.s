// SPDX-License-Identifier: MIT
// FP32 to INT32 toward zero, saturating, NaN to 0
// Tensors: t0 = x (f32), t1 = y (i32). Index space: elementwise (README).
.include "types.inc"

        cast_same cast_f32_i32, vcvt.i32.f32.rz, f32, i32, F32_LANES, "doc=FP32 to INT32 toward zero, saturating, NaN to 0"
