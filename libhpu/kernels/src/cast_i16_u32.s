// SPDX-License-Identifier: MIT
// INT16 to UINT32, wrapping modulo 2^32 (no saturation)
// Tensors: t0 = x (i16), t1 = y (u32). Index space: elementwise (README).
.include "types.inc"

        cast_widen2 cast_i16_u32, vcvt.u32.i16, i16, u32, I16_LANES, "doc=INT16 to UINT32, wrapping modulo 2^32 (no saturation)"
