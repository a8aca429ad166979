// SPDX-License-Identifier: MIT
// allocator.cpp - the caching allocator over HBM.
//
// HBM is taken from libhpu in slabs (one hpu::Buffer each, HPU_MEM_DEVICE)
// and carved into blocks; a freed block goes back to its pool and is merged
// with free neighbours, so a training loop that allocates the same sizes
// every step makes no buffer object after its first step. Two pools, by
// size class: requests of at most 1 MiB come from 2 MiB slabs (512-byte
// granules), larger ones from slabs of at least 20 MiB (or the request
// rounded to 2 MiB, HBM's page size). Every slab belongs to one stream of
// its device, the calling thread's current stream when it was made, and
// serves only allocations made while that stream is current (as CUDA's
// caching allocator): a freed block is reused by later ops of its own
// stream only, and since every job of a stream runs after the jobs issued
// on it before, a job that still reads a freed block has always finished
// before a new owner's job writes it. A block used on other streams too
// (record_stream) is held back when freed, with the fences of those
// streams' last jobs at that moment, until they have all signalled. Slabs
// go back to libhpu only in empty_cache() (after waiting for the device)
// and when HBM runs out.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <array>
#include <cerrno>
#include <set>
#include <tuple>

#include "hpu_torch.h"

namespace hpu_torch {

namespace {

constexpr std::uint64_t kGranule = 512;
constexpr std::uint64_t kSmallLimit = 1ULL << 20U;     // at most this: the small pool
constexpr std::uint64_t kSmallSlab = 2ULL << 20U;
constexpr std::uint64_t kLargeSlab = 20ULL << 20U;
constexpr std::uint64_t kPage = 2ULL << 20U;
constexpr std::uint64_t kMinLargeSplit = 1ULL << 20U;   // smaller remainders stay in the block

std::uint64_t round_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }

struct Slab;

struct Block {
    Slab *slab = nullptr;
    std::uint64_t va = 0;
    std::uint64_t size = 0;
    bool free = true;
    std::uint32_t uses = 0; // streams other than the slab's it was recorded on (bit s: stream s)
    Block *prev = nullptr; // neighbours within the slab, by address
    Block *next = nullptr;
};

struct Slab {
    hpu::Buffer buf;
    std::uint64_t size = 0;
    bool small = false;
    int device = 0;
    int stream = 0; // the stream whose allocations it serves
    std::uint64_t generation = 0;
    std::size_t live = 0; // blocks in use
    Block *first = nullptr;
};

// Free blocks by stream, then size: a search stays within one stream's.
struct BySize {
    bool operator()(const Block *a, const Block *b) const
    {
        return std::tie(a->slab->stream, a->size, a->va) < std::tie(b->slab->stream, b->size, b->va);
    }
};

// A freed block held back until the jobs of the other streams that used it end.
struct Held {
    Block *block = nullptr;
    std::vector<std::shared_ptr<hpu::Fence>> fences;
};

class Pool {
public:
    std::mutex mutex;
    std::set<Block *, BySize> free_small, free_large;
    std::vector<std::unique_ptr<Slab>> slabs;
    std::uint64_t generation = 0;
    MemoryStats stats;
    std::vector<Held> held; // freed, waiting for other streams' jobs

    std::set<Block *, BySize> &free_of(const Slab *s) { return s->small ? free_small : free_large; }

    // The smallest free block of stream's that holds size, or nullptr.
    Block *find(std::set<Block *, BySize> &set, int stream, std::uint64_t size)
    {
        Slab key_slab;
        key_slab.stream = stream;
        Block key;
        key.slab = &key_slab;
        key.size = size;
        auto it = set.lower_bound(&key);
        if (it == set.end() || (*it)->slab->stream != stream)
            return nullptr;
        Block *b = *it;
        set.erase(it);
        return b;
    }

    // Gives back the held blocks whose fences have all signalled (all of them with force).
    void collect(bool force)
    {
        for (auto it = held.begin(); it != held.end();) {
            const bool done = force || std::all_of(it->fences.begin(), it->fences.end(), [](const auto &f) {
                                  return hpu_fence_status(f->get()) != 1;
                              });
            if (!done) {
                ++it;
                continue;
            }
            give_back(it->block);
            it = held.erase(it);
        }
    }

