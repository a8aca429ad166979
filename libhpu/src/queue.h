// SPDX-License-Identifier: MIT
// Queues and command lists (hpu_queue_t, hpu_cmdlist_t; queue.cpp),
// internal to libhpu.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SRC_QUEUE_H
#define HPU_SRC_QUEUE_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "compute.h"
#include "hpu/hpu.h"
#include "hw/hpu_regs.h"
#include "kmd.h"
#include "memory.h"
#include "uqueue.h"

namespace hpu::detail {

// What the device reads besides the packets: launch and GEMM descriptors,
// in HOST buffers it maps read-only (never moved once written: packets hold
// their addresses), and the kernel binaries the launches name.
struct CmdData {
    std::vector<BufferPtr> chunks;
    std::size_t chunk_used = 0;     // bytes used in chunks.back()
    std::vector<KernelRef> kernels;
};

// Buffers and kernels replaced while jobs up to point may still read them.
struct Retired {
    BufferPtr buf;
    CmdData data;
    std::uint64_t point = 0;
};

} // namespace hpu::detail

// A command list: packets recorded into a HOST buffer mapped read-only into
// the device. Its own timeline syncobj gets point N at its Nth submission
// when that goes to the kernel; a submission to a user queue is tracked by
// its point there instead. So the library knows when no job still reads
// the buffer.
struct hpu_cmdlist {
    hpu_device *dev = nullptr;
    std::uint64_t epoch = 0;           // dev->epoch when made
    hpu::detail::BufferPtr buf;        // current command buffer (may be null)
    std::size_t used = 0;              // bytes recorded
    hpu::detail::CmdData data;         // descriptors and kernels of the packets recorded
    std::uint32_t timeline = 0;        // syncobj handle
    std::uint64_t submitted = 0;       // submissions so far
    std::uint64_t completed = 0;       // submissions seen ended (all or earlier value)
    std::uint64_t kpoint = 0;          // last timeline point (kernel-path submission)
    std::uint64_t kdone = 0;           // last timeline point seen signalled
    // The last point of each user queue the list was submitted to.
    std::vector<std::pair<std::shared_ptr<hpu::detail::UserQueue>, std::uint64_t>> uq_points;
    // Earlier buffers still read by jobs up to their point.
    std::vector<hpu::detail::Retired> retired;
};

// A queue on one engine, with a FIFO of command lists for eager commands
// (jobs of one queue complete in order, so the front is the oldest).
struct hpu_queue {
    hpu_device *dev = nullptr;
    std::uint64_t epoch = 0;         // dev->epoch when made
    std::uint32_t id = 0;
    std::uint32_t engine_class = 0;  // HPU_ENGINE_CLASS_*
    std::uint32_t engine = 0;        // its index in the class
    std::deque<hpu_cmdlist *> eager; // owned
    // The user queue of the same engine (null: kernel path only) and what
    // keeps order when submissions switch paths (queue.cpp).
    std::shared_ptr<hpu::detail::UserQueue> uq;
    bool uq_off = false;             // kernel path from now on
    std::uint64_t uq_ordered = 0;    // last user-queue point a kernel-path job is ordered after
    std::uint32_t switch_sync = 0;   // syncobj: that point's fence, an in-sync (0: none yet)
    std::uint32_t kernel_last = 0;   // syncobj: the last kernel-path job's fence (0: none yet)
    bool kernel_pending = false;     // that job may not have ended
    // hpu_queue_copy_split()'s queues for the parts of this queue's split
    // copies, by DMA engine, made on first use on the kernel path (their
    // jobs wait for this queue's fence), destroyed with this queue. Only
    // this queue's copies use them, so nothing else queues behind a part.
    std::array<hpu_queue *, 16> split_helpers{};
};

namespace hpu::detail {

// Whether [va, va + size) is a non-empty range of the device's 48-bit
// address space.
inline bool range_ok(std::uint64_t va, std::uint64_t size)
{
    constexpr std::uint64_t kVaLimit = 1ULL << HPU_VA_BITS;
    return size != 0 && va < kVaLimit && size <= kVaLimit - va;
}
// Records a launch of k (the work of hpu_cmd_launch()); *desc_host, when
// desc_host is not null, receives the host address of its descriptor in
// the list's data, where its scalars may be rewritten while no job reads it.
int record_launch(hpu_cmdlist *cl, const hpu_kernel_t *k, const hpu_launch *l, std::uint8_t **desc_host);
// Jobs gathered by submit_raw() to go to the kernel in one
// DRM_IOCTL_HPU_SUBMIT_ARRAY (submit_flush()), all or none. Each entry
// owns its sync points. Its capacity is fixed when it is made (add()
// never allocates): kMax entries.
class SubmitBatch {
public:
    static constexpr std::size_t kMax = 16;

    struct Entry {
        SubmitArgs args;
        std::array<SyncPoint, DRM_HPU_MAX_SYNCS> in{};
        std::array<SyncPoint, DRM_HPU_MAX_SYNCS> out{};
        std::uint64_t *seq = nullptr; // where its sequence number goes (a fence's), or null
        hpu_cmdlist *cl = nullptr;    // its submitted count was advanced for it
        std::uint64_t prev_kpoint = 0; // cl->kpoint before
    };

    // Whether dev's driver has DRM_IOCTL_HPU_SUBMIT_ARRAY (1.1 and later):
    // asked once per device (INFO DEVICE), then remembered.
    static bool supported(hpu_device *dev);

    [[nodiscard]] bool full() const { return n_ == kMax; }
    [[nodiscard]] std::size_t size() const { return n_; }
    // The next entry, its args' spans to be set by the caller.
    Entry &add() { return entries_.at(n_++); }
    Entry &at(std::size_t i) { return entries_.at(i); }
    // Forgets the entries, taking back their command lists' submitted counts.
    void rollback();
    // Forgets the entries once they are submitted.
    void clear() { n_ = 0; }

private:
    std::array<Entry, kMax> entries_{};
    std::size_t n_ = 0;
};

// Submits cl on q after waits (hpu_fence handles) and the raw syncobj
// points of extra_waits; signals out (may be null) and extra_signals.
// With batch, the job is only added to it (nothing is submitted until
// submit_flush()); -ENOSPC when it is full.
int submit_raw(hpu_queue *q, hpu_cmdlist *cl, const hpu_fence_t *const *waits, std::size_t num_waits,
               std::span<const SyncPoint> extra_waits, std::span<const SyncPoint> extra_signals,
               std::uint32_t timeout_ms, hpu_fence_t **out, SubmitBatch *batch = nullptr);
// Submits the jobs of batch in one call, in order (one SUBMIT for one
// job); on failure none is queued and the batch is rolled back. Empties it.
int submit_flush(hpu_device *dev, SubmitBatch &batch);
// Whether no job of cl can still run (1), not yet (0), or -errno; no wait.
int cmdlist_idle(hpu_cmdlist *cl);
// Waits until no job of cl runs; 0 or -errno.
int cmdlist_wait(hpu_cmdlist *cl);
int cmdlist_new(hpu_device *dev, hpu_cmdlist *&out);
int cmdlist_free(hpu_cmdlist *cl) noexcept;

} // namespace hpu::detail

#endif // HPU_SRC_QUEUE_H
