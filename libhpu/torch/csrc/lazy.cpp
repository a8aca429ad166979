// SPDX-License-Identifier: MIT
// lazy.cpp - lazy mode (PT_HPU_LAZY_MODE=1): DeviceContext::submit()
// records each job; flush() (mark_step, or any wait for the device: a copy
// to the host, item(), synchronize(), the CPU fallback, empty_cache, exit)
// runs the recorded step as one hpu::Graph launch, in the stream's order.
//
// The graph cache. A step is keyed by its structure: each job's kind and,
// per kind, the copy's range, the memset's range and pattern, the kernel,
// tensor descriptors and index space of a launch (not its scalar values
// nor its seed), the GEMM's whole descriptor. A hit reuses the compiled
// graph and changes only the launches' scalars and seeds
// (hpu::Graph::set_scalar, set_seed): an optimizer's bias corrections, a
// new learning rate or dropout's new key. The caching allocator hands out
// the same addresses for the same sequence of requests, so a steady-state
// training step is one cached graph, launched once per step. The cache
// keeps PT_HPU_LAZY_CACHE_SIZE graphs (default 8), least recently used
// first out; a graph that finds no free sync object (a context has 32,
// a graph on n > 1 engine queues takes 2 n) evicts older ones first.
//
// Why a cached graph never touches memory it should not. A graph is only
// launched right after the same sequence of jobs was recorded again, from
// live tensors: every address in it was handed out by the allocator for
// that step, so memory freed (or a slab returned by empty_cache) since
// the graph was built is never written through a stale address. Within a
// step, a block freed and reused by later jobs is ordered as in eager
// mode: the node dependencies cover every read/write, write/read and
// write/write overlap of the memory the jobs touch. Across steps, each
// launch waits for the last job of every stream an op of the step was
// recorded on and of the stream current at the flush (the step's graph
// then is the last job of each of them).
//
// Host staging. A recorded host->device copy reads its source from a host
// area of the step (an arena, bump-allocated); an arena is reused only by a
// step recorded after the fence of the last step that used it signalled,
// so the host never overwrites bytes a graph has yet to copy. The lowest
// free arena is taken, so a loop that waits for the device each step (a
// loss.item()) uses the same arena, hence the same graph, every step.
//
// Fusion (lazy_fusion.cpp, PT_HPU_LAZY_FUSION=0 turns it off): before the
// cache is searched, chains of FP32 elementwise launches become one launch
// of a kernel generated from the library's own instruction sequences; the
// plan (which chains, which intermediates stored) joins the key.
//
// Dependencies. Copies and memsets run on the graph's DMA queue, launches
// on its TPC queue, GEMMs on the MMEs: each queue runs its nodes in order,
// so a node depends on the last conflicting node of the DMA and TPC queues
// and on every conflicting GEMM. Two jobs conflict when one writes memory
// the other touches; a launch counts as writing every tensor it names.
//
// Copyright (c) 2026 The hpu authors
#include "lazy.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <set>

