// SPDX-License-Identifier: MIT
// UINT32 to INT8, wrapping modulo 2^8 (no saturation)
// Tensors: t0 = x (u32), t1 = y (i8). Index space: elementwise (README).
.include "types.inc"

        cast_narrow4 cast_u32_i8, vcvt.i8.u32, u32, i8, "doc=UINT32 to INT8, wrapping modulo 2^8 (no saturation)"
