// SPDX-License-Identifier: MIT
// INT32 to int64: the value as a low word and its sign-extended high word
// Tensors: t0 = x (i32, up to 4-D, any strides), t1 = y, the int64 tensor as INT32 [N0, N1, N2, N3, 2]
// (int64 strides doubled, dimension 4 the word: low, high). Index space: elementwise over x (README).
.include "types.inc"

        widen64_kernel widen_i32_i64, i32, F32_LANES, 1, w64_i32, w64_sign, "doc=INT32 to int64: the value as a low word and its sign-extended high word"