namespace hpu_torch {

namespace {

constexpr std::size_t kArenas = 3;           // staging areas in use at once
constexpr std::uint64_t kArenaSize = 4ULL << 20U;
constexpr std::uint64_t kPoolSize = 1ULL << 20U; // a scalar pool: 2048 scalars of a step
constexpr std::uint64_t kAlign = 512;
constexpr std::size_t kNamesInWhat = 6;

std::size_t cache_size()
{
    static const std::size_t n = [] {
        const char *v = std::getenv("PT_HPU_LAZY_CACHE_SIZE"); // NOLINT(concurrency-mt-unsafe): read once
        const long parsed = v == nullptr ? 0 : std::strtol(v, nullptr, 10);
        return parsed > 0 ? static_cast<std::size_t>(parsed) : std::size_t{8};
    }();
    return n;
}

template <typename T>
void put(std::string &key, const T &v)
{
    key.append(reinterpret_cast<const char *>(&v), sizeof(v)); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
}

std::string describe(std::uint64_t step, const std::vector<Job> &jobs)
{
    std::string what = "lazy step " + std::to_string(step) + ": a graph of " + std::to_string(jobs.size()) + " jobs (";
    std::set<std::string> seen;
    for (const Job &j : jobs) {
        if (seen.size() == kNamesInWhat) {
            what += ", ...";
            break;
        }
        if (seen.insert(j.what).second)
            what += (seen.size() == 1 ? "" : ", ") + j.what;
    }
    return what + ")";
}

} // namespace

namespace lazy_detail {

namespace {

std::uint64_t esize_of(std::uint32_t dtype)
{
    const std::size_t n = hpu_dtype_size(dtype);
    return n == 0 ? 8 : n;
}

void add_tensor(std::vector<Range> &out, const hpu_tensor &t)
{
    std::uint64_t last = 0;
    for (std::uint32_t d = 0; d < t.ndims && d < HPU_TENSOR_MAX_DIMS; ++d) {
        if (t.sizes[d] == 0) // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
            return;
        last += static_cast<std::uint64_t>(t.sizes[d] - 1) * t.strides[d]; // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
    }
    out.push_back({t.va, t.va + (last + 1) * esize_of(t.dtype), true});
}

// A GEMM matrix: rows x cols stored with leading dimension ld (0: packed).
void add_matrix(std::vector<Range> &out, std::uint64_t va, std::uint64_t rows, std::uint64_t cols, std::uint64_t ld,
                std::uint64_t batch, std::uint64_t stride, std::uint32_t dtype, bool write)
{
    if (va == 0 || rows == 0 || cols == 0)
        return;
    std::uint64_t last = (rows - 1) * (ld == 0 ? cols : std::max(ld, cols)) + cols;
    if (batch > 1)
        last += (batch - 1) * stride;
    out.push_back({va, va + last * esize_of(dtype), write});
}

} // namespace

std::vector<Range> accesses(const Job &job)
{
    std::vector<Range> out;
    switch (job.kind) {
    case Job::Kind::Copy:
        out.push_back({job.src, job.src + job.size, false});
        out.push_back({job.dst, job.dst + job.size, true});
        break;
    case Job::Kind::Memset:
        out.push_back({job.dst, job.dst + job.size, true});
        break;
    case Job::Kind::Launch: {
        const hpu_launch raw = job.launch.raw();
        for (std::uint32_t i = 0; i < raw.num_tensors; ++i)
            add_tensor(out, raw.tensors[i]); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        break;
    }
    case Job::Kind::Gemm: {
        const hpu_gemm &g = job.gemm;
        const std::uint64_t batch = g.batch == 0 ? 1 : g.batch;
        const bool ta = (g.flags & HPU_GEMM_TRANS_A) != 0;
        const bool tb = (g.flags & HPU_GEMM_TRANS_B) != 0;
        add_matrix(out, g.a, ta ? g.k : g.m, ta ? g.m : g.k, g.lda, batch, g.stride_a, g.in_dtype, false);
        add_matrix(out, g.b, tb ? g.n : g.k, tb ? g.k : g.n, g.ldb, batch, g.stride_b, g.in_dtype, false);
        if (g.beta != 0.0F)
            add_matrix(out, g.c, g.m, g.n, g.ldc, batch, g.stride_c, g.out_dtype, false);
        if ((g.flags & HPU_GEMM_BIAS) != 0)
            add_matrix(out, g.bias, 1, g.n, 0, 1, 0, HPU_DTYPE_FP32, false);
        add_matrix(out, g.d, g.m, g.n, g.ldd, batch, g.stride_d, g.out_dtype, true);
        break;
    }
    case Job::Kind::Marker: // never recorded
        break;
    }
    return out;
}

bool conflict(const std::vector<Range> &a, const std::vector<Range> &b)
{
    for (const Range &x : a) {
        for (const Range &y : b) {
            if ((x.write || y.write) && x.lo < y.hi && y.lo < x.hi)
                return true;
        }
    }
    return false;
}

} // namespace lazy_detail

using lazy_detail::accesses;
using lazy_detail::conflict;
using lazy_detail::Range;

void LazyRecorder::record(Job job)
{
    put(key_, job.kind);
    switch (job.kind) {
    case Job::Kind::Copy:
        put(key_, job.dst);
        put(key_, job.src);
        put(key_, job.size);
        break;
    case Job::Kind::Memset:
        put(key_, job.dst);
        put(key_, job.pattern);
        put(key_, job.size);
        break;
    case Job::Kind::Launch: {
        const hpu_launch raw = job.launch.raw();
        put(key_, reinterpret_cast<std::uintptr_t>(job.kernel)); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): the context's kernel, by identity
        put(key_, raw.num_tensors);
        key_.append(reinterpret_cast<const char *>(raw.tensors), // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
                    sizeof(hpu_tensor) * raw.num_tensors);
        put(key_, raw.num_scalars);
        put(key_, raw.index_size);
        break;
    }
    case Job::Kind::Gemm:
        put(key_, job.gemm);
        break;
    case Job::Kind::Marker: // never recorded
        break;
    }
    jobs_.push_back(std::move(job));
    ++stats_.recorded;
}

