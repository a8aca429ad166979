// SPDX-License-Identifier: MIT
// Graphs (hpu_graph_t): DMA, TPC and GEMM nodes with dependencies,
// compiled into one command list per engine queue and submitted as a whole
// per launch. Documentation/libhpu-compute.md ("Graphs") explains the
// scheme; in short:
//
//  - Slots: 0 the DMA queue, 1 the TPC queue, 2 and 3 the MME queues
//    (GEMMs alternate between the MMEs). The queues are the device's,
//    shared by its graphs (hpu_device::graph_queues).
//  - A node with a consumer on another slot ends with SOB_UPDATE ADD 1 on
//    its slot's sync object; the consumer WAITs for the count. Every job
//    but the join job (the slot of the last node) ends with one more ADD;
//    the join job WAITs for those last counts, so its fence is the launch's.
//  - Counts restart at 0 every launch: launch L uses the sync objects of
//    parity L % 2 and each of its jobs first SETs its slot's object of the
//    other parity to 0. Launch L's jobs wait (in the kernel) for done[1 - p],
//    the end of launch L - 1: its finish job, a NOP on the join's queue that
//    waits for the last job of every other slot (and follows the join and
//    its release on their queue), so every job of L - 1, every read and every
//    reset of a count, is over before any job of L runs. (A graph on one
//    slot has no finish job: its join, on the only queue, is the end.)
//  - A failed job stops before its slot's last ADDs, and the jobs waiting
//    for them would wait until their job timeout. So each launch puts,
//    behind every job whose slot's object another job waits for, a release
//    job on the same queue that first SETs the slot's object of the other
//    parity to 0, then SETs its object of this parity to the final count:
//    no-ops after a job that ran to its end, the release of the waiters
//    after one that failed (they run on, and the launch's fence fails with
//    the failed job's error). The first SET covers a job that failed before
//    its first packet (cancelled, or its stream failed before it ran): that
//    packet, the reset of sob[1 - p][s], never ran. Both SETs run after every
//    job of L - 1 (the release follows L's job of slot s, which waited for
//    done[1 - p]) and before any of L + 1 (which waits for L's finish job,
//    which waits for the release), whichever job failed and wherever.
//  - A launch whose submissions fail half way (e.g. -EBUSY at the per-file
//    job limit) leaves jobs running with counts of parity p; so does one
//    whose join's release or finish job could not be submitted (done[p]
//    would not be its end; that launch then waits for its jobs on the host
//    before it returns). The next launch then starts with the reset job, on
//    the join's queue, which waits for every slot's last job (tail) and
//    SETs every sync object to 0 (reset_sobs(), as the first launch after
//    compiling does); the launch waits for it on the host and fails with
//    its error if it failed (the counts would be stale). Abandoned jobs may
//    WAIT for counts that never come, until their job timeout; every host
//    wait is made without graph_mu.
//  - No deadlock across graphs: each launch's jobs are submitted under the
//    device's graph_mu, so the shared queues see all graphs' launches in one
//    order, and a launch's WAITs are for its own jobs only. The finish and
//    reset jobs wait in the kernel (holding their queue, not a stream: they
//    have no WAIT), but only for jobs submitted before them, so nothing
//    behind them on the join's queue can be waited for by what they wait
//    for.
//  - The launch's fence holds every job's syncobj (members). A wait (and
//    hpu_fence_status) settles only once every job of the launch ended:
//    the error of the failed job that ended first (the earliest fence
//    timestamp of SYNC_IOC_FILE_INFO, the join's or a member's; equal ones
//    in graph order, by the job's first node), else success. Exported as a
//    sync_file it is the join's and the members' fences merged
//    (SYNC_IOC_MERGE), which signals when all did, in error if any failed;
//    as a wait of another submission, every job's syncobj is waited for
//    (fence.cpp, queue.cpp).
//  - Each parity has its own command lists and descriptors, so the
//    scalars and seeds of parity p are rewritten (hpu_graph_set_scalar,
//    hpu_graph_set_seed) once every job submitted from p's lists (launch
//    L - 2, or an abandoned launch's) has ended, while L - 1 may run.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "common.h"
#include "compute.h"
#include "device.h"
#include "fence.h"
#include "kmd.h"
#include "queue.h"

