// SPDX-License-Identifier: MIT
// LAMB on BF16 parameters and moments (the state in the parameter's dtype),
// launch 1 of 3: lamb_update_f32's step on the widened w, g, m, v; m and v
// rounded once to BF16 (u uses the unrounded ones); u and the partial
// squared norms FP32, bit for bit lamb_update_f32's on the widened values.
// Launch 2 is reduce_sum_f32 over part's rows, launch 3 lamb_apply_bf16.
// Tensors: t0 = w, t1 = g, t2 = m, t3 = v (bf16 [N]; m, v updated),
// t4 = u f32 [N], t5 = part f32 [P, 2], P = ceil(N / 256); scalars (FP32):
// 0 b1, 1 b2, 2 eps, 3 wd, 4 c1, 5 c2. Index space: (ceil(N / 256)).
.kernel lamb_update_bf16
.tensors 6
.scalars 6
.index_dims 1
.tensor 0, bf16
.tensor 1, bf16
.tensor 2, bf16
.tensor 3, bf16
.tensor 4, f32
.tensor 5, f32
.meta "doc=LAMB step 1 on BF16 parameters and moments: FP32 step, u and partial norms FP32"
.include "opt.inc"

.macro half P
        widen4 \P
        lamb_step
        vcvt.bf16.f32 v25, v4, \P
        vcvt.bf16.f32 v26, v5, \P
        iadd i1, i1, 0, F32_LANES ; st.t.f32 t4, i1, v7
.endm

        ew_base
        lamb_args
        imov i1, i0
        mov s0, EW_ELEMS / BF16_LANES
step:
        load4_bf16
        half 0
        half 1
        st.t.bf16 t2, i0, v25
        iadd i0, i0, 0, BF16_LANES ; st.t.bf16 t3, i0, v26
        loop s0, step
        lamb_part
