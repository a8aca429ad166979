// SPDX-License-Identifier: MIT
// out = cond ? a : b, 2-byte elements (launched as u16), cond u8 (nonzero: true), all broadcast. Tensors: t0 = cond, t1 = a, t2 = b, t3 = out.
.include "cmp.inc"

        where_kernel where_b16, u16, BF16_LANES, i16, 2, "doc=out = cond ? a : b, 2-byte elements, cond u8 (nonzero: true), all broadcast"
