// SPDX-License-Identifier: MIT
// UINT8 to BF16, exact
// Tensors: t0 = x (u8), t1 = y (bf16). Index space: elementwise (README).
.include "types.inc"

        cast_widen2 cast_u8_bf16, vcvt.bf16.u8, u8, bf16, I8_LANES, "doc=UINT8 to BF16, exact"
