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

        win_args
        gather_setup
        iid i0                                  // (m0, oh, row, n) of col
        iget s4, i0, 2
        mul.i32 s5, s20, s21                    // kh * kw
        div.u32 s6, s4, s5                      // c
        rem.u32 s7, s4, s5
        div.u32 s8, s7, s21                     // r
        rem.u32 s9, s7, s21                     // s
        iget s10, i0, 1
        mul.i32 s10, s10, s22
        sub.i32 s10, s10, s24
        mul.i32 s8, s8, s26
        add.i32 s10, s10, s8                    // ih = oh * sh - ph + r * dh
        iget s11, i0, 0
        mul.i32 s11, s11, s23
        shl s11, s11, 6
        sub.i32 s11, s11, s25
        mul.i32 s9, s9, s27
        add.i32 s11, s11, s9                    // iw of lane 0 = 64 m0 sw - pw + s * dw
        iset i1, i0, 0, s11
        iset i1, i1, 1, s10
        iset i1, i1, 2, s6
        gather v0, t0, i1
        imul i0, i0, 0, F32_LANES
        halt ; st.t.f32 t1, i0, v0
