// SPDX-License-Identifier: MIT
// nll_loss_f32 on BF16 log-probabilities: the same tensors and scalar, the loss in FP32 (exact).
// Tensors, scalars, index space and asserts: as the FP32 kernel (README).
.include "loss.inc"

        nll_kernel bf16, "doc=negative log-likelihood per row from log-probabilities: loss = -x[label], weight = 1 (0, 0 if ignored)"
