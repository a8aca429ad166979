// SPDX-License-Identifier: MIT
// dx = dy - exp(y) * sum(dy) over dimension 0 of each row
// Tensors: t0 = y (log-softmax output), t1 = dy (padding 0), t2 = dx, all [N, R1, R2].
.kernel log_softmax_grad_f32
.tensors 3
.index_dims 3
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.meta "doc=dx = dy - exp(y) * sum(dy) over dimension 0 of each row"
.include "tpclib.inc"

        row_sum t1
        mov s2, s1
        imov i1, i0
norm:
        ld.t.f32 v0, t0, i1
        ld.t.f32 v1, t1, i1
        vexp.f32 v0, v0
        vmul.f32 v0, v0, v3
        vsub.f32 v2, v1, v0
        iadd i1, i1, 0, F32_LANES ; st.t.f32 t2, i1, v2
        loop s2, norm
        halt
