// SPDX-License-Identifier: MIT
// INT32 to BF16, round to nearest even (one rounding)
// Tensors: t0 = x (i32), t1 = y (bf16). Index space: elementwise (README).
.include "types.inc"

        cast_narrow2 cast_i32_bf16, vcvt.bf16.i32, i32, bf16, F32_LANES, "doc=INT32 to BF16, round to nearest even (one rounding)"
