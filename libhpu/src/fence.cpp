// SPDX-License-Identifier: MIT
// Fences: one binary drm_syncobj each. Waits use DRM_IOCTL_SYNCOBJ_WAIT with
// an absolute CLOCK_MONOTONIC deadline; a job's error comes from the fence
// exported as a sync_file (SYNC_IOC_FILE_INFO status).
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <cstdint>
#include <memory>

#include <linux/sync_file.h>

#include "device.h"
#include "drm/hpu_accel.h"
#include "os.h"

using hpu::detail::drm_ioctl;
using hpu::detail::guarded;
using hpu::detail::os;

namespace hpu::detail {

namespace {

std::uint64_t to_u64(const void *p)
{
    return reinterpret_cast<std::uintptr_t>(p); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
}

// The fence of syncobj handle as a new sync_file fd.
int export_sync_file(hpu_device *dev, std::uint32_t handle, int &fd)
{
    drm_syncobj_handle req{};
    req.handle = handle;
    req.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
    req.fd = -1;
    if (const int err = drm_ioctl(dev, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &req); err < 0)
        return err;
    if (req.fd < 0)
        return -EPROTO;
    fd = req.fd;
    return 0;
}

// 0 signalled OK, 1 pending, or the fence's (or a system call's) negative
// error.
int query_status(hpu_fence *f)
{
    int st = 0;
    if (const int err = fence_state(f, st); err < 0)
        return err;
    return st;
}

} // namespace

int fence_state(hpu_fence *f, int &job_status)
{
    if (const int cached = f->status.load(std::memory_order_acquire); cached != hpu_fence::kUnknown) {
        job_status = cached;
        return 0;
    }
    if (stale(f->dev, f->epoch))
        return -ENODEV;
    int fd = -1;
    if (const int err = export_sync_file(f->dev, f->handle, fd); err < 0)
        return err;
    sync_file_info info{};
    const int err = drm_ioctl(fd, SYNC_IOC_FILE_INFO, &info);
    (void)os().close(fd);
    if (err < 0)
        return err;
    if (info.status == 0) {
        job_status = 1;
        return 0;
    }
    const int st = info.status > 0 ? 0 : info.status;
    f->status.store(st, std::memory_order_release);
    job_status = st;
    return 0;
}

int syncobj_create(hpu_device *dev, std::uint32_t &handle)
{
    drm_syncobj_create req{};
    if (const int err = drm_ioctl(dev, DRM_IOCTL_SYNCOBJ_CREATE, &req); err < 0)
        return err;
    handle = req.handle;
    return 0;
}

int syncobj_destroy(hpu_device *dev, std::uint32_t handle) noexcept
{
    drm_syncobj_destroy req{};
    req.handle = handle;
    return drm_ioctl(dev, DRM_IOCTL_SYNCOBJ_DESTROY, &req);
}

int syncobj_timeline_wait(hpu_device *dev, std::uint32_t handle, std::uint64_t point, std::int64_t deadline_ns)
{
    drm_syncobj_timeline_wait req{};
    req.handles = to_u64(&handle);
    req.points = to_u64(&point);
    req.timeout_nsec = deadline_ns;
    req.count_handles = 1;
    req.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
    // drm_ioctl restarts with the same (absolute) deadline.
    return drm_ioctl(dev, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &req);
}

} // namespace hpu::detail

extern "C" {

HPU_EXPORT int hpu_fence_wait(hpu_fence_t *f, uint64_t timeout_ns)
{
    if (f == nullptr)
        return -EINVAL;
    if (const int cached = f->status.load(std::memory_order_acquire); cached != hpu_fence::kUnknown)
        return cached;
    if (hpu::detail::stale(f->dev, f->epoch))
        return -ENODEV;
    std::uint32_t handle = f->handle;
    drm_syncobj_wait req{};
    req.handles = hpu::detail::to_u64(&handle);
    req.timeout_nsec = hpu::detail::deadline_after(timeout_ns);
    req.count_handles = 1;
    req.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
    // An interrupted wait is restarted with the same absolute deadline.
    if (const int err = drm_ioctl(f->dev, DRM_IOCTL_SYNCOBJ_WAIT, &req); err < 0)
        return err;
    const int st = hpu::detail::query_status(f);
    // Signalled: never "pending" (1) here.
    return st > 0 ? -EPROTO : st;
}

HPU_EXPORT int hpu_fence_status(hpu_fence_t *f)
{
    if (f == nullptr)
        return -EINVAL;
    return hpu::detail::query_status(f);
}

HPU_EXPORT int hpu_fence_export_fd(hpu_fence_t *f, int *fd)
{
    if (fd == nullptr)
        return -EINVAL;
    *fd = -1;
    if (f == nullptr)
        return -EINVAL;
    if (hpu::detail::stale(f->dev, f->epoch))
        return -ENODEV;
    return hpu::detail::export_sync_file(f->dev, f->handle, *fd);
}

HPU_EXPORT int hpu_fence_import_fd(hpu_device_t *dev, int fd, hpu_fence_t **out)
{
    if (out == nullptr)
        return -EINVAL;
    *out = nullptr;
    if (dev == nullptr || fd < 0)
        return -EINVAL;
    return guarded([&]() {
        auto f = std::make_unique<hpu_fence>();
        f->dev = dev;
        f->epoch = dev->epoch;
        if (const int err = hpu::detail::syncobj_create(dev, f->handle); err < 0)
            return err;
        drm_syncobj_handle req{};
        req.handle = f->handle;
        req.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE;
        req.fd = fd;
        if (const int err = drm_ioctl(dev, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &req); err < 0) {
            (void)hpu::detail::syncobj_destroy(dev, f->handle);
            return err;
        }
        *out = f.release();
        return 0;
    });
}

HPU_EXPORT int hpu_fence_destroy(hpu_fence_t *f)
{
    if (f == nullptr)
        return 0;
    // The syncobj of a file reopened since died with that file.
    const int err = hpu::detail::stale(f->dev, f->epoch) ? 0 : hpu::detail::syncobj_destroy(f->dev, f->handle);
    delete f; // NOLINT(cppcoreguidelines-owning-memory)
    return err;
}

} // extern "C"
