// SPDX-License-Identifier: MIT
// FP32 to UINT16 toward zero, saturating, NaN to 0
// Tensors: t0 = x (f32), t1 = y (u16). Index space: elementwise (README).
.include "types.inc"

        cast_narrow2 cast_f32_u16, vcvt.u16.f32.rz, f32, u16, F32_LANES, "doc=FP32 to UINT16 toward zero, saturating, NaN to 0"
