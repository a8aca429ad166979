// SPDX-License-Identifier: MIT
// UINT32 to FP32, round to nearest even
// Tensors: t0 = x (u32), t1 = y (f32). Index space: elementwise (README).
.include "types.inc"

        cast_same cast_u32_f32, vcvt.f32.u32, u32, f32, F32_LANES, "doc=UINT32 to FP32, round to nearest even"
