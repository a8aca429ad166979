// SPDX-License-Identifier: MIT
// y = from + u (to - from), u uniform in [0, 1) from the core's RNG (one draw per 64 elements)
// Tensors: t0 = y; scalars (FP32): 0 from, 1 to. Index space: elementwise (README); seed = the launch's.
.include "rand.inc"

        rand_header uniform_f32, f32, "doc=y = from + u (to - from), u uniform in [0, 1) from the core's RNG"
        rand_f32 uniform_consts, uniform_slice
