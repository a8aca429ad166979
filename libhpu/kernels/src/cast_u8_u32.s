// SPDX-License-Identifier: MIT
// UINT8 to UINT32, exact
// Tensors: t0 = x (u8), t1 = y (u32). Index space: elementwise (README).
.include "types.inc"

        cast_widen4 cast_u8_u32, vcvt.u32.u8, u8, u32, "doc=UINT8 to UINT32, exact"