LazyRecorder::Entry &LazyRecorder::build(DeviceContext &ctx, const std::string &key, const std::vector<Job> &jobs)
{
    hpu::Graph g = hpu::Graph::create(ctx.device());
    std::vector<std::vector<Range>> acc;
    acc.reserve(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        acc.push_back(accesses(jobs[j]));
        hpu::Graph::Deps deps;
        bool dma = false;
        bool tpc = false;
        for (std::size_t i = j; i-- > 0;) {
            const Job::Kind k = jobs[i].kind;
            const bool on_dma = k == Job::Kind::Copy || k == Job::Kind::Memset;
            const bool on_tpc = k == Job::Kind::Launch;
            if ((on_dma && dma) || (on_tpc && tpc) || !conflict(acc[i], acc[j]))
                continue;
            deps.push_back(static_cast<hpu::Graph::NodeId>(i));
            dma = dma || on_dma;
            tpc = tpc || on_tpc;
        }
        const Job &job = jobs[j];
        switch (job.kind) {
        case Job::Kind::Copy:
            (void)g.add_copy(job.dst, job.src, job.size, deps);
            break;
        case Job::Kind::Memset:
            (void)g.add_memset(job.dst, job.pattern, job.size, deps);
            break;
        case Job::Kind::Launch:
            (void)g.add_launch(*job.kernel, job.launch, deps);
            break;
        case Job::Kind::Gemm:
            (void)hpu::detail::check_why(hpu_graph_add_gemm(g.get(), &job.gemm, deps.data(), deps.size()),
                                         "adding a GEMM");
            break;
        case Job::Kind::Marker: // never recorded
            break;
        }
    }
    while (cache_.size() >= cache_size() && evict_one(nullptr)) {
    }
    lru_.push_front(key);
    Entry &e = cache_.emplace(key, Entry{std::move(g), lru_.begin()}).first->second;
    ++stats_.graphs_built;
    return e;
}

bool LazyRecorder::evict_one(const hpu::Graph *keep)
{
    for (auto it = lru_.end(); it != lru_.begin();) {
        --it;
        auto c = cache_.find(*it);
        if (&c->second.graph == keep)
            continue;
        lru_.erase(it);
        cache_.erase(c); // the graph waits for its launches
        ++stats_.evictions;
        return true;
    }
    return false;
}

void LazyRecorder::apply_values(Entry &e, const std::vector<Job> &jobs)
{
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        if (jobs[i].kind != Job::Kind::Launch)
            continue;
        const hpu_launch raw = jobs[i].launch.raw();
        const auto node = static_cast<hpu::Graph::NodeId>(i);
        for (std::uint32_t s = 0; s < raw.num_scalars; ++s)
            e.graph.set_scalar(node, s, raw.scalars[s]); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        e.graph.set_seed(node, raw.seed);
    }
}

hpu::Fence LazyRecorder::launch(Entry &e, DeviceContext &ctx, int stream)
{
    const std::vector<const hpu::Fence *> waits = ctx.step_waits(stream);
    for (;;) {
        try {
            return e.graph.launch(waits);
        } catch (const hpu::Error &err) {
            // No sync object left for its queues: older graphs give theirs.
            if (err.errnum() != EBUSY || !evict_one(&e.graph))
                throw;
        }
    }
}

void LazyRecorder::flush(DeviceContext &ctx)
{
    if (jobs_.empty())
        return;
    const int stream = current_stream(ctx.index());
    // Room for the step's pending entry first: this may raise an older
    // job's failure, and the step then stays recorded (run by the next
    // flush) rather than being dropped without a word.
    ctx.make_room(stream);
    // The step leaves the recorder whatever happens.
    std::vector<Job> jobs = std::move(jobs_);
    std::string key = std::move(key_);
    jobs_.clear();
    key_.clear();
    if (lazy_fusion()) {
        std::string plan;
        jobs = fuse(ctx, jobs, plan);
        key += plan;
    }
    last_step_.clear();
    for (const Job &j : jobs) {
        last_step_.push_back(j.what);
        stats_.tpc_launches += j.kind == Job::Kind::Launch ? 1 : 0;
    }
    const int arena = arena_;
    arena_ = -1;
    const int pool = pool_;
    pool_ = -1;
    const std::uint64_t step = ++step_;
    std::string what = describe(step, jobs);
    const std::string doing = "running " + what;
    auto fence = ctx.guarded(doing.c_str(), [&] {
        Entry *e = nullptr;
        if (auto it = cache_.find(key); it != cache_.end()) {
            e = &it->second;
            lru_.splice(lru_.begin(), lru_, e->lru);
            apply_values(*e, jobs);
            ++stats_.cache_hits;
        } else {
            e = &build(ctx, key, jobs);
        }
        return std::make_shared<hpu::Fence>(launch(*e, ctx, stream));
    });
    if (arena >= 0) {
        Arena &a = arenas_.at(static_cast<std::size_t>(arena));
        a.fence = fence;
        a.step = step;
    }
    if (pool >= 0)
        pools_.at(static_cast<std::size_t>(pool)).fence = fence;
    ctx.step_launched(stream, fence, std::move(what));
    ++stats_.launches;
    ++stats_.flushes;
}

