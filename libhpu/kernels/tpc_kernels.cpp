// SPDX-License-Identifier: MIT
//
// Lookup in the embedded TPC kernel table.
//
// Copyright (c) 2026 The hpu authors
#include "tpc_kernels.h"

#include <algorithm>

namespace hpu::kernels {

std::span<const TpcKernel> tpc_kernels()
{
    return {tpc_kernel_table, tpc_kernel_count};
}

const TpcKernel *find_tpc_kernel(std::string_view name)
{
    auto all = tpc_kernels();
    auto it = std::lower_bound(all.begin(), all.end(), name,
                               [](const TpcKernel &k, std::string_view n) { return k.name < n; });
    return it != all.end() && it->name == name ? &*it : nullptr;
}

} // namespace hpu::kernels
