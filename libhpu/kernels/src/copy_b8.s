// SPDX-License-Identifier: MIT
// y = x, 1-byte elements (any 8-bit type, launched as u8), x broadcast to y's shape
// Tensors: t0 = x, t1 = y (any strides). Index space: the data kernels' (README).
.include "data.inc"

        copy_kernel copy_b8, u8, EW_ELEMS, "doc=y = x, 1-byte elements (any 8-bit type, launched as u8), x broadcast to y's shape"
