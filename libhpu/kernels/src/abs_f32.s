// SPDX-License-Identifier: MIT
// y = |x| on FP32: the sign bit cleared, exact for every value
// Tensors: t0 = x, t1 = y. Index space: elementwise (README).
.include "math.inc"

        unary_header abs_f32, f32, 0, "doc=y = |x| on FP32 (the sign bit cleared)"
        ew1_with f32, F32_LANES, no_args, abs_b32
