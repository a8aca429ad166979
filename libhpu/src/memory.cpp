// SPDX-License-Identifier: MIT
// Buffers (GEM objects mapped into the context's device address space),
// GEM handle references, and memory information.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>

#include <fcntl.h>
#include <sys/mman.h>

#include "compute.h"
#include "common.h"
#include "device.h"
#include "drm/hpu_accel.h"
#include "hw/hpu_regs.h"
#include "kmd.h"
#include "memory.h"

using hpu::detail::BufferPtr;
using hpu::detail::guarded;

namespace hpu::detail {

namespace {

constexpr std::uint64_t kHostPage = 1ULL << HPU_PAGE_SHIFT;
// No buffer is larger than the device's virtual address space.
constexpr std::uint64_t kMaxSize = 1ULL << HPU_VA_BITS;
constexpr std::uint32_t kCreateFlags = HPU_MEM_DEVICE | HPU_MEM_HOST | HPU_MEM_CONTIGUOUS | HPU_MEM_READONLY;

std::uint64_t to_u64(const void *p)
{
    return reinterpret_cast<std::uintptr_t>(p); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
}

// Maps the whole of buf->handle (map_size bytes) into the device.
int vm_map(hpu_buffer *buf, bool readonly)
{
    return buf->dev->kmd.vm_map(buf->handle, buf->map_size, readonly, buf->map_va);
}

int vm_unmap(const hpu_buffer *buf)
{
    return buf->dev->kmd.vm_unmap(buf->map_va);
}

} // namespace

void gem_ref(hpu_device *dev, std::uint32_t handle)
{
    const std::lock_guard<std::mutex> lock(dev->mu);
    ++dev->gem_refs[handle];
}

int gem_unref(hpu_device *dev, std::uint32_t handle) noexcept
{
    {
        const std::lock_guard<std::mutex> lock(dev->mu);
        const auto it = dev->gem_refs.find(handle);
        if (it != dev->gem_refs.end() && --it->second > 0)
            return 0;
        if (it != dev->gem_refs.end())
            dev->gem_refs.erase(it);
    }
    return dev->kmd.gem_close(handle);
}

int buffer_free(hpu_buffer *buf) noexcept
{
    if (buf == nullptr)
        return 0;
    // A buffer of a file reopened since: its handle and mapping died with
    // that file; only the caller's mapping is left to undo.
    const bool dead = stale(buf->dev, buf->epoch);
    int err = 0;
    if (buf->map_va != 0 && !dead)
        err = vm_unmap(buf);
    if (buf->mmap_addr != nullptr) {
        const int e = buf->dev->os().munmap(buf->mmap_addr, buf->mmap_len);
        err = err < 0 ? err : e;
    }
    if (void *m = buf->cpu_map.load(); m != nullptr) {
        const int e = buf->dev->os().munmap(m, buf->map_size);
        err = err < 0 ? err : e;
    }
    if (buf->handle != 0 && !dead) {
        const int e = gem_unref(buf->dev, buf->handle);
        err = err < 0 ? err : e;
    }
    delete buf; // NOLINT(cppcoreguidelines-owning-memory)
    return err;
}

int buffer_create(hpu_device *dev, std::uint64_t size, std::uint32_t flags, BufferPtr &out)
{
    const bool device = (flags & HPU_MEM_DEVICE) != 0;
    const bool host = (flags & HPU_MEM_HOST) != 0;
    if (size == 0 || size > kMaxSize || (flags & ~kCreateFlags) != 0 || device == host ||
        ((flags & HPU_MEM_CONTIGUOUS) != 0 && !device))
        return -EINVAL;

    const std::uint32_t bo_flags = (device ? DRM_HPU_BO_HBM : DRM_HPU_BO_HOST) |
                                   ((flags & HPU_MEM_CONTIGUOUS) != 0 ? DRM_HPU_BO_CONTIGUOUS : 0);
    std::uint64_t made = size;
    std::uint32_t handle = 0;
    if (const int err = dev->kmd.bo_create(made, bo_flags, handle); err < 0)
        return err;
    // From here on the handle is owned by buf: every error path closes it.
    BufferPtr buf(new hpu_buffer); // NOLINT(cppcoreguidelines-owning-memory)
    buf->dev = dev;
    buf->epoch = dev->epoch;
    buf->handle = handle;
    gem_ref(dev, handle);
    if (made < size)
        return -EPROTO;
    buf->map_size = made;
    buf->size = made;

    if (const int err = vm_map(buf.get(), (flags & HPU_MEM_READONLY) != 0); err < 0)
        return err;

    if (host) {
        std::uint64_t offset = 0;
        if (const int err = dev->kmd.bo_mmap_offset(buf->handle, offset); err < 0)
            return err;
        void *p = nullptr;
        if (const int err = dev->os().mmap(buf->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd(),
                                           static_cast<std::int64_t>(offset), &p);
            err < 0)
            return err;
        buf->mmap_addr = p;
        buf->mmap_len = buf->map_size;
    }
    out = std::move(buf);
    return 0;
}

} // namespace hpu::detail

