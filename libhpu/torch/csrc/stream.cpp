// SPDX-License-Identifier: MIT
// stream.cpp - per-device contexts, their streams and events.
//
// A device has kStreams streams: 0, the default stream, and a pool
// (hpu_torch.hpu.Stream() takes them round robin, as CUDA's pool). Each
// stream has queues of its own, made on first use: a DMA queue (stream s
// on DMA engine s modulo the engines), a TPC queue and an MME queue (MME s
// modulo the MMEs). Every job of a stream waits for the fence of the job
// issued on that stream before it, on whichever engine it runs: the jobs
// of a stream run in the order the ops were called, as on a CUDA stream;
// jobs of different streams run concurrently (the engines' threads and
// their queue managers' streams) unless an event orders them. An event is
// the fence of a stream's last job (record_event); a stream waiting for
// an event issues a marker job (a NOP on its DMA queue) that waits for the
// stream's last job and the event's fence: the wait is a dependency of
// the driver's scheduler (drm_sched), so neither the host thread nor the
// device's engines block on it, and the stream's later jobs follow the
// marker. Another HPU's event is waited for the same way: its job's fence
// is exported as a sync_file and imported into this device (libhpu
// refuses another device's fence as a wait; the driver's scheduler waits
// for any dma_fence). A timing event records a marker job of its own,
// whose fence's signal time (the driver's completion time,
// hpu_fence_signal_time()) is the event's timestamp.
//
// A failed job's fence is signalled all the same, so the jobs after it
// run; every fence is therefore kept until it is known to have succeeded,
// and the first failure is reported (as a c10::Error naming the op) by
// the next synchronisation of its stream (or of the device). A marker
// waiting for an event keeps the event's job: a failed job's fence counts
// as signalled, so the marker succeeds, and the waiting stream's
// synchronisation reports the producer's failure too. A timing event keeps
// the job before its marker, whose failure its synchronize() reports. In
// lazy mode the jobs are recorded instead (lazy.cpp) and a recorded step's
// graph launch takes its place in the streams.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <array>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "lazy.h"

