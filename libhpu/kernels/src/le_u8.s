// SPDX-License-Identifier: MIT
// out (bool, u8 0/1) = a <= b on UINT8, broadcast. Tensors: t0 = a, t1 = b, t2 = out u8. Index space: elementwise.
.include "cmp.inc"

        cmp_kernel le_u8, le, u8, 256, u8, 1, "doc=out (bool, u8 0/1) = a <= b on UINT8, either input broadcast"
