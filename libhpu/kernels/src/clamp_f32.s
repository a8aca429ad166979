// SPDX-License-Identifier: MIT
// y = min(max(x, lo), hi) on FP32; NaN stays NaN, hi wins when lo > hi
// Tensors: t0 = x, t1 = y; scalars (FP32): 0 lo, 1 hi. Index space: elementwise (README).
.include "math.inc"

        unary_header clamp_f32, f32, 2, "doc=y = min(max(x, lo), hi) on FP32"
        ew1_with f32, F32_LANES, args_s8_s9, clamp_body
