// SPDX-License-Identifier: MIT
// y = the low 8 bits of scalar 0 in every element (any 8-bit type, launched as u8)
// Tensors: t0 = y (any strides); scalar 0 = the bits. Index space: the data kernels' (README).
.include "data.inc"

        fill_kernel fill_b8, u8, EW_ELEMS, "doc=y = the low 8 bits of scalar 0 in every element (any 8-bit type, launched as u8)"
