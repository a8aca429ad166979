// SPDX-License-Identifier: MIT
// Adagrad step on FP32 master weights and sum of squares with a BF16 gradient,
// as adagrad_f32, also writing the BF16 copy of the weights.
// Tensors: t0 = w (f32 master), t1 = g (bf16), t2 = sum (f32), t3 = w16 (bf16, written);
// w and sum updated; scalars (FP32): 0 lr, 1 eps, 2 wd.
// Index space: elementwise (README); all tensors dense and of one shape.
.kernel adagrad_master_bf16
.tensors 4
.scalars 3
.index_dims 4
.tensor 0, f32
.tensor 1, bf16
.tensor 2, f32
.tensor 3, bf16
.meta "doc=Adagrad step on FP32 master weights and sum of squares with a BF16 gradient,"
.include "opt.inc"

        opt1_master_bf16 adagrad_args, adagrad_step
