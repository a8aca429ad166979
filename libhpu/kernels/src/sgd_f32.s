// SPDX-License-Identifier: MIT
// SGD step: g' = g + wd * w; w = w - lr * g' (each fused)
// Tensors: t0 = w (updated), t1 = g; scalars: 0 lr, 1 wd (FP32).
// Index space: elementwise (README); all tensors dense and of one shape.
.kernel sgd_f32
.tensors 2
.scalars 2
.index_dims 4
.tensor 0, f32
.tensor 1, f32
.meta "doc=SGD step: g' = g + wd * w; w = w - lr * g' (each fused)"
.include "opt.inc"

        ew_base
        sgd_args
        mov s0, EW_ELEMS / F32_LANES
step:
        ld.t.f32 v0, t0, i0
        ld.t.f32 v1, t1, i0
        sgd_step
        iadd i0, i0, 0, F32_LANES ; st.t.f32 t0, i0, v0
        loop s0, step
        halt
