// SPDX-License-Identifier: MIT
// out = self + (value a) / b on FP32, PyTorch's CPU order, unfused; any input broadcast
// Tensors: t0 = self, t1 = a, t2 = b, t3 = out; scalar 0 = value (FP32). Index space: elementwise (README).
.include "math.inc"

        ternary_header addcdiv_f32, f32, "doc=out = self + value a / b on FP32"
        ew3_with f32, F32_LANES, args_s8, addcdiv_body
