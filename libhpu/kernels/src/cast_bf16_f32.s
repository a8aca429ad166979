// SPDX-License-Identifier: MIT
// BF16 to FP32, exact
// Tensors: t0 = x (bf16), t1 = y (f32). Index space: elementwise (README).
.include "types.inc"

        cast_widen2 cast_bf16_f32, vcvt.f32.bf16, bf16, f32, BF16_LANES, "doc=BF16 to FP32, exact"
