// SPDX-License-Identifier: MIT
// Fences: one binary drm_syncobj each. Waits use DRM_IOCTL_SYNCOBJ_WAIT with
// an absolute CLOCK_MONOTONIC deadline; a job's error comes from the fence
// exported as a sync_file (SYNC_IOC_FILE_INFO status).
//
// Copyright (c) 2026 The hpu authors
#include "compute.h"
#include "fence.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>

#include "common.h"
#include "device.h"
#include "kmd.h"
#include "os.h"

using hpu::detail::guarded;

namespace hpu::detail {

namespace {

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
    if (const int err = f->dev->kmd.syncobj_export_sync_file(f->handle, fd); err < 0)
        return err;
    std::int32_t status = 0;
    const int err = f->dev->kmd.sync_file_status(fd, status);
    (void)f->dev->os().close(fd);
    if (err < 0)
        return err;
    if (status == 0) {
        job_status = 1;
        return 0;
    }
    const int st = status > 0 ? 0 : status;
    f->status.store(st, std::memory_order_release);
    job_status = st;
    return 0;
}

std::int64_t deadline_after(Os &os, std::uint64_t timeout_ns)
{
    const std::int64_t now = os.monotonic_ns();
    if (timeout_ns >= static_cast<std::uint64_t>(INT64_MAX - std::max<std::int64_t>(now, 0)))
        return INT64_MAX;
    return now + static_cast<std::int64_t>(timeout_ns);
}

} // namespace hpu::detail

extern "C" {

HPU_EXPORT int hpu_fence_wait(hpu_fence_t *f, uint64_t timeout_ns)
{
    hpu::detail::clear_error();
    if (f == nullptr)
        return -EINVAL;
    if (const int cached = f->status.load(std::memory_order_acquire); cached != hpu_fence::kUnknown)
        return cached;
    if (hpu::detail::stale(f->dev, f->epoch))
        return -ENODEV;
    // An interrupted wait is restarted with the same absolute deadline.
    const std::int64_t deadline = hpu::detail::deadline_after(f->dev->os(), timeout_ns);
    if (const int err = f->dev->kmd.syncobj_wait(f->handle, deadline); err < 0)
        return err;
    const int st = hpu::detail::query_status(f);
    // Signalled: never "pending" (1) here.
    return st > 0 ? -EPROTO : st;
}

HPU_EXPORT int hpu_fence_status(hpu_fence_t *f)
{
    hpu::detail::clear_error();
    if (f == nullptr)
        return -EINVAL;
    return hpu::detail::query_status(f);
}

HPU_EXPORT int hpu_fence_export_fd(hpu_fence_t *f, int *fd)
{
    hpu::detail::clear_error();
    if (fd == nullptr)
        return -EINVAL;
    *fd = -1;
    if (f == nullptr)
        return -EINVAL;
    if (hpu::detail::stale(f->dev, f->epoch))
        return -ENODEV;
    return f->dev->kmd.syncobj_export_sync_file(f->handle, *fd);
}

HPU_EXPORT int hpu_fence_import_fd(hpu_device_t *dev, int fd, hpu_fence_t **out)
{
    hpu::detail::clear_error();
    if (out == nullptr)
        return -EINVAL;
    *out = nullptr;
    if (dev == nullptr || fd < 0)
        return -EINVAL;
    return guarded([&]() {
        auto f = std::make_unique<hpu_fence>();
        f->dev = dev;
        f->epoch = dev->epoch;
        if (const int err = dev->kmd.syncobj_create(f->handle); err < 0)
            return err;
        if (const int err = dev->kmd.syncobj_import_sync_file(f->handle, fd); err < 0) {
            (void)dev->kmd.syncobj_destroy(f->handle);
            return err;
        }
        *out = f.release();
        return 0;
    });
}

HPU_EXPORT int hpu_fence_destroy(hpu_fence_t *f)
{
    hpu::detail::clear_error();
    if (f == nullptr)
        return 0;
    // The syncobj of a file reopened since died with that file.
    const int err = hpu::detail::stale(f->dev, f->epoch) ? 0 : f->dev->kmd.syncobj_destroy(f->handle);
    delete f; // NOLINT(cppcoreguidelines-owning-memory)
    return err;
}

} // extern "C"
