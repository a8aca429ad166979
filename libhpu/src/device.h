// SPDX-License-Identifier: MIT
// The objects behind the opaque handles of the C ABI, and the helpers the
// library's translation units share (internal to libhpu).
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SRC_DEVICE_H
#define HPU_SRC_DEVICE_H

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include "discovery.h"
#include "hpu/hpu.h"

namespace hpu::detail {

// Error events and the callback thread of a device (events.cpp).
struct EventState {
    std::atomic<bool> enabled{false};  // DRM_HPU_EVENTS_ENABLE issued on the current fd
    std::mutex read_mu;                // serialises poll+read of the device fd
    std::mutex store_mu;               // guards errors, pending and wake_fd
    std::deque<hpu_event> errors;      // the last HPU_ERROR_HISTORY error events
    std::deque<hpu_event> pending;     // events read but not yet delivered
    int wake_fd = -1;                  // eventfd of the running thread
    // Set while no thread runs (the thread reads them).
    hpu_event_fn cb = nullptr;
    void *user = nullptr;
    std::thread thread;
    std::atomic<bool> stop{false};
    std::atomic<std::thread::id> thread_id{}; // the thread's id while it runs
};

} // namespace hpu::detail

// An open device: the DRM file and the GEM handles it holds. PRIME import of
// a buffer this file already has a handle for returns that same handle, so
// the library counts references per handle and closes it with the last one.
// epoch counts hpu_device_reopen() calls: an object made at another epoch
// belongs to a file that is no longer open (stale).
struct hpu_device {
    int fd = -1;
    hpu::detail::Entry entry;
    std::mutex mu;
    std::map<std::uint32_t, unsigned int> gem_refs; // guarded by mu
    std::uint64_t epoch = 0;
    std::atomic<bool> lost{false};   // hard reset seen or -ENODEV (any thread)
    hpu::detail::EventState ev;
};

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
};

// A fence: one binary drm_syncobj. status caches a final state (kUnknown
// until the fence is seen signalled).
struct hpu_fence {
    static constexpr int kUnknown = INT_MIN;
    hpu_device *dev = nullptr;
    std::uint64_t epoch = 0;       // dev->epoch when made
    std::uint32_t handle = 0;
    std::uint32_t queue_id = 0;    // of the job (0: imported)
    std::uint64_t seq = 0;         // the kernel's sequence number of the job
    std::atomic<int> status{kUnknown};
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

// Syncobj helpers; each returns 0 or a negative errno value.
int syncobj_create(hpu_device *dev, std::uint32_t &handle);
int syncobj_destroy(hpu_device *dev, std::uint32_t handle) noexcept;
// Waits until the timeline point of handle has signalled or the absolute
// CLOCK_MONOTONIC deadline passed (-ETIME); restarts on EINTR/EAGAIN with the
// same deadline.
int syncobj_timeline_wait(hpu_device *dev, std::uint32_t handle, std::uint64_t point,
                          std::int64_t deadline_ns);

// Absolute deadline timeout_ns from now, saturating (UINT64_MAX: forever).
std::int64_t deadline_after(std::uint64_t timeout_ns);

// Runs f, mapping exceptions to -ENOMEM (allocation) or -EIO.
template <typename F>
int guarded(F &&f) noexcept
{
    try {
        return f();
    } catch (const std::bad_alloc &) {
        return -ENOMEM;
    } catch (...) {
        return -EIO;
    }
}

// An ioctl restarted on EINTR and EAGAIN (the real Os does this too; a mock
// may not).
int drm_ioctl(int fd, unsigned long request, void *arg);
// The same on the device's file; -ENODEV marks the device lost.
int drm_ioctl(hpu_device *dev, unsigned long request, void *arg);
// DRM_IOCTL_HPU_INFO for op into answer (size bytes); -EPROTO when the
// kernel answers less than that.
int query_info(hpu_device *dev, std::uint32_t op, void *answer, std::uint32_t size);

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

// The state of a fence without waiting: 0 and job_status (0 success, 1
// pending, or the job's negative errno), or the negative errno of a failed
// system call (fence.cpp).
int fence_state(hpu_fence *f, int &job_status);

// Stops the callback thread of dev (joins it); events.cpp.
void events_stop(hpu_device *dev) noexcept;
// Whether the caller is the callback thread of dev.
bool events_on_thread(const hpu_device *dev) noexcept;

} // namespace hpu::detail

// A command list: packets recorded into a HOST buffer mapped read-only into
// the device. Its own timeline syncobj gets point N at its Nth submission,
// so the library knows when no job still reads the buffer.
struct hpu_cmdlist {
    hpu_device *dev = nullptr;
    std::uint64_t epoch = 0;           // dev->epoch when made
    hpu::detail::BufferPtr buf;        // current command buffer (may be null)
    std::size_t used = 0;              // bytes recorded
    std::uint32_t timeline = 0;        // syncobj handle
    std::uint64_t submitted = 0;       // last point submitted
    std::uint64_t completed = 0;       // last point seen signalled
    // Earlier buffers still read by jobs up to the given point.
    std::vector<std::pair<hpu::detail::BufferPtr, std::uint64_t>> retired;
};

// A queue on one engine, with a FIFO of command lists for eager commands
// (jobs of one queue complete in order, so the front is the oldest).
struct hpu_queue {
    hpu_device *dev = nullptr;
    std::uint64_t epoch = 0;         // dev->epoch when made
    std::uint32_t id = 0;
    std::deque<hpu_cmdlist *> eager; // owned
};

#endif // HPU_SRC_DEVICE_H
