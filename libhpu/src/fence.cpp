// SPDX-License-Identifier: MIT
// Fences: one binary drm_syncobj each. Waits use DRM_IOCTL_SYNCOBJ_WAIT with
// an absolute CLOCK_MONOTONIC deadline; a job's error comes from the fence
// exported as a sync_file (SYNC_IOC_FILE_INFO status), so is the time it
// signalled (hpu_fence_signal_time()). A user queue's fence is a point of
// that queue instead: its state comes from the completion records, its
// waits from UserQueue::wait(), its sync_file from DRM_IOCTL_HPU_UQ_FENCE
// into a temporary syncobj.
//
// Copyright (c) 2026 The hpu authors
#include "compute.h"
#include "fence.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <mutex>

#include <poll.h>

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

namespace {

// The state of one syncobj of f: 0 and st (0 signalled OK, 1 pending, or
// its job's negative errno), or a system call's negative errno. With
// timestamp_ns, also when its job's fence signalled (0: pending).
int handle_state(hpu_fence *f, std::uint32_t handle, int &st, std::uint64_t *timestamp_ns = nullptr)
{
    int fd = -1;
    if (const int err = f->dev->kmd.syncobj_export_sync_file(handle, fd); err < 0)
        return err;
    std::int32_t status = 0;
    const int err = f->dev->kmd.sync_file_status(fd, status, timestamp_ns);
    (void)f->dev->os().close(fd);
    if (err < 0)
        return err;
    st = status == 0 ? 1 : (status > 0 ? 0 : status);
    return 0;
}

// The failed job of a fence that ended first (none: handle 0).
struct FirstFailed {
    std::uint32_t handle = 0;
    int st = 0;                              // its negative errno
    const hpu_fence_member *member = nullptr; // null: the join (f's own job)
};

// Every job of f (a launch's members and its join): 0, with pending (a job
// has not ended) and first, the failed job that ended first: the earliest
// SYNC_IOC_FILE_INFO timestamp, equal ones in graph order (the job of the
// earlier first node); or a system call's negative errno. A fence with
// no members is just its own job.
int scan_jobs(hpu_fence *f, bool &pending, FirstFailed &first)
{
    pending = false;
    first = FirstFailed{};
    const bool launch = !f->members.empty();
    std::uint64_t first_ts = 0;
    std::uint32_t first_node = 0;
    const auto one = [&](std::uint32_t handle, const hpu_fence_member *m, std::uint32_t node) {
        int st = 0;
        std::uint64_t ts = 0;
        if (const int err = handle_state(f, handle, st, launch ? &ts : nullptr); err < 0)
            return err;
        pending = pending || st == 1;
        if (st < 0 && (first.handle == 0 || ts < first_ts || (ts == first_ts && node < first_node))) {
            first = FirstFailed{handle, st, m};
            first_ts = ts;
            first_node = node;
        }
        return 0;
    };
    for (const hpu_fence_member &m : f->members) {
        if (const int err = one(m.handle, &m, m.first_node); err < 0)
            return err;
    }
    return one(f->handle, nullptr, f->first_node);
}

// Caches st as f's final state (once: a second caller, who saw the same
// final states, changes nothing); a member's error names that member's
// job. Under f->mu: queue_id and seq are written only here, before status
// is published, so a reader that saw status settled reads them race-free.
void settle(hpu_fence *f, int st, const hpu_fence_member *m)
{
    const std::lock_guard<std::mutex> lock(f->mu);
    if (f->status.load(std::memory_order_relaxed) != hpu_fence::kUnknown)
        return;
    if (m != nullptr) {
        f->queue_id = m->queue_id;
        f->seq = m->seq;
    }
    f->status.store(st, std::memory_order_release);
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
    if (f->uq) {
        int st = 0;
        if (const int err = f->uq->state(f->uq_point, st, true); err < 0)
            return err;
        if (st != 1)
            settle(f, st, nullptr);
        job_status = st;
        return 0;
    }
    // A launch is done once every job has ended (a failed one lets the
    // others run on: graph.cpp); then the error of the failed job that
    // ended first (the cause; later failures may be its consequences),
    // else success.
    bool pending = false;
    FirstFailed first;
    if (const int err = scan_jobs(f, pending, first); err < 0)
        return err;
    if (pending) {
        job_status = 1;
        return 0;
    }
    settle(f, first.handle != 0 ? first.st : 0, first.member);
    job_status = f->status.load(std::memory_order_acquire);
    return 0;
}

int fence_wait(hpu_fence *f, std::int64_t deadline)
{
    if (f->uq) {
        if (const int err = f->uq->wait(f->uq_point, deadline); err < 0)
            return err;
        int st = 0;
        if (const int err = fence_state(f, st); err < 0)
            return err;
        return st > 0 ? -EPROTO : st;
    }
    // Every job of a launch: a failed member's error is the launch's only
    // once all have ended (its release job lets the others run on soon).
    for (const hpu_fence_member &m : f->members) {
        if (const int err = f->dev->kmd.syncobj_wait(m.handle, deadline); err < 0)
            return err;
    }
    if (const int err = f->dev->kmd.syncobj_wait(f->handle, deadline); err < 0)
        return err;
    int st = 0;
    if (const int err = fence_state(f, st); err < 0)
        return err;
    return st > 0 ? -EPROTO : st; // signalled: never "pending" (1) here
}

int fence_syncobj(hpu_fence *f, std::uint32_t &handle)
{
    if (!f->uq) {
        handle = f->handle;
        return 0;
    }
    const std::lock_guard<std::mutex> lock(f->mu);
    if (f->handle == 0) {
        std::uint32_t h = 0;
        if (const int err = f->dev->kmd.syncobj_create(h); err < 0)
            return err;
        if (const int err = f->uq->fence_into(f->uq_point, h); err < 0) {
            (void)f->dev->kmd.syncobj_destroy(h);
            return err;
        }
        f->handle = h;
    }
    handle = f->handle;
    return 0;
}

namespace {

// How long an export waits for the driver to take in a point the library
// has seen complete: the write-back record and interrupt follow the
// completion record at once.
constexpr std::int64_t kExportCatchUpNs = 1'000'000'000;

// A user queue fence as a new sync_file: UQ_FENCE into a temporary
// syncobj, exported, the syncobj destroyed. A settled successful point
// of a queue destroyed since: a signalled fence.
int export_uq(hpu_fence *f, int &fd)
{
    Kmd &kmd = f->dev->kmd;
    std::uint32_t h = 0;
    if (const int err = kmd.syncobj_create(h); err < 0)
        return err;
    // A fence settled here is settled in the file too (hpu.h).
    const std::int64_t catch_up = f->dev->os().monotonic_ns() + kExportCatchUpNs;
    int err = f->uq->fence_into(f->uq_point, h, catch_up);
    if (err < 0) {
        int st = 0;
        if (fence_state(f, st) == 0 && st == 0) {
            (void)kmd.syncobj_destroy(h);
            if (const int e = kmd.syncobj_create(h, true); e < 0)
                return e;
            err = 0;
        }
    }
    if (err == 0)
        err = kmd.syncobj_export_sync_file(h, fd);
    (void)kmd.syncobj_destroy(h);
    return err;
}

} // namespace

namespace {

// The fence of a launch (f with members) as one sync_file: the join's and
// the members' merged. The kernel's merge leaves out fences signalled
// already, with their errors; so when a job has failed by the time of the
// merge (checked after it: a failure after the merge is in the merged
// fence), the launch is waited for and the fd is the failed job's own
// sync_file (signalled, in error), the one hpu_fence_status() names.
int export_launch(hpu_fence *f, int &fd)
{
    Kmd &kmd = f->dev->kmd;
    Os &os = f->dev->os();
    int merged = -1;
    if (const int err = kmd.syncobj_export_sync_file(f->handle, merged); err < 0)
        return err;
    for (const hpu_fence_member &m : f->members) {
        int one = -1;
        int next = -1;
        int err = kmd.syncobj_export_sync_file(m.handle, one);
        if (err >= 0) {
            err = kmd.sync_file_merge(merged, one, next);
            (void)os.close(one);
        }
        (void)os.close(merged);
        if (err < 0)
            return err;
        merged = next;
    }
    // A merged fence (a dma_fence_array) keeps its parts' errors only once
    // signalling is enabled on it: a status read after every part has
    // signalled would otherwise find no error (6.12's
    // dma_fence_array_signaled() clears the pending one). A zero-timeout
    // poll adds the callback that enables it, for parts signalled already
    // and later ones alike.
    pollfd pfd{merged, POLLIN, 0};
    (void)os.poll(&pfd, 1, 0);
    // The failed job that ended first, as fence_state() chooses (0: none).
    const auto first_failed = [f](std::uint32_t &handle) {
        bool pending = false;
        FirstFailed first;
        const int err = scan_jobs(f, pending, first);
        handle = first.handle;
        return err;
    };
    std::uint32_t failed = 0;
    if (const int err = first_failed(failed); err < 0) {
        (void)os.close(merged);
        return err;
    }
    if (failed == 0) {
        fd = merged;
        return 0;
    }
    (void)os.close(merged);
    if (const int err = fence_wait(f, INT64_MAX); err < 0 && err != -EPROTO && f->status.load() == hpu_fence::kUnknown)
        return err; // a system call's
    if (const int err = first_failed(failed); err < 0)
        return err;
    return kmd.syncobj_export_sync_file(failed != 0 ? failed : f->handle, fd);
}

} // namespace

namespace {

// When every job of f ended (signalled, successfully or not): 0 and ns,
// the latest of their signal times; -EBUSY while one is pending; or a
// system call's negative errno.
int signal_time(hpu_fence *f, std::uint64_t &ns)
{
    int st = 0;
    if (const int err = fence_state(f, st); err < 0)
        return err;
    if (st == 1)
        return -EBUSY;
    // A final state may be cached from before the file was reopened; the
    // syncobjs died with that file.
    if (stale(f->dev, f->epoch))
        return -ENODEV;
    Kmd &kmd = f->dev->kmd;
    if (f->uq) {
        // The device's completion time from its record, else the driver's
        // fence of the point.
        if (const int err = f->uq->completion_time(f->uq_point, ns); err != -ENODATA)
            return err;
        int fd = -1;
        if (const int err = export_uq(f, fd); err < 0)
            return err;
        std::uint64_t ts = 0;
        const int err = kmd.sync_file_signal_time(fd, ts);
        (void)f->dev->os().close(fd);
        if (err < 0)
            return err;
        if (ts == 0)
            return -ENODATA;
        ns = ts;
        return 0;
    }
    std::uint64_t latest = 0;
    const auto one = [&](std::uint32_t handle) {
        int fd = -1;
        if (const int err = kmd.syncobj_export_sync_file(handle, fd); err < 0)
            return err;
        std::uint64_t ts = 0;
        const int err = kmd.sync_file_signal_time(fd, ts);
        (void)f->dev->os().close(fd);
        if (err < 0)
            return err;
        // Signalled (fence_state() saw it) without a time: nothing to
        // give (a stub fence without one, imported).
        if (ts == 0)
            return -ENODATA;
        latest = std::max(latest, ts);
        return 0;
    };
    for (const hpu_fence_member &m : f->members) {
        if (const int err = one(m.handle); err < 0)
            return err;
    }
    if (const int err = one(f->handle); err < 0)
        return err;
    ns = latest;
    return 0;
}

} // namespace

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
    return hpu::detail::fence_wait(f, deadline);
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
    if (!f->members.empty())
        return guarded([&]() { return hpu::detail::export_launch(f, *fd); });
    if (f->uq)
        return hpu::detail::export_uq(f, *fd);
    return f->dev->kmd.syncobj_export_sync_file(f->handle, *fd);
}

HPU_EXPORT int hpu_fence_signal_time(hpu_fence_t *f, uint64_t *ns)
{
    hpu::detail::clear_error();
    if (ns == nullptr)
        return -EINVAL;
    *ns = 0;
    if (f == nullptr)
        return -EINVAL;
    return guarded([&]() { return hpu::detail::signal_time(f, *ns); });
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
    int err = 0;
    if (!hpu::detail::stale(f->dev, f->epoch)) {
        if (f->handle != 0) // a user queue fence may have none
            err = f->dev->kmd.syncobj_destroy(f->handle);
        for (const hpu_fence_member &m : f->members) {
            const int e = f->dev->kmd.syncobj_destroy(m.handle);
            err = err < 0 ? err : e;
        }
    }
    delete f; // NOLINT(cppcoreguidelines-owning-memory)
    return err;
}

} // extern "C"
