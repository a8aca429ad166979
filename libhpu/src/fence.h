// SPDX-License-Identifier: MIT
// Fences (hpu_fence_t; fence.cpp), internal to libhpu.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SRC_FENCE_H
#define HPU_SRC_FENCE_H

#include <atomic>
#include <climits>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "hpu/hpu.h"
#include "os.h"
#include "uqueue.h"

// A fence: one binary drm_syncobj, or for a graph launch the join job's
// plus one per other job of the launch (members), or a point of a user
// queue (uq: no syncobj until a kernel-path job waits for it, then handle
// holds the point's fence, made under mu). status caches a final
// state (kUnknown until the fence, and every member, is seen signalled;
// a failed member's error then, whose queue_id and seq become the
// fence's, for hpu_fence_error_info). They are written once, under mu,
// before status is published.
struct hpu_fence_member {
    std::uint32_t handle = 0;
    std::uint32_t queue_id = 0;
    std::uint64_t seq = 0;
    std::uint32_t first_node = 0; // the first graph node of its job (orders equal end times)
};

struct hpu_fence {
    static constexpr int kUnknown = INT_MIN;
    hpu_device *dev = nullptr;
    std::uint64_t epoch = 0;       // dev->epoch when made
    std::uint32_t handle = 0;
    std::uint32_t queue_id = 0;    // of the job (0: imported)
    std::uint64_t seq = 0;         // the kernel's sequence number of the job
    std::atomic<int> status{kUnknown};
    std::mutex mu;                 // settling status (with queue_id, seq): fence.cpp
    std::vector<hpu_fence_member> members; // a graph launch's jobs but the join
    std::uint32_t first_node = 0;  // a graph launch: the join job's first graph node
    std::shared_ptr<hpu::detail::UserQueue> uq; // a user queue's job (queue_id its id)
    std::uint64_t uq_point = 0;    // its point (seq too)
};

namespace hpu::detail {

// The state of a fence without waiting: 0 and job_status (0 success, 1
// pending, or the job's negative errno), or the negative errno of a failed
// system call.
int fence_state(hpu_fence *f, int &job_status);

// Waits until the absolute deadline for f: 0, the job's negative errno (a
// graph launch's: once every job ended, the error of the failed job that
// ended first, the join or a member), or a system call's.
int fence_wait(hpu_fence *f, std::int64_t deadline);

// A syncobj holding f's fence for an in-sync of a kernel-path job: f's
// own; a user queue fence's made (UQ_FENCE) on first use and kept.
int fence_syncobj(hpu_fence *f, std::uint32_t &handle);

// Absolute CLOCK_MONOTONIC deadline (os's clock) timeout_ns from now,
// saturating (UINT64_MAX: forever).
std::int64_t deadline_after(Os &os, std::uint64_t timeout_ns);

} // namespace hpu::detail

#endif // HPU_SRC_FENCE_H
