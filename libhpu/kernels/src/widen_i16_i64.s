// SPDX-License-Identifier: MIT
// INT16 to int64: sign-extended into a low and a high word
// Tensors: t0 = x (i16, up to 4-D, any strides), t1 = y, the int64 tensor as INT32 [N0, N1, N2, N3, 2]
// (int64 strides doubled, dimension 4 the word: low, high). Index space: elementwise over x (README).
.include "types.inc"

        widen64_kernel widen_i16_i64, i16, I16_LANES, 2, w64_i16, w64_sign, "doc=INT16 to int64: sign-extended into a low and a high word"
