// SPDX-License-Identifier: MIT
// nll_loss_grad_f32 with a BF16 dx: -(dy scale) rounded to nearest even once.
// Tensors, scalars, index space and asserts: as the FP32 kernel (README).
.include "loss.inc"

        nll_grad_kernel bf16, BF16_LANES, 7, "doc=gradient of the negative log-likelihood: dx = -(dy scale) at the label, 0 elsewhere"
