// SPDX-License-Identifier: MIT
// UINT32 to INT16, wrapping modulo 2^16 (no saturation)
// Tensors: t0 = x (u32), t1 = y (i16). Index space: elementwise (README).
.include "types.inc"

        cast_narrow2 cast_u32_i16, vcvt.i16.u32, u32, i16, F32_LANES, "doc=UINT32 to INT16, wrapping modulo 2^16 (no saturation)"
