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

.macro spread_base
        maxpool_grad_base
.endm

.macro tap
        maxpool_grad_tap f32, no_widen
.endm

        spread_kernel t2, t0, 0, 0, st_f32
