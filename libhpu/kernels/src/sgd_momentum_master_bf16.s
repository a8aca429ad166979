// SPDX-License-Identifier: MIT
// SGD with momentum on FP32 master weights and buffer with a BF16 gradient,
// as sgd_momentum_f32, also writing the BF16 copy of the weights.
// Tensors: t0 = w (f32 master), t1 = g (bf16), t2 = buf (f32), t3 = w16 (bf16, written);
// w and buf updated; scalars: 0 lr, 1 mu, 2 wd (FP32), 3 nesterov (0 or 1).
// Index space: elementwise (README); all tensors dense and of one shape.
.kernel sgd_momentum_master_bf16
.tensors 4
.scalars 4
.index_dims 4
.tensor 0, f32
.tensor 1, bf16
.tensor 2, f32
.tensor 3, bf16
.meta "doc=SGD with momentum on FP32 master weights and buffer with a BF16 gradient,"
.include "opt.inc"

        opt1_master_bf16 sgd_momentum_args, sgd_momentum_step
