// SPDX-License-Identifier: MIT
// Batch norm 2-D backward on BF16: batchnorm_grad_f32 on the widened x and
// dy (FP32 sums, FP32 dgamma and dbeta bit for bit batchnorm_grad_f32's),
// dx rounded once to BF16.
// Tensors: t0 = x bf16, t1 = dy bf16 [W, H, C, N] (padding 0), t2 = mean,
// t3 = rstd, t4 = gamma (f32 [C]), t5 = dx bf16, t6 = dgamma, t7 = dbeta
// (f32 [C]). Index space: (C).
.kernel batchnorm_grad_bf16
.tensors 8
.index_dims 1
.tensor 0, bf16
.tensor 1, bf16
.tensor 2, f32
.tensor 3, f32
.tensor 4, f32
.tensor 5, bf16
.tensor 6, f32
.tensor 7, f32
.meta "doc=batch norm 2-D backward on BF16: FP32 sums, dx rounded once"
.include "bn.inc"

        bn_backward bf16, widen_bf16, st_bf16
