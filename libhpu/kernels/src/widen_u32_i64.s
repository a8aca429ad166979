// SPDX-License-Identifier: MIT
// UINT32 to int64: the value as a low word, high word 0
// Tensors: t0 = x (u32, up to 4-D, any strides), t1 = y, the int64 tensor as INT32 [N0, N1, N2, N3, 2]
// (int64 strides doubled, dimension 4 the word: low, high). Index space: elementwise over x (README).
.include "types.inc"

        widen64_kernel widen_u32_i64, u32, F32_LANES, 1, w64_i32, w64_zero, "doc=UINT32 to int64: the value as a low word, high word 0"
