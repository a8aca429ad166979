// SPDX-License-Identifier: MIT
// out = index of the first minimum of BF16 x over dimension 0 of each row,
// or of the first NaN if the row has one (as numpy and PyTorch)
// Tensors: t0 = x [N, R1, R2] (padding +inf), t1 = out i32 [1, R1, R2]. Index space: (1, R1, R2).
.kernel argmin_bf16
.tensors 2
.index_dims 3
.tensor 0, bf16
.tensor 1, i32
.meta "doc=out = index of the first minimum of BF16 x over dimension 0 of each row,"
.include "rows_bf16.inc"

        row_min_bf16 t0
        row_argmax bf16, BF16_LANES
