// SPDX-License-Identifier: MIT
// y = x - max - log(sum(exp(x - max))) over dimension 0 of each row
// Tensors: t0 = x [N, R1, R2] with padding -inf, t1 = y. Index space: (1, R1, R2).
.kernel log_softmax_f32
.tensors 2
.index_dims 3
.tensor 0, f32
.tensor 1, f32
.meta "doc=y = x - max - log(sum(exp(x - max))) over dimension 0 of each row"
.include "tpclib.inc"

        row_max t0
        row_sum_exp t0
        vlog.f32 v3, v3
        mov s2, s1 ; vadd.f32 v3, v3, v1
        imov i1, i0
norm:
        ld.t.f32 v0, t0, i1
        vsub.f32 v0, v0, v3
        iadd i1, i1, 0, F32_LANES ; st.t.f32 t1, i1, v0
        loop s2, norm
        halt
