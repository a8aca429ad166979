// SPDX-License-Identifier: MIT
// y[:, r] = softmax(x[:, r]): FP32 softmax over dimension 0 of each row.
// Tensors: t0 = x [N, R] with padding value -inf, t1 = y [N, R].
// Index space: (1, R), one member per row. Padding lanes read -inf, so
// they neither win the max nor add to the sum (exp(-inf) = 0).
.kernel softmax_f32
.tensors 2
.index_dims 2
.tensor 0, f32
.tensor 1, f32
.include "tpc.inc"

        iid i0                                  // (0, r, 0, 0, 0)
        vectors_in_dim0 s1, t0, F32_LANES, 6    // s1 = vectors per row
        mov s2, s1 ; vmov.f32 v1, NEG_INF_F32
        imov i1, i0
max_loop:                                       // v1 = lane-wise running max
        ld.t.f32 v0, t0, i1 ; iadd i1, i1, 0, F32_LANES
        loop s2, max_loop ; vmax.f32 v1, v1, v0
        mov s2, s1 ; vredmax.f32 v1, v1         // every lane: the row's max m
        imov i1, i0 ; vmov.f32 v3, 0.0
sum_loop:                                       // v3 = lane-wise sum of exp(x - m)
        ld.t.f32 v0, t0, i1 ; iadd i1, i1, 0, F32_LANES
        vsub.f32 v0, v0, v1
        vexp.f32 v0, v0
        loop s2, sum_loop ; vadd.f32 v3, v3, v0
        mov s2, s1 ; vredsum.f32 v3, v3          // every lane: the sum s
        imov i1, i0 ; vrcp.f32 v3, v3           // 1 / s
norm_loop:
        ld.t.f32 v0, t0, i1
        vsub.f32 v0, v0, v1
        vexp.f32 v0, v0
        vmul.f32 v0, v0, v3
        iadd i1, i1, 0, F32_LANES ; st.t.f32 t1, i1, v0
        loop s2, norm_loop
        halt
