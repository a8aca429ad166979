// SPDX-License-Identifier: MIT
// abs_f32 on BF16 bits (exact, as there); tensors and index space as there (README).
.include "math.inc"

        unary_header abs_bf16, bf16, 0, "doc=y = |x| on BF16 (the sign bit cleared)"
        ew1_with bf16, BF16_LANES, no_args, abs_b16
