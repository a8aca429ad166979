// SPDX-License-Identifier: MIT
// out = cond ? a : b, 1-byte elements (launched as u8: bool, i8, u8), cond u8 (nonzero: true), all broadcast. Tensors: t0 = cond, t1 = a, t2 = b, t3 = out.
.include "cmp.inc"

        where_kernel where_b8, u8, 256, u8, 1, "doc=out = cond ? a : b, 1-byte elements, cond u8 (nonzero: true), all broadcast"
