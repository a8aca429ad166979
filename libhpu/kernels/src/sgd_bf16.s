// SPDX-License-Identifier: MIT
// SGD step on BF16 parameters, computed in FP32: g' = g + wd * w;
// w = w - lr * g' (each fused), w rounded to BF16 once.
// Tensors: t0 = w (bf16, updated), t1 = g (bf16); scalars: 0 lr, 1 wd (FP32).
// Index space: elementwise (README); all tensors dense and of one shape.
.kernel sgd_bf16
.tensors 2
.scalars 2
.index_dims 4
.tensor 0, bf16
.tensor 1, bf16
.meta "doc=SGD step on BF16 parameters, computed in FP32: g' = g + wd * w;"
.include "opt.inc"

.macro half P
        vcvt.f32.bf16 v0, v20, \P
        vcvt.f32.bf16 v1, v21, \P
        sgd_step
        vcvt.bf16.f32 v24, v0, \P
.endm

        ew_base
        sgd_args
        mov s0, EW_ELEMS / BF16_LANES
step:
        ld.t.bf16 v20, t0, i0
        ld.t.bf16 v21, t1, i0
        half 0
        half 1
        iadd i0, i0, 0, BF16_LANES ; st.t.bf16 t0, i0, v24
        loop s0, step
        halt
