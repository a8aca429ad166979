// SPDX-License-Identifier: MIT
// LAMB on BF16 parameters, launch 3 of 3: w = w - lr r u (lamb_apply_f32's
// fused step on the widened w, u FP32), rounded once to BF16.
// Tensors: t0 = w bf16 (updated), t1 = u f32 [N], t2 = norms f32 [1, 2];
// scalar 0 = lr (FP32). Index space: (ceil(N / 256)).
.kernel lamb_apply_bf16
.tensors 3
.scalars 1
.index_dims 1
.tensor 0, bf16
.tensor 1, f32
.tensor 2, f32
.meta "doc=LAMB step 3 on BF16 parameters: trust ratio and weight update, rounded once"
.include "opt.inc"

.macro half P
        vcvt.f32.bf16 v0, v20, \P
        ld.t.f32 v3, t1, i1 ; iadd i1, i1, 0, F32_LANES
        vmac.f32 v0, v3, s3
        vcvt.bf16.f32 v21, v0, \P
.endm

        lamb_ratio
        imov i1, i0
        mov s0, EW_ELEMS / BF16_LANES
step:
        ld.t.bf16 v20, t0, i0
        half 0
        half 1
        iadd i0, i0, 0, BF16_LANES ; st.t.bf16 t0, i0, v21
        loop s0, step
        halt
