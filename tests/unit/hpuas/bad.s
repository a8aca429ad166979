// SPDX-License-Identifier: MIT
// A malformed kernel for the CLI test.
.kernel bad
        vfrob.f32 v1, v2
