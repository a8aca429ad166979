// SPDX-License-Identifier: MIT
// INT8 to UINT32, wrapping modulo 2^32 (no saturation)
// Tensors: t0 = x (i8), t1 = y (u32). Index space: elementwise (README).
.include "types.inc"

        cast_widen4 cast_i8_u32, vcvt.u32.i8, i8, u32, "doc=INT8 to UINT32, wrapping modulo 2^32 (no saturation)"
