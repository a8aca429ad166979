// SPDX-License-Identifier: MIT
// FP32 to UINT32 toward zero, saturating, NaN to 0
// Tensors: t0 = x (f32), t1 = y (u32). Index space: elementwise (README).
.include "types.inc"

        cast_same cast_f32_u32, vcvt.u32.f32.rz, f32, u32, F32_LANES, "doc=FP32 to UINT32 toward zero, saturating, NaN to 0"
