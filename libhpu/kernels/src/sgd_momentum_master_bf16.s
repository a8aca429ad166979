// SPDX-License-Identifier: MIT
// SGD with momentum on FP32 master weights and buffer with a BF16 gradient,
// as sgd_momentum_f32, also writing the BF16 copy of the weights.
// Tensors: t0 = w (f32 master), t1 = g (bf16), t2 = buf (f32), t3 = w16 (bf16, written);
// w and buf updated; scalars: 0 lr, 1 mu, 2 wd (FP32), 3 nesterov (0 or 1).
// Index space: elementwise (README); all tensors dense and of one shape.
.kernel sgd_momentum_master_bf16
.tensors 4
.scalars 4
.index_dims 4
.tensor 0, f32
.tensor 1, bf16
.tensor 2, f32
.tensor 3, bf16
.meta "doc=SGD with momentum on FP32 master weights and buffer with a BF16 gradient,"
.include "opt.inc"

.macro half P
        ld.t.f32 v0, t0, i1 ; vcvt.f32.bf16 v1, v21, \P
        ld.t.f32 v2, t2, i1
        sgd_momentum_step
        vcvt.bf16.f32 v24, v0, \P ; st.t.f32 t0, i1, v0
        iadd i1, i1, 0, F32_LANES ; st.t.f32 t2, i1, v4
.endm

        ew_base
        sgd_momentum_args
        mov s0, EW_ELEMS / BF16_LANES
step:
        ld.t.bf16 v21, t1, i0 ; imov i1, i0
        half 0
        half 1
        iadd i0, i0, 0, BF16_LANES ; st.t.bf16 t3, i0, v24
        loop s0, step
        halt
