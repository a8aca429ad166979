// SPDX-License-Identifier: MIT
// 2-D average pooling (FP32 inside, rounded once), PyTorch's avg_pool2d: y[n, c, oh, ow] = the FP32
// sum from +0 of x over the window in tap order (r, then s; the padding adds
// nothing) divided by the divisor: the window's size clipped to the padded
// input (count_include_pad) or to the input, or divisor_override.
// Tensors: t0 = x bf16 [W, H, C, N] (padding 0), t1 = y bf16 [OW, OH, C, N];
// scalars 0-7 the window (conv.inc; dilations 1), 8 count_include_pad (0/1),
// 9 divisor_override (i32, 0 none). Index space: (ceil(OW / 64), OH, C, N).
.kernel avgpool2d_bf16
.tensors 2
.scalars 10
.index_dims 4
.tensor 0, bf16
.tensor 1, bf16
.meta "doc=2-D average pooling as PyTorch's avg_pool2d (FP32 inside, rounded once)"
.include "conv.inc"

        avgpool_kernel bf16, widen_bf16, st_bf16
