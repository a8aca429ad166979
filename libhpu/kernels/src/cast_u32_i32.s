// SPDX-License-Identifier: MIT
// UINT32 to INT32, wrapping modulo 2^32 (no saturation)
// Tensors: t0 = x (u32), t1 = y (i32). Index space: elementwise (README).
.include "types.inc"

        cast_same cast_u32_i32, vcvt.i32.u32, u32, i32, F32_LANES, "doc=UINT32 to INT32, wrapping modulo 2^32 (no saturation)"
