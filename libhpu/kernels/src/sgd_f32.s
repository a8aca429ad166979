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
.include "ew.inc"

        ew_base
        ldarg s8, 0
        ldarg s9, 1 ; mul.f32 s10, s8, -1.0
        mov s0, EW_ELEMS / F32_LANES
step:
        ld.t.f32 v0, t0, i0
        ld.t.f32 v1, t1, i0
        vmac.f32 v1, v0, s9
        vmac.f32 v0, v1, s10
        iadd i0, i0, 0, F32_LANES ; st.t.f32 t0, i0, v0
        loop s0, step
        halt
