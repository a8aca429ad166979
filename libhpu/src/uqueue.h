// SPDX-License-Identifier: MIT
// User queues (uqueue.cpp), internal to libhpu: a hardware user stream of
// the device file (DRM_IOCTL_HPU_UQ_CREATE, driver 1.2) that the process
// feeds with no system call: descriptors written to a ring in a HOST
// buffer, a 32-bit store to the queue's doorbell page, completion records
// read back from the same buffer. Documentation/libhpu.md "User queues".
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SRC_UQUEUE_H
#define HPU_SRC_UQUEUE_H

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>

#include "drm/hpu_accel.h"
#include "hpu/hpu.h"
#include "memory.h"

namespace hpu::detail {

// Counts the fork()s this process is the child of (pthread_atfork): a
// user queue is only for the process that made it (its doorbell mapping
// is not inherited).
std::uint64_t fork_generation() noexcept;

// Registers the pthread_atfork handler that counts fork generations (once
// per process; called when a device is opened, before any fork matters).
void watch_forks();

// The device's unused ring buffers (hpu_device::uq_spares): drops them,
// freeing them only in the process they belong to. Takes uq_mu.
void drop_spare_rings(hpu_device *dev) noexcept;

// The fence error of a user queue's completion status (HPU_CQ_*), as the
// driver maps it for kernel-path jobs (hpu_job_cq_status_to_errno()).
int cq_status_errno(std::uint32_t status) noexcept;

// One user queue. Point p is reached once its first p descriptors have
// completed (successfully or not); submit() returns the point of its job.
// One thread submits at a time (a queue is not thread-safe); state(),
// wait(), fence_into() and completion_time() may run on any thread.
class UserQueue {
public:
    // Most descriptors of a ring (fewer when the driver's ring_max is lower).
    static constexpr std::uint32_t kMaxRing = 1024;
    // How often state() asks the driver about a point still pending.
    static constexpr std::int64_t kDriverPollNs = 2000000;
    // Failures remembered (the oldest are forgotten first).
    static constexpr std::size_t kMaxFailures = 256;

    UserQueue(const UserQueue &) = delete;
    UserQueue &operator=(const UserQueue &) = delete;
    UserQueue(UserQueue &&) = delete;
    UserQueue &operator=(UserQueue &&) = delete;
    ~UserQueue() { (void)close(); }

    // A user queue on the engine (DRM_HPU_ENGINE_* class), or a negative
    // errno (nothing is left behind then).
    static int create(hpu_device *dev, std::uint32_t engine_class, std::uint32_t engine,
                      std::shared_ptr<UserQueue> &out);

    [[nodiscard]] hpu_device *dev() const { return dev_; }
    [[nodiscard]] std::uint64_t epoch() const { return epoch_; }
    [[nodiscard]] std::uint32_t id() const { return id_; }
    [[nodiscard]] std::uint32_t ring_size() const { return size_; }
    // The last point submitted.
    [[nodiscard]] std::uint64_t submitted() const { return submitted_.load(std::memory_order_acquire); }
    // Whether submit() may be used: open, not dead, in the process that
    // made it, of the device's current file.
    [[nodiscard]] bool usable() const;

    // Writes a descriptor for the command buffer and rings the doorbell;
    // waits first while the ring is full. point gets the job's point.
    int submit(std::uint64_t cb_va, std::uint32_t cb_size, std::uint64_t &point);
    // The state of point (at most submitted()) without waiting, from the
    // completion records (a system call only for an outcome they no longer
    // tell; with ask_driver, also UQ_WAIT with deadline 0 for a point still
    // pending, at most every kDriverPollNs: how a caller that only polls
    // notices a dead queue): 0 and job_status (0 success, 1 pending, the job's negative
    // errno), or a system call's negative errno.
    int state(std::uint64_t point, int &job_status, bool ask_driver = false);
    // Waits until point is reached or the absolute CLOCK_MONOTONIC
    // deadline: polls the records for up to HPU_SPIN_US, then sleeps in
    // DRM_IOCTL_HPU_UQ_WAIT. 0 (state() then tells the outcome), -ETIME,
    // or a system call's negative errno.
    int wait(std::uint64_t point, std::int64_t deadline);
    // Puts the fence of point into the binary syncobj handle (UQ_FENCE).
    // The library reads a completion record before the driver takes in
    // the write-back record that follows it (at the interrupt): with a
    // catch_up deadline (absolute CLOCK_MONOTONIC, 0: none), a point
    // whose record the library has read is first waited for in the driver
    // (UQ_WAIT) until then, so the fence put is signalled with its outcome.
    int fence_into(std::uint64_t point, std::uint32_t handle, std::int64_t catch_up = 0);
    // The CLOCK_MONOTONIC time the job of point completed, from its
    // record: -EBUSY while pending, -ENODATA once the record is reused.
    int completion_time(std::uint64_t point, std::uint64_t &ns);
    // Waits for every job submitted, destroys the queue (QUEUE_DESTROY),
    // unmaps the doorbell and frees the rings. Points stay queryable.
    // Once; the first error.
    int close() noexcept;

private:
    UserQueue() = default;

    void uncount() noexcept;
    void poll_driver_locked(std::uint64_t point);
    void reap_locked();
    bool skipped_locked();
    void note_failure_locked(std::uint64_t point, int err);
    int outcome_locked(std::uint64_t point);
    int settle_locked(std::uint64_t done, std::uint64_t point, std::int32_t status);
    int settle_answer_locked(int err, std::uint64_t done, std::uint64_t point, std::int32_t status);

    hpu_device *dev_ = nullptr;
    std::uint64_t epoch_ = 0;
    std::uint64_t fork_gen_ = 0;
    BufferPtr rings_;                        // ring, then completion ring
    std::span<drm_hpu_uq_desc> ring_;
    std::span<drm_hpu_uq_cqe> cq_;
    void *db_ = nullptr;                     // the doorbell page
    std::uint32_t id_ = 0;
    std::uint32_t asid_ = 0;
    std::uint32_t size_ = 0;                 // ring and completion ring
    std::int64_t spin_ns_ = 0;
    std::int64_t time_offset_ns_ = 0;        // CLOCK_MONOTONIC - device time
    std::atomic<std::uint64_t> submitted_{0};
    std::atomic<std::uint64_t> completed_seen_{0}; // completed_, for submit() without mu_
    std::atomic<int> dead_flag_{0};          // dead_ (or closed), for usable() without mu_
    std::mutex mu_;
    // Guarded by mu_.
    std::uint64_t completed_ = 0;            // points reached (records read)
    std::map<std::uint64_t, int> failures_;  // point -> negative errno
    std::uint64_t forgotten_ = 0;            // highest failed point dropped from failures_
    int dead_ = 0;                           // the dead queue's error for points not reached
    std::int64_t last_poll_ns_ = 0;          // poll_driver_locked()'s last UQ_WAIT
    bool closed_ = false;
    bool counted_ = false;                   // in dev_->uq_live (create() to close())
};

} // namespace hpu::detail

#endif // HPU_SRC_UQUEUE_H
