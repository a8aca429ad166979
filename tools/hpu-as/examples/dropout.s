// SPDX-License-Identifier: MIT
// y = x * keep / (1 - p), keep = (uniform >= p): dropout on the core's
// random numbers. Tensors: t0 = x [N], t1 = y [N]; scalars: s[0] = p,
// s[1] = 1 / (1 - p), both FP32 bits. Index space: (ceil(N / 64)).
// The result depends only on the launch's seed and each element's
// member and lane, never on how the cores split the index space.
.kernel dropout_f32
.tensors 2
.scalars 2
.index_dims 1
.tensor 0, f32
.tensor 1, f32
.include "tpc.inc"

        member_base i0, 0, F32_LANES
        ldarg s0, 0
        ldarg s1, 1
        ld.t.f32 v0, t0, i0 ; vrandu.f32 v1
        vcmp.ge.f32 vp1, v1, s0
        vmul.f32 v0, v0, s1
        (!vp1) vmov.f32 v0, 0.0
        halt ; st.t.f32 t1, i0, v0              // the member ends after this bundle
