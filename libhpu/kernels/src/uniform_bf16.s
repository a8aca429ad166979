// SPDX-License-Identifier: MIT
// y = from + u (to - from), u uniform in [0, 1) from the core's RNG (one draw per 64 elements), rounded to BF16
// Tensors: t0 = y; scalars (FP32): 0 from, 1 to. Index space: elementwise (README); seed = the launch's.
.include "rand.inc"

        rand_header uniform_bf16, bf16, "doc=y = from + u (to - from), u uniform in [0, 1) from the core's RNG"
        rand_bf16 uniform_consts, uniform_slice
