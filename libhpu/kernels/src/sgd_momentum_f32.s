// SPDX-License-Identifier: MIT
// SGD with momentum, optionally Nesterov (PyTorch's rule, dampening 0):
// g' = g + wd * w; buf = mu * buf + g'; d = nesterov ? g' + mu * buf : buf;
// w = w - lr * d (each step fused). The first step starts from buf = 0.
// Tensors: t0 = w, t1 = g, t2 = buf (w and buf updated);
// scalars: 0 lr, 1 mu, 2 wd (FP32), 3 nesterov (0 or 1).
// Index space: elementwise (README); all tensors dense and of one shape.
.kernel sgd_momentum_f32
.tensors 3
.scalars 4
.index_dims 4
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.meta "doc=SGD with momentum, optionally Nesterov (PyTorch's rule, dampening 0):"
.include "opt.inc"

        ew_base
        sgd_momentum_args
        mov s0, EW_ELEMS / F32_LANES
step:
        ld.t.f32 v0, t0, i0
        ld.t.f32 v1, t1, i0
        ld.t.f32 v2, t2, i0 ; vmac.f32 v1, v0, s10
        vmov.f32 v3, v1
        vmac.f32 v3, v2, s9
        (sp1) vmac.f32 v1, v3, s9 ; st.t.f32 t2, i0, v3
        (!sp1) vmov.f32 v1, v3
        vmac.f32 v0, v1, s12
        iadd i0, i0, 0, F32_LANES ; st.t.f32 t0, i0, v0
        loop s0, step
        halt
