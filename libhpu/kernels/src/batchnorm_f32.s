// SPDX-License-Identifier: MIT
// Batch norm 2-D, training forward, per channel c over N, H, W (M = N H W
// elements): mean, var (biased), rstd = 1 / sqrt(var + eps),
// y = (x - mean) * rstd * gamma + beta; mean and rstd stored for the
// backward; the running statistics updated as PyTorch does,
// r = (1 - momentum) r + momentum s, with the unbiased variance
// (sum of squares / (M - 1)) for running_var. M = 1 raises TPC_ASSERT
// with value 1 (PyTorch refuses it too).
// Tensors: t0 = x [W, H, C, N] (padding 0), t1 = gamma [C], t2 = beta [C],
// t3 = y [W, H, C, N], t4 = mean [C], t5 = rstd [C], t6 = running_mean [C],
// t7 = running_var [C] (both updated); scalars 0 = eps, 1 = momentum (FP32).
// Index space: (C).
.kernel batchnorm_f32
.tensors 8
.scalars 2
.index_dims 1
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.tensor 3, f32
.tensor 4, f32
.tensor 5, f32
.tensor 6, f32
.tensor 7, f32
.meta "doc=batch norm 2-D forward, training: batch statistics, running statistics updated"
.include "bn.inc"

        bn_forward f32, no_widen, st_f32
