// SPDX-License-Identifier: MIT
// INT32 to UINT32, wrapping modulo 2^32 (no saturation)
// Tensors: t0 = x (i32), t1 = y (u32). Index space: elementwise (README).
.include "types.inc"

        cast_same cast_i32_u32, vcvt.u32.i32, i32, u32, F32_LANES, "doc=INT32 to UINT32, wrapping modulo 2^32 (no saturation)"