    // Takes size bytes from the front of the free block b (not in a set).
    Block *take(Block *b, std::uint64_t size)
    {
        const std::uint64_t rest = b->size - size;
        if (rest >= (b->slab->small ? kGranule : kMinLargeSplit)) {
            auto *r = new Block; // NOLINT(cppcoreguidelines-owning-memory): blocks are owned by their slab's list
            r->slab = b->slab;
            r->va = b->va + size;
            r->size = rest;
            r->prev = b;
            r->next = b->next;
            if (b->next != nullptr)
                b->next->prev = r;
            b->next = r;
            b->size = size;
            free_of(b->slab).insert(r);
        }
        b->free = false;
        ++b->slab->live;
        stats.allocated += b->size;
        stats.peak_allocated = std::max(stats.peak_allocated, stats.allocated);
        ++stats.active_blocks;
        ++stats.allocs;
        return b;
    }

    void add_slab(std::unique_ptr<Slab> s)
    {
        auto *b = new Block; // NOLINT(cppcoreguidelines-owning-memory)
        b->slab = s.get();
        b->va = s->buf.va();
        b->size = s->size;
        s->first = b;
        stats.reserved += s->size;
        stats.peak_reserved = std::max(stats.peak_reserved, stats.reserved);
        ++stats.slabs;
        ++stats.slab_allocs;
        free_of(s.get()).insert(b);
        slabs.push_back(std::move(s));
    }

    // Returns b; merges it with free neighbours.
    void give_back(Block *b)
    {
        Slab *s = b->slab;
        stats.allocated -= b->size;
        --stats.active_blocks;
        ++stats.frees;
        --s->live;
        b->free = true;
        b->uses = 0;
        auto &set = free_of(s);
        if (b->prev != nullptr && b->prev->free) {
            Block *p = b->prev;
            set.erase(p);
            p->size += b->size;
            p->next = b->next;
            if (b->next != nullptr)
                b->next->prev = p;
            delete b; // NOLINT(cppcoreguidelines-owning-memory)
            b = p;
        }
        if (b->next != nullptr && b->next->free) {
            Block *n = b->next;
            set.erase(n);
            b->size += n->size;
            b->next = n->next;
            if (n->next != nullptr)
                n->next->prev = b;
            delete n; // NOLINT(cppcoreguidelines-owning-memory)
        }
        set.insert(b);
    }

