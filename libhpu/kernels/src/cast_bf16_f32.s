// SPDX-License-Identifier: MIT
// BF16 to FP32, exact
// Tensors: t0 = x (bf16), t1 = y (f32). Index space: elementwise (README).
.kernel cast_bf16_f32
.tensors 2
.index_dims 4
.tensor 0, bf16
.tensor 1, f32
.meta "doc=BF16 to FP32, exact"
.include "ew.inc"

        ew_cvt_widen vcvt.f32.bf16, bf16, f32
