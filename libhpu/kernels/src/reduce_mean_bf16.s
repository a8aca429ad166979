// SPDX-License-Identifier: MIT
// out = mean of x over dimension 0 of each row (sum / N), on BF16 in FP32, rounded once
// Tensors: t0 = x [N, R1, R2] (padding 0), t1 = out [1, R1, R2]. Index space: (1, R1, R2).
.kernel reduce_mean_bf16
.tensors 2
.index_dims 3
.tensor 0, bf16
.tensor 1, bf16
.meta "doc=out = mean of x over dimension 0 of each row (sum / N), on BF16 in FP32, rounded once"
.include "rows_bf16.inc"

        row_sum_bf16 t0
        tsize s4, t0, 0
        cvt.f32.u32 s5, s4
        vdiv.f32 v3, v3, s5
        vext.f32 s3, v3, 0
        halt ; st.ts.bf16 t1, i0, s3
