// SPDX-License-Identifier: MIT
// An open device (hpu_device_t of the C ABI; device.cpp): its DRM file
// through its kernel interface, and the state every object made on it
// shares (internal to libhpu).
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SRC_DEVICE_H
#define HPU_SRC_DEVICE_H

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "compute.h"
#include "discovery.h"
#include "events.h"
#include "hpu/hpu.h"
#include "kmd.h"
#include "memory.h"
#include "os.h"

// An open device: the DRM file (in kmd, reached through the Os the device
// was opened with) and the GEM handles it holds. PRIME import of a buffer
// this file already has a handle for returns that same handle, so the
// library counts references per handle and closes it with the last one.
// epoch counts hpu_device_reopen() calls: an object made at another epoch
// belongs to a file that is no longer open (stale).
struct hpu_device {
    explicit hpu_device(hpu::detail::Os &os) : kmd(os, -1, &lost) {}

    [[nodiscard]] hpu::detail::Os &os() const { return kmd.os(); }
    [[nodiscard]] int fd() const { return kmd.fd(); }

    std::atomic<bool> lost{false};   // hard reset seen or -ENODEV (any thread)
    hpu::detail::Kmd kmd;            // the file; fd changes only in reopen
    hpu::detail::Entry entry;
    std::mutex mu;
    std::map<std::uint32_t, unsigned int> gem_refs; // guarded by mu
    std::uint64_t epoch = 0;
    hpu::detail::EventState ev;
    // Built-in library kernels loaded so far, by name (hpu_kernel_get).
    std::map<std::string, hpu::detail::KernelRef, std::less<>> kernels; // guarded by mu
    std::uint32_t sobs_used = 0;     // bit n: sync object n reserved (hpu_sob_alloc); guarded by mu
    // The queues graphs submit to, one per graph engine slot (graph.cpp),
    // made on first use; graph_queues_made bit s: slot s exists.
    std::array<std::uint32_t, 4> graph_queues{}; // guarded by mu
    std::uint32_t graph_queues_made = 0;         // guarded by mu
    // Held while a graph launch submits its jobs, so that the jobs of two
    // launches come in one order on every shared queue.
    std::mutex graph_mu;
    // Whether the driver has DRM_IOCTL_HPU_SUBMIT_ARRAY: 1 yes, 0 no, -1
    // not asked yet (SubmitBatch::supported()).
    std::atomic<int> submit_array{-1};
    // Whether the device has DRM_HPU_CAP_USER_QUEUES: 1 yes, 0 no, -1 not
    // asked yet (queue.cpp).
    std::atomic<int> user_queues{-1};
    // User queues of this file (uqueue.cpp): how many are open, kept
    // within INFO USER_QUEUES ctx_max before any is tried; and ring
    // buffers no queue uses (a UQ_CREATE failed, a queue was destroyed),
    // kept for the next queues: freeing one unmaps it, and an unmap waits
    // for every job of the context (one held at a WAIT, too). All belong
    // to the process of fork generation uq_fork_gen (the one that opened
    // or reopened the file): a forked child makes no user queue and
    // frees none of them. Guarded by uq_mu.
    std::mutex uq_mu;
    unsigned int uq_live = 0;
    std::vector<hpu::detail::BufferPtr> uq_spares;
    std::uint64_t uq_fork_gen = 0;
};

namespace hpu::detail {

// Opens the device of entry through os (the work of the hpu_open_* calls).
int open_entry(Os &os, const Entry &entry, hpu_device **out);

// Marks dev lost when err is -ENODEV; returns err.
inline int note_error(hpu_device *dev, int err) noexcept
{
    if (err == -ENODEV)
        dev->lost.store(true, std::memory_order_release);
    return err;
}

// Whether an object made at epoch belongs to a file reopened since.
inline bool stale(const hpu_device *dev, std::uint64_t epoch) noexcept
{
    return dev->epoch != epoch;
}

} // namespace hpu::detail

#endif // HPU_SRC_DEVICE_H
