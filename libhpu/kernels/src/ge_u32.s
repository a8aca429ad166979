// SPDX-License-Identifier: MIT
// out (bool, u8 0/1) = a >= b on UINT32, broadcast. Tensors: t0 = a, t1 = b, t2 = out u8. Index space: elementwise.
.include "cmp.inc"

        cmp_kernel ge_u32, ge, u32, F32_LANES, i32, 4, "doc=out (bool, u8 0/1) = a >= b on UINT32, either input broadcast"
