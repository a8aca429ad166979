// SPDX-License-Identifier: MIT
// y = the low 16 bits of scalar 0 in every element (any 16-bit type, launched as u16)
// Tensors: t0 = y (any strides); scalar 0 = the bits. Index space: the data kernels' (README).
.include "data.inc"

        fill_kernel fill_b16, u16, BF16_LANES, "doc=y = the low 16 bits of scalar 0 in every element (any 16-bit type, launched as u16)"
