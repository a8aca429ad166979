// SPDX-License-Identifier: MIT
// y = the low 32 bits of scalar 0 in every element (any 32-bit type, launched as u32)
// Tensors: t0 = y (any strides); scalar 0 = the bits. Index space: the data kernels' (README).
.include "data.inc"

        fill_kernel fill_b32, u32, F32_LANES, "doc=y = the low 32 bits of scalar 0 in every element (any 32-bit type, launched as u32)"
