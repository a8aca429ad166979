// SPDX-License-Identifier: MIT
// UINT8 (bool) to int64: zero-extended into a low and a high word
// Tensors: t0 = x (u8, up to 4-D, any strides), t1 = y, the int64 tensor as INT32 [N0, N1, N2, N3, 2]
// (int64 strides doubled, dimension 4 the word: low, high). Index space: elementwise over x (README).
.include "types.inc"

        widen64_kernel widen_u8_i64, u8, I8_LANES, 4, w64_u8, w64_zero, "doc=UINT8 (bool) to int64: zero-extended into a low and a high word"
