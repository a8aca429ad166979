// SPDX-License-Identifier: MIT
// module.cpp - the extension's entry points for Python, as custom ops
// (torch.ops.hpu_torch.*; the package wraps them in hpu_torch.hpu and
// hpu_torch.core).
//
// Copyright (c) 2026 The hpu authors
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/custom_class.h>
#include <torch/library.h>

#include "hpu_torch.h"
#include "lazy.h"

namespace hpu_torch {

namespace {

int resolve(std::int64_t device) { return device < 0 ? current_device() : static_cast<int>(device); }

std::int64_t op_device_count() { return device_count(); }
std::int64_t op_current_device() { return current_device(); }
void op_set_device(std::int64_t device) { set_current_device(static_cast<int>(device)); }

void op_synchronize(std::int64_t device)
{
    const int d = resolve(device);
    if (!DeviceContext::opened(d))
        return;
    DeviceContext &ctx = DeviceContext::get(d);
    auto lock = ctx.lock();
    ctx.synchronize();
}

// Lazy mode: runs the step recorded on the device (-1: on every opened
// device) as one graph; it does not wait for it. Eager mode has nothing
// held back.
void op_mark_step(std::int64_t device)
{
    for (int d = 0; d < device_count(); ++d) {
        if ((device >= 0 && d != device) || !DeviceContext::opened(d))
            continue;
        DeviceContext &ctx = DeviceContext::get(d);
        auto lock = ctx.lock();
        ctx.flush();
    }
}

bool op_is_lazy() { return lazy_mode(); }
bool op_is_lazy_fusion() { return lazy_fusion(); }
void op_set_lazy_fusion(bool on) { set_lazy_fusion(on); }

// What the last lazy step's graph ran, one entry per node.
std::vector<std::string> op_lazy_last_step(std::int64_t device)
{
    const int d = resolve(device);
    if (!DeviceContext::opened(d))
        return {};
    DeviceContext &ctx = DeviceContext::get(d);
    auto lock = ctx.lock();
    return ctx.lazy_last_step();
}
void op_set_lazy(bool on) { set_lazy_mode(on); }

// The counters in the order hpu_torch.core.lazy_stats() names them.
std::vector<std::int64_t> op_lazy_stats(std::int64_t device)
{
    const int d = resolve(device);
    LazyStats s;
    if (DeviceContext::opened(d)) {
        DeviceContext &ctx = DeviceContext::get(d);
        auto lock = ctx.lock();
        s = ctx.lazy_stats();
    }
    const std::vector<std::uint64_t> v{s.recorded,  s.flushes,   s.graphs_built, s.cache_hits,
                                       s.launches, s.evictions, s.cached,       s.failures,
                                       s.fused,    s.fused_ops, s.tpc_launches};
    return {v.begin(), v.end()};
}

// The statistics in the order hpu_torch.hpu.memory_stats() names them.
std::vector<std::int64_t> op_memory_stats(std::int64_t device)
{
    const MemoryStats s = memory_stats(resolve(device));
    const std::vector<std::uint64_t> v{s.allocated, s.peak_allocated, s.reserved,    s.peak_reserved,
                                       s.active_blocks, s.slabs,       s.allocs,      s.frees,
                                       s.slab_allocs, s.slab_frees,   s.cache_hits};
    return {v.begin(), v.end()};
}

void op_reset_peak_memory_stats(std::int64_t device) { reset_peak_memory_stats(resolve(device)); }
void op_empty_cache(std::int64_t device) { empty_cache(resolve(device)); }

std::int64_t op_jobs(std::int64_t device)
{
    const int d = resolve(device);
    if (!DeviceContext::opened(d))
        return 0;
    DeviceContext &ctx = DeviceContext::get(d);
    auto lock = ctx.lock();
    return static_cast<std::int64_t>(ctx.jobs());
}

std::tuple<std::vector<std::string>, std::vector<std::int64_t>> op_fallback_counts()
{
    std::vector<std::string> names;
    std::vector<std::int64_t> counts;
    for (const auto &[name, n] : fallback_counts()) {
        names.push_back(name);
        counts.push_back(n);
    }
    return {names, counts};
}

void op_reset_fallback_counts() { reset_fallback_counts(); }

// ---- streams and events (hpu_torch.hpu.Stream, Event) ----------------------
// Streams travel as (device, id); the guard's functions do the work, so
// that Python goes through the same code as c10's stream and event users.

const c10::impl::DeviceGuardImplInterface &guard() { return *c10::impl::getDeviceGuardImpl(c10::DeviceType::HPU); }

c10::Stream stream_of(std::int64_t device, std::int64_t id)
{
    const int d = resolve(device);
    check_stream(d, id);
    return c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::HPU, static_cast<c10::DeviceIndex>(d)),
                       static_cast<c10::StreamId>(id));
}

std::int64_t op_current_stream(std::int64_t device)
{
    const int d = resolve(device);
    check_stream(d, 0);
    return guard().getStream(c10::Device(c10::DeviceType::HPU, static_cast<c10::DeviceIndex>(d))).id();
}

// Makes (device, id) the thread's current stream of device; returns the previous id.
std::int64_t op_exchange_stream(std::int64_t device, std::int64_t id)
{
    return guard().exchangeStream(stream_of(device, id)).id();
}

std::int64_t op_pool_stream(std::int64_t device, bool high_priority)
{
    const int d = resolve(device);
    check_stream(d, 0);
    return guard()
        .getStreamFromGlobalPool(c10::Device(c10::DeviceType::HPU, static_cast<c10::DeviceIndex>(d)), high_priority)
        .id();
}

