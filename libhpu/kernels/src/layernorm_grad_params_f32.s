// SPDX-License-Identifier: MIT
// Layer norm backward, the parameter gradients: dgamma[c] = sum over rows of
// dy * xhat, dbeta[c] = sum over rows of dy, xhat = (x - mean) * rstd.
// Tensors: t0 = x [N, R], t1 = dy [N, R], t2 = mean [1, R], t3 = rstd [1, R],
// t4 = dgamma [N], t5 = dbeta [N]. Index space: (ceil(N / 64)).
.kernel layernorm_grad_params_f32
.tensors 6
.index_dims 1
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.tensor 3, f32
.tensor 4, f32
.tensor 5, f32
.meta "doc=layer norm backward: dgamma and dbeta (column sums)"
.include "tpclib.inc"

        iid i0
        imul i0, i0, 0, F32_LANES
        tsize s1, t0, 1 ; imov i1, i0 ; vmov.f32 v4, 0.0
        iset i2, i0, 0, 0 ; vmov.f32 v5, 0.0
col:
        ld.t.f32 v0, t0, i1
        ld.t.f32 v1, t1, i1 ; iadd i1, i1, 1, 1
        ld.ts.f32 s2, t2, i2
        ld.ts.f32 s3, t3, i2 ; iadd i2, i2, 1, 1 ; vsub.f32 v0, v0, s2
        vmul.f32 v0, v0, s3
        vmac.f32 v4, v0, v1
        loop s1, col ; vadd.f32 v5, v5, v1
        st.t.f32 t4, i0, v4
        halt ; st.t.f32 t5, i0, v5
