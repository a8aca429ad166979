// SPDX-License-Identifier: MIT
//
// The TPC kernel library's binaries, embedded at build time
// (libhpu/kernels/README.md): look a kernel up by name. Internal to libhpu
// and the tests; not part of libhpu's public API.
//
// Copyright (c) 2026 The hpu authors
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace hpu::kernels {

struct TpcKernel {
    const char *name;           // the binary's .kernel name, the file's stem
    const unsigned char *data;  // the kernel binary, 64-byte aligned
    size_t size;
};

// Every kernel, sorted by name.
std::span<const TpcKernel> tpc_kernels();

// The kernel called @name, or nullptr.
const TpcKernel *find_tpc_kernel(std::string_view name);

// Generated table (tpc_kernels_table.cpp).
extern const TpcKernel tpc_kernel_table[];
extern const size_t tpc_kernel_count;

} // namespace hpu::kernels
