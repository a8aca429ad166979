// SPDX-License-Identifier: MIT
// y = ln x on FP32 (-inf at +-0, NaN below 0)
// Tensors: t0 = x, t1 = y. Index space: elementwise (README).
.include "math.inc"

        unary_header log_f32, f32, 0, "doc=y = ln x on FP32"
        ew1_with f32, F32_LANES, no_args, log_body