    // Destroys the slabs whose whole memory is free (the device is idle).
    void release_free_slabs()
    {
        for (auto it = slabs.begin(); it != slabs.end();) {
            Slab *s = it->get();
            if (s->live != 0) {
                ++it;
                continue;
            }
            free_of(s).erase(s->first);
            delete s->first; // NOLINT(cppcoreguidelines-owning-memory): a free slab is one block
            stats.reserved -= s->size;
            --stats.slabs;
            ++stats.slab_frees;
            it = slabs.erase(it);
        }
    }
};

// One pool per device index, never destroyed (blocks may be freed by
// tensors that outlive every static object).
Pool &pool(int device)
{
    static auto *pools = new std::array<Pool, 64>; // NOLINT(cppcoreguidelines-owning-memory): see above
    return pools->at(static_cast<std::size_t>(device));
}

// Slabs of a lost context still referenced by live tensors: freed when
// their last block goes.
std::mutex g_orphans_mutex;
std::set<Slab *> &orphans()
{
    static auto *set = new std::set<Slab *>; // NOLINT(cppcoreguidelines-owning-memory): never destroyed, as the pools
    return *set;
}

void delete_orphan_block(Block *b)
{
    const std::lock_guard<std::mutex> g(g_orphans_mutex);
    Slab *s = b->slab;
    delete b; // NOLINT(cppcoreguidelines-owning-memory)
    if (--s->live == 0) {
        orphans().erase(s);
        delete s; // NOLINT(cppcoreguidelines-owning-memory)
    }
}

// The fences a block used on the streams of mask waits for when freed:
// none only when the context is lost (its jobs ended with the reset) or
// was never opened. A deleter: the context is looked up, not opened or
// recovered. When running the recorded jobs fails, the streams' last jobs
// issued; when even that fails (no memory), a host wait for them.
std::vector<std::shared_ptr<hpu::Fence>> fences_of(int device, std::uint32_t mask) noexcept
{
    DeviceContext *ctx = mask == 0 ? nullptr : DeviceContext::find(device);
    if (ctx == nullptr)
        return {};
    auto lock = ctx->lock();
    if (ctx->lost())
        return {};
    try {
        return ctx->stream_fences(mask);
    } catch (...) { // NOLINT(bugprone-empty-catch): the recorded step's failure is its stream's to report
    }
    try {
        return ctx->stream_tails(mask);
    } catch (...) { // NOLINT(bugprone-empty-catch): no memory for the list: wait instead
    }
    ctx->wait_tails(mask);
    return {};
}

void free_block(void *ctx)
{
    auto *b = static_cast<Block *>(ctx);
    const int device = b->slab->device;
    Pool &p = pool(device);
    std::uint32_t uses = 0;
    {
        const std::lock_guard<std::mutex> g(p.mutex);
        uses = b->uses;
    }
    // Freed by a thread whose current stream is not the block's: that
    // stream's jobs may still read it (PyTorch 1.13's autograd runs every
    // HPU backward op on the worker's current stream, the default one,
    // whatever stream the forward ran on; and resize() frees so too).
    if (const int here = current_stream(device); here != b->slab->stream)
        uses |= 1U << static_cast<unsigned int>(here);
    // Outside the pool's lock: the context's lock comes first (allocate()).
    std::vector<std::shared_ptr<hpu::Fence>> fences = fences_of(device, uses);
    {
        const std::lock_guard<std::mutex> g(p.mutex);
        if (b->slab->generation == p.generation) {
            if (fences.empty()) {
                p.give_back(b);
            } else {
                p.held.push_back({b, std::move(fences)});
            }
            return;
        }
    }
    delete_orphan_block(b);
}

bool out_of_memory(const hpu::Error &e) { return e.errnum() == ENOMEM || e.errnum() == ENOSPC; }

class HpuAllocator final : public c10::Allocator {
public:
    [[nodiscard]] c10::DataPtr allocate(size_t nbytes) const override
    {
        const int device = current_device();
        const int stream = current_stream(device);
        const c10::Device where(c10::DeviceType::HPU, static_cast<c10::DeviceIndex>(device));
        if (nbytes == 0)
            return {nullptr, where};
        DeviceContext &ctx = DeviceContext::get(device);
        auto ctx_lock = ctx.lock(); // slabs are made with the device's handle
        Pool &p = pool(device);
        const std::uint64_t size = round_up(nbytes, kGranule);
        const bool small = size <= kSmallLimit;
        std::unique_lock<std::mutex> g(p.mutex);
        p.collect(false);
        if (Block *b = p.find(small ? p.free_small : p.free_large, stream, size); b != nullptr) {
            ++p.stats.cache_hits;
            b = p.take(b, size);
            return {reinterpret_cast<void *>(b->va), b, &free_block, where}; // NOLINT(performance-no-int-to-ptr)
        }
        const std::uint64_t slab_size = small ? kSmallSlab : std::max(kLargeSlab, round_up(size, kPage));
        auto slab = std::make_unique<Slab>();
        slab->size = slab_size;
        slab->small = small;
        slab->device = device;
        slab->stream = stream;
        slab->generation = p.generation;
        for (int attempt = 0; !slab->buf; ++attempt) {
            try {
                slab->buf = hpu::Buffer::create(ctx.device(), slab_size, HPU_MEM_DEVICE);
            } catch (const hpu::Error &e) {
                if (attempt == 0 && out_of_memory(e)) {
                    // Give the cached slabs back and try once more.
                    g.unlock();
                    ctx.synchronize();
                    g.lock();
                    p.collect(true);
                    p.release_free_slabs();
                    continue;
                }
                const MemoryStats st = p.stats;
                g.unlock();
                TORCH_CHECK(out_of_memory(e), "HPU ", device, ": allocating a slab of ", slab_size,
                            " bytes failed: ", e.what());
                // What the device has left (all processes), for the message.
                std::string hbm = "free HBM unknown";
                try {
                    const hpu_memory_info mi = ctx.device().memory_info();
                    const std::uint64_t free = mi.hbm_total > mi.hbm_used ? mi.hbm_total - mi.hbm_used : 0;
                    hbm = std::to_string(free) + " bytes of HBM free of " + std::to_string(mi.hbm_total) +
                          " (this process holds " + std::to_string(mi.hbm_ctx_used) + ")";
                } catch (const hpu::Error &) { // NOLINT(bugprone-empty-catch): the message says unknown
                }
                TORCH_CHECK(false, "HPU ", device, " out of memory (HBM exhausted): tried to allocate ", nbytes,
                            " bytes (a slab of ", slab_size, " bytes); ", hbm, "; ", st.allocated,
                            " bytes allocated, ", st.reserved, " reserved by the caching allocator: ", e.what());
            }
        }
        Slab *s = slab.get();
        p.add_slab(std::move(slab));
        Block *b = p.find(p.free_of(s), stream, size);
        b = p.take(b, size);
        return {reinterpret_cast<void *>(b->va), b, &free_block, where}; // NOLINT(performance-no-int-to-ptr)
    }

