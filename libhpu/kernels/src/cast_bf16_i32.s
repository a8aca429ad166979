// SPDX-License-Identifier: MIT
// BF16 to INT32 toward zero, saturating, NaN to 0
// Tensors: t0 = x (bf16), t1 = y (i32). Index space: elementwise (README).
.kernel cast_bf16_i32
.tensors 2
.index_dims 4
.tensor 0, bf16
.tensor 1, i32
.meta "doc=BF16 to INT32 toward zero, saturating, NaN to 0"
.include "ew.inc"

        ew_cvt_widen vcvt.i32.bf16.rz, bf16, i32
