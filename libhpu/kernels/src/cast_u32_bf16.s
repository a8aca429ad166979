// SPDX-License-Identifier: MIT
// UINT32 to BF16, round to nearest even (one rounding)
// Tensors: t0 = x (u32), t1 = y (bf16). Index space: elementwise (README).
.include "types.inc"

        cast_narrow2 cast_u32_bf16, vcvt.bf16.u32, u32, bf16, F32_LANES, "doc=UINT32 to BF16, round to nearest even (one rounding)"
