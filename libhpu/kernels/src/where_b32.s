// SPDX-License-Identifier: MIT
// out = cond ? a : b, 4-byte elements (launched as u32), cond u8 (nonzero: true), all broadcast. Tensors: t0 = cond, t1 = a, t2 = b, t3 = out.
.include "cmp.inc"

        where_kernel where_b32, u32, F32_LANES, i32, 4, "doc=out = cond ? a : b, 4-byte elements, cond u8 (nonzero: true), all broadcast"
