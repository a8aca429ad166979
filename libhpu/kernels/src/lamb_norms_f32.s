// SPDX-License-Identifier: MIT
// LAMB over a flat buffer of several parameters, launch 2 of 3 (the
// segmented form of reduce_sum_f32's): each parameter's squared norms from
// lamb_update_*'s per-member partials, written to every member of the
// parameter. The flat buffer holds each parameter padded with zeros to a
// multiple of 256 elements, so no member straddles two parameters and
// parameter j covers members seg[j] - seg[0] .. seg[j + 1] - seg[0] - 1
// (seg[0] the base: a slice of a longer table serves). Member j of the
// launch sums those rows of part in order (sequential
// FP32 additions from +0, columns 0 and 1 separately) and stores the two
// sums into the same rows of out; lamb_apply_* then reads its own row.
// Tensors: t0 = part [P, 2], t1 = seg i32 [S + 1] (ascending member
// offsets, seg[S] - seg[0] = P), t2 = out [P, 2]. Index space: (S).
// A segment of no members stores nothing. A table that is not ascending
// or whose span is not P gives unspecified norms, but each member reads
// and writes only rows 0 .. P - 1 and runs at most P iterations.
.kernel lamb_norms_f32
.tensors 3
.index_dims 1
.tensor 0, f32
.tensor 1, i32
.tensor 2, f32
.meta "doc=LAMB step 2 over segments: per-parameter squared norms for each member"
.include "opt.inc"

        iid i0
        iset i3, i0, 0, 0
        ld.ts.i32 s8, t1, i3
        ld.ts.i32 s1, t1, i0 ; iadd i0, i0, 0, 1
        ld.ts.i32 s2, t1, i0
        sub.i32 s3, s2, s1
        sub.i32 s1, s1, s8
        cmp.le.i32 sp1, s3, 0
        (sp1) halt
        // A table that breaks the rules cannot make a member run away: its
        // rows are clamped to part's (a first row outside 0 .. P - 1 stores
        // nothing, a segment ends at P at the latest).
        tsize s9, t0, 0
        cmp.lt.i32 sp1, s1, 0
        (sp1) halt
        cmp.ge.i32 sp1, s1, s9
        (sp1) halt
        sub.i32 s10, s9, s1
        min.i32 s3, s3, s10
        iset i1, i0, 0, s1
        iset i2, i1, 1, 1
        mov s4, 0.0
        mov s5, 0.0
        mov s0, s3
sum:
        ld.ts.f32 s6, t0, i1 ; iadd i1, i1, 0, 1
        ld.ts.f32 s7, t0, i2 ; add.f32 s4, s4, s6
        iadd i2, i2, 0, 1
        add.f32 s5, s5, s7
        loop s0, sum
        iset i1, i0, 0, s1
        iset i2, i1, 1, 1
        mov s0, s3
put:
        st.ts.f32 t2, i1, s4
        iadd i1, i1, 0, 1 ; st.ts.f32 t2, i2, s5
        iadd i2, i2, 0, 1
        loop s0, put
        halt
