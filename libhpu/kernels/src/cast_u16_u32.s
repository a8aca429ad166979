// SPDX-License-Identifier: MIT
// UINT16 to UINT32, exact
// Tensors: t0 = x (u16), t1 = y (u32). Index space: elementwise (README).
.include "types.inc"

        cast_widen2 cast_u16_u32, vcvt.u32.u16, u16, u32, I16_LANES, "doc=UINT16 to UINT32, exact"
