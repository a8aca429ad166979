// SPDX-License-Identifier: MIT
// AdamW step (decoupled weight decay): w = w * (1 - lr * wd);
// m = b1 * m + (1 - b1) * g; v = b2 * v + (1 - b2) * g * g;
// w = w - lr * (m * c1) / (sqrt(v * c2) + eps), c1 = 1 / (1 - b1^t) and
// c2 = 1 / (1 - b2^t) the bias corrections the host computes for step t.
// Tensors: t0 = w, t1 = g, t2 = m, t3 = v (w, m, v updated);
// scalars (FP32): 0 lr, 1 b1, 2 b2, 3 eps, 4 wd, 5 c1, 6 c2.
// Index space: elementwise (README); all tensors dense and of one shape.
.kernel adamw_f32
.tensors 4
.scalars 7
.index_dims 4
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.tensor 3, f32
.meta "doc=AdamW step (decoupled weight decay): w = w * (1 - lr * wd);"
.include "opt.inc"

        ew_base
        adamw_args
        mov s0, EW_ELEMS / F32_LANES
step:
        ld.t.f32 v0, t0, i0
        ld.t.f32 v1, t1, i0
        ld.t.f32 v2, t2, i0 ; vmul.f32 v4, v1, s16
        ld.t.f32 v3, t3, i0 ; vmac.f32 v4, v2, s9
        vmul.f32 v5, v1, v1 ; st.t.f32 t2, i0, v4
        vmul.f32 v5, v5, s17
        vmac.f32 v5, v3, s10
        vmul.f32 v6, v5, s14 ; st.t.f32 t3, i0, v5
        vsqrt.f32 v6, v6
        vadd.f32 v6, v6, s11
        vmul.f32 v7, v4, s13
        vdiv.f32 v7, v7, v6
        vmul.f32 v0, v0, s18
        vmac.f32 v0, v7, s19
        iadd i0, i0, 0, F32_LANES ; st.t.f32 t0, i0, v0
        loop s0, step
        halt
