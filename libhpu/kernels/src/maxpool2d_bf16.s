// SPDX-License-Identifier: MIT
// 2-D max-pool on BF16, as maxpool2d_f32: y = the window's maximum (its BF16
// bits; a signalling NaN comes out quiet), idx = its position ih * W + iw in
// the (n, c) plane, the first maximum in tap order, a NaN over numbers,
// never the padding (a window wholly in it: -inf, -1).
// Tensors: t0 = x bf16 [W, H, C, N] (padding -inf, 0xff80), t1 = y bf16
// [OW, OH, C, N], t2 = idx i32 [OW, OH, C, N]; scalars 0-7 the window
// (conv.inc). Index space: (ceil(OW / 64), OH, C, N).
.kernel maxpool2d_bf16
.tensors 3
.scalars 8
.index_dims 4
.tensor 0, bf16
.tensor 1, bf16
.tensor 2, i32
.meta "doc=2-D max-pool on BF16 with the argmax of each window"
.include "conv.inc"

        maxpool_kernel bf16, widen_bf16, st_bf16
