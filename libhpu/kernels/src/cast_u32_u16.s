// SPDX-License-Identifier: MIT
// UINT32 to UINT16, wrapping modulo 2^16 (no saturation)
// Tensors: t0 = x (u32), t1 = y (u16). Index space: elementwise (README).
.include "types.inc"

        cast_narrow2 cast_u32_u16, vcvt.u16.u32, u32, u16, F32_LANES, "doc=UINT32 to UINT16, wrapping modulo 2^16 (no saturation)"
