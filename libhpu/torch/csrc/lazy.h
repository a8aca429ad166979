// SPDX-License-Identifier: MIT
// lazy.h - lazy mode's recorder (lazy.cpp): the jobs of a step recorded,
// run as one hpu::Graph, graphs cached by structure, the steps' host
// staging areas.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TORCH_LAZY_H
#define HPU_TORCH_LAZY_H

#include <array>
#include <list>
#include <map>
#include <set>
#include <unordered_map>

#include "hpu_torch.h"

namespace hpu_torch {

namespace lazy_detail {

/** Bytes [lo, hi) a job reads, or writes too. */
struct Range {
    std::uint64_t lo = 0;
    std::uint64_t hi = 0; // one past the last byte
    bool write = false;
};
/** The memory a job touches; a launch counts as writing every tensor it names. */
std::vector<Range> accesses(const Job &job);
/** Whether one of a and b writes memory the other touches. */
bool conflict(const std::vector<Range> &a, const std::vector<Range> &b);

} // namespace lazy_detail

/** Whether lazy mode fuses elementwise chains (PT_HPU_LAZY_FUSION, default 1). */
bool lazy_fusion() noexcept;
/** Switches fusion on or off for the steps recorded from now on. */
void set_lazy_fusion(bool on) noexcept;

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
    /**
     * Runs the step as one graph (built or found in the cache) on the
     * calling thread's current stream, after the streams the step's ops
     * were recorded on; its fence pending on ctx.
     */
    void flush(DeviceContext &ctx);
    /** Host memory of the step's staging area for one recorded host->device copy. */
    void *upload_staging(DeviceContext &ctx, std::uint64_t bytes, std::uint64_t *va);
    /**
     * Host memory for the value of one scalar the step uploads (fill_hpu
     * in lazy mode; at most 8 bytes), made ctx's recorder first: the next
     * slot of one of two scalar pools that the steps with scalars take in
     * turn, whatever the device's timing. The k-th scalar of a steady step
     * is thus read from one of two addresses (two cached graphs at most),
     * and a pool is written only once the last step that used it has run.
     */
    static void *scalar_staging(DeviceContext &ctx, std::uint64_t bytes, std::uint64_t *va);
    /** Drops the least recently used cached graph (its sync objects go back); false when none. */
    bool evict_graph();
    /** A lazy step failed on the device: its graphs go (they are rebuilt when needed). */
    void failed();
    [[nodiscard]] LazyStats stats() const;
    [[nodiscard]] bool empty() const noexcept { return jobs_.empty(); }
    /** What the last step's graph ran, one entry per node (a fused chain as "fused(a+b)"). */
    [[nodiscard]] const std::vector<std::string> &last_step() const noexcept { return last_step_; }

private:
    struct Entry {
        hpu::Graph graph;
        std::list<std::string>::iterator lru;
    };
    struct ScalarPool {
        hpu::Buffer buf;
        std::shared_ptr<hpu::Fence> fence; // of the last step that used it
    };
    struct Arena {
        hpu::Buffer buf;
        std::uint64_t used = 0;
        std::shared_ptr<hpu::Fence> fence; // of the last step that used it
        std::uint64_t step = 0;
    };

    Entry &build(DeviceContext &ctx, const std::string &key, const std::vector<Job> &jobs);
    bool evict_one(const hpu::Graph *keep);
    hpu::Fence launch(Entry &e, DeviceContext &ctx, int stream);
    static void apply_values(Entry &e, const std::vector<Job> &jobs);
    int pick_arena(DeviceContext &ctx, std::uint64_t need);
    // lazy_fusion.cpp: jobs with each fusable elementwise chain made one
    // launch of a generated kernel; plan gets what decides the result
    // beyond the recorded structure (part of the graph's cache key).
    std::vector<Job> fuse(DeviceContext &ctx, const std::vector<Job> &jobs, std::string &plan);
    const hpu::Kernel *fused_kernel(DeviceContext &ctx, const std::string &key, const void *chain);

    std::vector<Job> jobs_;
    std::string key_; // the recorded structure, scalar values and seeds excluded
    // Generated kernels by chain structure, before the graphs that launch
    // them (so destroyed after them); chains that failed to build.
    std::map<std::string, hpu::Kernel> fused_kernels_;
    std::set<std::string> unfusable_;
    std::vector<std::string> last_step_;
    std::list<std::string> lru_; // most recently used first
    std::unordered_map<std::string, Entry> cache_;
    std::vector<Arena> arenas_;
    int arena_ = -1; // the recorded step's staging area
    std::array<ScalarPool, 2> pools_;
    int pool_ = -1;          // the recorded step's scalar pool
    int next_pool_ = 0;      // the pool of the next step with scalars
    std::uint64_t pool_used_ = 0;
    std::uint64_t step_ = 0;
    LazyStats stats_;
};

} // namespace hpu_torch

#endif // HPU_TORCH_LAZY_H
