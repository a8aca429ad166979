// SPDX-License-Identifier: MIT
// y = mean + std z, z standard normal by Box-Muller from two RNG draws per 64 elements, rounded to BF16
// Tensors: t0 = y; scalars (FP32): 0 mean, 1 std. Index space: elementwise (README); seed = the launch's.
.include "rand.inc"

        rand_header normal_bf16, bf16, "doc=y = mean + std z, z standard normal by Box-Muller from two RNG draws per 64 elements"
        rand_bf16 normal_consts, normal_slice
