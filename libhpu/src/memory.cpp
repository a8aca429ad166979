// SPDX-License-Identifier: MIT
// Buffers (GEM objects mapped into the context's device address space),
// memory information, and the helpers the other translation units share.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>

#include <fcntl.h>
#include <sys/mman.h>

#include "device.h"
#include "drm/hpu_accel.h"
#include "hw/hpu_regs.h"
#include "os.h"

using hpu::detail::BufferPtr;
using hpu::detail::guarded;
using hpu::detail::os;

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
    drm_hpu_vm_bind req{};
    req.op = DRM_HPU_VM_MAP;
    req.flags = readonly ? DRM_HPU_VM_READONLY : 0;
    req.handle = buf->handle;
    req.bo_offset = 0;
    req.size = buf->map_size;
    if (const int err = drm_ioctl(buf->dev, DRM_IOCTL_HPU_VM_BIND, &req); err < 0)
        return err;
    if (req.va == 0)
        return -EPROTO;
    buf->map_va = req.va;
    return 0;
}

int vm_unmap(const hpu_buffer *buf)
{
    drm_hpu_vm_bind req{};
    req.op = DRM_HPU_VM_UNMAP;
    req.va = buf->map_va;
    return drm_ioctl(buf->dev, DRM_IOCTL_HPU_VM_BIND, &req);
}

} // namespace

int drm_ioctl(int fd, unsigned long request, void *arg)
{
    int ret = 0;
    do {
        ret = os().ioctl(fd, request, arg);
    } while (ret == -EINTR || ret == -EAGAIN);
    return ret;
}

int drm_ioctl(hpu_device *dev, unsigned long request, void *arg)
{
    return note_error(dev, drm_ioctl(dev->fd, request, arg));
}

int query_info(hpu_device *dev, std::uint32_t op, void *answer, std::uint32_t size)
{
    drm_hpu_info req{};
    req.op = op;
    req.ptr = to_u64(answer);
    req.size = size;
    if (const int err = drm_ioctl(dev, DRM_IOCTL_HPU_INFO, &req); err < 0)
        return err;
    // Answers only grow: a kernel of this ABI or newer answers at least this.
    return req.size < size ? -EPROTO : 0;
}

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
    drm_gem_close req{};
    req.handle = handle;
    return drm_ioctl(dev, DRM_IOCTL_GEM_CLOSE, &req);
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
        const int e = os().munmap(buf->mmap_addr, buf->mmap_len);
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

    drm_hpu_bo_create create{};
    create.size = size;
    create.page_size = 0;
    create.flags = (device ? DRM_HPU_BO_HBM : DRM_HPU_BO_HOST) |
                   ((flags & HPU_MEM_CONTIGUOUS) != 0 ? DRM_HPU_BO_CONTIGUOUS : 0);
    if (const int err = drm_ioctl(dev, DRM_IOCTL_HPU_BO_CREATE, &create); err < 0)
        return err;
    // From here on the handle is owned by buf: every error path closes it.
    BufferPtr buf(new hpu_buffer); // NOLINT(cppcoreguidelines-owning-memory)
    buf->dev = dev;
    buf->epoch = dev->epoch;
    buf->handle = create.handle;
    gem_ref(dev, create.handle);
    if (create.size < size)
        return -EPROTO;
    buf->map_size = create.size;
    buf->size = create.size;

    if (const int err = vm_map(buf.get(), (flags & HPU_MEM_READONLY) != 0); err < 0)
        return err;

    if (host) {
        drm_hpu_bo_mmap_offset mo{};
        mo.handle = buf->handle;
        if (const int err = drm_ioctl(dev, DRM_IOCTL_HPU_BO_MMAP_OFFSET, &mo); err < 0)
            return err;
        void *p = nullptr;
        if (const int err = os().mmap(buf->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd,
                                      static_cast<std::int64_t>(mo.offset), &p);
            err < 0)
            return err;
        buf->mmap_addr = p;
        buf->mmap_len = buf->map_size;
    }
    out = std::move(buf);
    return 0;
}

