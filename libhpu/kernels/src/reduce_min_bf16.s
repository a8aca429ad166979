// SPDX-License-Identifier: MIT
// out = min of x over dimension 0 of each row (NaN if any is NaN), on BF16
// Tensors: t0 = x [N, R1, R2] (padding +inf), t1 = out [1, R1, R2]. Index space: (1, R1, R2).
.kernel reduce_min_bf16
.tensors 2
.index_dims 3
.tensor 0, bf16
.tensor 1, bf16
.meta "doc=out = min of x over dimension 0 of each row (NaN if any is NaN), on BF16"
.include "rows_bf16.inc"

        row_min_bf16 t0
        vext.bf16 s3, v1, 0
        halt ; st.ts.bf16 t1, i0, s3
