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

.macro half P
        vcvt.f32.bf16 v0, v20, \P
        vcvt.f32.bf16 v1, v21, \P
        vcvt.f32.bf16 v2, v22, \P
        sgd_momentum_step
        vcvt.bf16.f32 v24, v0, \P
        vcvt.bf16.f32 v25, v4, \P
.endm

        ew_base
        sgd_momentum_args
        mov s0, EW_ELEMS / BF16_LANES
step:
        ld.t.bf16 v20, t0, i0
        ld.t.bf16 v21, t1, i0
        ld.t.bf16 v22, t2, i0
        half 0
        half 1
        st.t.bf16 t2, i0, v25
        iadd i0, i0, 0, BF16_LANES ; st.t.bf16 t0, i0, v24
        loop s0, step
        halt
