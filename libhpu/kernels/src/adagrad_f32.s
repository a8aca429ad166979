// SPDX-License-Identifier: MIT
// Adagrad step: g' = g + wd * w; sum = sum + g' * g';
// w = w - lr * g' / (sqrt(sum) + eps) (fused where written so)
// Tensors: t0 = w, t1 = g, t2 = sum (w and sum updated);
// scalars (FP32): 0 lr, 1 eps, 2 wd.
// Index space: elementwise (README); all tensors dense and of one shape.
.kernel adagrad_f32
.tensors 3
.scalars 3
.index_dims 4
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.meta "doc=Adagrad step: g' = g + wd * w; sum = sum + g' * g';"
.include "opt.inc"

        ew_base
        adagrad_args
        mov s0, EW_ELEMS / F32_LANES
step:
        ld.t.f32 v0, t0, i0
        ld.t.f32 v1, t1, i0
        ld.t.f32 v2, t2, i0 ; vmac.f32 v1, v0, s10
        vmac.f32 v2, v1, v1
        vsqrt.f32 v3, v2 ; st.t.f32 t2, i0, v2
        vadd.f32 v3, v3, s9
        vdiv.f32 v3, v1, v3
        vmac.f32 v0, v3, s12
        iadd i0, i0, 0, F32_LANES ; st.t.f32 t0, i0, v0
        loop s0, step
        halt
