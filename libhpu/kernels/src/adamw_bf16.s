// SPDX-License-Identifier: MIT
// AdamW step on BF16 parameters with BF16 moments (PyTorch's default: the
// state in the parameter's dtype), computed in FP32 as adamw_f32; w, m and v
// rounded to BF16 once, the step uses the unrounded m and v.
// Tensors: t0 = w, t1 = g, t2 = m, t3 = v, all bf16 (w, m, v updated);
// scalars (FP32): 0 lr, 1 b1, 2 b2, 3 eps, 4 wd, 5 c1, 6 c2 (as adamw_f32).
// Index space: elementwise (README); all tensors dense and of one shape.
.kernel adamw_bf16
.tensors 4
.scalars 7
.index_dims 4
.tensor 0, bf16
.tensor 1, bf16
.tensor 2, bf16
.tensor 3, bf16
.meta "doc=AdamW step on BF16 parameters with BF16 moments (PyTorch's default: the"
.include "opt.inc"

.macro half P
        widen4 \P
        adamw_step
        vcvt.bf16.f32 v24, v0, \P
        vcvt.bf16.f32 v25, v4, \P
        vcvt.bf16.f32 v26, v5, \P
.endm

        ew_base
        adamw_args
        mov s0, EW_ELEMS / BF16_LANES
step:
        load4_bf16
        half 0
        half 1
        st.t.bf16 t2, i0, v25
        st.t.bf16 t3, i0, v26
        iadd i0, i0, 0, BF16_LANES ; st.t.bf16 t0, i0, v24
        loop s0, step
        halt
