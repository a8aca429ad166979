// SPDX-License-Identifier: MIT
// im2col on BF16: the columns of a 2-D convolution as im2col_f32 lays them
// out, col[n, (c*kh + r)*kw + s, oh, ow] = x[n, c, ih, iw], 0 in the padding;
// the bits copied (BF16 values widen and narrow exactly).
// Tensors: t0 = x bf16 [W, H, C, N] (padding 0), t1 = col bf16
// [OW, OH, C*kh*kw, N]; scalars 0-7 the window (conv.inc). Index space:
// (ceil(OW / 64), OH, C*kh*kw, N), a member per 64 columns of one row of col.
.kernel im2col_bf16
.tensors 2
.scalars 8
.index_dims 4
.tensor 0, bf16
.tensor 1, bf16
.meta "doc=im2col on BF16: conv2d columns [N, C*kh*kw, OH, OW] of x [N, C, H, W]"
.include "conv.inc"

        im2col_kernel bf16, widen_bf16, st_bf16
