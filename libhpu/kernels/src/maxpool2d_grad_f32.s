// SPDX-License-Identifier: MIT
// 2-D max-pool backward: dx[n, c, ih, iw] = the sum of dy over the outputs
// whose argmax (idx, from maxpool2d_f32 with the same window) is
// (ih, iw), added from +0 in tap order (r, then s) of the windows that
// hold it, so the result is deterministic.
// Tensors: t0 = dy [OW, OH, C, N] (padding 0), t1 = idx i32 [OW, OH, C, N],
// t2 = dx [W, H, C, N]; scalars 0-7 the window (conv.inc). Index space:
// (ceil(W / 64), H, C, N).
.kernel maxpool2d_grad_f32
.tensors 3
.scalars 8
.index_dims 4
.tensor 0, f32
.tensor 1, i32
.tensor 2, f32
.meta "doc=2-D max-pool backward: dy gathered at the argmax positions"
.include "conv.inc"

.macro spread_base                              // s6 = c; v5 = the lanes' positions ih * W + iw
        iget s6, i0, 2
        tsize s7, t2, 0
        mul.i32 s7, s7, s5
        add.i32 s7, s7, s4
        vadd.i32 v5, v25, s7
.endm

.macro tap
        ld.t.i32 v1, t1, i1
        ld.t.f32 v2, t0, i1 ; vshuf.i32 v1, v1, v29
        vshuf.f32 v2, v2, v29
        (vp6) vcmp.eq.i32 vp6, v1, v5           // fed, and its argmax is here
        (vp6) vadd.f32 v0, v0, v2
.endm

        spread_kernel t2, t0, 0, 0
