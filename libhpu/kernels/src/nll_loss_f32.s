// SPDX-License-Identifier: MIT
// negative log-likelihood per row from log-probabilities: loss[r] = -x[label[r], r], weight[r] = 1;
// both 0 where label[r] = ignore_index. Sums of loss and weight give reduction 'sum' and 'mean'.
// Tensors: t0 = x [C, R1, R2], t1 = labels i32 [1, R1, R2], t2 = loss f32 [1, R1, R2],
// t3 = weight f32 [1, R1, R2]; scalar 0 = ignore_index (i32). Another label outside [0, C)
// raises TPC_ASSERT with the label. Index space: (1, R1, R2).
.include "loss.inc"

        nll_kernel f32, "doc=negative log-likelihood per row from log-probabilities: loss = -x[label], weight = 1 (0, 0 if ignored)"
