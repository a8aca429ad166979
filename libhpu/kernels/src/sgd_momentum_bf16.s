// SPDX-License-Identifier: MIT
// SGD with momentum on BF16 parameters and a BF16 buffer (PyTorch's default:
// the state in the parameter's dtype), computed in FP32 as sgd_momentum_f32;
// w and buf rounded to BF16 once, the step uses the unrounded buf.
// Tensors: t0 = w, t1 = g, t2 = buf, all bf16 (w and buf updated);
// scalars: 0 lr, 1 mu, 2 wd (FP32), 3 nesterov (0 or 1).
// Index space: elementwise (README); all tensors dense and of one shape.
.kernel sgd_momentum_bf16
.tensors 3
.scalars 4
.index_dims 4
.tensor 0, bf16
.tensor 1, bf16
.tensor 2, bf16
.meta "doc=SGD with momentum on BF16 parameters and a BF16 buffer (PyTorch's default:"
.include "opt.inc"

        opt1_bf16 sgd_momentum_args, sgd_momentum_step
