// SPDX-License-Identifier: MIT
// out[c, ...] = x[c, ...] + b[c]: add_f32 with b [C] broadcast over dims 1-3
// Tensors: t0 = x, t1 = b, t2 = out. Index space: elementwise (README).
.kernel bias_add_f32
.tensors 3
.index_dims 4
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
.meta "doc=out[c, ...] = x[c, ...] + b[c]: add_f32 with b [C] broadcast over dims 1-3"
.macro args
.endm
.macro body
        vadd.f32 v2, v0, v1
.endm
.include "ew.inc"

        ew2 f32, F32_LANES
