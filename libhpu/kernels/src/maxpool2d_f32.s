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

        win_args
        gather_setup                            // v30 = l * sw: the lanes' iw, relative
        iid i0                                  // (m0, oh, c, n) of y
        iget s4, i0, 0
        mul.i32 s4, s4, s23
        shl s4, s4, 6
        sub.i32 s4, s4, s25                     // iw of lane 0 at s = 0
        iget s5, i0, 1
        mul.i32 s5, s5, s22
        sub.i32 s5, s5, s24                     // ih at r = 0
        tsize s6, t0, 0                         // W
        tsize s7, t0, 1 ; vmov.f32 v1, NEG_INF_F32   // H; the maximum
        imov i1, i0 ; vmov.i32 v2, -1           // its position: none yet
        mov s10, s20
taprow:
        cmp.ge.i32 sp3, s5, 0
        (sp3) cmp.lt.i32 sp3, s5, s7
        (!sp3) jmp nextrow                      // a padding row holds no candidate
        iset i1, i1, 1, s5
        mul.i32 s12, s5, s6                     // ih * W
        mov s11, s21
        mov s13, s4
tap:
        iset i1, i1, 0, s13
        gather v0, t0, i1
        vadd.i32 v3, v30, s13                   // the lanes' iw
        vcmp.ge.i32 vp1, v3, 0
        (vp1) vcmp.lt.i32 vp1, v3, s6           // vp1: in the input
        vcmp.gt.f32 vp2, v0, v1
        vcmp.lt.i32 vp3, v2, 0
        vpor vp2, vp2, vp3                      // greater, or the first candidate
        vcmp.ne.f32 vp3, v0, v0
        (vp3) vcmp.eq.f32 vp3, v1, v1
        vpor vp2, vp2, vp3                      // or the first NaN
        vpand vp2, vp2, vp1
        (vp2) vmov.f32 v1, v0
        vadd.i32 v3, v3, s12
        add.i32 s13, s13, s27 ; (vp2) vmov.i32 v2, v3
        loop s11, tap
nextrow:
        add.i32 s5, s5, s26
        loop s10, taprow
        imul i0, i0, 0, F32_LANES
        st.t.f32 t1, i0, v1
        halt ; st.t.i32 t2, i0, v2
