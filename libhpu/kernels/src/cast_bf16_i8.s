// SPDX-License-Identifier: MIT
// BF16 to INT8 toward zero, saturating, NaN to 0
// Tensors: t0 = x (bf16), t1 = y (i8). Index space: elementwise (README).
.include "types.inc"

        cast_narrow2 cast_bf16_i8, vcvt.i8.bf16.rz, bf16, i8, I16_LANES, "doc=BF16 to INT8 toward zero, saturating, NaN to 0"
