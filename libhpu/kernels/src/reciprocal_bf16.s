// SPDX-License-Identifier: MIT
// y = 1 / x on BF16, computed in FP32, correctly rounded
// Tensors: t0 = x, t1 = y. Index space: elementwise (README).
.include "math.inc"

        unary_header reciprocal_bf16, bf16, 0, "doc=y = 1 / x on BF16, computed in FP32"
        ew1w_with no_args, reciprocal_body
