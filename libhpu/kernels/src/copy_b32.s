// SPDX-License-Identifier: MIT
// y = x, 4-byte elements (any 32-bit type, launched as u32), x broadcast to y's shape
// Tensors: t0 = x, t1 = y (any strides). Index space: the data kernels' (README).
.include "data.inc"

        copy_kernel copy_b32, u32, F32_LANES, "doc=y = x, 4-byte elements (any 32-bit type, launched as u32), x broadcast to y's shape"
