// SPDX-License-Identifier: MIT
// y = x, 2-byte elements (any 16-bit type, launched as u16), x broadcast to y's shape
// Tensors: t0 = x, t1 = y (any strides). Index space: the data kernels' (README).
.include "data.inc"

        copy_kernel copy_b16, u16, BF16_LANES, "doc=y = x, 2-byte elements (any 16-bit type, launched as u16), x broadcast to y's shape"
