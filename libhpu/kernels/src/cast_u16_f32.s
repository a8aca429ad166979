// SPDX-License-Identifier: MIT
// UINT16 to FP32, exact
// Tensors: t0 = x (u16), t1 = y (f32). Index space: elementwise (README).
.include "types.inc"

        cast_widen2 cast_u16_f32, vcvt.f32.u16, u16, f32, I16_LANES, "doc=UINT16 to FP32, exact"