namespace hpu::detail {

namespace {

constexpr unsigned int kSlots = 4;
constexpr unsigned int kSlotDma = 0;
constexpr unsigned int kSlotTpc = 1;
constexpr unsigned int kSlotMme = 2;

enum class Kind : std::uint8_t { Copy, Memset, Launch, Gemm };

struct Node {
    Kind kind = Kind::Copy;
    unsigned int slot = 0;
    std::vector<std::uint32_t> deps;
    std::uint64_t dst = 0;
    std::uint64_t src = 0; // or the memset pattern
    std::uint64_t size = 0;
    hpu_kernel kernel;         // a handle of the graph's own on the caller's kernel
    std::vector<hpu_tensor> tensors;
    std::vector<std::uint32_t> scalars;
    hpu_launch launch{};
    hpu_gemm gemm{};
    // Compiled:
    bool signals = false;      // a node on another slot depends on it
    std::uint32_t count = 0;   // its slot's sync-object value once it has run
    std::array<std::uint8_t *, 2> desc{}; // launch descriptor of each parity (host address)
};

struct ListFree {
    void operator()(hpu_cmdlist *cl) const noexcept { (void)cmdlist_free(cl); }
};
using ListPtr = std::unique_ptr<hpu_cmdlist, ListFree>;

} // namespace

} // namespace hpu::detail

using hpu::detail::Node;

struct hpu_graph {
    hpu_device *dev = nullptr;
    std::uint64_t epoch = 0;
    std::vector<Node> nodes;
    unsigned int gemms = 0;           // GEMM nodes so far (MME choice)
    unsigned int num_mme = 1;
    bool compiled = false;
    unsigned int used = 0;            // bit s: slot s has nodes
    unsigned int join = 0;            // slot of the join job
    std::array<std::uint32_t, hpu::detail::kSlots> signals{}; // nodes of each slot that signal
    std::array<std::array<hpu::detail::ListPtr, hpu::detail::kSlots>, 2> lists;
    std::array<std::array<hpu::detail::ListPtr, hpu::detail::kSlots>, 2> release; // per slot, or none
    std::array<std::array<std::uint32_t, hpu::detail::kSlots>, 2> sob{};
    std::vector<std::uint32_t> sobs_held; // reserved through hpu_sob_alloc
    std::array<hpu_queue, hpu::detail::kSlots> queues{};
    std::array<std::uint32_t, 2> done{}; // syncobj: the end of the last launch of each parity
    // Syncobjs: the last job of each slot but the join's in the last launch
    // (its release job, or the slot's job without one); tails_live bit s:
    // tail[s] holds a fence (a syncobj never signalled cannot be waited for).
    std::array<std::uint32_t, hpu::detail::kSlots> tail{};
    unsigned int tails_live = 0;
    hpu::detail::ListPtr finish; // a NOP: the finish job, on the join's queue
    hpu::detail::ListPtr reset;  // SETs every sync object to 0 (reset_sobs()); recorded by compile
    bool initialised = false;         // the sync objects were set to 0 since compiled
    std::array<bool, 2> dirty{};      // scalars changed since parity p was written
    std::uint64_t launches = 0;
};

