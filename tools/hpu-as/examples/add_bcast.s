// SPDX-License-Identifier: MIT
// out[x, y] = a[x, y] + b[x, 0]: FP32 add with b broadcast along dim 1.
// Tensors: t0 = a [X, Y], t1 = b [X, 1], t2 = out [X, Y].
// Index space: (ceil(X / 256), Y); each member adds 4 vectors of 64 lanes
// of one row. Lanes past X read a's and b's padding and are not stored.
.kernel add_bcast_f32
.tensors 3
.index_dims 2
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.meta "doc=elementwise add, b broadcast in dim 1"
.include "tpc.inc"

.set VECS, 4

        member_base i0, 0, F32_LANES * VECS     // (x0, y, 0, 0, 0)
        iset i1, i0, 1, 0                       // b's coordinate: (x0, 0, ...)
        mov s0, VECS
next:
        ld.t.f32 v0, t0, i0
        ld.t.f32 v1, t1, i1 ; iadd i1, i1, 0, F32_LANES   // the load reads i1 before the iadd writes it
        vadd.f32 v2, v0, v1
        iadd i0, i0, 0, F32_LANES ; st.t.f32 t2, i0, v2   // so does the store
        loop s0, next
        halt
