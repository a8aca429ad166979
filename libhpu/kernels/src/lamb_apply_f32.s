// SPDX-License-Identifier: MIT
// LAMB, launch 3 of 3: w = w - lr * r * u with the trust ratio
// r = ||w|| / ||u|| (1 when either norm is 0), the norms' squares from
// launch 2. Tensors: t0 = w (updated), t1 = u [N], t2 = norms [1, 2]
// (sum w^2, sum u^2); scalar 0 = lr (FP32). Index space: (ceil(N / 256)).
.kernel lamb_apply_f32
.tensors 3
.scalars 1
.index_dims 1
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.meta "doc=LAMB step 3: trust ratio and weight update"
.include "opt.inc"

        lamb_ratio
step:
        ld.t.f32 v0, t0, i0
        ld.t.f32 v3, t1, i0
        vmac.f32 v0, v3, s3
        iadd i0, i0, 0, F32_LANES ; st.t.f32 t0, i0, v0
        loop s0, step
        halt
