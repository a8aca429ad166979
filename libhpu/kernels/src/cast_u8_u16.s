// SPDX-License-Identifier: MIT
// UINT8 to UINT16, exact
// Tensors: t0 = x (u8), t1 = y (u16). Index space: elementwise (README).
.include "types.inc"

        cast_widen2 cast_u8_u16, vcvt.u16.u8, u8, u16, I8_LANES, "doc=UINT8 to UINT16, exact"
