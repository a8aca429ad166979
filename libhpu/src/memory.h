// SPDX-License-Identifier: MIT
// Buffers (hpu_buffer_t; memory.cpp) and the GEM handle references of a
// device (internal to libhpu).
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SRC_MEMORY_H
#define HPU_SRC_MEMORY_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "hpu/hpu.h"

// A buffer object mapped into the device's address space of this file.
struct hpu_buffer {
    hpu_device *dev = nullptr;
    std::uint64_t epoch = 0;      // dev->epoch when made
    std::uint32_t handle = 0;     // GEM handle (0: none)
    std::uint64_t map_va = 0;     // start of the VM mapping (0: not mapped)
    std::uint64_t map_size = 0;   // bytes mapped
    std::uint64_t offset = 0;     // of the caller's first byte in the mapping
    std::uint64_t size = 0;       // bytes the caller sees
    void *mmap_addr = nullptr;    // host mapping of a HOST buffer (owned)
    std::size_t mmap_len = 0;
    void *user_ptr = nullptr;     // the caller's memory of a user-pointer buffer
    // hpu_buffer_map() of a buffer with no host mapping (HBM through the
    // device's BAR): made once under map_mu, read without it; owned, of
    // map_size bytes.
    std::mutex map_mu;
    std::atomic<void *> cpu_map{nullptr};
};

namespace hpu::detail {

// Deletes a buffer (unmap, munmap, close the handle); the first error.
int buffer_free(hpu_buffer *buf) noexcept;
struct BufferFree {
    void operator()(hpu_buffer *b) const noexcept { (void)buffer_free(b); }
};
using BufferPtr = std::unique_ptr<hpu_buffer, BufferFree>;

// Creates and maps a buffer (the work of hpu_buffer_create).
int buffer_create(hpu_device *dev, std::uint64_t size, std::uint32_t flags, BufferPtr &out);

// GEM handle reference counting (see hpu_device).
void gem_ref(hpu_device *dev, std::uint32_t handle);
// Drops a reference; closes the handle (DRM_IOCTL_GEM_CLOSE) with the last.
int gem_unref(hpu_device *dev, std::uint32_t handle) noexcept;

} // namespace hpu::detail

#endif // HPU_SRC_MEMORY_H
