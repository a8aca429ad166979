// SPDX-License-Identifier: MIT
// y = alpha * x on BF16 tensors, computed in FP32: a BF16 vector (128
// lanes) is widened in two parts of 64 FP32 lanes and narrowed back.
// Tensors: t0 = x [N], t1 = y [N]; scalar s[0] = alpha (FP32 bits).
// Index space: (ceil(N / 128)).
.kernel scale_bf16
.tensors 2
.scalars 1
.index_dims 1
.tensor 0, bf16
.tensor 1, bf16
.include "tpc.inc"

        member_base i0, 0, BF16_LANES
        ld.t.bf16 v0, t0, i0
        ldarg s0, 0 ; vcvt.f32.bf16 v1, v0, 0     // lanes 0-63
        vcvt.f32.bf16 v2, v0, 1                   // lanes 64-127
        vmul.f32 v1, v1, s0
        vmul.f32 v2, v2, s0
        vcvt.bf16.f32 v3, v1, 0                   // into lanes 0-63 of v3
        vcvt.bf16.f32 v3, v2, 1                   // lanes 64-127; 0-63 are kept
        halt ; st.t.bf16 t1, i0, v3
