// SPDX-License-Identifier: MIT
//
// Host allocation failures on demand, for the device model's paths that
// run out of host memory.  emu-core-tests is linked with --wrap=malloc and
// --wrap=calloc (CMakeLists.txt): every malloc() and calloc() of the files
// linked into it (the emu/ core, the tests) goes through the wrappers of
// hpu_alloc_fail.cpp; shared libraries (libstdc++'s operator new,
// OpenBLAS) are not affected.
//
// Copyright (c) 2026 The hpu authors
#pragma once

namespace hpu_test {

// Make the @n-th wrapped allocation from now on (1: the next) fail; 0: none
// fails.  Also restarts alloc_count().
void alloc_fail_at(unsigned long n);

// Wrapped allocations since the last alloc_fail_at().
unsigned long alloc_count();

} // namespace hpu_test
