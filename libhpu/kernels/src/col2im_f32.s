// SPDX-License-Identifier: MIT
// col2im: the adjoint of im2col_f32, for a convolution's input gradient:
// dx[n, c, ih, iw] = the sum of dcol[n, (c*kh + r)*kw + s, oh, ow] over the
// taps (r, s) whose output (oh, ow) reads (ih, iw), added from +0 in the
// order of r, then s (a tap meets an input element at most once), so the
// result is deterministic.
// Tensors: t0 = dcol [OW, OH, C*kh*kw, N] (padding 0), t1 = dx [W, H, C, N];
// scalars 0-7 the window (conv.inc). Index space: (ceil(W / 64), H, C, N),
// a member per 64 elements of one row of dx.
.kernel col2im_f32
.tensors 2
.scalars 8
.index_dims 4
.tensor 0, f32
.tensor 1, f32
.meta "doc=col2im: dx [N, C, H, W] from conv2d columns, overlaps summed in tap order"
.include "conv.inc"

.macro spread_base
        col2im_base
.endm

.macro tap
        col2im_tap f32, no_widen
.endm

        spread_kernel t1, t0, s21, 1, st_f32
