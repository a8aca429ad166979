// SPDX-License-Identifier: MIT
// y = (u >= p) ? x * scale : 0, u uniform in [0, 1) from the core's RNG
// (draw n of a member for its n-th vector of 64 elements). Applied to dy
// with the same seed and shape it is also the gradient.
// Tensors: t0 = x, t1 = y; scalars (FP32): 0 p, 1 scale = 1 / (1 - p).
// Index space: elementwise (README); all tensors dense and of one shape.
.kernel dropout_f32
.tensors 2
.scalars 2
.index_dims 4
.tensor 0, f32
.tensor 1, f32
.meta "doc=y = (u >= p) ? x * scale : 0, u uniform in [0, 1) from the core's RNG"
.include "ew.inc"

        ew_base
        ldarg s8, 0
        ldarg s9, 1
        mov s0, EW_ELEMS / F32_LANES
step:
        ld.t.f32 v0, t0, i0 ; vrandu.f32 v1
        vcmp.ge.f32 vp1, v1, s8
        vmul.f32 v0, v0, s9
        (!vp1) vmov.f32 v0, 0.0
        iadd i0, i0, 0, F32_LANES ; st.t.f32 t1, i0, v0
        loop s0, step
        halt
