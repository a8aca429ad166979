// SPDX-License-Identifier: MIT
// 2-D average pooling backward: dx[n, c, ih, iw] = the FP32 sum, from +0
// in tap order (r, then s) of the windows holding (ih, iw), of
// dy[n, c, oh, ow] / divisor(oh, ow) (avgpool2d_f32's divisors).
// Tensors: t0 = dy f32 [OW, OH, C, N] (padding 0), t1 = dx f32 [W, H, C, N];
// scalars as avgpool2d_f32. Index space: (ceil(W / 64), H, C, N).
.kernel avgpool2d_grad_f32
.tensors 2
.scalars 10
.index_dims 4
.tensor 0, f32
.tensor 1, f32
.meta "doc=2-D average pooling backward: dy / divisor summed in tap order"
.include "conv.inc"

.macro spread_base
        avgpool_grad_base
.endm

.macro tap
        avgpool_grad_tap f32, no_widen
.endm

        spread_kernel t1, t0, 0, 0, st_f32
