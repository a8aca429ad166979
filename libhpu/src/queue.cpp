// SPDX-License-Identifier: MIT
// Queues, command lists (recorded packets) and submission.
//
// A command list records packets into a HOST buffer the device maps
// read-only. Each submission adds, besides the caller's fence, point N (its
// Nth submission) to the list's own timeline syncobj, so the library knows
// when no job reads a command buffer any more: a buffer replaced while jobs
// still read it (growth, reset) is retired with that point and freed once
// it has signalled, at the latest when the list is destroyed (which waits).
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <string_view>
#include <vector>

#include "queue.h"

#include "common.h"
#include "compute.h"
#include "device.h"
#include "drm/hpu_accel.h"
#include "fence.h"
#include "hw/hpu_regs.h"
#include "kmd.h"
#include "memory.h"
#include "packets.h"
#include "uqueue.h"

using hpu::detail::BufferPtr;
using hpu::detail::guarded;

namespace hpu::detail {

namespace {

constexpr std::size_t kInitialCapacity = 4096;
constexpr std::size_t kMaxCapacity = HPU_CB_MAX_SIZE;
// Eager command lists a queue keeps (and jobs it lets run before waiting).
constexpr std::size_t kEagerPool = 64;
// Size of each HOST buffer holding a command list's descriptors.
constexpr std::size_t kDataChunk = std::size_t{64} * 1024;

std::uint8_t *cb_ptr(const hpu_cmdlist *cl)
{
    return static_cast<std::uint8_t *>(cl->buf->mmap_addr);
}

} // namespace

// True (and no system call) when no job of cl can still be running,
// otherwise asks without waiting: the kernel for its timeline point, the
// completion records of the user queues it went to. 1 idle, 0 busy, or
// -errno.
int cmdlist_idle(hpu_cmdlist *cl)
{
    if (cl->completed == cl->submitted)
        return 1;
    if (cl->kdone != cl->kpoint) {
        const int err = cl->dev->kmd.syncobj_timeline_wait(cl->timeline, cl->kpoint, 0);
        if (err == -ETIME)
            return 0;
        if (err < 0)
            return err;
        cl->kdone = cl->kpoint;
    }
    for (const auto &[uq, point] : cl->uq_points) {
        int st = 0;
        if (const int err = uq->state(point, st); err < 0)
            return err;
        if (st == 1)
            return 0;
    }
    cl->uq_points.clear();
    cl->completed = cl->submitted;
    return 1;
}

int cmdlist_wait(hpu_cmdlist *cl)
{
    if (cl->completed == cl->submitted)
        return 0;
    if (cl->kdone != cl->kpoint) {
        if (const int err = cl->dev->kmd.syncobj_timeline_wait(cl->timeline, cl->kpoint, INT64_MAX); err < 0)
            return err;
        cl->kdone = cl->kpoint;
    }
    for (const auto &[uq, point] : cl->uq_points) {
        if (const int err = uq->wait(point, INT64_MAX); err < 0)
            return err;
    }
    cl->uq_points.clear();
    cl->completed = cl->submitted;
    return 0;
}

namespace {

// Frees the retired buffers whose jobs have ended.
void reap_retired(hpu_cmdlist *cl)
{
    auto &r = cl->retired;
    r.erase(std::remove_if(r.begin(), r.end(), [cl](const Retired &e) { return e.point <= cl->completed; }),
            r.end());
}

// Gives up the current command buffer (and with data, the descriptors and
// kernels too): freed now if idle, else retired.
int retire_buffer(hpu_cmdlist *cl, bool data)
{
    if (!cl->buf && (!data || (cl->data.chunks.empty() && cl->data.kernels.empty())))
        return 0;
    const int idle = cmdlist_idle(cl);
    if (idle < 0)
        return idle;
    if (idle == 1) {
        cl->buf.reset();
        if (data)
            cl->data = CmdData{};
        reap_retired(cl);
    } else {
        Retired r;
        r.buf = std::move(cl->buf);
        if (data)
            r.data = std::exchange(cl->data, CmdData{});
        r.point = cl->submitted;
        cl->retired.push_back(std::move(r));
    }
    return 0;
}

// An idle list about to be recorded again keeps its first data chunk.
void reuse_data(CmdData &d)
{
    if (d.chunks.size() > 1)
        d.chunks.resize(1);
    d.chunk_used = 0;
    d.kernels.clear();
}

// Makes room for bytes more; -ENOSPC beyond the command-buffer limit.
int reserve(hpu_cmdlist *cl, std::size_t bytes)
{
    if (bytes > kMaxCapacity - cl->used)
        return -ENOSPC;
    const std::size_t need = cl->used + bytes;
    const std::size_t cap = cl->buf ? cl->buf->size : 0;
    if (need <= cap)
        return 0;
    std::size_t new_cap = std::max(cap, kInitialCapacity);
    while (new_cap < need)
        new_cap *= 2;
    new_cap = std::min(new_cap, kMaxCapacity);
    BufferPtr nb;
    if (const int err = buffer_create(cl->dev, new_cap, HPU_MEM_HOST | HPU_MEM_READONLY, nb); err < 0)
        return err;
    if (cl->used > 0)
        std::memcpy(nb->mmap_addr, cl->buf->mmap_addr, cl->used);
    if (const int err = retire_buffer(cl, false); err < 0)
        return err; // nb is freed; the list is unchanged
    cl->buf = std::move(nb);
    return 0;
}

// LIN_DMA packets for [dst, dst + size), in chunks of at most 4 GiB.
int record_dma(hpu_cmdlist *cl, std::uint32_t flags, std::uint64_t dst, std::uint64_t src, std::uint64_t size)
{
    const bool memset = (flags & HPU_LIN_DMA_MEMSET) != 0;
    if (!range_ok(dst, size) || (!memset && !range_ok(src, size)))
        return -EINVAL;
    const std::uint64_t chunks = (size + pkt::kMaxDmaChunk - 1) / pkt::kMaxDmaChunk;
    if (chunks > kMaxCapacity / pkt::kLinDmaSize)
        return -ENOSPC;
    if (const int err = reserve(cl, static_cast<std::size_t>(chunks) * pkt::kLinDmaSize); err < 0)
        return err;
    std::uint64_t done = 0;
    while (done < size) {
        const std::uint64_t n = std::min(size - done, pkt::kMaxDmaChunk);
        pkt::lin_dma(cb_ptr(cl) + cl->used, flags, memset ? src : src + done, dst + done, n); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        cl->used += pkt::kLinDmaSize;
        done += n;
    }
    return 0;
}

template <typename F>
int record(hpu_cmdlist *cl, std::size_t bytes, F &&write)
{
    if (cl == nullptr)
        return -EINVAL;
    if (stale(cl->dev, cl->epoch))
        return -ENODEV;
    return guarded([&]() {
        if (const int err = reserve(cl, bytes); err < 0)
            return err;
        write(cb_ptr(cl) + cl->used); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        cl->used += bytes;
        return 0;
    });
}

} // namespace

// Frees a command list after waiting for its jobs; the first error.
int cmdlist_free(hpu_cmdlist *cl) noexcept
{
    if (cl == nullptr)
        return 0;
    int err = 0;
    // The syncobj of a file reopened since died with it (its buffers know
    // that too).
    const bool dead = stale(cl->dev, cl->epoch);
    if (!dead)
        err = cmdlist_wait(cl); // even when it fails (device gone), nothing can be done but free
    cl->uq_points.clear();
    cl->retired.clear();
    cl->buf.reset();
    cl->data = CmdData{};
    if (cl->timeline != 0 && !dead) {
        const int e = cl->dev->kmd.syncobj_destroy(cl->timeline);
        err = err < 0 ? err : e;
    }
    delete cl; // NOLINT(cppcoreguidelines-owning-memory)
    return err;
}

int cmdlist_new(hpu_device *dev, hpu_cmdlist *&out)
{
    auto cl = std::make_unique<hpu_cmdlist>();
    cl->dev = dev;
    cl->epoch = dev->epoch;
    if (const int err = dev->kmd.syncobj_create(cl->timeline); err < 0)
        return err;
    out = cl.release();
    return 0;
}

namespace {

// A syncobj of q's made on first use (handle 0 until then).
int queue_syncobj(hpu_queue *q, std::uint32_t &handle)
{
    if (handle != 0)
        return 0;
    return q->dev->kmd.syncobj_create(handle);
}

// Whether w's jobs have all ended, without waiting: 1 yes, 0 no, -errno.
int fence_ended(hpu_fence *w)
{
    if (w->status.load(std::memory_order_acquire) != hpu_fence::kUnknown)
        return 1;
    if (w->uq) {
        int st = 0;
        if (const int err = w->uq->state(w->uq_point, st); err < 0)
            return err;
        return st == 1 ? 0 : 1;
    }
    const auto ended = [w](std::uint32_t h) {
        const int err = w->dev->kmd.syncobj_wait(h, 0);
        return err == -ETIME ? 0 : (err < 0 ? err : 1);
    };
    for (const hpu_fence_member &m : w->members) {
        if (const int e = ended(m.handle); e <= 0)
            return e;
    }
    return ended(w->handle);
}

// Whether a job of q may go to its user queue: 1 yes, 0 no (the kernel
// path), -errno. Yes when it waits for nothing the user queue cannot
// order: only fences ended already or of this user queue (earlier points:
// the ring runs in order), and once q's last kernel-path job has ended.
int uq_path(hpu_queue *q, const hpu_fence_t *const *waits, std::size_t num_waits,
            std::span<const SyncPoint> extra_waits, std::span<const SyncPoint> extra_signals,
            std::uint32_t timeout_ms)
{
    if (!q->uq || q->uq_off || !extra_waits.empty() || !extra_signals.empty() ||
        timeout_ms != HPU_JOB_TIMEOUT_DEFAULT || !q->uq->usable())
        return 0;
    for (std::size_t i = 0; i < num_waits; ++i) {
        auto *w = const_cast<hpu_fence *>(waits[i]); // NOLINT(cppcoreguidelines-pro-type-const-cast,cppcoreguidelines-pro-bounds-pointer-arithmetic)
        if (w->uq == q->uq)
            continue;
        if (const int e = fence_ended(w); e <= 0)
            return e == 0 || e == -EINVAL ? 0 : e; // -EINVAL: no fence yet, the kernel decides
    }
    if (q->kernel_pending) {
        const int err = q->dev->kmd.syncobj_wait(q->kernel_last, 0);
        if (err < 0)
            return 0; // -ETIME: still running; other errors: the kernel path tells them
        q->kernel_pending = false;
    }
    return 1;
}

// Submits cl to q's user queue: 0, or -EAGAIN when the queue cannot take
// it (dead: the kernel path then), or -errno.
int submit_uq(hpu_queue *q, hpu_cmdlist *cl, hpu_fence_t **out)
{
    UserQueue &uq = *q->uq;
    auto it = std::find_if(cl->uq_points.begin(), cl->uq_points.end(),
                           [&](const auto &e) { return e.first == q->uq; });
    if (it == cl->uq_points.end()) {
        cl->uq_points.emplace_back(q->uq, 0);
        it = cl->uq_points.end() - 1;
    }
    std::unique_ptr<hpu_fence> fence;
    if (out != nullptr)
        fence = std::make_unique<hpu_fence>();
    std::uint64_t point = 0;
    if (const int err = uq.submit(cl->buf->map_va, static_cast<std::uint32_t>(cl->used), point); err < 0) {
        if (it->second == 0)
            cl->uq_points.erase(it);
        return uq.usable() ? err : -EAGAIN;
    }
    it->second = point;
    ++cl->submitted;
    if (fence) {
        fence->dev = q->dev;
        fence->epoch = q->dev->epoch;
        fence->queue_id = uq.id();
        fence->seq = point;
        fence->uq = q->uq;
        fence->uq_point = point;
        *out = fence.release();
    }
    return 0;
}

// For the first kernel-path job after user-queue jobs of q: the fence of
// the last of them in q->switch_sync, an in-sync (in[n_in], n_in grows),
// unless it has ended; without room for it, waits for it here.
int order_after_uq(hpu_queue *q, std::array<SyncPoint, DRM_HPU_MAX_SYNCS> &in, std::size_t &n_in,
                   std::uint64_t &ordered)
{
    ordered = q->uq_ordered;
    if (!q->uq)
        return 0;
    const std::uint64_t last = q->uq->submitted();
    if (last <= q->uq_ordered)
        return 0;
    int st = 0;
    if (const int err = q->uq->state(last, st); err < 0)
        return err;
    if (st != 1) {
        ordered = last;
        return 0;
    }
    if (n_in == DRM_HPU_MAX_SYNCS) {
        if (const int err = q->uq->wait(last, INT64_MAX); err < 0)
            return err;
        ordered = last;
        return 0;
    }
    if (const int err = queue_syncobj(q, q->switch_sync); err < 0)
        return err;
    if (const int err = q->uq->fence_into(last, q->switch_sync); err < 0)
        return err;
    in.at(n_in++).handle = q->switch_sync;
    ordered = last;
    return 0;
}

} // namespace

int submit_raw(hpu_queue *q, hpu_cmdlist *cl, const hpu_fence_t *const *waits, std::size_t num_waits,
               std::span<const SyncPoint> extra_waits, std::span<const SyncPoint> extra_signals,
               std::uint32_t timeout_ms, hpu_fence_t **out, SubmitBatch *batch)
{
    if (out != nullptr)
        *out = nullptr;
    if (batch != nullptr && batch->full())
        return -ENOSPC;
    if (q == nullptr || cl == nullptr || (waits == nullptr && num_waits != 0) ||
        num_waits + extra_waits.size() > DRM_HPU_MAX_SYNCS || extra_signals.size() + 2 > DRM_HPU_MAX_SYNCS ||
        timeout_ms > HPU_JOB_TIMEOUT_MAX_MS)
        return -EINVAL;
    if (cl->used == 0)
        return -EINVAL;
    if (cl->dev != q->dev)
        return -EXDEV;
    if (stale(q->dev, q->epoch) || stale(cl->dev, cl->epoch))
        return -ENODEV;
    for (size_t i = 0; i < num_waits; ++i) {
        const hpu_fence *w = waits[i]; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        if (w == nullptr)
            return -EINVAL;
        if (w->dev != q->dev)
            return -EXDEV;
        if (stale(w->dev, w->epoch))
            return -ENODEV;
    }
    if (batch == nullptr && q->uq) {
        const int use = uq_path(q, waits, num_waits, extra_waits, extra_signals, timeout_ms);
        if (use < 0)
            return use;
        if (use == 1) {
            if (const int err = submit_uq(q, cl, out); err != -EAGAIN)
                return err;
        }
    }
    // A graph launch's fence is waited for as every job of the launch (the
    // join's syncobj and its members'): the waiter starts once all ended.
    // A user queue's fence that has not ended: its syncobj (UQ_FENCE).
    std::array<SyncPoint, DRM_HPU_MAX_SYNCS> in{};
    std::size_t n_in = 0;
    for (size_t i = 0; i < num_waits; ++i) {
        auto *w = const_cast<hpu_fence *>(waits[i]); // NOLINT(cppcoreguidelines-pro-type-const-cast,cppcoreguidelines-pro-bounds-pointer-arithmetic)
        if (n_in + 1 + w->members.size() + extra_waits.size() > DRM_HPU_MAX_SYNCS)
            return -EINVAL;
        if (w->uq) {
            if (const int e = fence_ended(w); e != 0) {
                if (e < 0)
                    return e;
                continue;
            }
        }
        std::uint32_t h = 0;
        if (const int err = fence_syncobj(w, h); err < 0)
            return err;
        in.at(n_in++).handle = h;
        for (const hpu_fence_member &m : w->members)
            in.at(n_in++).handle = m.handle;
    }
    std::copy(extra_waits.begin(), extra_waits.end(), in.begin() + static_cast<std::ptrdiff_t>(n_in));
    n_in += extra_waits.size();
    // Order after the user queue's jobs; and note this job's end for the
    // way back (no room for that: the kernel path from now on).
    std::uint64_t ordered = 0;
    if (const int err = order_after_uq(q, in, n_in, ordered); err < 0)
        return err;
    const bool track = q->uq && !q->uq_off && extra_signals.size() + 3 <= DRM_HPU_MAX_SYNCS;
    if (track) {
        if (const int err = queue_syncobj(q, q->kernel_last); err < 0)
            return err;
    }
    std::unique_ptr<hpu_fence> fence;
    if (out != nullptr) {
        // Before any system call, and never thrown out of here: a graph
        // launch submits several jobs in a row and must be able to unwind.
        try {
            fence = std::make_unique<hpu_fence>();
        } catch (const std::bad_alloc &) {
            return -ENOMEM;
        }
        fence->dev = q->dev;
        fence->epoch = q->dev->epoch;
        fence->queue_id = q->id;
        if (const int err = q->dev->kmd.syncobj_create(fence->handle); err < 0)
            return err;
    }
    std::array<SyncPoint, DRM_HPU_MAX_SYNCS> outs{};
    std::size_t n_out = 0;
    outs.at(n_out).handle = cl->timeline;
    outs.at(n_out++).point = cl->submitted + 1;
    if (fence)
        outs.at(n_out++).handle = fence->handle;
    if (track)
        outs.at(n_out++).handle = q->kernel_last;
    for (const SyncPoint &sp : extra_signals)
        outs.at(n_out++) = sp;

    SubmitArgs args;
    args.queue_id = q->id;
    args.cb_va = cl->buf->map_va;
    args.cb_size = static_cast<std::uint32_t>(cl->used);
    args.waits = std::span<const SyncPoint>(in.data(), n_in);
    args.signals = std::span<const SyncPoint>(outs.data(), n_out);
    args.timeout_ms = timeout_ms;
    if (batch != nullptr) {
        SubmitBatch::Entry &e = batch->add();
        e.in = in;
        e.out = outs;
        e.args = args;
        e.args.waits = std::span<const SyncPoint>(e.in.data(), args.waits.size());
        e.args.signals = std::span<const SyncPoint>(e.out.data(), n_out);
        e.seq = fence ? &fence->seq : nullptr;
        e.cl = cl;
        e.prev_kpoint = cl->kpoint;
        ++cl->submitted;
        cl->kpoint = cl->submitted;
        q->uq_off = q->uq_off || q->uq; // (graph queues have none: not tracked in batches)
        if (out != nullptr)
            *out = fence.release();
        return 0;
    }
    std::uint64_t seq = 0;
    if (const int err = q->dev->kmd.submit(args, seq); err < 0) {
        if (fence)
            (void)q->dev->kmd.syncobj_destroy(fence->handle);
        return err;
    }
    ++cl->submitted;
    cl->kpoint = cl->submitted;
    q->uq_ordered = ordered;
    if (q->uq) {
        q->kernel_pending = track;
        q->uq_off = q->uq_off || !track;
    }
    if (fence)
        fence->seq = seq;
    if (out != nullptr)
        *out = fence.release();
    return 0;
}

bool SubmitBatch::supported(hpu_device *dev)
{
    int known = dev->submit_array.load(std::memory_order_relaxed);
    if (known < 0) {
        drm_hpu_info_device answer{};
        if (dev->kmd.info_device(answer) < 0)
            return false; // asked again next time
        known = answer.driver_major > 1 || (answer.driver_major == 1 && answer.driver_minor >= 1) ? 1 : 0;
        dev->submit_array.store(known, std::memory_order_relaxed);
    }
    return known == 1;
}

void SubmitBatch::rollback()
{
    for (std::size_t i = n_; i-- > 0;) {
        --entries_.at(i).cl->submitted;
        entries_.at(i).cl->kpoint = entries_.at(i).prev_kpoint;
    }
    n_ = 0;
}

int submit_flush(hpu_device *dev, SubmitBatch &batch)
{
    const std::size_t n = batch.size();
    if (n == 0)
        return 0;
    std::array<SubmitArgs, SubmitBatch::kMax> args{};
    std::array<std::uint64_t, SubmitBatch::kMax> seqs{};
    for (std::size_t i = 0; i < n; ++i)
        args.at(i) = batch.at(i).args;
    const int err = n == 1 ? dev->kmd.submit(args[0], seqs[0])
                           : dev->kmd.submit_array(std::span<const SubmitArgs>(args.data(), n),
                                                   std::span<std::uint64_t>(seqs.data(), n));
    if (err < 0) {
        batch.rollback();
        return err;
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (batch.at(i).seq != nullptr)
            *batch.at(i).seq = seqs.at(i);
    }
    batch.clear();
    return 0;
}

namespace {

int submit(hpu_queue *q, hpu_cmdlist *cl, const hpu_fence_t *const *waits, size_t num_waits,
           std::uint32_t timeout_ms, hpu_fence_t **out)
{
    return submit_raw(q, cl, waits, num_waits, {}, {}, timeout_ms, out);
}

// Takes an idle command list for an eager command from q's pool (or a new
// one); waits for the oldest when kEagerPool jobs are in flight.
int eager_take(hpu_queue *q, hpu_cmdlist *&cl)
{
    if (!q->eager.empty()) {
        hpu_cmdlist *front = q->eager.front();
        int idle = cmdlist_idle(front);
        if (idle < 0)
            return idle;
        if (idle == 0 && q->eager.size() >= kEagerPool) {
            if (const int err = cmdlist_wait(front); err < 0)
                return err;
            idle = 1;
        }
        if (idle == 1) {
            q->eager.pop_front();
            front->used = 0;
            reuse_data(front->data);
            reap_retired(front);
            cl = front;
            return 0;
        }
    }
    return cmdlist_new(q->dev, cl);
}

// Puts an eager command list back into the pool (frees it if that fails).
void eager_put(hpu_queue *q, hpu_cmdlist *cl)
{
    try {
        q->eager.push_back(cl);
    } catch (...) {
        (void)cmdlist_free(cl);
        throw;
    }
}

template <typename F>
int eager(hpu_queue *q, const hpu_fence_t *const *waits, size_t num_waits, hpu_fence_t **out, F &&rec)
{
    if (out != nullptr)
        *out = nullptr;
    if (q == nullptr)
        return -EINVAL;
    if (stale(q->dev, q->epoch))
        return -ENODEV;
    return guarded([&]() {
        hpu_cmdlist *cl = nullptr;
        if (const int err = eager_take(q, cl); err < 0)
            return err;
        int err = 0;
        try {
            err = rec(cl);
            if (err == 0)
                err = submit(q, cl, waits, num_waits, HPU_JOB_TIMEOUT_DEFAULT, out);
        } catch (...) {
            eager_put(q, cl);
            throw;
        }
        eager_put(q, cl);
        return err;
    });
}

// The driver's engine class of an HPU_ENGINE_* class (the same numbers).
constexpr std::uint32_t kmd_engine_class(std::uint32_t engine_class)
{
    static_assert(HPU_ENGINE_DMA == DRM_HPU_ENGINE_DMA && HPU_ENGINE_CLASS_TPC == DRM_HPU_ENGINE_TPC &&
                  HPU_ENGINE_CLASS_MME == DRM_HPU_ENGINE_MME);
    return engine_class;
}

// Whether queues of dev get a user queue (1, else 0): HPU_USER_QUEUES is
// unset or "1" (any other value: off) and the device has
// DRM_HPU_CAP_USER_QUEUES (asked once, then remembered); or the error of
// an INFO that failed (the queue is not made: asked again next time).
int user_queues_wanted(hpu_device *dev)
{
    const char *env = std::getenv("HPU_USER_QUEUES"); // NOLINT(concurrency-mt-unsafe): read, never set, by the library
    if (env != nullptr && std::string_view(env) != "1")
        return 0;
    int known = dev->user_queues.load(std::memory_order_relaxed);
    if (known < 0) {
        drm_hpu_info_device answer{};
        if (const int err = dev->kmd.info_device(answer); err < 0)
            return err;
        known = (answer.caps & DRM_HPU_CAP_USER_QUEUES) != 0 ? 1 : 0;
        dev->user_queues.store(known, std::memory_order_relaxed);
    }
    return known;
}

// -EINVAL with a message when q (not null) is not of engine class want: the
// device would refuse the packet (BAD_PACKET) only when the job runs.
int check_class(const hpu_queue *q, std::uint32_t want, const char *packet, hpu_fence_t **out)
{
    if (q == nullptr || q->engine_class == want)
        return 0;
    if (out != nullptr)
        *out = nullptr;
    constexpr auto name = [](std::uint32_t c) {
        return c == HPU_ENGINE_CLASS_DMA ? "a DMA" : c == HPU_ENGINE_CLASS_TPC ? "a TPC" : "an MME";
    };
    return set_error(-EINVAL, std::string(packet) + " on " + name(q->engine_class) + " queue: it runs only on " +
                                  name(want) + " queue");
}

// Records a TPC_LAUNCH or MME_GEMM packet and its descriptor desc, copied
// into the list's data (64-byte aligned, never moved); returns the copy's
// host address. On failure the list is as before.
int record_desc(hpu_cmdlist *cl, std::uint32_t opcode, std::span<const std::uint8_t> desc, std::uint8_t *&host)
{
    if (const int err = reserve(cl, pkt::kAddrPacketSize); err < 0)
        return err;
    CmdData &d = cl->data;
    if (d.chunks.empty() || d.chunk_used + desc.size() > d.chunks.back()->size) {
        BufferPtr nb;
        if (const int err = buffer_create(cl->dev, kDataChunk, HPU_MEM_HOST | HPU_MEM_READONLY, nb); err < 0)
            return err;
        d.chunks.push_back(std::move(nb));
        d.chunk_used = 0;
    }
    const hpu_buffer *b = d.chunks.back().get();
    host = static_cast<std::uint8_t *>(b->mmap_addr) + d.chunk_used; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    std::memcpy(host, desc.data(), desc.size());
    pkt::addr_packet(cb_ptr(cl) + cl->used, opcode, b->map_va + d.chunk_used); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    d.chunk_used += desc.size();
    cl->used += pkt::kAddrPacketSize;
    return 0;
}

int record_gemm(hpu_cmdlist *cl, const hpu_gemm *g)
{
    if (cl == nullptr)
        return set_error(-EINVAL, "gemm: command list is NULL");
    if (stale(cl->dev, cl->epoch))
        return -ENODEV;
    std::array<std::uint8_t, HPU_MME_DESC_SIZE> desc{};
    if (const int err = encode_gemm(g, desc.data()); err < 0)
        return err;
    std::uint8_t *host = nullptr;
    return record_desc(cl, HPU_PKT_MME_GEMM, desc, host);
}

} // namespace

int record_launch(hpu_cmdlist *cl, const hpu_kernel_t *k, const hpu_launch *l, std::uint8_t **desc_host)
{
    if (cl == nullptr || k == nullptr)
        return set_error(-EINVAL, "launch: command list or kernel is NULL");
    if (stale(cl->dev, cl->epoch) || stale(k->dev, k->epoch))
        return -ENODEV;
    if (k->dev != cl->dev)
        return set_error(-EXDEV, "launch: the kernel was loaded on another device");
    std::vector<std::uint8_t> desc(launch_size(*k->img), 0);
    if (const int err = encode_launch(*k->img, l, desc.data()); err < 0)
        return err;
    cl->data.kernels.reserve(cl->data.kernels.size() + 1); // the push below cannot throw
    std::uint8_t *host = nullptr;
    if (const int err = record_desc(cl, HPU_PKT_TPC_LAUNCH, desc, host); err < 0)
        return err;
    cl->data.kernels.push_back(k->img);
    if (desc_host != nullptr)
        *desc_host = host;
    return 0;
}

namespace {

} // namespace

} // namespace hpu::detail

