// SPDX-License-Identifier: MIT
// out[c, ...] = x[c, ...] + b[c] on BF16: add_bf16 with b [C] broadcast over dims 1-3
// Tensors: t0 = x, t1 = b, t2 = out. Index space: elementwise (README).
.macro body
        vadd.bf16 v2, v0, v1
.endm
.include "types.inc"

        binop_kernel bias_add_bf16, bf16, BF16_LANES, "doc=out[c, ...] = x[c, ...] + b[c] on BF16: add_bf16 with b [C] broadcast over dims 1-3"
