// SPDX-License-Identifier: MIT
// UINT16 to BF16, round to nearest even (one rounding)
// Tensors: t0 = x (u16), t1 = y (bf16). Index space: elementwise (README).
.include "types.inc"

        cast_same cast_u16_bf16, vcvt.bf16.u16, u16, bf16, I16_LANES, "doc=UINT16 to BF16, round to nearest even (one rounding)"