namespace hpu::detail {

namespace {

int check_deps(const hpu_graph *g, const std::uint32_t *deps, std::size_t n)
{
    if (n != 0 && deps == nullptr)
        return set_error(-EINVAL, "graph: deps is NULL");
    for (std::size_t i = 0; i < n; ++i) {
        if (deps[i] >= g->nodes.size()) { // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
            return set_error(-EINVAL, "graph: dependency " + std::to_string(deps[i]) + // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
                                          " is not a node added before (the graph has " +
                                          std::to_string(g->nodes.size()) + ")");
        }
    }
    return 0;
}

// Waits for every launch so far (the last one's join ended after all).
int wait_idle(hpu_graph *g)
{
    if (g->launches == 0)
        return 0;
    const std::uint32_t last = g->done.at((g->launches - 1) % 2);
    return g->dev->kmd.syncobj_wait(last, INT64_MAX);
}

int add_node(hpu_graph *g, Node &&n, const std::uint32_t *deps, std::size_t num_deps)
{
    if (stale(g->dev, g->epoch))
        return -ENODEV;
    if (const int err = check_deps(g, deps, num_deps); err < 0)
        return err;
    if (g->nodes.size() >= static_cast<std::size_t>(INT32_MAX))
        return set_error(-ENOSPC, "graph: too many nodes");
    n.deps.assign(deps, deps + num_deps); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    std::sort(n.deps.begin(), n.deps.end());
    n.deps.erase(std::unique(n.deps.begin(), n.deps.end()), n.deps.end());
    // A graph changed after a launch is compiled again at the next one.
    if (g->compiled) {
        if (const int err = wait_idle(g); err < 0)
            return err;
        g->compiled = false;
    }
    g->nodes.push_back(std::move(n));
    return static_cast<int>(g->nodes.size() - 1);
}

int graph_queue(hpu_graph *g, unsigned int slot)
{
    hpu_device *dev = g->dev;
    const std::lock_guard<std::mutex> lock(dev->mu);
    if ((dev->graph_queues_made & (1U << slot)) == 0) {
        std::uint32_t cls = DRM_HPU_ENGINE_DMA;
        std::uint32_t engine = 0;
        if (slot == kSlotTpc) {
            cls = DRM_HPU_ENGINE_TPC;
        } else if (slot >= kSlotMme) {
            cls = DRM_HPU_ENGINE_MME;
            engine = slot - kSlotMme;
        }
        std::uint32_t id = 0;
        if (const int err = dev->kmd.queue_create(cls, engine, id); err < 0)
            return set_error(err, "graph: creating its queue on engine class " + std::to_string(cls) + " failed");
        dev->graph_queues.at(slot) = id;
        dev->graph_queues_made |= 1U << slot;
    }
    hpu_queue &q = g->queues.at(slot);
    q.dev = dev;
    q.epoch = dev->epoch;
    q.id = dev->graph_queues.at(slot);
    q.engine_class = slot == kSlotTpc ? HPU_ENGINE_CLASS_TPC : slot >= kSlotMme ? HPU_ENGINE_CLASS_MME : HPU_ENGINE_CLASS_DMA;
    return 0;
}

int reserve_sobs(hpu_graph *g, unsigned int slots)
{
    const std::size_t need = slots > 1 ? 2U * slots : 0U;
    while (g->sobs_held.size() < need) {
        std::uint32_t s = 0;
        if (const int err = hpu_sob_alloc(g->dev, &s); err < 0) {
            return set_error(err, "graph: no free sync object for its cross-engine dependencies (it needs " +
                                      std::to_string(need) + ")");
        }
        g->sobs_held.push_back(s);
    }
    return 0;
}

// Records node n into cl (parity p).
int record_node(Node &n, hpu_cmdlist *cl, unsigned int p)
{
    switch (n.kind) {
    case Kind::Copy:
        return hpu_cmd_copy(cl, n.dst, n.src, n.size);
    case Kind::Memset:
        return hpu_cmd_memset(cl, n.dst, n.src, n.size);
    case Kind::Gemm:
        return hpu_cmd_gemm(cl, &n.gemm);
    case Kind::Launch: {
        n.launch.tensors = n.tensors.data();
        n.launch.scalars = n.scalars.data();
        return record_launch(cl, &n.kernel, &n.launch, &n.desc.at(p));
    }
    }
    return -EINVAL;
}

// One slot's job of parity p.
int record_slot(hpu_graph *g, unsigned int slot, unsigned int p, hpu_cmdlist *cl)
{
    const bool multi = std::popcount(g->used) > 1;
    if (multi) {
        if (const int err = hpu_cmd_sob_update(cl, g->sob.at(1 - p).at(slot), HPU_SOB_SET, 0); err < 0)
            return err;
    }
    std::array<std::uint32_t, kSlots> waited{};
    for (Node &n : g->nodes) {
        if (n.slot != slot)
            continue;
        std::array<std::uint32_t, kSlots> need{};
        for (const std::uint32_t d : n.deps) {
            const Node &dep = g->nodes.at(d);
            if (dep.slot != slot)
                need.at(dep.slot) = std::max(need.at(dep.slot), dep.count);
        }
        for (unsigned int t = 0; t < kSlots; ++t) {
            if (need.at(t) > waited.at(t)) {
                if (const int err = hpu_cmd_wait_sob(cl, g->sob.at(p).at(t), need.at(t), HPU_WAIT_GE); err < 0)
                    return err;
                waited.at(t) = need.at(t);
            }
        }
        if (const int err = record_node(n, cl, p); err < 0)
            return err;
        if (n.signals) {
            if (const int err = hpu_cmd_sob_update(cl, g->sob.at(p).at(slot), HPU_SOB_ADD, 1); err < 0)
                return err;
        }
    }
    if (!multi)
        return 0;
    if (slot != g->join)
        return hpu_cmd_sob_update(cl, g->sob.at(p).at(slot), HPU_SOB_ADD, 1);
    // The join: every other slot's last count, one past its signalling nodes.
    for (unsigned int t = 0; t < kSlots; ++t) {
        if ((g->used & (1U << t)) == 0 || t == slot)
            continue;
        if (const int err = hpu_cmd_wait_sob(cl, g->sob.at(p).at(t), g->signals.at(t) + 1, HPU_WAIT_GE); err < 0)
            return err;
    }
    return 0;
}

// The release job of slot s, parity p (graph.cpp's head), when another
// slot waits for s's sync object: SETs s's object of the other parity to 0
// (in case the slot's job failed before its first packet, which does
// that), then s's object of parity p to its count at the end of the job.
int record_release(hpu_graph *g, unsigned int s, unsigned int p)
{
    g->release.at(p).at(s).reset();
    if (std::popcount(g->used) <= 1)
        return 0;
    const std::uint32_t final_count = s == g->join ? g->signals.at(s) : g->signals.at(s) + 1;
    if (final_count == 0)
        return 0;
    hpu_cmdlist *cl = nullptr;
    if (const int err = cmdlist_new(g->dev, cl); err < 0)
        return err;
    g->release.at(p).at(s).reset(cl);
    if (const int err = hpu_cmd_sob_update(cl, g->sob.at(1 - p).at(s), HPU_SOB_SET, 0); err < 0)
        return err;
    return hpu_cmd_sob_update(cl, g->sob.at(p).at(s), HPU_SOB_SET, final_count);
}

int compile(hpu_graph *g)
{
    if (const int err = wait_idle(g); err < 0)
        return err;
    g->used = 0;
    for (Node &n : g->nodes) {
        g->used |= 1U << n.slot;
        n.signals = false;
    }
    for (const Node &n : g->nodes) {
        for (const std::uint32_t d : n.deps) {
            if (g->nodes.at(d).slot != n.slot)
                g->nodes.at(d).signals = true;
        }
    }
    g->signals = {};
    for (Node &n : g->nodes) {
        if (n.signals)
            n.count = ++g->signals.at(n.slot);
    }
    g->join = g->nodes.back().slot;
    const auto slots = static_cast<unsigned int>(std::popcount(g->used));
    if (const int err = reserve_sobs(g, slots); err < 0)
        return err;
    std::size_t next = 0;
    for (unsigned int s = 0; s < kSlots; ++s) {
        if ((g->used & (1U << s)) == 0)
            continue;
        if (const int err = graph_queue(g, s); err < 0)
            return err;
        for (unsigned int p = 0; p < 2 && slots > 1; ++p)
            g->sob.at(p).at(s) = g->sobs_held.at(next++);
    }
    for (unsigned int p = 0; p < 2; ++p) {
        for (unsigned int s = 0; s < kSlots; ++s) {
            g->lists.at(p).at(s).reset();
            if ((g->used & (1U << s)) == 0)
                continue;
            hpu_cmdlist *cl = nullptr;
            if (const int err = cmdlist_new(g->dev, cl); err < 0)
                return err;
            g->lists.at(p).at(s).reset(cl);
            if (const int err = record_slot(g, s, p, cl); err < 0)
                return err;
            if (const int err = record_release(g, s, p); err < 0)
                return err;
        }
    }
    // The reset job's list: its packets change only with sobs_held.
    {
        hpu_cmdlist *raw = nullptr;
        if (const int err = cmdlist_new(g->dev, raw); err < 0)
            return err;
        ListPtr cl(raw);
        if (g->sobs_held.empty()) {
            if (const int err = hpu_cmd_nop(cl.get()); err < 0)
                return err;
        }
        for (const std::uint32_t s : g->sobs_held) {
            if (const int err = hpu_cmd_sob_update(cl.get(), s, HPU_SOB_SET, 0); err < 0)
                return err;
        }
        g->reset = std::move(cl);
    }
    if (!g->finish && slots > 1) {
        hpu_cmdlist *raw = nullptr;
        if (const int err = cmdlist_new(g->dev, raw); err < 0)
            return err;
        ListPtr cl(raw);
        if (const int err = hpu_cmd_nop(cl.get()); err < 0)
            return err;
        g->finish = std::move(cl);
    }
    g->dirty = {false, false};
    g->initialised = false; // the sync objects may be new: set them to 0 first
    g->compiled = true;
    return 0;
}

// Submits the reset job (g->reset, compiled) on the join's slot: it sets
// every sync object of the graph to 0 and signals done[1 - p], which the
// next launch (parity p) waits for. Under graph_mu; the caller waits for
// *out without it.
int reset_sobs(hpu_graph *g, unsigned int p, hpu_fence_t **out)
{
    // After every job of the launches so far: the join's queue runs its
    // own in order, the other slots' last jobs are waited for.
    std::array<SyncPoint, kSlots> after{};
    std::size_t n_after = 0;
    for (unsigned int s = 0; s < kSlots; ++s) {
        if ((g->tails_live & (1U << s)) != 0)
            after.at(n_after++).handle = g->tail.at(s);
    }
    std::array<SyncPoint, 1> sig{};
    sig[0].handle = g->done.at(1 - p);
    return submit_raw(&g->queues.at(g->join), g->reset.get(), nullptr, 0,
                      std::span<const SyncPoint>(after.data(), n_after), sig, 0, out);
}

// Waits for every job submitted from parity p's lists, an abandoned
// launch's too (the drop path in launch()), so their descriptors can be
// rewritten.
int wait_parity(hpu_graph *g, unsigned int p)
{
    for (const ListPtr &cl : g->lists.at(p)) {
        if (cl && cl->kpoint != 0) { // graph jobs go to the kernel only
            if (const int err = g->dev->kmd.syncobj_timeline_wait(cl->timeline, cl->kpoint, INT64_MAX); err < 0)
                return err;
        }
    }
    return 0;
}

void patch_scalars(hpu_graph *g, unsigned int p)
{
    for (Node &n : g->nodes) {
        if (n.kind != Kind::Launch || n.desc.at(p) == nullptr)
            continue;
        for (std::size_t i = 0; i < n.scalars.size(); ++i) {
            std::uint8_t *w = n.desc.at(p) + HPU_TPC_LAUNCH_OFF(scalars) + 4 * i; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
            const std::uint32_t v = n.scalars[i];
            for (unsigned int b = 0; b < 4; ++b)
                w[b] = static_cast<std::uint8_t>(v >> (8U * b)); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        }
        std::uint8_t *s = n.desc.at(p) + HPU_TPC_LAUNCH_OFF(seed); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        for (unsigned int b = 0; b < 8; ++b)
            s[b] = static_cast<std::uint8_t>(n.launch.seed >> (8U * b)); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    }
}

// Launch node `node` of g for a change of its values, or nullptr with the error set.
Node *launch_node(hpu_graph *g, std::uint32_t node)
{
    if (node >= g->nodes.size() || g->nodes[node].kind != Kind::Launch) {
        (void)set_error(-EINVAL, "graph: node " + std::to_string(node) + " is not a launch");
        return nullptr;
    }
    return &g->nodes[node];
}

int launch(hpu_graph *g, const hpu_fence_t *const *waits, std::size_t num_waits, hpu_fence_t **out)
{
    if (g->nodes.empty())
        return set_error(-EINVAL, "graph: no nodes to launch");
    if (stale(g->dev, g->epoch))
        return -ENODEV;
    if (!g->compiled) {
        if (const int err = compile(g); err < 0)
            return err;
    }
    const auto p = static_cast<unsigned int>(g->launches % 2);
    if (g->dirty.at(p)) {
        if (const int err = wait_parity(g, p); err < 0)
            return err;
        patch_scalars(g, p);
        g->dirty.at(p) = false;
    }
    // One order of graph jobs on every shared queue (no two launches'
    // jobs cross, which could deadlock their waits).
    std::unique_lock<std::mutex> lock(g->dev->graph_mu);
    if (!g->initialised) {
        // The reset is waited for without the lock: behind abandoned jobs
        // it may take until their job timeout. Failed (e.g. by its stream
        // before it ran), the counts are still the old ones: no launch.
        hpu_fence_t *raw = nullptr;
        if (const int err = reset_sobs(g, p, &raw); err < 0)
            return err;
        const std::unique_ptr<hpu_fence> rf(raw);
        lock.unlock();
        const int err = fence_wait(rf.get(), INT64_MAX);
        (void)g->dev->kmd.syncobj_destroy(rf->handle);
        if (err < 0)
            return set_error(err, "graph: the job setting its sync objects to 0 failed");
        g->initialised = true;
        lock.lock();
    }
    std::array<SyncPoint, 1> prev{};
    prev[0].handle = g->done.at(1 - p); // launch L - 1's join (or the reset job)
    std::vector<hpu_fence_member> members;
    members.reserve(kSlots); // nothing below throws once jobs are submitted
    // A member's syncobj is destroyed with the launch's fence, or here when
    // there is none (or the launch fails half way: its jobs run on).
    // A launch that fails half way leaves its jobs running, and their
    // counts in the sync objects of parity p, which the next launch uses
    // again: it first resets them all, after every job so far (reset_sobs()
    // waits for the live tails).
    bool submitted = false; // a job of this launch is in
    // A driver with SUBMIT_ARRAY gets the launch's jobs in one call, all
    // or none, with one doorbell per stream (the finish job follows on its
    // own); until that call nothing of the launch is in. Else one SUBMIT
    // per job.
    std::unique_ptr<SubmitBatch> batch;
    if (SubmitBatch::supported(g->dev))
        batch = std::make_unique<SubmitBatch>();
    SubmitBatch *const bp = batch.get();
    const std::uint32_t tails_live0 = g->tails_live;
    auto drop = [&](int err) {
        if (bp != nullptr) {
            // Nothing of the launch was queued: as if it never started.
            bp->rollback();
            g->tails_live = tails_live0;
            if (out != nullptr && *out != nullptr) {
                (void)g->dev->kmd.syncobj_destroy((*out)->handle);
                delete *out; // NOLINT(cppcoreguidelines-owning-memory)
                *out = nullptr;
            }
        }
        for (const hpu_fence_member &m : members)
            (void)g->dev->kmd.syncobj_destroy(m.handle);
        if (submitted && bp == nullptr)
            g->initialised = false;
        return err;
    };
    // Each slot's first node: failed jobs of the launch that ended at the
    // same time are ordered by it (fence.cpp).
    std::array<std::uint32_t, kSlots> first_node{};
    first_node.fill(UINT32_MAX);
    for (std::size_t i = g->nodes.size(); i-- > 0;)
        first_node.at(g->nodes[i].slot) = static_cast<std::uint32_t>(i);
    // The finish job waits for these: every other slot's last job.
    std::array<SyncPoint, kSlots> tails{};
    std::size_t n_tails = 0;
    for (unsigned int s = 0; s < kSlots; ++s) {
        if ((g->used & (1U << s)) == 0 || s == g->join)
            continue;
        hpu_cmdlist *rel = g->release.at(p).at(s).get();
        std::array<SyncPoint, 1> tail{};
        tail[0].handle = g->tail.at(s);
        hpu_fence_t *raw = nullptr;
        if (const int err = submit_raw(&g->queues.at(s), g->lists.at(p).at(s).get(), waits, num_waits, prev, tail,
                                       0, out != nullptr ? &raw : nullptr, bp);
            err < 0)
            return drop(err);
        submitted = true;
        g->tails_live |= 1U << s;
        if (const std::unique_ptr<hpu_fence> f(raw); f) { // its syncobj lives on in members
            members.push_back({f->handle, f->queue_id, f->seq, first_node.at(s)}); // reserved: does not throw
            // Batched, the sequence number comes at the flush: into the member.
            if (bp != nullptr)
                bp->at(bp->size() - 1).seq = &members.back().seq;
        }
        // The release replaces the job's fence in tail[s] with its own.
        if (rel != nullptr) {
            if (const int err = submit_raw(&g->queues.at(s), rel, nullptr, 0, {}, tail, 0, nullptr, bp); err < 0)
                return drop(err);
        }
        tails.at(n_tails++) = tail[0];
    }
    // done[p]: the finish job's fence when other slots have jobs (it waits
    // for their last jobs, so the next launch starts once all of this one
    // ended), else the join's (and its release's).
    std::array<SyncPoint, 1> sig{};
    sig[0].handle = g->done.at(p);
    const std::span<const SyncPoint> join_sig = n_tails == 0 ? std::span<const SyncPoint>(sig) : std::span<const SyncPoint>();
    if (const int err = submit_raw(&g->queues.at(g->join), g->lists.at(p).at(g->join).get(), waits, num_waits, prev,
                                   join_sig, 0, out, bp);
        err < 0)
        return drop(err);
    bool sound = true;
    if (hpu_cmdlist *rel = g->release.at(p).at(g->join).get(); rel != nullptr) {
        const int err = submit_raw(&g->queues.at(g->join), rel, nullptr, 0, {}, join_sig, 0, nullptr, bp);
        if (err < 0 && bp != nullptr)
            return drop(err);
        sound = err >= 0;
    }
    if (bp != nullptr) {
        if (const int err = submit_flush(g->dev, *bp); err < 0)
            return drop(err);
    }
    // The finish job waits for the tails the jobs above signal: on its
    // own, after them (SUBMIT_ARRAY looks every entry's in-syncs up before
    // it queues any, so it refuses an entry waiting for an earlier one).
    if (n_tails != 0 && sound) {
        sound = submit_raw(&g->queues.at(g->join), g->finish.get(), nullptr, 0,
                           std::span<const SyncPoint>(tails.data(), n_tails), sig, 0, nullptr) >= 0;
    }
    if (!sound) {
        // done[p] is not this launch's end: the next launch first resets
        // every sync object after every job so far (reset_sobs()). Until
        // then, wait here (without the lock), so that wait_idle() (on
        // done[p]) cannot pass early.
        lock.unlock();
        for (std::size_t i = 0; i < n_tails; ++i)
            (void)g->dev->kmd.syncobj_wait(tails.at(i).handle, INT64_MAX);
        // The join and its release: their lists' last submissions.
        for (const hpu_cmdlist *jl : {g->lists.at(p).at(g->join).get(), g->release.at(p).at(g->join).get()}) {
            if (jl != nullptr && jl->kpoint != 0)
                (void)g->dev->kmd.syncobj_timeline_wait(jl->timeline, jl->kpoint, INT64_MAX);
        }
        g->initialised = false;
    }
    if (out != nullptr && *out != nullptr) {
        (*out)->members = std::move(members);
        (*out)->first_node = first_node.at(g->join);
    }
    ++g->launches;
    return 0;
}

int graph_free(hpu_graph *g) noexcept
{
    int err = 0;
    const bool dead = stale(g->dev, g->epoch);
    if (!dead)
        err = wait_idle(g);
    for (auto &per : g->lists) {
        for (auto &l : per)
            l.reset(); // waits for its jobs
    }
    for (auto &per : g->release) {
        for (auto &l : per)
            l.reset();
    }
    g->finish.reset();
    g->reset.reset();
    if (!dead) {
        for (const std::uint32_t s : g->sobs_held)
            (void)hpu_sob_free(g->dev, s);
        std::array<std::uint32_t, 2 + kSlots> handles{};
        std::copy(g->done.begin(), g->done.end(), handles.begin());
        std::copy(g->tail.begin(), g->tail.end(), handles.begin() + 2);
        for (const std::uint32_t h : handles) {
            if (h != 0) {
                const int e = g->dev->kmd.syncobj_destroy(h);
                err = err < 0 ? err : e;
            }
        }
    }
    g->nodes.clear();
    delete g; // NOLINT(cppcoreguidelines-owning-memory)
    return err;
}

// A copy (src an address) or memset (src the pattern) node on the DMA slot.
int add_dma(hpu_graph *g, Kind kind, std::uint64_t dst, std::uint64_t src, std::uint64_t size,
            const std::uint32_t *deps, std::size_t num_deps)
{
    return guarded([&]() {
        Node n;
        n.kind = kind;
        n.slot = kSlotDma;
        n.dst = dst;
        n.src = src;
        n.size = size;
        return add_node(g, std::move(n), deps, num_deps);
    });
}

} // namespace

} // namespace hpu::detail

