// SPDX-License-Identifier: MIT
// 2-D max-pool: y[n, c, oh, ow] = the maximum of x over the window of
// (oh, ow), idx = its position ih * W + iw in the (n, c) plane. The first
// maximum in tap order (r, then s) wins; a NaN wins over numbers (the
// first NaN); padding never does: a window wholly in the padding gives
// -inf and -1.
// Tensors: t0 = x [W, H, C, N] (padding -inf), t1 = y [OW, OH, C, N],
// t2 = idx i32 [OW, OH, C, N]; scalars 0-7 the window (conv.inc). Index
// space: (ceil(OW / 64), OH, C, N).
.kernel maxpool2d_f32
.tensors 3
.scalars 8
.index_dims 4
.tensor 0, f32
.tensor 1, f32
.tensor 2, i32
.meta "doc=2-D max-pool with the argmax of each window"
.include "conv.inc"

        maxpool_kernel f32, no_widen, st_f32
