// SPDX-License-Identifier: MIT
// out = index of the first minimum of x over dimension 0 of each row, or
// of the first NaN if the row has one (as numpy and PyTorch)
// Tensors: t0 = x [N, R1, R2] (padding +inf), t1 = out i32 [1, R1, R2]. Index space: (1, R1, R2).
.kernel argmin_f32
.tensors 2
.index_dims 3
.tensor 0, f32
.tensor 1, i32
.meta "doc=out = index of the first minimum of x over dimension 0 of each row, or"
.include "tpclib.inc"

        row_min t0
        row_argmax f32, F32_LANES
