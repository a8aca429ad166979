// SPDX-License-Identifier: MIT
// y = ln x on BF16, computed in FP32 (-inf at +-0, NaN below 0)
// Tensors: t0 = x, t1 = y. Index space: elementwise (README).
.include "math.inc"

        unary_header log_bf16, bf16, 0, "doc=y = ln x on BF16, computed in FP32"
        ew1w_with no_args, log_body
