// SPDX-License-Identifier: MIT
// Batch norm 2-D backward, per channel c over N, H, W (M elements), from
// the forward's stored mean and rstd: xhat = (x - mean) * rstd,
// dbeta = sum dy, dgamma = sum dy * xhat,
// dx = gamma * rstd * (dy - dbeta / M - xhat * dgamma / M).
// Tensors: t0 = x [W, H, C, N], t1 = dy [W, H, C, N] (padding 0),
// t2 = mean [C], t3 = rstd [C], t4 = gamma [C], t5 = dx [W, H, C, N],
// t6 = dgamma [C], t7 = dbeta [C]. Index space: (C).
.kernel batchnorm_grad_f32
.tensors 8
.index_dims 1
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.tensor 3, f32
.tensor 4, f32
.tensor 5, f32
.tensor 6, f32
.tensor 7, f32
.meta "doc=batch norm 2-D backward: dx, dgamma, dbeta"
.include "bn.inc"

        bn_backward f32, no_widen, st_f32
