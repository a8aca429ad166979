// SPDX-License-Identifier: MIT
// FP32 to BF16, round to nearest even
// Tensors: t0 = x (f32), t1 = y (bf16). Index space: elementwise (README).
.include "types.inc"

        cast_narrow2 cast_f32_bf16, vcvt.bf16.f32, f32, bf16, F32_LANES, "doc=FP32 to BF16, round to nearest even"
