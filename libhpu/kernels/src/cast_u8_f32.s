// SPDX-License-Identifier: MIT
// UINT8 to FP32, exact
// Tensors: t0 = x (u8), t1 = y (f32). Index space: elementwise (README).
.include "types.inc"

        cast_widen4 cast_u8_f32, vcvt.f32.u8, u8, f32, "doc=UINT8 to FP32, exact"
