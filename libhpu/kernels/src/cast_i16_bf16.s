// SPDX-License-Identifier: MIT
// INT16 to BF16, round to nearest even (one rounding)
// Tensors: t0 = x (i16), t1 = y (bf16). Index space: elementwise (README).
.include "types.inc"

        cast_same cast_i16_bf16, vcvt.bf16.i16, i16, bf16, I16_LANES, "doc=INT16 to BF16, round to nearest even (one rounding)"
