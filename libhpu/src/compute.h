// SPDX-License-Identifier: MIT
// TPC kernels, launch and GEMM descriptors (compute.cpp) and the per-thread
// message of the last failed call (internal to libhpu).
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SRC_COMPUTE_H
#define HPU_SRC_COMPUTE_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "hpu/hpu.h"
#include "hw/hpu_mme.h"
#include "hw/hpu_tpc.h"
#include "memory.h"

namespace hpu::detail {

// A validated kernel binary in a HOST buffer the device maps read-only.
// Shared by the handles, the device's library cache and every command
// list that recorded a launch of it.
struct KernelImage {
    BufferPtr buf;
    std::array<std::uint8_t, HPU_TPC_BIN_HEADER_SIZE> header{};
    hpu_kernel_info info{};
};
using KernelRef = std::shared_ptr<const KernelImage>;

// The message hpu_last_error() returns; set_error() replaces it.
void clear_error() noexcept;
// Sets the message and returns err (for `return set_error(-EINVAL, ...)`).
int set_error(int err, const std::string &msg) noexcept;

// Validates a binary and loads it (the work of hpu_kernel_load()).
int kernel_image_load(hpu_device *dev, const void *data, std::size_t size, KernelRef &out);

// Writes the launch descriptor of l for k into d (hpu_tpc_launch_size()
// bytes, zeroed by the caller) and checks it as the device will. 0 or
// -EINVAL with the message set.
int encode_launch(const KernelImage &k, const hpu_launch *l, std::uint8_t *d);
// The descriptor's size for l (valid after encode_launch() succeeded).
std::size_t launch_size(const KernelImage &k);

// Writes the 128-byte GEMM descriptor of g into d (zeroed) after the checks
// libhpu makes; the device checks the rest (overlaps). 0 or -EINVAL.
int encode_gemm(const hpu_gemm *g, std::uint8_t *d);

} // namespace hpu::detail

struct hpu_kernel {
    hpu_device *dev = nullptr;
    std::uint64_t epoch = 0;
    hpu::detail::KernelRef img;
};

#endif // HPU_SRC_COMPUTE_H
