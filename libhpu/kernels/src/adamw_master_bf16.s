// SPDX-License-Identifier: MIT
// AdamW step on FP32 master weights and moments with a BF16 gradient, as
// adamw_f32, also writing the BF16 copy of the weights (rounded to nearest even).
// Tensors: t0 = w (f32 master), t1 = g (bf16), t2 = m, t3 = v (f32), t4 = w16 (bf16, written);
// w, m, v updated; scalars (FP32): 0 lr, 1 b1, 2 b2, 3 eps, 4 wd, 5 c1, 6 c2 (as adamw_f32).
// Index space: elementwise (README); all tensors dense and of one shape.
.kernel adamw_master_bf16
.tensors 5
.scalars 7
.index_dims 4
.tensor 0, f32
.tensor 1, bf16
.tensor 2, f32
.tensor 3, f32
.tensor 4, bf16
.meta "doc=AdamW step on FP32 master weights and moments with a BF16 gradient, as"
.include "opt.inc"

.macro half P
        ld.t.f32 v0, t0, i1 ; vcvt.f32.bf16 v1, v21, \P
        ld.t.f32 v2, t2, i1
        ld.t.f32 v3, t3, i1
        adamw_step
        vcvt.bf16.f32 v24, v0, \P ; st.t.f32 t0, i1, v0
        st.t.f32 t2, i1, v4
        iadd i1, i1, 0, F32_LANES ; st.t.f32 t3, i1, v5
.endm

        ew_base
        adamw_args
        mov s0, EW_ELEMS / BF16_LANES
step:
        ld.t.bf16 v21, t1, i0 ; imov i1, i0
        half 0
        half 1
        iadd i0, i0, 0, BF16_LANES ; st.t.bf16 t4, i0, v24
        loop s0, step
        halt
