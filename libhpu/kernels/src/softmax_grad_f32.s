// SPDX-License-Identifier: MIT
// dx = y * (dy - sum(dy * y)) over dimension 0 of each row
// Tensors: t0 = y (softmax output), t1 = dy, t2 = dx, all [N, R1, R2], padding 0.
.kernel softmax_grad_f32
.tensors 3
.index_dims 3
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.meta "doc=dx = y * (dy - sum(dy * y)) over dimension 0 of each row"
.include "tpclib.inc"

        iid i0
        row_vectors_f32 s1, t0
        mov s2, s1 ; vmov.f32 v3, 0.0
        imov i1, i0
dot:
        ld.t.f32 v0, t0, i1
        ld.t.f32 v1, t1, i1 ; iadd i1, i1, 0, F32_LANES
        loop s2, dot ; vmac.f32 v3, v0, v1
        mov s2, s1 ; vredsum.f32 v3, v3
        imov i1, i0
norm:
        ld.t.f32 v0, t0, i1
        ld.t.f32 v1, t1, i1
        vsub.f32 v1, v1, v3
        vmul.f32 v2, v0, v1
        iadd i1, i1, 0, F32_LANES ; st.t.f32 t2, i1, v2
        loop s2, norm
        halt
