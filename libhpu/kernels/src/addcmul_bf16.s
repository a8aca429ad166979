// SPDX-License-Identifier: MIT
// out = self + (value a) b on BF16, computed in FP32, PyTorch's CPU order, unfused; any input broadcast
// Tensors: t0 = self, t1 = a, t2 = b, t3 = out; scalar 0 = value (FP32). Index space: elementwise (README).
.include "math.inc"

        ternary_header addcmul_bf16, bf16, "doc=out = self + value a b on BF16, computed in FP32"
        ew3w_with args_s8, addcmul_body
