// SPDX-License-Identifier: MIT
// INT32 to FP32, round to nearest even
// Tensors: t0 = x (i32), t1 = y (f32). Index space: elementwise (README).
.kernel cast_i32_f32
.tensors 2
.index_dims 4
.tensor 0, i32
.tensor 1, f32
.meta "doc=INT32 to FP32, round to nearest even"
.include "ew.inc"

        ew_cvt_same vcvt.f32.i32, i32, f32
