// SPDX-License-Identifier: MIT
// UINT32 to UINT8, wrapping modulo 2^8 (no saturation)
// Tensors: t0 = x (u32), t1 = y (u8). Index space: elementwise (README).
.include "types.inc"

        cast_narrow4 cast_u32_u8, vcvt.u8.u32, u32, u8, "doc=UINT32 to UINT8, wrapping modulo 2^8 (no saturation)"
