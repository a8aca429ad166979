// SPDX-License-Identifier: MIT
// gradient of the negative log-likelihood: dx[:, r] = 0 but dx[label[r], r] = -(dy[r] scale);
// all 0 where label[r] = ignore_index.
// Tensors: t0 = labels i32 [1, R1, R2], t1 = dy f32 [1, R1, R2] (broadcast: [1] for a reduced loss),
// t2 = dx [C, R1, R2]; scalars 0 = ignore_index (i32), 1 = scale (FP32). Another label outside
// [0, C) raises TPC_ASSERT with the label. Index space: (1, R1, R2).
.include "loss.inc"

        nll_grad_kernel f32, F32_LANES, 6, "doc=gradient of the negative log-likelihood: dx = -(dy scale) at the label, 0 elsewhere"
