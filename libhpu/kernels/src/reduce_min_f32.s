// SPDX-License-Identifier: MIT
// out = min of x over dimension 0 of each row (NaN if any is NaN)
// Tensors: t0 = x [N, R1, R2] (padding +inf), t1 = out [1, R1, R2]. Index space: (1, R1, R2).
.kernel reduce_min_f32
.tensors 2
.index_dims 3
.tensor 0, f32
.tensor 1, f32
.meta "doc=out = min of x over dimension 0 of each row (NaN if any is NaN)"
.include "tpclib.inc"

        row_min t0
        vext.f32 s3, v1, 0
        halt ; st.ts.f32 t1, i0, s3
