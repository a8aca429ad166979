// SPDX-License-Identifier: MIT
// y = -x on FP32: the sign bit flipped, exact for every value
// Tensors: t0 = x, t1 = y. Index space: elementwise (README).
.include "math.inc"

        unary_header neg_f32, f32, 0, "doc=y = -x on FP32 (the sign bit flipped)"
        ew1_with f32, F32_LANES, no_args, neg_b32
