// SPDX-License-Identifier: MIT
// Queues and command lists (hpu_queue_t, hpu_cmdlist_t; queue.cpp),
// internal to libhpu.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SRC_QUEUE_H
#define HPU_SRC_QUEUE_H

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "hpu/hpu.h"
#include "memory.h"

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

#endif // HPU_SRC_QUEUE_H
