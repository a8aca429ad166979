// SPDX-License-Identifier: MIT
// out (bool, u8 0/1) = a >= b on UINT16, broadcast. Tensors: t0 = a, t1 = b, t2 = out u8. Index space: elementwise.
.include "cmp.inc"

        cmp_kernel ge_u16, ge, u16, BF16_LANES, i16, 2, "doc=out (bool, u8 0/1) = a >= b on UINT16, either input broadcast"
