// SPDX-License-Identifier: MIT
// out (bool, u8 0/1) = a > b on F32, broadcast. Tensors: t0 = a, t1 = b, t2 = out u8. Index space: elementwise.
.include "cmp.inc"

        cmp_kernel gt_f32, gt, f32, F32_LANES, i32, 4, "doc=out (bool, u8 0/1) = a > b on F32, either input broadcast"
