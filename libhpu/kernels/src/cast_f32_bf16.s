// SPDX-License-Identifier: MIT
// FP32 to BF16, round to nearest even
// Tensors: t0 = x (f32), t1 = y (bf16). Index space: elementwise (README).
.kernel cast_f32_bf16
.tensors 2
.index_dims 4
.tensor 0, f32
.tensor 1, bf16
.meta "doc=FP32 to BF16, round to nearest even"
.include "ew.inc"

        ew_cvt_narrow vcvt.bf16.f32, f32, bf16
