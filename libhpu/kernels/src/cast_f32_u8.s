// SPDX-License-Identifier: MIT
// FP32 to UINT8 toward zero, saturating, NaN to 0
// Tensors: t0 = x (f32), t1 = y (u8). Index space: elementwise (README).
.include "types.inc"

        cast_narrow4 cast_f32_u8, vcvt.u8.f32.rz, f32, u8, "doc=FP32 to UINT8 toward zero, saturating, NaN to 0"
