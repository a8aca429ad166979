// SPDX-License-Identifier: MIT
// sum_partial_f32 on BF16 x, summed in FP32: part [P] is FP32 (reduce_sum_f32 of it next, then
// cast_f32_bf16 for a BF16 sum). Tensors and index space as sum_partial_f32 (README).
.kernel sum_partial_bf16
.tensors 2
.index_dims 4
.tensor 0, bf16
.tensor 1, f32
.meta "doc=part[m] = the FP32 sum of member m's 256 elements of BF16 x"
.include "tpclib.inc"

        partial_begin BF16_LANES
sum:
        ld.t.bf16 v20, t0, i1 ; iadd i1, i1, 0, BF16_LANES
        vcvt.f32.bf16 v0, v20, 0
        vadd.f32 v3, v3, v0
        vcvt.f32.bf16 v0, v20, 1
        loop s0, sum ; vadd.f32 v3, v3, v0
        store_partial