std::int64_t deadline_after(std::uint64_t timeout_ns)
{
    const std::int64_t now = os().monotonic_ns();
    if (timeout_ns >= static_cast<std::uint64_t>(INT64_MAX - std::max<std::int64_t>(now, 0)))
        return INT64_MAX;
    return now + static_cast<std::int64_t>(timeout_ns);
}

} // namespace hpu::detail

using hpu::detail::drm_ioctl;

extern "C" {

HPU_EXPORT int hpu_buffer_create(hpu_device_t *dev, uint64_t size, uint32_t flags, hpu_buffer_t **out)
{
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

        drm_hpu_bo_userptr req{};
        req.addr = first;
        req.size = end - first;
        req.flags = ro ? DRM_HPU_USERPTR_READONLY : 0;
        if (const int err = drm_ioctl(dev, DRM_IOCTL_HPU_BO_USERPTR, &req); err < 0)
            return err;
        BufferPtr buf(new hpu_buffer); // NOLINT(cppcoreguidelines-owning-memory)
        buf->dev = dev;
        buf->epoch = dev->epoch;
        buf->handle = req.handle;
        hpu::detail::gem_ref(dev, req.handle);
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
    if (out == nullptr)
        return -EINVAL;
    *out = nullptr;
    if (dev == nullptr || fd < 0 || size == 0 || size > hpu::detail::kMaxSize)
        return -EINVAL;
    return guarded([&]() {
        drm_prime_handle req{};
        req.fd = fd;
        if (const int err = drm_ioctl(dev, DRM_IOCTL_PRIME_FD_TO_HANDLE, &req); err < 0)
            return err;
        BufferPtr buf(new hpu_buffer); // NOLINT(cppcoreguidelines-owning-memory)
        buf->dev = dev;
        buf->epoch = dev->epoch;
        buf->handle = req.handle;
        hpu::detail::gem_ref(dev, req.handle);
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
    if (fd == nullptr)
        return -EINVAL;
    *fd = -1;
    if (buf == nullptr)
        return -EINVAL;
    if (hpu::detail::stale(buf->dev, buf->epoch))
        return -ENODEV;
    drm_prime_handle req{};
    req.handle = buf->handle;
    req.flags = DRM_CLOEXEC | DRM_RDWR;
    req.fd = -1;
    if (const int err = drm_ioctl(buf->dev, DRM_IOCTL_PRIME_HANDLE_TO_FD, &req); err < 0)
        return err;
    if (req.fd < 0)
        return -EPROTO;
    *fd = req.fd;
    return 0;
}

HPU_EXPORT int hpu_buffer_destroy(hpu_buffer_t *buf)
{
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
    return buf->user_ptr != nullptr ? buf->user_ptr : buf->mmap_addr;
}

HPU_EXPORT int hpu_device_memory_info(hpu_device_t *dev, hpu_memory_info *out)
{
    if (dev == nullptr || out == nullptr || out->size < sizeof(out->size))
        return -EINVAL;
    drm_hpu_info_memory answer{};
    if (const int err = hpu::detail::query_info(dev, DRM_HPU_INFO_MEMORY, &answer, sizeof(answer)); err < 0)
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
    const auto filled = static_cast<uint32_t>(std::min<size_t>(out->size, sizeof(info)));
    info.size = filled;
    std::memcpy(out, &info, filled);
    return 0;
}

HPU_EXPORT int hpu_device_dma_engines(hpu_device_t *dev)
{
    if (dev == nullptr)
        return -EINVAL;
    drm_hpu_info_device answer{};
    if (const int err = hpu::detail::query_info(dev, DRM_HPU_INFO_DEVICE, &answer, sizeof(answer)); err < 0)
        return err;
    return answer.num_dma;
}

} // extern "C"
