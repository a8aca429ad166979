// SPDX-License-Identifier: MIT
// FP32 to INT8 toward zero, saturating, NaN to 0
// Tensors: t0 = x (f32), t1 = y (i8). Index space: elementwise (README).
.include "types.inc"

        cast_narrow4 cast_f32_i8, vcvt.i8.f32.rz, f32, i8, "doc=FP32 to INT8 toward zero, saturating, NaN to 0"
