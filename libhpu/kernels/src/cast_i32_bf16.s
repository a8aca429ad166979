// SPDX-License-Identifier: MIT
// INT32 to BF16, round to nearest even (one rounding)
// Tensors: t0 = x (i32), t1 = y (bf16). Index space: elementwise (README).
.kernel cast_i32_bf16
.tensors 2
.index_dims 4
.tensor 0, i32
.tensor 1, bf16
.meta "doc=INT32 to BF16, round to nearest even (one rounding)"
.include "ew.inc"

        ew_cvt_narrow vcvt.bf16.i32, i32, bf16
