// SPDX-License-Identifier: MIT
// stream.cpp - per-device contexts and their one logical stream.
//
// Every job of a device waits for the fence of the job issued before it, on
// whichever engine (DMA, TPC, MME) it runs: the jobs of a device run in the
// order the ops were called, as on one CUDA stream. A failed job's fence is
// signalled all the same, so the jobs after it run; every fence is
// therefore kept until it is known to have succeeded, and the first failure
// is reported (as a c10::Error naming the op) by the next synchronisation.
// In lazy mode the jobs are recorded instead (lazy.cpp) and a recorded
// step's graph launch takes its place in the stream.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <array>
#include <cerrno>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "lazy.h"

namespace hpu_torch {

namespace {

// Fences kept before the oldest is waited for (each is a syncobj).
constexpr std::size_t kMaxPending = 64;
// Staging buffers per device, and the smallest.
constexpr std::size_t kStagingBuffers = 3;
constexpr std::uint64_t kMinStaging = 1ULL << 20U;

std::mutex g_contexts_mutex;
// The contexts are never destroyed: tensors (and their blocks) may outlive
// every static object of the process, and the driver releases what is
// left when the process closes the device (hpu_torch's atexit handler
// first waits for the devices and returns the free slabs).
std::array<DeviceContext *, 64> g_contexts{}; // NOLINT: see above

// The device's pending error events as text ("mmu-fault on engine 3, ...").
std::string device_errors(hpu::Device &dev)
{
    std::string out;
    try {
        (void)dev.process_events([&out](const hpu::Event &ev) {
            if (ev.type != HPU_EVENT_ERROR || out.size() > 200)
                return;
            std::string s = hpu_error_kind_name(ev.kind);
            if (ev.engine != HPU_ENGINE_NONE)
                s += " on engine " + std::to_string(ev.engine);
            out += (out.empty() ? "" : "; ") + s;
        });
    } catch (const hpu::Error &) { // NOLINT(bugprone-empty-catch): no events to add
    }
    return out;
}

// -1 until read from PT_HPU_LAZY_MODE, then 0 or 1.
std::atomic<int> g_lazy{-1}; // NOLINT(cppcoreguidelines-avoid-non-const-global-variables): the process's mode

} // namespace

bool lazy_mode() noexcept
{
    int v = g_lazy.load(std::memory_order_relaxed);
    if (v < 0) {
        const char *e = std::getenv("PT_HPU_LAZY_MODE"); // NOLINT(concurrency-mt-unsafe): read once
        v = e != nullptr && std::strcmp(e, "1") == 0 ? 1 : 0;
        int expected = -1;
        (void)g_lazy.compare_exchange_strong(expected, v);
        v = g_lazy.load(std::memory_order_relaxed);
    }
    return v == 1;
}

void set_lazy_mode(bool on)
{
    if (!on) {
        for (int d = 0; d < device_count(); ++d) {
            if (!DeviceContext::opened(d))
                continue;
            DeviceContext &ctx = DeviceContext::get(d);
            auto lock = ctx.lock();
            ctx.flush();
        }
    }
    g_lazy.store(on ? 1 : 0);
}

DeviceContext::DeviceContext(int index) : index_(index) {}

DeviceContext::~DeviceContext() = default;

DeviceContext &DeviceContext::get(int index)
{
    TORCH_CHECK(index >= 0 && index < device_count(), "HPU device index ", index, " out of range: ",
                device_count(), " HPU(s) present");
    DeviceContext *ctx = nullptr;
    {
        const std::lock_guard<std::mutex> g(g_contexts_mutex);
        auto &slot = g_contexts.at(static_cast<std::size_t>(index));
        if (slot == nullptr)
            slot = new DeviceContext(index); // NOLINT(cppcoreguidelines-owning-memory): lives for the process
        ctx = slot;
    }
    const std::lock_guard<std::recursive_mutex> g(ctx->mutex_);
    if (!ctx->dev_) {
        ctx->open();
    } else if (ctx->lost_ || ctx->dev_.is_lost()) {
        ctx->recover();
    }
    return *ctx;
}

bool DeviceContext::opened(int index) noexcept
{
    const std::lock_guard<std::mutex> g(g_contexts_mutex);
    if (index < 0 || static_cast<std::size_t>(index) >= g_contexts.size())
        return false;
    return g_contexts.at(static_cast<std::size_t>(index)) != nullptr;
}

void DeviceContext::open()
{
    guarded("opening the HPU", [this] {
        dev_ = hpu::Device::open(static_cast<unsigned int>(index_));
        (void)dev_.event_fd(); // error events queue from now on: failures say why
        dma_ = hpu::Queue::create(dev_, 0, HPU_ENGINE_DMA);
        tpc_ = hpu::Queue::create(dev_, 0, HPU_ENGINE_CLASS_TPC);
        mme_ = hpu::Queue::create(dev_, 0, HPU_ENGINE_CLASS_MME);
        cl_ = hpu::CommandList::create(dev_);
    });
}

// After a hard reset every object of the old file is stale: destroying
// them touches nothing; the device is reopened and the allocator forgets
// its slabs (tensors made before the reset hold no valid memory).
void DeviceContext::recover()
{
    lazy_.reset(); // its graphs and staging areas are stale: nothing waits
    pending_.clear();
    retired_ = jobs_;
    kernels_.clear();
    staging_.clear();
    cl_.reset();
    dma_.reset();
    tpc_.reset();
    mme_.reset();
    drop_device_memory(index_, generation_);
    ++generation_;
    lost_ = false;
    guarded("reopening the HPU after a reset", [this] {
        dev_.reopen();
        (void)dev_.event_fd();
        dma_ = hpu::Queue::create(dev_, 0, HPU_ENGINE_DMA);
        tpc_ = hpu::Queue::create(dev_, 0, HPU_ENGINE_CLASS_TPC);
        mme_ = hpu::Queue::create(dev_, 0, HPU_ENGINE_CLASS_MME);
        cl_ = hpu::CommandList::create(dev_);
    });
}

void DeviceContext::fail(const char *what, const hpu::Error &e)
{
    if (e.device_lost() || (dev_ && dev_.is_lost()))
        lost_ = true;
    const std::string dev = dev_ && !lost_ ? device_errors(dev_) : std::string();
    TORCH_CHECK(false, "HPU ", index_, ": ", what, ": ", e.what(), dev.empty() ? "" : " [device: " + dev + "]",
                lost_ ? " (the device was reset: its tensors are lost; the next use reopens it)" : "");
}

bool DeviceContext::has_kernel(const std::string &name)
{
    static const std::vector<std::string> names = hpu::Kernel::library();
    return std::binary_search(names.begin(), names.end(), name);
}

const hpu::Kernel &DeviceContext::kernel(const std::string &name)
{
    auto it = kernels_.find(name);
    if (it != kernels_.end())
        return it->second;
    return guarded("loading a TPC kernel", [&]() -> const hpu::Kernel & {
        return kernels_.emplace(name, hpu::Kernel::by_name(dev_, name)).first->second;
    });
}

// Waits for the oldest pending job and forgets it; throws if it failed.
void DeviceContext::retire_front()
{
    const Pending p = pending_.front();
    pending_.pop_front();
    retired_ = p.seq;
    const std::string what = "job '" + p.what + "'";
    try {
        (void)p.fence->wait();
    } catch (const hpu::Error &e) {
        // The jobs after it ran on what it failed to write: let them end
        // (they may still read staging buffers and blocks) and forget them.
        for (const Pending &later : pending_)
            (void)hpu_fence_wait(later.fence->get(), HPU_TIMEOUT_INFINITE);
        pending_.clear();
        retired_ = jobs_;
        if (lazy_)
            lazy_->failed(); // its graphs are built again when next needed
        fail(what.c_str(), e);
    }
}

void DeviceContext::submit(Job job)
{
    if (lazy_mode()) {
        if (!lazy_)
            lazy_ = std::make_unique<LazyRecorder>();
        lazy_->record(std::move(job));
        ++jobs_;
        return;
    }
    issue(std::move(job));
}

void DeviceContext::submit_now(Job job)
{
    flush();
    issue(std::move(job));
}

void DeviceContext::flush()
{
    if (lazy_)
        lazy_->flush(*this);
}

LazyStats DeviceContext::lazy_stats() const { return lazy_ ? lazy_->stats() : LazyStats{}; }
std::vector<std::string> DeviceContext::lazy_last_step() const
{
    return lazy_ ? lazy_->last_step() : std::vector<std::string>{};
}

void DeviceContext::issue(Job job)
{
    if (pending_.size() >= kMaxPending)
        retire_front();
    std::vector<const hpu::Fence *> waits;
    if (!pending_.empty())
        waits.push_back(pending_.back().fence.get());
    const std::string what = "issuing '" + job.what + "'";
    hpu::Fence f = guarded(what.c_str(), [&]() -> hpu::Fence {
        switch (job.kind) {
        case Job::Kind::Copy:
            cl_.clear().copy(job.dst, job.src, job.size);
            return dma_.submit(cl_, waits);
        case Job::Kind::Memset:
            cl_.clear().memset(job.dst, job.pattern, job.size);
            return dma_.submit(cl_, waits);
        case Job::Kind::Launch:
            return tpc_.launch(*job.kernel, job.launch, waits);
        case Job::Kind::Gemm:
        {
            std::vector<const hpu_fence_t *> raw;
            raw.reserve(waits.size());
            for (const hpu::Fence *w : waits)
                raw.push_back(w->get());
            hpu_fence_t *out = nullptr;
            hpu::detail::check_why(hpu_queue_gemm(mme_.get(), &job.gemm, raw.data(), raw.size(), &out),
                                   "submitting a GEMM");
            return hpu::Fence{out};
        }
        }
        return {};
    });
    ++jobs_;
    pending_.push_back({std::make_shared<hpu::Fence>(std::move(f)), std::move(job.what), jobs_});
}

void DeviceContext::synchronize()
{
    flush();
    while (!pending_.empty())
        retire_front();
}

void DeviceContext::wait_for(std::uint64_t seq)
{
    while (retired_ < seq && !pending_.empty())
        retire_front();
}

DeviceContext::Staging DeviceContext::staging(std::uint64_t bytes)
{
    // An idle buffer that is large enough; else a new one while there are
    // few; else the least recently used, waited for (and grown if small).
    std::size_t pick = staging_.size();
    for (std::size_t i = 0; i < staging_.size(); ++i) {
        if (staging_[i].buf.size() >= bytes && staging_[i].last_use <= retired_) {
            pick = i;
            break;
        }
    }
    if (pick == staging_.size() && staging_.size() >= kStagingBuffers) {
        pick = 0;
        for (std::size_t i = 1; i < staging_.size(); ++i) {
            if (staging_[i].last_use < staging_[pick].last_use)
                pick = i;
        }
        wait_for(staging_[pick].last_use);
        if (staging_[pick].buf.size() < bytes)
            staging_[pick].buf.reset();
    }
    if (pick == staging_.size())
        staging_.emplace_back();
    StagingBuffer &sb = staging_[pick];
    if (!sb.buf) {
        guarded("creating a staging buffer", [&] {
            sb.buf = hpu::Buffer::create(dev_, std::max(bytes, kMinStaging), HPU_MEM_HOST);
        });
    }
    return {sb.buf.host_ptr(), sb.buf.va(), pick};
}

void DeviceContext::staging_used(std::size_t slot) noexcept
{
    if (slot < staging_.size())
        staging_[slot].last_use = jobs_;
}

DeviceContext::Staging DeviceContext::upload_staging(std::uint64_t bytes)
{
    if (!lazy_mode())
        return staging(bytes);
    if (!lazy_)
        lazy_ = std::make_unique<LazyRecorder>();
    Staging st;
    st.host = lazy_->upload_staging(*this, bytes, &st.va);
    st.slot = SIZE_MAX; // not one of staging()'s
    return st;
}

} // namespace hpu_torch
