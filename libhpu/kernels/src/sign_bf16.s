// SPDX-License-Identifier: MIT
// y = sign(x) on BF16, computed in FP32: (x > 0) - (x < 0), so +0 for +-0 and NaN (PyTorch's)
// Tensors: t0 = x, t1 = y. Index space: elementwise (README).
.include "math.inc"

        unary_header sign_bf16, bf16, 0, "doc=y = sign(x) on BF16, computed in FP32: +-1, +0 for zeros and NaN"
        ew1w_with no_args, sign_body
