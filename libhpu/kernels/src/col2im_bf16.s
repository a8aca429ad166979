// SPDX-License-Identifier: MIT
// col2im on BF16, the adjoint of im2col_bf16: dx[n, c, ih, iw] = the FP32
// sum, from +0 in the order of r, then s, of dcol[n, (c*kh + r)*kw + s, oh, ow]
// over the taps whose output reads (ih, iw), rounded once to BF16.
// Tensors: t0 = dcol bf16 [OW, OH, C*kh*kw, N] (padding 0), t1 = dx bf16
// [W, H, C, N]; scalars 0-7 the window (conv.inc). Index space:
// (ceil(W / 64), H, C, N), a member per 64 elements of one row of dx.
.kernel col2im_bf16
.tensors 2
.scalars 8
.index_dims 4
.tensor 0, bf16
.tensor 1, bf16
.meta "doc=col2im on BF16: dx from conv2d columns, summed in FP32 in tap order, rounded once"
.include "conv.inc"

.macro spread_base
        col2im_base
.endm

.macro tap
        col2im_tap bf16, widen_bf16
.endm

        spread_kernel t1, t0, s21, 1, st_bf16
