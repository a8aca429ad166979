// SPDX-License-Identifier: MIT
// y = mean + std z, z standard normal by Box-Muller from two RNG draws per 64 elements
// Tensors: t0 = y; scalars (FP32): 0 mean, 1 std. Index space: elementwise (README); seed = the launch's.
.include "rand.inc"

        rand_header normal_f32, f32, "doc=y = mean + std z, z standard normal by Box-Muller from two RNG draws per 64 elements"
        rand_f32 normal_consts, normal_slice
