// SPDX-License-Identifier: MIT
// BF16 to INT16 toward zero, saturating, NaN to 0
// Tensors: t0 = x (bf16), t1 = y (i16). Index space: elementwise (README).
.include "types.inc"

        cast_same cast_bf16_i16, vcvt.i16.bf16.rz, bf16, i16, I16_LANES, "doc=BF16 to INT16 toward zero, saturating, NaN to 0"
