// SPDX-License-Identifier: MIT
// BF16 to INT32 toward zero, saturating, NaN to 0
// Tensors: t0 = x (bf16), t1 = y (i32). Index space: elementwise (README).
.include "types.inc"

        cast_widen2 cast_bf16_i32, vcvt.i32.bf16.rz, bf16, i32, BF16_LANES, "doc=BF16 to INT32 toward zero, saturating, NaN to 0"