    // No raw API: c10's raw_allocate() requires the data pointer to be the
    // deleter's context, and a block's context is its Block, not its VA.
    [[nodiscard]] c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
};

HpuAllocator g_allocator; // NOLINT: registered below

} // namespace

c10::Allocator *hpu_allocator() { return &g_allocator; }

void check_fresh(const at::Tensor &t)
{
    if (!t.defined() || !t.has_storage())
        return;
    const c10::DataPtr &dp = t.storage().data_ptr();
    if (dp.get_deleter() != &free_block || dp.get_context() == nullptr)
        return;
    const Slab *s = static_cast<const Block *>(dp.get_context())->slab;
    Pool &p = pool(s->device);
    const std::lock_guard<std::mutex> g(p.mutex);
    TORCH_CHECK(s->generation == p.generation, "tensor allocated before the reset of HPU ", s->device);
}

MemoryStats memory_stats(int device)
{
    Pool &p = pool(device);
    const std::lock_guard<std::mutex> g(p.mutex);
    return p.stats;
}

void reset_peak_memory_stats(int device)
{
    Pool &p = pool(device);
    const std::lock_guard<std::mutex> g(p.mutex);
    p.stats.peak_allocated = p.stats.allocated;
    p.stats.peak_reserved = p.stats.reserved;
}

void empty_cache(int device)
{
    if (!DeviceContext::opened(device))
        return;
    DeviceContext &ctx = DeviceContext::get(device);
    auto lock = ctx.lock();
    ctx.synchronize(); // no job may use a slab that goes
    Pool &p = pool(device);
    const std::lock_guard<std::mutex> g(p.mutex);
    p.collect(true);
    p.release_free_slabs();
}

bool memory_in_use(int device, std::uint64_t lo, std::uint64_t hi)
{
    Pool &p = pool(device);
    const std::lock_guard<std::mutex> g(p.mutex);
    for (const auto &s : p.slabs) {
        const std::uint64_t base = s->first->va;
        if (lo < base || hi > base + s->size)
            continue;
        for (const Block *b = s->first; b != nullptr && b->va < hi; b = b->next) {
            if (!b->free && b->va + b->size > lo)
                return true;
        }
        return false;
    }
    return true;
}

void drop_device_memory(int device, std::uint64_t generation)
{
    Pool &p = pool(device);
    const std::lock_guard<std::mutex> g(p.mutex);
    if (p.generation != generation)
        return;
    ++p.generation;
    p.collect(true); // their jobs are gone with the context
    const std::lock_guard<std::mutex> go(g_orphans_mutex);
    for (auto &s : p.slabs) {
        s->buf.reset(); // stale after the reset: frees without a system call
        // Free blocks go now; blocks in use go with their tensors.
        for (Block *b = s->first; b != nullptr;) {
            Block *n = b->next;
            if (b->free)
                delete b; // NOLINT(cppcoreguidelines-owning-memory)
            b = n;
        }
        if (s->live != 0)
            orphans().insert(s.release());
    }
    p.slabs.clear();
    p.free_small.clear();
    p.free_large.clear();
    p.stats.allocated = 0;
    p.stats.active_blocks = 0;
    p.stats.reserved = 0;
    p.stats.slabs = 0;
}

void record_stream(const c10::DataPtr &data_ptr, int device, int stream)
{
    check_stream(device, stream);
    if (data_ptr.get_deleter() != &free_block || data_ptr.get_context() == nullptr)
        return; // not a block of ours (an empty tensor)
    auto *b = static_cast<Block *>(data_ptr.get_context());
    TORCH_CHECK(b->slab->device == device, "record_stream: the memory is on hpu:", b->slab->device,
                ", the stream on hpu:", device);
    Pool &p = pool(device);
    const std::lock_guard<std::mutex> g(p.mutex);
    if (stream != b->slab->stream)
        b->uses |= 1U << static_cast<unsigned int>(stream);
}

REGISTER_ALLOCATOR(c10::DeviceType::HPU, &g_allocator);

} // namespace hpu_torch
