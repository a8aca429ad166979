// SPDX-License-Identifier: MIT
// part[m] = the sum of member m's 256 elements of x (elementwise layout), the first launch of
// a whole-tensor sum; reduce_sum_f32 of part [P] (one row) is the second (README, "Whole-tensor sums").
// Tensors: t0 = x (up to 4-D, any strides, padding 0), t1 = part [P], P = the members.
// Index space: elementwise over x.
.kernel sum_partial_f32
.tensors 2
.index_dims 4
.tensor 0, f32
.tensor 1, f32
.meta "doc=part[m] = the sum of member m's 256 elements of x; then reduce_sum_f32 of part"
.include "tpclib.inc"

        partial_begin F32_LANES
sum:
        ld.t.f32 v0, t0, i1 ; iadd i1, i1, 0, F32_LANES
        loop s0, sum ; vadd.f32 v3, v3, v0
        store_partial
