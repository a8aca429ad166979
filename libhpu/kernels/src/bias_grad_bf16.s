// SPDX-License-Identifier: MIT
// db[c] = sum over r of dy[c, r]: the bias gradient (column sum), on BF16 summed in FP32
// Tensors: t0 = dy [C, R], t1 = db [C]. Index space: (ceil(C / 128)).
.kernel bias_grad_bf16
.tensors 2
.index_dims 1
.tensor 0, bf16
.tensor 1, bf16
.meta "doc=db[c] = sum over r of dy[c, r]: the bias gradient (column sum), on BF16 summed in FP32"
.include "tpclib.inc"

        iid i0
        imul i0, i0, 0, BF16_LANES
        tsize s1, t0, 1 ; imov i1, i0 ; vmov.f32 v1, 0.0
        vmov.f32 v2, 0.0
col:
        ld.t.bf16 v20, t0, i1 ; iadd i1, i1, 1, 1
        vcvt.f32.bf16 v0, v20, 0
        vadd.f32 v1, v1, v0
        vcvt.f32.bf16 v0, v20, 1
        loop s1, col ; vadd.f32 v2, v2, v0
        vcvt.bf16.f32 v3, v1, 0
        vcvt.bf16.f32 v3, v2, 1
        halt ; st.t.bf16 t1, i0, v3
