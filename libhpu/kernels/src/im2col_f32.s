// SPDX-License-Identifier: MIT
// im2col: the columns of a 2-D convolution, laid out so that one batched
// MME GEMM with the weights [K, C*kh*kw] gives the output (README, "conv2d"):
// col[n, (c*kh + r)*kw + s, oh, ow] = x[n, c, ih, iw], 0 in the padding.
// Tensors: t0 = x [W, H, C, N] (padding 0), t1 = col [OW, OH, C*kh*kw, N];
// scalars 0-7 the window (conv.inc). Index space: (ceil(OW / 64), OH,
// C*kh*kw, N), a member per 64 columns of one row of col.
.kernel im2col_f32
.tensors 2
.scalars 8
.index_dims 4
.tensor 0, f32
.tensor 1, f32
.meta "doc=im2col: conv2d columns [N, C*kh*kw, OH, OW] of x [N, C, H, W]"
.include "conv.inc"

        im2col_kernel f32, no_widen, st_f32
