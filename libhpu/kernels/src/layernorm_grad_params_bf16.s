// SPDX-License-Identifier: MIT
// Layer norm backward on BF16, the parameter gradients, summed in FP32 and
// rounded to BF16 once: dgamma[c] = sum over rows of dy * xhat, dbeta[c] =
// sum over rows of dy, xhat = (x - mean) * rstd.
// Tensors: t0 = x bf16 [N, R], t1 = dy bf16 [N, R], t2 = mean f32 [1, R], t3 = rstd f32 [1, R],
// t4 = dgamma bf16 [N], t5 = dbeta bf16 [N]. Index space: (ceil(N / 128)).
.kernel layernorm_grad_params_bf16
.tensors 6
.index_dims 1
.tensor 0, bf16
.tensor 1, bf16
.tensor 2, f32
.tensor 3, f32
.tensor 4, bf16
.tensor 5, bf16
.meta "doc=layer norm backward on BF16: dgamma and dbeta (column sums in FP32)"
.include "tpclib.inc"

// columns of half P: dgamma in \DG, dbeta in \DB
.macro col_half P, DG, DB
        vcvt.f32.bf16 v0, v20, \P
        vcvt.f32.bf16 v1, v21, \P
        vsub.f32 v0, v0, s2
        vmul.f32 v0, v0, s3
        vmac.f32 \DG, v0, v1
        vadd.f32 \DB, \DB, v1
.endm

        iid i0
        imul i0, i0, 0, BF16_LANES
        tsize s1, t0, 1 ; imov i1, i0 ; vmov.f32 v4, 0.0
        iset i2, i0, 0, 0 ; vmov.f32 v5, 0.0
        vmov.f32 v6, 0.0
        vmov.f32 v7, 0.0
col:
        ld.t.bf16 v20, t0, i1
        ld.t.bf16 v21, t1, i1 ; iadd i1, i1, 1, 1
        ld.ts.f32 s2, t2, i2
        ld.ts.f32 s3, t3, i2 ; iadd i2, i2, 1, 1
        col_half 0, v4, v5
        col_half 1, v6, v7
        loop s1, col
        vcvt.bf16.f32 v8, v4, 0
        vcvt.bf16.f32 v8, v6, 1
        vcvt.bf16.f32 v9, v5, 0
        vcvt.bf16.f32 v9, v7, 1 ; st.t.bf16 t4, i0, v8
        halt ; st.t.bf16 t5, i0, v9
