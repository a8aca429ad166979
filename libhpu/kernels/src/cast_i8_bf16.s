// SPDX-License-Identifier: MIT
// INT8 to BF16, exact
// Tensors: t0 = x (i8), t1 = y (bf16). Index space: elementwise (README).
.include "types.inc"

        cast_widen2 cast_i8_bf16, vcvt.bf16.i8, i8, bf16, I8_LANES, "doc=INT8 to BF16, exact"
