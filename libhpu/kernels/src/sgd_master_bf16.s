// SPDX-License-Identifier: MIT
// SGD step on FP32 master weights with a BF16 gradient, as sgd_f32, also
// writing the BF16 copy of the weights (rounded to nearest even).
// Tensors: t0 = w (f32 master, updated), t1 = g (bf16), t2 = w16 (bf16, written);
// scalars: 0 lr, 1 wd (FP32). Index space: elementwise (README); all tensors dense and of one shape.
.kernel sgd_master_bf16
.tensors 3
.scalars 2
.index_dims 4
.tensor 0, f32
.tensor 1, bf16
.tensor 2, bf16
.meta "doc=SGD step on FP32 master weights with a BF16 gradient, as sgd_f32, also"
.include "opt.inc"

.macro half P
        ld.t.f32 v0, t0, i1 ; vcvt.f32.bf16 v1, v21, \P
        sgd_step
        vcvt.bf16.f32 v24, v0, \P ; st.t.f32 t0, i1, v0
        iadd i1, i1, 0, F32_LANES
.endm

        ew_base
        sgd_args
        mov s0, EW_ELEMS / BF16_LANES
step:
        ld.t.bf16 v21, t1, i0 ; imov i1, i0
        half 0
        half 1
        iadd i0, i0, 0, BF16_LANES ; st.t.bf16 t2, i0, v24
        loop s0, step
        halt
