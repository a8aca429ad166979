// SPDX-License-Identifier: MIT
// BF16 to UINT8 toward zero, saturating, NaN to 0
// Tensors: t0 = x (bf16), t1 = y (u8). Index space: elementwise (README).
.include "types.inc"

        cast_narrow2 cast_bf16_u8, vcvt.u8.bf16.rz, bf16, u8, I16_LANES, "doc=BF16 to UINT8 toward zero, saturating, NaN to 0"
