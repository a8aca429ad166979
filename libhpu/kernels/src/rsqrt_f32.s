// SPDX-License-Identifier: MIT
// y = 1 / sqrt(x) on FP32
// Tensors: t0 = x, t1 = y. Index space: elementwise (README).
.include "math.inc"

        unary_header rsqrt_f32, f32, 0, "doc=y = 1 / sqrt(x) on FP32"
        ew1_with f32, F32_LANES, no_args, rsqrt_body
