// SPDX-License-Identifier: MIT
// db[c] = sum over r of dy[c, r]: the bias gradient (column sum)
// Tensors: t0 = dy [C, R], t1 = db [C]. Index space: (ceil(C / 64)).
.kernel bias_grad_f32
.tensors 2
.index_dims 1
.tensor 0, f32
.tensor 1, f32
.meta "doc=db[c] = sum over r of dy[c, r]: the bias gradient (column sum)"
.include "tpclib.inc"

        iid i0
        imul i0, i0, 0, F32_LANES
        tsize s1, t0, 1 ; imov i1, i0 ; vmov.f32 v1, 0.0
col:
        ld.t.f32 v0, t0, i1 ; iadd i1, i1, 1, 1
        loop s1, col ; vadd.f32 v1, v1, v0
        halt ; st.t.f32 t1, i0, v1
