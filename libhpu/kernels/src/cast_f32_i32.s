// SPDX-License-Identifier: MIT
// FP32 to INT32 toward zero, saturating, NaN to 0
// Tensors: t0 = x (f32), t1 = y (i32). Index space: elementwise (README).
.kernel cast_f32_i32
.tensors 2
.index_dims 4
.tensor 0, f32
.tensor 1, i32
.meta "doc=FP32 to INT32 toward zero, saturating, NaN to 0"
.include "ew.inc"

        ew_cvt_same vcvt.i32.f32.rz, f32, i32
