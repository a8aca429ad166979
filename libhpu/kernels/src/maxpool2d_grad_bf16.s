// SPDX-License-Identifier: MIT
// 2-D max-pool backward on BF16: dx[n, c, ih, iw] = the FP32 sum, from +0 in
// tap order of the windows holding (ih, iw), of dy where idx (from
// maxpool2d_bf16, same window) names it, rounded once to BF16.
// Tensors: t0 = dy bf16 [OW, OH, C, N] (padding 0), t1 = idx i32
// [OW, OH, C, N], t2 = dx bf16 [W, H, C, N]; scalars 0-7 the window
// (conv.inc). Index space: (ceil(W / 64), H, C, N).
.kernel maxpool2d_grad_bf16
.tensors 3
.scalars 8
.index_dims 4
.tensor 0, bf16
.tensor 1, i32
.tensor 2, bf16
.meta "doc=2-D max-pool backward on BF16: dy gathered at the argmax positions, FP32 sums"
.include "conv.inc"

.macro spread_base
        maxpool_grad_base
.endm

.macro tap
        maxpool_grad_tap bf16, widen_bf16
.endm

        spread_kernel t2, t0, 0, 0, st_bf16
