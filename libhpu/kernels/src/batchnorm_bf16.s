// SPDX-License-Identifier: MIT
// Batch norm 2-D on BF16, training forward: batchnorm_f32 on the widened x
// (statistics in FP32, as PyTorch's CPU kernels and autocast keep them), y
// rounded once to BF16. mean, rstd and the running statistics are FP32 and
// bit for bit batchnorm_f32's on the same values.
// Tensors: t0 = x bf16 [W, H, C, N] (padding 0), t1 = gamma, t2 = beta (f32
// [C]), t3 = y bf16, t4 = mean, t5 = rstd, t6 = running_mean,
// t7 = running_var (f32 [C], the running ones updated); scalars 0 = eps,
// 1 = momentum (FP32). Index space: (C).
.kernel batchnorm_bf16
.tensors 8
.scalars 2
.index_dims 1
.tensor 0, bf16
.tensor 1, f32
.tensor 2, f32
.tensor 3, bf16
.tensor 4, f32
.tensor 5, f32
.tensor 6, f32
.tensor 7, f32
.meta "doc=batch norm 2-D forward on BF16, training: FP32 statistics, running statistics updated"
.include "bn.inc"

        bn_forward bf16, widen_bf16, st_bf16
