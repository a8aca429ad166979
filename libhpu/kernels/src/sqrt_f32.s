// SPDX-License-Identifier: MIT
// y = sqrt(x) on FP32, correctly rounded
// Tensors: t0 = x, t1 = y. Index space: elementwise (README).
.include "math.inc"

        unary_header sqrt_f32, f32, 0, "doc=y = sqrt(x) on FP32"
        ew1_with f32, F32_LANES, no_args, sqrt_body
