// SPDX-License-Identifier: MIT
// Fences (hpu_fence_t; fence.cpp), internal to libhpu.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SRC_FENCE_H
#define HPU_SRC_FENCE_H

#include <atomic>
#include <climits>
#include <cstdint>

#include "hpu/hpu.h"
#include "os.h"

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

// The state of a fence without waiting: 0 and job_status (0 success, 1
// pending, or the job's negative errno), or the negative errno of a failed
// system call.
int fence_state(hpu_fence *f, int &job_status);

// Absolute CLOCK_MONOTONIC deadline (os's clock) timeout_ns from now,
// saturating (UINT64_MAX: forever).
std::int64_t deadline_after(Os &os, std::uint64_t timeout_ns);

} // namespace hpu::detail

#endif // HPU_SRC_FENCE_H
