// SPDX-License-Identifier: MIT
// y = e^x on BF16, computed in FP32
// Tensors: t0 = x, t1 = y. Index space: elementwise (README).
.include "math.inc"

        unary_header exp_bf16, bf16, 0, "doc=y = e^x on BF16, computed in FP32"
        ew1w_with no_args, exp_body