using namespace hpu::detail; // NOLINT(google-build-using-namespace)

namespace hpu::detail {

namespace {

// hpu_queue_copy_split(): parts at least this long, and aligned so.
constexpr std::uint64_t kSplitPartMin = 4ULL << 20;
constexpr std::uint64_t kSplitAlign = 64ULL << 10;

struct FenceDestroy {
    void operator()(hpu_fence *f) const noexcept { (void)hpu_fence_destroy(f); }
};
using FencePtr = std::unique_ptr<hpu_fence, FenceDestroy>;

// A kernel queue of dev on engine_class/engine (QUEUE_CREATE), no user
// queue yet: into q, or the driver's error.
int kernel_queue(hpu_device *dev, std::uint32_t engine_class, std::uint32_t engine, std::unique_ptr<hpu_queue> &q)
{
    q = std::make_unique<hpu_queue>();
    q->dev = dev;
    q->epoch = dev->epoch;
    q->engine_class = engine_class;
    q->engine = engine;
    return dev->kmd.queue_create(kmd_engine_class(engine_class), engine, q->id);
}

// q's split-copy queue on DMA engine e, made on first use (null if it
// cannot be made): a kernel queue only, since its jobs wait for q's fence
// (a user queue would take from the context's budget of them for
// nothing).
hpu_queue *split_queue(hpu_queue *q, std::uint32_t e)
{
    hpu_queue *&h = q->split_helpers.at(e);
    if (h == nullptr) {
        std::unique_ptr<hpu_queue> made;
        if (kernel_queue(q->dev, HPU_ENGINE_CLASS_DMA, e, made) == 0)
            h = made.release();
    }
    return h;
}

// Moves the job of f into m: its syncobj (a user queue's point is put
// into one first) with its queue and sequence number; f is freed either
// way.
int take_member(FencePtr f, hpu_fence_member &m)
{
    std::uint32_t h = 0;
    if (const int err = fence_syncobj(f.get(), h); err < 0)
        return err;
    m = hpu_fence_member{h, f->queue_id, f->seq, 0};
    delete f.release(); // NOLINT(cppcoreguidelines-owning-memory): its syncobj now belongs to m
    return 0;
}

// Parts 1..n-1 of the copy go to the split queues of the DMA engines after
// q's, each after a NOP on q (so after q's earlier work); q copies part 0
// and any part a split queue could not take; a NOP on q waits for all of
// them. The copy's fence is that NOP's, with every part's job as a member
// (as a graph launch's): it signals when all ended, with the error of the
// failed part that ended first.
int copy_split(hpu_queue *q, std::uint64_t dst, std::uint64_t src, std::uint64_t size, std::uint32_t n,
               std::uint32_t engines, hpu_fence_t **out)
{
    hpu_device *dev = q->dev;
    const std::uint64_t part = (size / n + kSplitAlign - 1) / kSplitAlign * kSplitAlign;
    const auto record_part = [&](hpu_cmdlist *cl, std::uint32_t i) {
        const std::uint64_t off = part * i;
        return record_dma(cl, 0, dst + off, src + off, std::min(part, size - off));
    };
    const auto nop = [](hpu_cmdlist *cl) { return hpu_cmd_nop(cl); };
    std::vector<FencePtr> parts;
    parts.reserve(n);
    std::vector<std::uint32_t> mine{0};
    FencePtr join;
    {
        hpu_fence_t *raw = nullptr;
        if (const int err = eager(q, nullptr, 0, &raw, nop); err < 0)
            return err;
        const FencePtr fork(raw);
        const hpu_fence_t *after = fork.get();
        for (std::uint32_t i = 1; i < n; ++i) {
            hpu_queue *h = split_queue(q, (q->engine + i) % engines);
            raw = nullptr;
            if (h == nullptr ||
                eager(h, &after, 1, &raw, [&](hpu_cmdlist *cl) { return record_part(cl, i); }) < 0) {
                mine.push_back(i);
                continue;
            }
            parts.emplace_back(raw);
        }
        clear_error(); // a part q took over is not the caller's error
        raw = nullptr;
        if (const int err = eager(q, nullptr, 0, &raw,
                                  [&](hpu_cmdlist *cl) {
                                      for (const std::uint32_t i : mine) {
                                          if (const int e = record_part(cl, i); e < 0)
                                              return e;
                                      }
                                      return 0;
                                  });
            err < 0)
            return err;
        std::vector<const hpu_fence_t *> waits;
        waits.reserve(parts.size());
        for (const FencePtr &f : parts)
            waits.push_back(f.get());
        parts.emplace_back(raw);
        raw = nullptr;
        if (const int err = eager(q, waits.data(), waits.size(), &raw, nop); err < 0)
            return err;
        join.reset(raw);
    }
    if (out == nullptr)
        return 0; // the jobs are in; nobody asked for their fence
    auto f = std::make_unique<hpu_fence>();
    f->dev = dev;
    f->epoch = q->epoch;
    hpu_fence_member own;
    if (const int err = take_member(std::move(join), own); err < 0)
        return err;
    f->handle = own.handle;
    f->queue_id = own.queue_id;
    f->seq = own.seq;
    f->members.reserve(parts.size());
    for (FencePtr &p : parts) {
        hpu_fence_member m;
        const int err = take_member(std::move(p), m);
        if (err < 0) {
            (void)hpu_fence_destroy(f.release());
            return err;
        }
        f->members.push_back(m);
    }
    *out = f.release();
    return 0;
}

} // namespace

} // namespace hpu::detail