void *LazyRecorder::upload_staging(DeviceContext &ctx, std::uint64_t bytes, std::uint64_t *va)
{
    const std::uint64_t need = (bytes + kAlign - 1) / kAlign * kAlign;
    if (arena_ >= 0) {
        const Arena &a = arenas_.at(static_cast<std::size_t>(arena_));
        if (a.used + need > a.buf.size()) // the step outgrew its area: run it, go on in another
            ctx.flush();
    }
    if (arena_ < 0)
        arena_ = pick_arena(ctx, need);
    Arena &a = arenas_.at(static_cast<std::size_t>(arena_));
    *va = a.buf.va() + a.used;
    void *host = static_cast<std::uint8_t *>(a.buf.host_ptr()) + a.used; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    a.used += need;
    return host;
}

void *LazyRecorder::scalar_staging(DeviceContext &ctx, std::uint64_t bytes, std::uint64_t *va)
{
    if (!ctx.lazy_)
        ctx.lazy_ = std::make_unique<LazyRecorder>();
    LazyRecorder &r = *ctx.lazy_;
    const std::uint64_t need = (bytes + kAlign - 1) / kAlign * kAlign;
    if (r.pool_ >= 0 && r.pool_used_ + need > kPoolSize) // the step's pool is full: run it, go on in the other
        ctx.flush();
    if (r.pool_ < 0) {
        r.pool_ = r.next_pool_;
        r.next_pool_ ^= 1;
        r.pool_used_ = 0;
        ScalarPool &p = r.pools_.at(static_cast<std::size_t>(r.pool_));
        if (p.fence) {
            // The step before last that had scalars: its graph has
            // usually run (its error, if any, is the stream's to report).
            try {
                (void)p.fence->wait();
            } catch (const hpu::Error &) { // NOLINT(bugprone-empty-catch): reported by synchronize()
            }
            p.fence.reset();
        }
        if (!p.buf)
            ctx.guarded("creating a lazy scalar pool", [&] { p.buf = hpu::Buffer::create(ctx.device(), kPoolSize, HPU_MEM_HOST); });
    }
    ScalarPool &p = r.pools_.at(static_cast<std::size_t>(r.pool_));
    *va = p.buf.va() + r.pool_used_;
    void *host = static_cast<std::uint8_t *>(p.buf.host_ptr()) + r.pool_used_; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    r.pool_used_ += need;
    return host;
}

int LazyRecorder::pick_arena(DeviceContext &ctx, std::uint64_t need)
{
    const auto idle = [](const Arena &a) { return !a.fence || hpu_fence_status(a.fence->get()) != 1; };
    std::size_t pick = arenas_.size();
    for (std::size_t i = 0; i < arenas_.size() && pick == arenas_.size(); ++i) {
        if (idle(arenas_[i]))
            pick = i;
    }
    if (pick == arenas_.size() && arenas_.size() == kArenas) {
        // All in use: wait for the one the oldest step used (its error, if
        // any, is reported by the stream's next synchronisation).
        pick = 0;
        for (std::size_t i = 1; i < arenas_.size(); ++i) {
            if (arenas_[i].step < arenas_[pick].step)
                pick = i;
        }
        try {
            (void)arenas_[pick].fence->wait();
        } catch (const hpu::Error &) { // NOLINT(bugprone-empty-catch): reported by synchronize()
        }
    }
    if (pick == arenas_.size())
        arenas_.emplace_back();
    Arena &a = arenas_[pick];
    a.fence.reset();
    a.used = 0;
    if (!a.buf || a.buf.size() < need) {
        a.buf.reset();
        const std::uint64_t size = std::max(kArenaSize, need * 2);
        ctx.guarded("creating a lazy staging area", [&] { a.buf = hpu::Buffer::create(ctx.device(), size, HPU_MEM_HOST); });
    }
    return static_cast<int>(pick);
}

bool LazyRecorder::evict_graph() { return evict_one(nullptr); }

void LazyRecorder::failed()
{
    stats_.evictions += cache_.size();
    ++stats_.failures;
    cache_.clear();
    lru_.clear();
}

LazyStats LazyRecorder::stats() const
{
    LazyStats s = stats_;
    s.cached = cache_.size();
    return s;
}

} // namespace hpu_torch
