// SPDX-License-Identifier: MIT
// y = e^x on FP32
// Tensors: t0 = x, t1 = y. Index space: elementwise (README).
.include "math.inc"

        unary_header exp_f32, f32, 0, "doc=y = e^x on FP32"
        ew1_with f32, F32_LANES, no_args, exp_body
