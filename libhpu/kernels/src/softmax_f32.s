// SPDX-License-Identifier: MIT
// y = softmax(x) over dimension 0 of each row
// Tensors: t0 = x [N, R1, R2] with padding -inf, t1 = y. Index space: (1, R1, R2).
.kernel softmax_f32
.tensors 2
.index_dims 3
.tensor 0, f32
.tensor 1, f32
.meta "doc=y = softmax(x) over dimension 0 of each row"
.include "tpclib.inc"

        row_max t0
        row_sum_exp t0
        mov s2, s1 ; vrcp.f32 v3, v3
        imov i1, i0
norm:
        ld.t.f32 v0, t0, i1
        vsub.f32 v0, v0, v1
        vexp.f32 v0, v0
        vmul.f32 v0, v0, v3
        iadd i1, i1, 0, F32_LANES ; st.t.f32 t1, i1, v0
        loop s2, norm
        halt