namespace hpu_torch {

namespace {

// Fences kept before the oldest is waited for (each is a syncobj).
constexpr std::size_t kMaxPending = 64;
// A held stream's job (hold_stream(), tests only) times out after this.
constexpr std::int64_t kHoldTimeoutMs = 60000;
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

DeviceContext *DeviceContext::find(int index) noexcept
{
    const std::lock_guard<std::mutex> g(g_contexts_mutex);
    if (index < 0 || static_cast<std::size_t>(index) >= g_contexts.size())
        return nullptr;
    return g_contexts.at(static_cast<std::size_t>(index));
}

bool DeviceContext::lost() const noexcept { return lost_ || !dev_ || dev_.is_lost(); }

void DeviceContext::open()
{
    guarded("opening the HPU", [this] {
        dev_ = hpu::Device::open(static_cast<unsigned int>(index_));
        (void)dev_.event_fd(); // error events queue from now on: failures say why
        cl_ = hpu::CommandList::create(dev_);
    });
}

// After a hard reset every object of the old file is stale: destroying
// them touches nothing; the device is reopened and the allocator forgets
// its slabs (tensors made before the reset hold no valid memory).
void DeviceContext::recover()
{
    lazy_.reset(); // its graphs and staging areas are stale: nothing waits
    last_ = {};
    kernels_.clear();
    staging_.clear();
    cl_.reset();
    for (StreamState &st : streams_)
        st = StreamState{};
    holds_.clear();
    control_.reset();
    drop_device_memory(index_, generation_);
    ++generation_;
    lost_ = false;
    guarded("reopening the HPU after a reset", [this] {
        dev_.reopen();
        (void)dev_.event_fd();
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

// The error (-ENODEV when that HPU was unplugged or reset) is the other
// device's: this one is marked lost only if it is lost itself, and its
// error events (unrelated) are not appended.
void DeviceContext::fail_foreign(const char *what, const hpu::Error &e)
{
    if (!dev_ || dev_.is_lost())
        fail(what, e);
    TORCH_CHECK(false, "HPU ", index_, ": ", what, ": ", e.what());
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

hpu::Queue &DeviceContext::queue(int stream, std::uint32_t engine_class)
{
    StreamState &st = streams_.at(static_cast<std::size_t>(stream));
    hpu::Queue &q = engine_class == HPU_ENGINE_DMA ? st.dma : engine_class == HPU_ENGINE_CLASS_TPC ? st.tpc : st.mme;
    if (!q) {
        guarded("creating a queue", [&] {
            const unsigned int n = std::max(1U, dev_.engines(engine_class));
            const auto engine = engine_class == HPU_ENGINE_CLASS_TPC ? 0U : static_cast<unsigned int>(stream) % n;
            q = hpu::Queue::create(dev_, engine, engine_class);
        });
    }
    return q;
}

void DeviceContext::retire_front(int stream)
{
    StreamState &st = streams_.at(static_cast<std::size_t>(stream));
    const Pending p = st.pending.front();
    st.pending.pop_front();
    // Known to have ended (and a failure reported here): a lazy graph may
    // be the last job of other streams too.
    for (StreamState &other : streams_) {
        if (other.tail == p.fence)
            other.tail.reset();
    }
    std::string what = "job '" + p.what + "'";
    bool foreign = false;
    try {
        (void)p.fence->wait();
        if (p.waited) {
            foreign = p.waited_device >= 0;
            // An event wait's marker ended; the job it waited for has too.
            what = p.waited_what + " (an event this stream waited for)";
            (void)p.waited->wait();
        }
    } catch (const hpu::Error &e) {
        // The jobs after it ran on what it failed to write: let them end
        // (they may still read staging buffers and blocks) and forget them.
        for (const Pending &later : st.pending)
            (void)hpu_fence_wait(later.fence->get(), HPU_TIMEOUT_INFINITE);
        st.pending.clear();
        st.tail.reset();
        if (lazy_)
            lazy_->failed(); // its graphs are built again when next needed
        if (foreign)
            fail_foreign(what.c_str(), e);
        fail(what.c_str(), e);
    }
}

void DeviceContext::retire_through(int stream, std::uint64_t seq)
{
    StreamState &st = streams_.at(static_cast<std::size_t>(stream));
    while (!st.pending.empty() && st.pending.front().seq <= seq)
        retire_front(stream);
}

void DeviceContext::make_room(int stream)
{
    if (streams_.at(static_cast<std::size_t>(stream)).pending.size() >= kMaxPending)
        retire_front(stream);
}

void DeviceContext::submit(Job job)
{
    const int stream = current_stream(index_);
    if (lazy_mode()) {
        if (!lazy_)
            lazy_ = std::make_unique<LazyRecorder>();
        lazy_->record(std::move(job));
        streams_.at(static_cast<std::size_t>(stream)).in_step = true;
        ++jobs_;
        return;
    }
    issue(std::move(job), stream);
}

void DeviceContext::submit_now(Job job)
{
    flush();
    issue(std::move(job), current_stream(index_));
}

void DeviceContext::flush()
{
    if (lazy_)
        lazy_->flush(*this);
}

std::vector<const hpu::Fence *> DeviceContext::step_waits(int stream)
{
    std::vector<const hpu::Fence *> waits;
    for (std::size_t s = 0; s < streams_.size(); ++s) {
        const StreamState &st = streams_[s];
        if ((st.in_step || s == static_cast<std::size_t>(stream)) && st.tail)
            waits.push_back(st.tail.get());
    }
    return waits;
}

void DeviceContext::step_launched(int stream, const std::shared_ptr<hpu::Fence> &fence, std::string what)
{
    for (std::size_t s = 0; s < streams_.size(); ++s) {
        StreamState &st = streams_[s];
        if (st.in_step || s == static_cast<std::size_t>(stream)) {
            st.tail = fence;
            st.tail_what = what;
        }
        st.in_step = false;
    }
    streams_.at(static_cast<std::size_t>(stream)).pending.push_back({fence, std::move(what), jobs_, {}, {}});
    last_ = {stream, jobs_, fence};
}

LazyStats DeviceContext::lazy_stats() const { return lazy_ ? lazy_->stats() : LazyStats{}; }
std::vector<std::string> DeviceContext::lazy_last_step() const
{
    return lazy_ ? lazy_->last_step() : std::vector<std::string>{};
}

void DeviceContext::issue(Job job, int stream, const std::shared_ptr<hpu::Fence> &waited, const std::string &waited_what,
                          int waited_device)
{
    make_room(stream);
    StreamState &st = streams_.at(static_cast<std::size_t>(stream));
    std::vector<const hpu::Fence *> waits;
    if (waited)
        waits.push_back(waited.get());
    if (st.tail)
        waits.push_back(st.tail.get());
    const std::string what = "issuing '" + job.what + "'";
    hpu::Fence f = guarded(what.c_str(), [&]() -> hpu::Fence {
        switch (job.kind) {
        case Job::Kind::Copy:
            cl_.clear().copy(job.dst, job.src, job.size);
            return queue(stream, HPU_ENGINE_DMA).submit(cl_, waits);
        case Job::Kind::Memset:
            cl_.clear().memset(job.dst, job.pattern, job.size);
            return queue(stream, HPU_ENGINE_DMA).submit(cl_, waits);
        case Job::Kind::Marker:
            cl_.clear().nop();
            return queue(stream, HPU_ENGINE_DMA).submit(cl_, waits);
        case Job::Kind::Launch:
            return queue(stream, HPU_ENGINE_CLASS_TPC).launch(*job.kernel, job.launch, waits);
        case Job::Kind::Gemm:
        {
            std::vector<const hpu_fence_t *> raw;
            raw.reserve(waits.size());
            for (const hpu::Fence *w : waits)
                raw.push_back(w->get());
            hpu_fence_t *out = nullptr;
            hpu::detail::check_why(hpu_queue_gemm(queue(stream, HPU_ENGINE_CLASS_MME).get(), &job.gemm, raw.data(),
                                                  raw.size(), &out),
                                   "submitting a GEMM");
            return hpu::Fence{out};
        }
        }
        return {};
    });
    ++jobs_;
    auto fence = std::make_shared<hpu::Fence>(std::move(f));
    st.tail = fence;
    st.tail_what = job.what;
    st.pending.push_back({fence, std::move(job.what), jobs_, waited, waited_what, waited_device});
    last_ = {stream, jobs_, std::move(fence)};
}

void DeviceContext::synchronize()
{
    flush();
    for (int s = 0; s < kStreams; ++s)
        synchronize_stream(s);
}

void DeviceContext::synchronize_stream(int stream)
{
    flush();
    StreamState &st = streams_.at(static_cast<std::size_t>(stream));
    while (!st.pending.empty())
        retire_front(stream);
    // A lazy graph run for another stream too (its pending entry is in
    // that stream's list): this stream's data came from it, so its failure
    // is reported here unless that stream has reported it already (which
    // retired it: the tails it was are reset).
    if (st.tail) {
        const std::shared_ptr<hpu::Fence> tail = st.tail;
        int owner = 0;
        if (const Pending *p = find_pending(tail, &owner); p != nullptr)
            retire_through(owner, p->seq); // raises as the owner's synchronisation would
        st.tail.reset();
        const std::string what = "job '" + st.tail_what + "'";
        try {
            (void)tail->wait();
        } catch (const hpu::Error &e) {
            if (lazy_)
                lazy_->failed();
            fail(what.c_str(), e);
        }
    }
}

bool DeviceContext::query_stream(int stream)
{
    flush();
    const StreamState &st = streams_.at(static_cast<std::size_t>(stream));
    return !st.tail || hpu_fence_status(st.tail->get()) != 1;
}

void DeviceContext::record_event(StreamEvent &ev, int stream)
{
    flush();
    StreamEvent::State state;
    const StreamState &st = streams_.at(static_cast<std::size_t>(stream));
    // The job the event follows (with timing, the one before its marker).
    state.job = st.tail;
    state.what = st.tail_what;
    if (ev.timing) {
        Job marker;
        marker.kind = Job::Kind::Marker;
        marker.what = "event marker";
        issue(std::move(marker), stream);
    }
    state.fence = st.tail;
    state.device = index_;
    state.stream = stream;
    state.recorded = true;
    ev.set(std::move(state));
}

void DeviceContext::block_event(const StreamEvent &ev, int stream)
{
    flush();
    const StreamEvent::State e = ev.state();
    // Nothing to wait for: no job, or it ended well. A job that failed
    // (ended or not) is waited for all the same, so that this stream's
    // synchronisation reports it: its data is this stream's input.
    if (!e.job || hpu_fence_status(e.job->get()) == 0)
        return;
    Job marker;
    marker.kind = Job::Kind::Marker;
    marker.what = "event wait";
    issue(std::move(marker), stream, e.job, "job '" + e.what + "'");
}

void DeviceContext::block_foreign(int sync_file_fd, int from_device, const std::string &what, int stream)
{
    flush();
    // The imported fence is this device's: the marker waits for it in the
    // driver's scheduler like any other (a dependency on the other
    // device's dma_fence), and keeps it so that this stream's
    // synchronisation reports that job's failure.
    auto imported = guarded("importing another HPU's event", [&] {
        return std::make_shared<hpu::Fence>(hpu::Fence::import_fd(dev_, sync_file_fd));
    });
    Job marker;
    marker.kind = Job::Kind::Marker;
    marker.what = "event wait (HPU " + std::to_string(from_device) + ")";
    issue(std::move(marker), stream, imported, "HPU " + std::to_string(from_device) + "'s job '" + what + "'",
          from_device);
}

const DeviceContext::Pending *DeviceContext::find_pending(const std::shared_ptr<hpu::Fence> &fence, int *stream) const
{
    for (std::size_t s = 0; s < streams_.size(); ++s) {
        for (const Pending &p : streams_[s].pending) {
            if (p.fence == fence) {
                *stream = static_cast<int>(s);
                return &p;
            }
        }
    }
    return nullptr;
}

void DeviceContext::synchronize_event(const StreamEvent::State &ev)
{
    if (!ev.fence)
        return;
    (void)hpu_fence_wait(ev.fence->get(), HPU_TIMEOUT_INFINITE);
    if (!ev.job || hpu_fence_status(ev.job->get()) == 0)
        return;
    // The job failed. While it is pending, its stream retires it (and the
    // jobs before it), raising as that stream's synchronisation would:
    // the failure is not raised a second time there.
    int stream = 0;
    if (const Pending *p = find_pending(ev.job, &stream); p != nullptr)
        retire_through(stream, p->seq);
    const std::string what = "job '" + ev.what + "' (before the event)";
    try {
        (void)ev.job->wait();
    } catch (const hpu::Error &e) {
        fail(what.c_str(), e);
    }
}

std::vector<std::shared_ptr<hpu::Fence>> DeviceContext::stream_fences(std::uint32_t mask)
{
    flush();
    return stream_tails(mask);
}

std::vector<std::shared_ptr<hpu::Fence>> DeviceContext::stream_tails(std::uint32_t mask) const
{
    std::vector<std::shared_ptr<hpu::Fence>> out;
    for (std::size_t s = 0; s < streams_.size(); ++s) {
        const StreamState &st = streams_[s];
        if ((mask & (1U << s)) != 0 && st.tail && hpu_fence_status(st.tail->get()) == 1)
            out.push_back(st.tail);
    }
    return out;
}

void DeviceContext::wait_tails(std::uint32_t mask) const noexcept
{
    for (std::size_t s = 0; s < streams_.size(); ++s) {
        const StreamState &st = streams_[s];
        if ((mask & (1U << s)) != 0 && st.tail)
            (void)hpu_fence_wait(st.tail->get(), HPU_TIMEOUT_INFINITE);
    }
}

int DeviceContext::hold_stream(int stream)
{
    return guarded("holding a stream", [&] {
        Hold h;
        for (;;) {
            try {
                h.sob = hpu::SyncObject::alloc(dev_);
                break;
            } catch (const hpu::Error &e) {
                // Lazy mode's cached graphs hold the sync objects: one goes.
                if (e.errnum() != EBUSY || !lazy_ || !lazy_->evict_graph())
                    throw;
            }
        }
        // The releasing queue: on the TPC engine, which shares no
        // queue-manager stream with a stream's DMA queue (where the hold
        // waits).
        if (!control_)
            control_ = hpu::Queue::create(dev_, 0, HPU_ENGINE_CLASS_TPC);
        cl_.clear().sob_update(h.sob.id(), HPU_SOB_SET, 0);
        (void)control_.submit(cl_).wait();
        make_room(stream);
        StreamState &st = streams_.at(static_cast<std::size_t>(stream));
        std::vector<const hpu::Fence *> waits;
        if (st.tail)
            waits.push_back(st.tail.get());
        cl_.clear().wait_sob(h.sob.id(), 1, HPU_WAIT_GE);
        // A minute before the driver fails it (its default is 10 s; a test
        // holding a stream may build graphs in a slow guest meanwhile).
        h.fence = std::make_shared<hpu::Fence>(
            queue(stream, HPU_ENGINE_DMA).submit(cl_, std::chrono::milliseconds(kHoldTimeoutMs), waits));
        ++jobs_;
        st.tail = h.fence;
        st.tail_what = "held stream";
        st.pending.push_back({h.fence, "held stream", jobs_, {}, {}});
        last_ = {stream, jobs_, h.fence};
        const int handle = next_hold_++;
        holds_.emplace(handle, std::move(h));
        return handle;
    });
}

void DeviceContext::release_stream(int handle)
{
    auto it = holds_.find(handle);
    TORCH_CHECK(it != holds_.end(), "HPU ", index_, ": no held stream ", handle);
    Hold h = std::move(it->second);
    holds_.erase(it);
    guarded("releasing a stream", [&] {
        cl_.clear().sob_update(h.sob.id(), HPU_SOB_SET, 1);
        (void)control_.submit(cl_).wait();
        // The sync object goes back (h's end) once the held job is past its WAIT.
        (void)hpu_fence_wait(h.fence->get(), HPU_TIMEOUT_INFINITE);
    });
}

void DeviceContext::wait_last()
{
    if (last_.fence)
        retire_through(last_.stream, last_.seq);
}

DeviceContext::Staging DeviceContext::staging(std::uint64_t bytes)
{
    // An idle buffer that is large enough; else a new one while there are
    // few; else the least recently used, waited for (and grown if small).
    std::size_t pick = staging_.size();
    for (std::size_t i = 0; i < staging_.size(); ++i) {
        const JobRef &u = staging_[i].last_use;
        if (staging_[i].buf.size() >= bytes && (!u.fence || hpu_fence_status(u.fence->get()) != 1)) {
            pick = i;
            break;
        }
    }
    if (pick == staging_.size() && staging_.size() >= kStagingBuffers) {
        pick = 0;
        for (std::size_t i = 1; i < staging_.size(); ++i) {
            if (staging_[i].last_use.seq < staging_[pick].last_use.seq)
                pick = i;
        }
        // Its stream's jobs up to it (a failure among them is reported here).
        const JobRef u = staging_[pick].last_use;
        retire_through(u.stream, u.seq);
        if (u.fence)
            (void)hpu_fence_wait(u.fence->get(), HPU_TIMEOUT_INFINITE);
        staging_[pick].last_use = {};
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
        staging_[slot].last_use = last_;
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

namespace {

// When the driver signalled f's job (CLOCK_MONOTONIC ns): libhpu reads
// the fence's signal timestamp (hpu_fence_signal_time()).
std::uint64_t signal_time_ns(const hpu::Fence &f)
{
    std::optional<std::uint64_t> t;
    try {
        t = f.signal_time();
    } catch (const hpu::Error &e) {
        TORCH_CHECK(false, "HPU: reading an event's time: ", e.what());
    }
    TORCH_CHECK(t.has_value(), "HPU: an event's job has not ended");
    return *t;
}

} // namespace

double event_elapsed_ms(const StreamEvent &start, const StreamEvent &end)
{
    TORCH_CHECK(start.timing && end.timing, "Both events must be created with enable_timing=True");
    const StreamEvent::State s = start.state();
    const StreamEvent::State e = end.state();
    TORCH_CHECK(s.recorded && e.recorded, "Both events must be recorded before calculating elapsed time");
    TORCH_CHECK(s.device == e.device, "The events are on different HPUs (", s.device, " and ", e.device, ")");
    TORCH_CHECK(query_event(start) && query_event(end),
                "Both events must be completed before calculating elapsed time (synchronize() the end event first)");
    TORCH_CHECK(s.fence && e.fence, "HPU: a timing event without its marker job");
    const std::uint64_t a = signal_time_ns(*s.fence);
    const std::uint64_t b = signal_time_ns(*e.fence);
    return (static_cast<double>(b) - static_cast<double>(a)) / 1e6;
}

} // namespace hpu_torch