using namespace hpu::detail; // NOLINT(google-build-using-namespace)

extern "C" {

HPU_EXPORT int hpu_graph_create(hpu_device_t *dev, hpu_graph_t **out)
{
    clear_error();
    if (out == nullptr)
        return -EINVAL;
    *out = nullptr;
    if (dev == nullptr)
        return -EINVAL;
    return guarded([&]() {
        auto g = std::make_unique<hpu_graph>();
        g->dev = dev;
        g->epoch = dev->epoch;
        const int mmes = hpu_device_engines(dev, HPU_ENGINE_CLASS_MME);
        g->num_mme = mmes > 1 ? 2 : 1;
        std::array<std::uint32_t *, 2 + kSlots> handles{};
        for (std::size_t i = 0; i < g->done.size(); ++i)
            handles.at(i) = &g->done.at(i);
        for (std::size_t i = 0; i < g->tail.size(); ++i)
            handles.at(g->done.size() + i) = &g->tail.at(i);
        // done[] signalled from the start: a launch whose finish job was
        // refused leaves done[p] as it was, which wait_idle() and the
        // scalar patch may wait for (that launch waited on the host).
        for (std::size_t i = 0; i < handles.size(); ++i) {
            std::uint32_t *h = handles.at(i);
            if (const int err = dev->kmd.syncobj_create(*h, i < g->done.size()); err < 0) {
                for (const std::uint32_t *o : handles) {
                    if (*o != 0)
                        (void)dev->kmd.syncobj_destroy(*o);
                }
                return err;
            }
        }
        *out = g.release();
        return 0;
    });
}

HPU_EXPORT int hpu_graph_destroy(hpu_graph_t *g)
{
    hpu::detail::clear_error();
    if (g == nullptr)
        return 0;
    return graph_free(g);
}

HPU_EXPORT int hpu_graph_add_copy(hpu_graph_t *g, uint64_t dst_va, uint64_t src_va, uint64_t size,
                                  const uint32_t *deps, size_t num_deps)
{
    clear_error();
    if (g == nullptr)
        return -EINVAL;
    if (!range_ok(dst_va, size) || !range_ok(src_va, size))
        return set_error(-EINVAL, "graph copy: size 0 or a range beyond the 48-bit address space");
    return add_dma(g, Kind::Copy, dst_va, src_va, size, deps, num_deps);
}

HPU_EXPORT int hpu_graph_add_memset(hpu_graph_t *g, uint64_t dst_va, uint64_t pattern, uint64_t size,
                                    const uint32_t *deps, size_t num_deps)
{
    clear_error();
    if (g == nullptr)
        return -EINVAL;
    if (!range_ok(dst_va, size))
        return set_error(-EINVAL, "graph memset: size 0 or a range beyond the 48-bit address space");
    return add_dma(g, Kind::Memset, dst_va, pattern, size, deps, num_deps);
}

HPU_EXPORT int hpu_graph_add_launch(hpu_graph_t *g, const hpu_kernel_t *k, const struct hpu_launch *l,
                                    const uint32_t *deps, size_t num_deps)
{
    clear_error();
    if (g == nullptr || k == nullptr)
        return set_error(-EINVAL, "graph launch: graph or kernel is NULL");
    if (k->dev != g->dev)
        return set_error(-EXDEV, "graph launch: the kernel was loaded on another device");
    if (stale(k->dev, k->epoch))
        return -ENODEV;
    return guarded([&]() {
        // The device's checks now, so the error names this call.
        std::vector<std::uint8_t> scratch(launch_size(*k->img), 0);
        if (const int err = encode_launch(*k->img, l, scratch.data()); err < 0)
            return err;
        Node n;
        n.kind = Kind::Launch;
        n.slot = kSlotTpc;
        n.kernel = *k; // the graph's own handle: the caller may destroy theirs
        n.tensors.assign(l->tensors, l->tensors + l->num_tensors); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        n.scalars.assign(l->scalars, l->scalars + l->num_scalars); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        n.launch = *l;
        n.launch.size = sizeof(hpu_launch);
        return add_node(g, std::move(n), deps, num_deps);
    });
}

HPU_EXPORT int hpu_graph_add_gemm(hpu_graph_t *g, const struct hpu_gemm *gemm, const uint32_t *deps,
                                  size_t num_deps)
{
    clear_error();
    if (g == nullptr)
        return -EINVAL;
    return guarded([&]() {
        std::array<std::uint8_t, HPU_MME_DESC_SIZE> scratch{};
        if (const int err = encode_gemm(gemm, scratch.data()); err < 0)
            return err;
        Node n;
        n.kind = Kind::Gemm;
        n.slot = kSlotMme + (g->gemms % g->num_mme);
        n.gemm = *gemm;
        n.gemm.size = sizeof(hpu_gemm);
        const int id = add_node(g, std::move(n), deps, num_deps);
        if (id >= 0)
            ++g->gemms;
        return id;
    });
}

HPU_EXPORT size_t hpu_graph_size(const hpu_graph_t *g)
{
    return g == nullptr ? 0 : g->nodes.size();
}

HPU_EXPORT int hpu_graph_set_scalar(hpu_graph_t *g, uint32_t node, uint32_t index, uint32_t value)
{
    clear_error();
    if (g == nullptr)
        return -EINVAL;
    Node *l = launch_node(g, node);
    if (l == nullptr)
        return -EINVAL;
    Node &n = *l;
    if (index >= n.scalars.size()) {
        return set_error(-EINVAL, "graph: launch node " + std::to_string(node) + " has " +
                                      std::to_string(n.scalars.size()) + " scalars, not " + std::to_string(index + 1));
    }
    if (n.scalars[index] != value) {
        n.scalars[index] = value;
        g->dirty = {true, true};
    }
    return 0;
}

HPU_EXPORT int hpu_graph_set_seed(hpu_graph_t *g, uint32_t node, uint64_t seed)
{
    clear_error();
    if (g == nullptr)
        return -EINVAL;
    Node *n = launch_node(g, node);
    if (n == nullptr)
        return -EINVAL;
    if (n->launch.seed != seed) {
        n->launch.seed = seed;
        g->dirty = {true, true};
    }
    return 0;
}

HPU_EXPORT int hpu_graph_launch(hpu_graph_t *g, const hpu_fence_t *const *waits, size_t num_waits,
                                hpu_fence_t **out)
{
    clear_error();
    if (out != nullptr)
        *out = nullptr;
    if (g == nullptr || (waits == nullptr && num_waits != 0))
        return -EINVAL;
    return guarded([&]() { return launch(g, waits, num_waits, out); });
}

} // extern "C"
