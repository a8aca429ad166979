// SPDX-License-Identifier: MIT
// Adagrad step on BF16 parameters with a BF16 sum of squares (the state in the
// parameter's dtype), computed in FP32 as adagrad_f32; w and sum rounded to BF16
// once, the step uses the unrounded sum.
// Tensors: t0 = w, t1 = g, t2 = sum, all bf16 (w and sum updated);
// scalars (FP32): 0 lr, 1 eps, 2 wd. Index space: elementwise (README); all tensors dense and of one shape.
.kernel adagrad_bf16
.tensors 3
.scalars 3
.index_dims 4
.tensor 0, bf16
.tensor 1, bf16
.tensor 2, bf16
.meta "doc=Adagrad step on BF16 parameters with a BF16 sum of squares (the state in the"
.include "opt.inc"

        opt1_bf16 adagrad_args, adagrad_step