extern "C" {

HPU_EXPORT int hpu_queue_create(hpu_device_t *dev, uint32_t engine_class, uint32_t engine, hpu_queue_t **out)
{
    hpu::detail::clear_error();
    if (out == nullptr)
        return -EINVAL;
    *out = nullptr;
    if (dev == nullptr || (engine_class != HPU_ENGINE_DMA && engine_class != HPU_ENGINE_CLASS_TPC &&
                           engine_class != HPU_ENGINE_CLASS_MME))
        return -EINVAL;
    return guarded([&]() {
        std::unique_ptr<hpu_queue> q;
        if (const int err = kernel_queue(dev, engine_class, engine, q); err < 0)
            return err;
        const int wanted = user_queues_wanted(dev);
        if (wanted < 0) {
            (void)dev->kmd.queue_destroy(q->id);
            return wanted;
        }
        if (wanted == 1) {
            // Any failure: the kernel path only, silently.
            try {
                std::shared_ptr<UserQueue> uq;
                if (UserQueue::create(dev, kmd_engine_class(engine_class), engine, uq) == 0)
                    q->uq = std::move(uq);
            } catch (...) { // NOLINT(bugprone-empty-catch)
            }
        }
        *out = q.release();
        return 0;
    });
}

HPU_EXPORT int hpu_queue_destroy(hpu_queue_t *q)
{
    hpu::detail::clear_error();
    if (q == nullptr)
        return 0;
    int err = 0;
    for (hpu_queue *&h : q->split_helpers) { // hpu_queue_copy_split()'s
        if (h != nullptr) {
            const int e = hpu_queue_destroy(h);
            err = err < 0 ? err : e;
            h = nullptr;
        }
    }
    for (hpu_cmdlist *cl : q->eager) {
        const int e = cmdlist_free(cl);
        err = err < 0 ? err : e;
    }
    if (q->uq) { // waits for its jobs; its fences stay readable
        const int e = q->uq->close();
        err = err < 0 ? err : e;
        q->uq.reset();
    }
    if (!stale(q->dev, q->epoch)) { // else the queue died with its file
        for (const std::uint32_t h : {q->switch_sync, q->kernel_last}) {
            if (h != 0) {
                const int e = q->dev->kmd.syncobj_destroy(h);
                err = err < 0 ? err : e;
            }
        }
        const int e = q->dev->kmd.queue_destroy(q->id);
        err = err < 0 ? err : e;
    }
    delete q; // NOLINT(cppcoreguidelines-owning-memory)
    return err;
}

HPU_EXPORT int hpu_queue_submit(hpu_queue_t *q, hpu_cmdlist_t *cl, const hpu_fence_t *const *waits,
                                size_t num_waits, hpu_fence_t **out)
{
    hpu::detail::clear_error();
    return guarded([&]() { return submit(q, cl, waits, num_waits, HPU_JOB_TIMEOUT_DEFAULT, out); });
}

HPU_EXPORT int hpu_queue_submit_timeout(hpu_queue_t *q, hpu_cmdlist_t *cl, const hpu_fence_t *const *waits,
                                        size_t num_waits, uint32_t timeout_ms, hpu_fence_t **out)
{
    hpu::detail::clear_error();
    return guarded([&]() { return submit(q, cl, waits, num_waits, timeout_ms, out); });
}

HPU_EXPORT int hpu_queue_copy(hpu_queue_t *q, uint64_t dst_va, uint64_t src_va, uint64_t size, hpu_fence_t **out)
{
    hpu::detail::clear_error();
    if (const int err = check_class(q, HPU_ENGINE_CLASS_DMA, "copy (LIN_DMA)", out); err < 0)
        return err;
    if (!range_ok(dst_va, size) || !range_ok(src_va, size)) {
        if (out != nullptr)
            *out = nullptr;
        return -EINVAL;
    }
    return eager(q, nullptr, 0, out, [&](hpu_cmdlist *cl) { return record_dma(cl, 0, dst_va, src_va, size); });
}

HPU_EXPORT int hpu_queue_copy_split(hpu_queue_t *q, uint64_t dst_va, uint64_t src_va, uint64_t size,
                                    uint32_t max_engines, hpu_fence_t **out)
{
    hpu::detail::clear_error();
    if (out != nullptr)
        *out = nullptr;
    if (q == nullptr)
        return -EINVAL;
    if (const int err = check_class(q, HPU_ENGINE_CLASS_DMA, "copy (LIN_DMA)", out); err < 0)
        return err;
    if (!range_ok(dst_va, size) || !range_ok(src_va, size))
        return -EINVAL;
    const bool overlap = dst_va < src_va + size && src_va < dst_va + size;
    if (size < HPU_COPY_SPLIT_MIN || overlap || max_engines == 1 || stale(q->dev, q->epoch))
        return hpu_queue_copy(q, dst_va, src_va, size, out);
    const int engines = hpu_device_dma_engines(q->dev);
    if (engines < 0)
        return engines;
    const auto usable = std::min<std::uint32_t>(static_cast<std::uint32_t>(engines),
                                                static_cast<std::uint32_t>(q->split_helpers.size()));
    std::uint64_t n = usable;
    if (max_engines != 0)
        n = std::min<std::uint64_t>(n, max_engines);
    n = std::min(n, size / kSplitPartMin);
    if (n <= 1 || q->engine >= usable)
        return hpu_queue_copy(q, dst_va, src_va, size, out);
    return guarded([&]() { return copy_split(q, dst_va, src_va, size, static_cast<std::uint32_t>(n), usable, out); });
}

HPU_EXPORT int hpu_queue_memset(hpu_queue_t *q, uint64_t dst_va, uint64_t pattern, uint64_t size, hpu_fence_t **out)
{
    hpu::detail::clear_error();
    if (const int err = check_class(q, HPU_ENGINE_CLASS_DMA, "memset (LIN_DMA)", out); err < 0)
        return err;
    if (!range_ok(dst_va, size)) {
        if (out != nullptr)
            *out = nullptr;
        return -EINVAL;
    }
    return eager(q, nullptr, 0, out,
                 [&](hpu_cmdlist *cl) { return record_dma(cl, HPU_LIN_DMA_MEMSET, dst_va, pattern, size); });
}

HPU_EXPORT int hpu_queue_write_value(hpu_queue_t *q, uint64_t va, uint32_t value, hpu_fence_t **out)
{
    hpu::detail::clear_error();
    if (!range_ok(va, 4) || (va & 3U) != 0) {
        if (out != nullptr)
            *out = nullptr;
        return -EINVAL;
    }
    return eager(q, nullptr, 0, out, [&](hpu_cmdlist *cl) { return hpu_cmd_write_value(cl, va, value); });
}

HPU_EXPORT int hpu_cmdlist_create(hpu_device_t *dev, hpu_cmdlist_t **out)
{
    hpu::detail::clear_error();
    if (out == nullptr)
        return -EINVAL;
    *out = nullptr;
    if (dev == nullptr)
        return -EINVAL;
    return guarded([&]() { return cmdlist_new(dev, *out); });
}

HPU_EXPORT int hpu_cmdlist_destroy(hpu_cmdlist_t *cl)
{
    hpu::detail::clear_error();
    return cmdlist_free(cl);
}

HPU_EXPORT int hpu_cmdlist_reset(hpu_cmdlist_t *cl)
{
    hpu::detail::clear_error();
    if (cl == nullptr)
        return -EINVAL;
    if (stale(cl->dev, cl->epoch))
        return -ENODEV;
    return guarded([&]() {
        const int idle = cmdlist_idle(cl);
        if (idle < 0)
            return idle;
        cl->used = 0;
        if (idle == 1) {
            reuse_data(cl->data);
            reap_retired(cl);
            return 0;
        }
        // Buffers still read by a job are retired; the next command gets new ones.
        return retire_buffer(cl, true);
    });
}

HPU_EXPORT size_t hpu_cmdlist_size(const hpu_cmdlist_t *cl)
{
    return cl == nullptr ? 0 : cl->used;
}

HPU_EXPORT int hpu_cmd_nop(hpu_cmdlist_t *cl)
{
    hpu::detail::clear_error();
    return record(cl, pkt::kNopSize, [](std::uint8_t *p) { pkt::nop(p); });
}

HPU_EXPORT int hpu_cmd_copy(hpu_cmdlist_t *cl, uint64_t dst_va, uint64_t src_va, uint64_t size)
{
    hpu::detail::clear_error();
    if (cl == nullptr)
        return -EINVAL;
    if (stale(cl->dev, cl->epoch))
        return -ENODEV;
    return guarded([&]() { return record_dma(cl, 0, dst_va, src_va, size); });
}

HPU_EXPORT int hpu_cmd_memset(hpu_cmdlist_t *cl, uint64_t dst_va, uint64_t pattern, uint64_t size)
{
    hpu::detail::clear_error();
    if (cl == nullptr)
        return -EINVAL;
    if (stale(cl->dev, cl->epoch))
        return -ENODEV;
    return guarded([&]() { return record_dma(cl, HPU_LIN_DMA_MEMSET, dst_va, pattern, size); });
}

HPU_EXPORT int hpu_cmd_write_value(hpu_cmdlist_t *cl, uint64_t va, uint32_t value)
{
    hpu::detail::clear_error();
    if (!range_ok(va, 4) || (va & 3U) != 0)
        return -EINVAL;
    return record(cl, pkt::kWriteValueSize, [&](std::uint8_t *p) { pkt::write_value(p, va, value); });
}

HPU_EXPORT int hpu_cmd_sob_update(hpu_cmdlist_t *cl, uint32_t sob, uint32_t op, uint32_t value)
{
    hpu::detail::clear_error();
    if (sob >= HPU_NUM_SOBS_PER_CONTEXT || (op != HPU_SOB_SET && op != HPU_SOB_ADD))
        return -EINVAL;
    return record(cl, pkt::kSobUpdateSize, [&](std::uint8_t *p) { pkt::sob_update(p, sob, value, op); });
}

HPU_EXPORT int hpu_cmd_wait_sob(hpu_cmdlist_t *cl, uint32_t sob, uint32_t value, uint32_t cond)
{
    hpu::detail::clear_error();
    if (sob >= HPU_NUM_SOBS_PER_CONTEXT || (cond != HPU_WAIT_GE && cond != HPU_WAIT_EQ))
        return -EINVAL;
    return record(cl, pkt::kWaitSize, [&](std::uint8_t *p) { pkt::wait(p, sob, value, cond); });
}

HPU_EXPORT int hpu_cmd_launch(hpu_cmdlist_t *cl, const hpu_kernel_t *k, const struct hpu_launch *l)
{
    clear_error();
    return guarded([&]() { return record_launch(cl, k, l, nullptr); });
}

HPU_EXPORT int hpu_cmd_gemm(hpu_cmdlist_t *cl, const struct hpu_gemm *g)
{
    clear_error();
    return guarded([&]() { return record_gemm(cl, g); });
}

HPU_EXPORT int hpu_queue_launch(hpu_queue_t *q, const hpu_kernel_t *k, const struct hpu_launch *l,
                                const hpu_fence_t *const *waits, size_t num_waits, hpu_fence_t **out)
{
    clear_error();
    if (const int err = check_class(q, HPU_ENGINE_CLASS_TPC, "launch (TPC_LAUNCH)", out); err < 0)
        return err;
    return eager(q, waits, num_waits, out, [&](hpu_cmdlist *cl) { return record_launch(cl, k, l, nullptr); });
}

HPU_EXPORT int hpu_queue_gemm(hpu_queue_t *q, const struct hpu_gemm *g, const hpu_fence_t *const *waits,
                              size_t num_waits, hpu_fence_t **out)
{
    clear_error();
    if (const int err = check_class(q, HPU_ENGINE_CLASS_MME, "gemm (MME_GEMM)", out); err < 0)
        return err;
    return eager(q, waits, num_waits, out, [&](hpu_cmdlist *cl) { return record_gemm(cl, g); });
}

HPU_EXPORT int hpu_sob_alloc(hpu_device_t *dev, uint32_t *sob)
{
    hpu::detail::clear_error();
    if (dev == nullptr || sob == nullptr)
        return -EINVAL;
    const std::lock_guard<std::mutex> lock(dev->mu);
    // From the top: callers that still name low sync objects directly keep them.
    for (std::uint32_t n = HPU_NUM_SOBS_PER_CONTEXT; n-- > 0;) {
        if ((dev->sobs_used & (1U << n)) == 0) {
            dev->sobs_used |= 1U << n;
            *sob = n;
            return 0;
        }
    }
    return -EBUSY;
}

HPU_EXPORT int hpu_sob_free(hpu_device_t *dev, uint32_t sob)
{
    hpu::detail::clear_error();
    if (dev == nullptr || sob >= HPU_NUM_SOBS_PER_CONTEXT)
        return -EINVAL;
    const std::lock_guard<std::mutex> lock(dev->mu);
    if ((dev->sobs_used & (1U << sob)) == 0)
        return -EINVAL;
    dev->sobs_used &= ~(1U << sob);
    return 0;
}

} // extern "C"
