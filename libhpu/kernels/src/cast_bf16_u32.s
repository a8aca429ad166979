// SPDX-License-Identifier: MIT
// BF16 to UINT32 toward zero, saturating, NaN to 0
// Tensors: t0 = x (bf16), t1 = y (u32). Index space: elementwise (README).
.include "types.inc"

        cast_widen2 cast_bf16_u32, vcvt.u32.bf16.rz, bf16, u32, I16_LANES, "doc=BF16 to UINT32 toward zero, saturating, NaN to 0"
