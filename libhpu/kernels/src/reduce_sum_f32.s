// SPDX-License-Identifier: MIT
// out = sum of x over dimension 0 of each row
// Tensors: t0 = x [N, R1, R2] (padding 0), t1 = out [1, R1, R2]. Index space: (1, R1, R2).
.kernel reduce_sum_f32
.tensors 2
.index_dims 3
.tensor 0, f32
.tensor 1, f32
.meta "doc=out = sum of x over dimension 0 of each row"
.include "tpclib.inc"

        row_sum t0
        vext.f32 s3, v3, 0
        halt ; st.ts.f32 t1, i0, s3
