// SPDX-License-Identifier: MIT
// lazy.h - lazy mode's recorder (lazy.cpp): the jobs of a step recorded,
// run as one hpu::Graph, graphs cached by structure, the steps' host
// staging areas.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TORCH_LAZY_H
#define HPU_TORCH_LAZY_H

#include <list>
#include <unordered_map>

#include "hpu_torch.h"

namespace hpu_torch {

/**
 * One device's lazy mode: the jobs recorded since the last flush, the
 * cache of compiled graphs by structure (LRU) and the host staging areas
 * of recorded host->device copies. Used under the context's lock.
 */
class LazyRecorder {
public:
    LazyRecorder() = default;
    LazyRecorder(const LazyRecorder &) = delete;
    LazyRecorder &operator=(const LazyRecorder &) = delete;
    LazyRecorder(LazyRecorder &&) = delete;
    LazyRecorder &operator=(LazyRecorder &&) = delete;
    ~LazyRecorder() = default;

    /** Adds job to the step. */
    void record(Job job);
    /** Runs the step as one graph (built or found in the cache), its fence pending on ctx. */
    void flush(DeviceContext &ctx);
    /** Host memory of the step's staging area for one recorded host->device copy. */
    void *upload_staging(DeviceContext &ctx, std::uint64_t bytes, std::uint64_t *va);
    /** A lazy step failed on the device: its graphs go (they are rebuilt when needed). */
    void failed();
    [[nodiscard]] LazyStats stats() const;
    [[nodiscard]] bool empty() const noexcept { return jobs_.empty(); }

private:
    struct Entry {
        hpu::Graph graph;
        std::list<std::string>::iterator lru;
    };
    struct Arena {
        hpu::Buffer buf;
        std::uint64_t used = 0;
        std::shared_ptr<hpu::Fence> fence; // of the last step that used it
        std::uint64_t step = 0;
    };

    Entry &build(DeviceContext &ctx, const std::string &key, const std::vector<Job> &jobs);
    bool evict_one(const hpu::Graph *keep);
    hpu::Fence launch(Entry &e, DeviceContext &ctx);
    static void apply_values(Entry &e, const std::vector<Job> &jobs);
    int pick_arena(DeviceContext &ctx, std::uint64_t need);

    std::vector<Job> jobs_;
    std::string key_; // the recorded structure, scalar values and seeds excluded
    std::list<std::string> lru_; // most recently used first
    std::unordered_map<std::string, Entry> cache_;
    std::vector<Arena> arenas_;
    int arena_ = -1; // the recorded step's staging area
    std::uint64_t step_ = 0;
    LazyStats stats_;
};

} // namespace hpu_torch

#endif // HPU_TORCH_LAZY_H