bool op_query_stream(std::int64_t device, std::int64_t id) { return guard().queryStream(stream_of(device, id)); }
void op_synchronize_stream(std::int64_t device, std::int64_t id) { guard().synchronizeStream(stream_of(device, id)); }

// Tests only: holds a stream's later jobs until op_release_stream (a job
// blocked on a sync object), so that what runs before what is certain.
std::int64_t op_hold_stream(std::int64_t device, std::int64_t id)
{
    const c10::Stream s = stream_of(device, id);
    DeviceContext &ctx = DeviceContext::get(s.device_index());
    auto lock = ctx.lock();
    return ctx.hold_stream(static_cast<int>(id));
}

void op_release_stream(std::int64_t device, std::int64_t handle)
{
    DeviceContext &ctx = DeviceContext::get(resolve(device));
    auto lock = ctx.lock();
    ctx.release_stream(static_cast<int>(handle));
}

/** torch.classes.hpu_torch.Event: a c10 event of the HPU (the guard's record/block/query). */
class EventHolder : public torch::CustomClassHolder {
public:
    explicit EventHolder(bool timing) : timing_(timing) {}
    EventHolder(const EventHolder &) = delete;
    EventHolder &operator=(const EventHolder &) = delete;
    EventHolder(EventHolder &&) = delete;
    EventHolder &operator=(EventHolder &&) = delete;
    ~EventHolder() override { guard().destroyEvent(event_, -1); }

    void record(std::int64_t device, std::int64_t id)
    {
        const c10::Stream s = stream_of(device, id);
        const auto mine = static_cast<c10::DeviceIndex>(event_ == nullptr ? -1 : ev()->state().device);
        guard().record(&event_, s, mine,
                       timing_ ? c10::EventFlag::BACKEND_DEFAULT : c10::EventFlag::PYTORCH_DEFAULT);
    }
    void block(std::int64_t device, std::int64_t id)
    {
        guard().block(event_, stream_of(device, id)); // raises for another HPU's event
    }
    bool query() const { return guard().queryEvent(event_); }
    void synchronize() const
    {
        if (event_ != nullptr)
            synchronize_event(*ev());
    }
    double elapsed_time(const c10::intrusive_ptr<EventHolder> &end) const
    {
        TORCH_CHECK(timing_ && end->timing_, "Both events must be created with enable_timing=True");
        TORCH_CHECK(event_ != nullptr && end->event_ != nullptr,
                    "Both events must be recorded before calculating elapsed time");
        return event_elapsed_ms(*ev(), *end->ev());
    }
    std::int64_t device() const { return event_ == nullptr ? -1 : ev()->state().device; }
    bool timing() const { return timing_; }

private:
    [[nodiscard]] StreamEvent *ev() const { return static_cast<StreamEvent *>(event_); }
    bool timing_;
    void *event_ = nullptr;
};

// At exit (hpu_torch registers it with atexit): waits for every opened
// device and returns the slabs no tensor uses; failures are not reported
// any more. The driver releases the rest when the process closes the
// devices.
void op_shutdown()
{
    for (int d = 0; d < device_count(); ++d) {
        try {
            empty_cache(d);
        } catch (const std::exception &) { // NOLINT(bugprone-empty-catch): nothing to report to at exit
        }
    }
}

} // namespace

TORCH_LIBRARY(hpu_torch, m)
{
    m.def("device_count() -> int", &op_device_count);
    m.def("current_device() -> int", &op_current_device);
    m.def("set_device(int device) -> ()", &op_set_device);
    m.def("synchronize(int device=-1) -> ()", &op_synchronize);
    m.def("mark_step(int device=-1) -> ()", &op_mark_step);
    m.def("is_lazy() -> bool", &op_is_lazy);
    m.def("set_lazy(bool on) -> ()", &op_set_lazy);
    m.def("lazy_stats(int device=-1) -> int[]", &op_lazy_stats);
    m.def("is_lazy_fusion() -> bool", &op_is_lazy_fusion);
    m.def("set_lazy_fusion(bool on) -> ()", &op_set_lazy_fusion);
    m.def("lazy_last_step(int device=-1) -> str[]", &op_lazy_last_step);
    m.def("memory_stats(int device=-1) -> int[]", &op_memory_stats);
    m.def("reset_peak_memory_stats(int device=-1) -> ()", &op_reset_peak_memory_stats);
    m.def("empty_cache(int device=-1) -> ()", &op_empty_cache);
    m.def("jobs(int device=-1) -> int", &op_jobs);
    m.def("fallback_counts() -> (str[], int[])", &op_fallback_counts);
    m.def("reset_fallback_counts() -> ()", &op_reset_fallback_counts);
    m.def("shutdown() -> ()", &op_shutdown);
    m.def("current_stream(int device=-1) -> int", &op_current_stream);
    m.def("exchange_stream(int device, int stream) -> int", &op_exchange_stream);
    m.def("pool_stream(int device=-1, bool high_priority=False) -> int", &op_pool_stream);
    m.def("query_stream(int device, int stream) -> bool", &op_query_stream);
    m.def("synchronize_stream(int device, int stream) -> ()", &op_synchronize_stream);
    m.def("_hold_stream(int device, int stream) -> int", &op_hold_stream);
    m.def("_release_stream(int device, int handle) -> ()", &op_release_stream);
    m.class_<EventHolder>("Event")
        .def(torch::init<bool>())
        .def("record", &EventHolder::record)
        .def("block", &EventHolder::block)
        .def("query", &EventHolder::query)
        .def("synchronize", &EventHolder::synchronize)
        .def("elapsed_time", &EventHolder::elapsed_time)
        .def("device", &EventHolder::device)
        .def("timing", &EventHolder::timing);
}

} // namespace hpu_torch
