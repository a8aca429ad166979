// SPDX-License-Identifier: MIT
// out[:, n] = table[:, idx[n]]: rows of 4-byte elements gathered by INT32 indices (embedding lookup,
// index_select along dimension 1). Tensors: t0 = table [D, V] (u32: any 4-byte type), t1 = idx i32 [N]
// (any stride: int64 through stride 2), t2 = out [D, N]. An index outside [0, V) raises TPC_ASSERT
// with the index. Index space: (ceil(D / 256), N).
.kernel index_select_b32
.tensors 3
.index_dims 2
.tensor 0, u32
.tensor 1, i32
.tensor 2, u32
.meta "doc=out[:, n] = table[:, idx[n]]: rows of 4-byte elements gathered by INT32 indices"
.include "tpclib.inc"

        ew_base
        iget s10, i0, 1
        iset i3, i3, 0, s10
        ld.ts.i32 s11, t1, i3
        tsize s12, t0, 1
        cmp.lt.u32 sp1, s11, s12
        assert sp1, s11
        imov i1, i0
        iset i1, i1, 1, s11
        mov s0, EW_ELEMS / F32_LANES
gather:
        ld.t.u32 v0, t0, i1 ; iadd i1, i1, 0, F32_LANES
        iadd i0, i0, 0, F32_LANES ; st.t.u32 t2, i0, v0
        loop s0, gather
        halt
