// SPDX-License-Identifier: MIT
// BF16 to UINT16 toward zero, saturating, NaN to 0
// Tensors: t0 = x (bf16), t1 = y (u16). Index space: elementwise (README).
.include "types.inc"

        cast_same cast_bf16_u16, vcvt.u16.bf16.rz, bf16, u16, I16_LANES, "doc=BF16 to UINT16 toward zero, saturating, NaN to 0"