extern "C" {

HPU_EXPORT int hpu_buffer_create(hpu_device_t *dev, uint64_t size, uint32_t flags, hpu_buffer_t **out)
{
    hpu::detail::clear_error();
    if (out == nullptr)
        return -EINVAL;
    *out = nullptr;
    if (dev == nullptr)
        return -EINVAL;
    return guarded([&]() {
        BufferPtr buf;
        if (const int err = hpu::detail::buffer_create(dev, size, flags, buf); err < 0)
            return err;
        *out = buf.release();
        return 0;
    });
}

HPU_EXPORT int hpu_buffer_from_user(hpu_device_t *dev, void *ptr, uint64_t size, uint32_t flags,
                                    hpu_buffer_t **out)
{
    hpu::detail::clear_error();
    using hpu::detail::kHostPage;
    if (out == nullptr)
        return -EINVAL;
    *out = nullptr;
    const std::uint64_t addr = hpu::detail::to_u64(ptr);
    if (dev == nullptr || ptr == nullptr || size == 0 || size > hpu::detail::kMaxSize ||
        (flags & ~(HPU_MEM_HOST | HPU_MEM_READONLY)) != 0 || addr > UINT64_MAX - size - kHostPage)
        return -EINVAL;
    return guarded([&]() {
        const std::uint64_t first = addr & ~(kHostPage - 1);
        const std::uint64_t end = (addr + size + kHostPage - 1) & ~(kHostPage - 1);
        const bool ro = (flags & HPU_MEM_READONLY) != 0;

        std::uint32_t handle = 0;
        if (const int err = dev->kmd.bo_userptr(first, end - first, ro, handle); err < 0)
            return err;
        BufferPtr buf(new hpu_buffer); // NOLINT(cppcoreguidelines-owning-memory)
        buf->dev = dev;
        buf->epoch = dev->epoch;
        buf->handle = handle;
        hpu::detail::gem_ref(dev, handle);
        buf->map_size = end - first;
        buf->offset = addr - first;
        buf->size = size;
        buf->user_ptr = ptr;
        if (const int err = hpu::detail::vm_map(buf.get(), ro); err < 0)
            return err;
        *out = buf.release();
        return 0;
    });
}

HPU_EXPORT int hpu_buffer_import_fd(hpu_device_t *dev, int fd, uint64_t size, hpu_buffer_t **out)
{
    hpu::detail::clear_error();
    if (out == nullptr)
        return -EINVAL;
    *out = nullptr;
    if (dev == nullptr || fd < 0 || size == 0 || size > hpu::detail::kMaxSize)
        return -EINVAL;
    return guarded([&]() {
        std::uint32_t handle = 0;
        if (const int err = dev->kmd.prime_import(fd, handle); err < 0)
            return err;
        BufferPtr buf(new hpu_buffer); // NOLINT(cppcoreguidelines-owning-memory)
        buf->dev = dev;
        buf->epoch = dev->epoch;
        buf->handle = handle;
        hpu::detail::gem_ref(dev, handle);
        buf->map_size = size;
        buf->size = size;
        if (const int err = hpu::detail::vm_map(buf.get(), false); err < 0)
            return err;
        *out = buf.release();
        return 0;
    });
}

HPU_EXPORT int hpu_buffer_export_fd(hpu_buffer_t *buf, int *fd)
{
    hpu::detail::clear_error();
    if (fd == nullptr)
        return -EINVAL;
    *fd = -1;
    if (buf == nullptr)
        return -EINVAL;
    if (hpu::detail::stale(buf->dev, buf->epoch))
        return -ENODEV;
    int out = -1;
    if (const int err = buf->dev->kmd.prime_export(buf->handle, out); err < 0)
        return err;
    *fd = out;
    return 0;
}

HPU_EXPORT int hpu_buffer_destroy(hpu_buffer_t *buf)
{
    hpu::detail::clear_error();
    return hpu::detail::buffer_free(buf);
}

HPU_EXPORT uint64_t hpu_buffer_va(const hpu_buffer_t *buf)
{
    return buf == nullptr ? 0 : buf->map_va + buf->offset;
}

HPU_EXPORT uint64_t hpu_buffer_size(const hpu_buffer_t *buf)
{
    return buf == nullptr ? 0 : buf->size;
}

HPU_EXPORT void *hpu_buffer_host_ptr(const hpu_buffer_t *buf)
{
    if (buf == nullptr)
        return nullptr;
    if (buf->user_ptr != nullptr)
        return buf->user_ptr;
    if (buf->mmap_addr != nullptr)
        return buf->mmap_addr;
    void *m = buf->cpu_map.load(std::memory_order_acquire);
    return m != nullptr ? static_cast<std::uint8_t *>(m) + buf->offset : nullptr; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}

HPU_EXPORT int hpu_buffer_map(hpu_buffer_t *buf, void **ptr)
{
    hpu::detail::clear_error();
    if (buf == nullptr || ptr == nullptr)
        return -EINVAL;
    *ptr = nullptr;
    if (void *p = hpu_buffer_host_ptr(buf); p != nullptr) {
        *ptr = p;
        return 0;
    }
    hpu_device *dev = buf->dev;
    if (hpu::detail::stale(dev, buf->epoch) || buf->handle == 0)
        return -ENODEV;
    // The mutex cannot throw here (no error checking, not recursive).
    const std::lock_guard lock(buf->map_mu);
    if (buf->cpu_map.load() == nullptr) {
        std::uint64_t offset = 0;
        if (const int err = dev->kmd.bo_mmap_offset(buf->handle, offset); err < 0)
            return err;
        void *m = nullptr;
        if (const int err = dev->os().mmap(buf->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd(),
                                           static_cast<std::int64_t>(offset), &m);
            err < 0)
            return err;
        buf->cpu_map.store(m, std::memory_order_release);
    }
    *ptr = hpu_buffer_host_ptr(buf);
    return 0;
}

HPU_EXPORT int hpu_device_memory_info(hpu_device_t *dev, hpu_memory_info *out)
{
    hpu::detail::clear_error();
    if (dev == nullptr || out == nullptr || out->size < sizeof(out->size))
        return -EINVAL;
    drm_hpu_info_memory answer{};
    if (const int err = dev->kmd.info_memory(answer); err < 0)
        return err;
    hpu_memory_info info{};
    info.asid = answer.asid;
    info.hbm_total = answer.hbm_total;
    info.hbm_used = answer.hbm_used;
    info.hbm_ctx_used = answer.hbm_ctx_used;
    info.host_ctx_used = answer.host_ctx_used;
    info.va_start = answer.va_start;
    info.va_end = answer.va_end;
    info.num_sobs = answer.num_sobs;
    hpu::detail::fill_sized(info, out);
    return 0;
}

HPU_EXPORT int hpu_device_dma_engines(hpu_device_t *dev)
{
    hpu::detail::clear_error();
    if (dev == nullptr)
        return -EINVAL;
    drm_hpu_info_device answer{};
    if (const int err = dev->kmd.info_device(answer); err < 0)
        return err;
    return answer.num_dma;
}

HPU_EXPORT int hpu_device_engines(hpu_device_t *dev, uint32_t engine_class)
{
    hpu::detail::clear_error();
    if (dev == nullptr || engine_class >= HPU_MAX_ENGINE_CLASSES)
        return -EINVAL;
    drm_hpu_info_device answer{};
    if (const int err = dev->kmd.info_device(answer); err < 0)
        return err;
    return answer.class_engines[engine_class]; // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
}

} // extern "C"
