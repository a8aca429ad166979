// SPDX-License-Identifier: MIT
// FP32 to INT16 toward zero, saturating, NaN to 0
// Tensors: t0 = x (f32), t1 = y (i16). Index space: elementwise (README).
.include "types.inc"

        cast_narrow2 cast_f32_i16, vcvt.i16.f32.rz, f32, i16, F32_LANES, "doc=FP32 to INT16 toward zero, saturating, NaN to 0"
