// SPDX-License-Identifier: MIT
// device.cpp - the HPU device guard: which HPU is current on each thread,
// how many there are, each thread's current stream per device, the
// streams' pool and the events (c10's DeviceGuardImplInterface; the
// streams themselves are stream.cpp's), and aten::record_stream.
//
// Stream ids: 0 is a device's default stream, 1 .. kPoolStreams its pool.
// An event (the guard's void *) is a StreamEvent.
//
// Copyright (c) 2026 The hpu authors
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>

#include <atomic>

#include <unistd.h>

#include "hpu_torch.h"

namespace hpu_torch {

namespace {

constexpr std::size_t kMaxDevices = 64;

thread_local int t_current_device = 0; // NOLINT: the guard's per-thread state
// Each thread's current stream per device (0: the default stream).
thread_local std::array<std::uint8_t, kMaxDevices> t_streams{}; // NOLINT: as t_current_device

// The pools' round-robin counters.
std::array<std::atomic<unsigned int>, kMaxDevices> g_pool_next{}; // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

// libhpu's count, read once: the devices do not change while the driver
// stays loaded, and the autograd engine asks often.
int count_once() noexcept
{
    try {
        const int n = hpu_device_count();
        return n < 0 ? 0 : n;
    } catch (...) {
        return 0;
    }
}

int index_of(c10::Device d) noexcept { return d.has_index() ? d.index() : current_device(); }

c10::Stream make_stream(int device, int id)
{
    return c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::HPU, static_cast<c10::DeviceIndex>(device)),
                       static_cast<c10::StreamId>(id));
}

int stream_id(const c10::Stream &s)
{
    TORCH_CHECK(s.device_type() == c10::DeviceType::HPU, "not an HPU stream: ", s);
    check_stream(s.device_index(), s.id());
    return static_cast<int>(s.id());
}

class HpuGuardImpl final : public c10::impl::DeviceGuardImplInterface {
public:
    [[nodiscard]] c10::DeviceType type() const override { return c10::DeviceType::HPU; }

    [[nodiscard]] c10::Device exchangeDevice(c10::Device d) const override
    {
        TORCH_INTERNAL_ASSERT(d.type() == c10::DeviceType::HPU);
        const c10::Device old(c10::DeviceType::HPU, static_cast<c10::DeviceIndex>(t_current_device));
        setDevice(d);
        return old;
    }
    [[nodiscard]] c10::Device getDevice() const override
    {
        return {c10::DeviceType::HPU, static_cast<c10::DeviceIndex>(t_current_device)};
    }
    void setDevice(c10::Device d) const override
    {
        TORCH_INTERNAL_ASSERT(d.type() == c10::DeviceType::HPU);
        if (d.index() >= 0)
            set_current_device(d.index());
    }
    void uncheckedSetDevice(c10::Device d) const noexcept override
    {
        if (d.index() >= 0)
            t_current_device = static_cast<unsigned char>(d.index());
    }
    [[nodiscard]] c10::Stream getStream(c10::Device d) const noexcept override
    {
        const int dev = index_of(d);
        return make_stream(dev, current_stream(dev));
    }
    [[nodiscard]] c10::Stream getDefaultStream(c10::Device d) const override { return make_stream(index_of(d), 0); }
    [[nodiscard]] c10::Stream getStreamFromGlobalPool(c10::Device d, bool /*isHighPriority*/) const override
    {
        const int dev = index_of(d);
        return make_stream(dev, pool_stream(dev));
    }
    [[nodiscard]] c10::Stream exchangeStream(c10::Stream s) const noexcept override
    {
        const int dev = s.device_index() < 0 ? current_device() : s.device_index();
        return make_stream(dev, exchange_stream(dev, static_cast<int>(s.id())));
    }
    [[nodiscard]] c10::DeviceIndex deviceCount() const noexcept override
    {
        return static_cast<c10::DeviceIndex>(device_count());
    }

    // Events: a StreamEvent, made by the first record().
    void record(void **event, const c10::Stream &stream, const c10::DeviceIndex device_index,
                const c10::EventFlag flag) const override
    {
        const int id = stream_id(stream);
        TORCH_CHECK(device_index == -1 || device_index == stream.device_index(), "Event device index ",
                    static_cast<int>(device_index), " does not match recording stream's device index ",
                    static_cast<int>(stream.device_index()));
        auto *ev = static_cast<StreamEvent *>(*event);
        if (ev == nullptr) {
            ev = new StreamEvent; // NOLINT(cppcoreguidelines-owning-memory): destroyEvent() deletes it
            ev->timing = flag == c10::EventFlag::BACKEND_DEFAULT || flag == c10::EventFlag::CUDA_EVENT_DEFAULT;
            *event = ev;
        }
        record_event(*ev, stream.device_index(), id);
    }
    void block(void *event, const c10::Stream &stream) const override
    {
        if (event == nullptr)
            return;
        block_event(*static_cast<const StreamEvent *>(event), stream.device_index(), stream_id(stream));
    }
    [[nodiscard]] bool queryEvent(void *event) const override
    {
        return event == nullptr || query_event(*static_cast<const StreamEvent *>(event));
    }
    void destroyEvent(void *event, const c10::DeviceIndex /*device_index*/) const noexcept override
    {
        delete static_cast<StreamEvent *>(event); // NOLINT(cppcoreguidelines-owning-memory)
    }
    [[nodiscard]] bool queryStream(const c10::Stream &stream) const override
    {
        const int id = stream_id(stream);
        if (!DeviceContext::opened(stream.device_index()))
            return true;
        auto &ctx = DeviceContext::get(stream.device_index());
        auto lock = ctx.lock();
        return ctx.query_stream(id);
    }
    void synchronizeStream(const c10::Stream &stream) const override
    {
        const int id = stream_id(stream);
        if (!DeviceContext::opened(stream.device_index()))
            return;
        auto &ctx = DeviceContext::get(stream.device_index());
        auto lock = ctx.lock();
        ctx.synchronize_stream(id);
    }
    void recordDataPtrOnStream(const c10::DataPtr &data_ptr, const c10::Stream &stream) const override
    {
        record_stream(data_ptr, stream.device_index(), stream_id(stream));
    }
};

// aten::record_stream for HPU tensors (Tensor.record_stream(s)).
void record_stream_hpu(at::Tensor &self, c10::Stream s)
{
    TORCH_CHECK(s.device_type() == c10::DeviceType::HPU, "record_stream: an HPU tensor needs an HPU stream, not ", s);
    TORCH_CHECK(s.device_index() == self.device().index(), "record_stream: the stream is on hpu:",
                static_cast<int>(s.device_index()), ", the tensor on ", self.device());
    record_stream(self.storage().data_ptr(), s.device_index(), stream_id(s));
}

} // namespace

int device_count() noexcept
{
    static const int n = count_once();
    return n;
}

int current_device() noexcept { return t_current_device; }

void set_current_device(int index)
{
    TORCH_CHECK(index >= 0 && index < device_count(), "HPU device index ", index, " out of range: ",
                device_count(), " HPU(s) present");
    t_current_device = index;
}

int current_stream(int device) noexcept
{
    return device >= 0 && static_cast<std::size_t>(device) < kMaxDevices ? t_streams.at(static_cast<std::size_t>(device))
                                                                           : 0;
}

int exchange_stream(int device, int stream) noexcept
{
    if (device < 0 || static_cast<std::size_t>(device) >= kMaxDevices || stream < 0 || stream >= kStreams)
        return 0;
    auto &slot = t_streams.at(static_cast<std::size_t>(device));
    const int old = slot;
    slot = static_cast<std::uint8_t>(stream);
    return old;
}

int pool_stream(int device) noexcept
{
    const unsigned int n = g_pool_next.at(static_cast<std::size_t>(device) % kMaxDevices).fetch_add(1);
    return 1 + static_cast<int>(n % static_cast<unsigned int>(kPoolStreams));
}

void check_stream(int device, std::int64_t stream)
{
    TORCH_CHECK(device >= 0 && device < device_count(), "HPU device index ", device, " out of range: ",
                device_count(), " HPU(s) present");
    TORCH_CHECK(stream >= 0 && stream < kStreams, "HPU ", device, ": no stream ", stream, " (ids 0 to ",
                kStreams - 1, ")");
}

void record_event(StreamEvent &ev, int device, int stream)
{
    check_stream(device, stream);
    const int ev_device = ev.state().device;
    TORCH_CHECK(ev_device < 0 || ev_device == device, "Event device index ", ev_device,
                " does not match recording stream's device index ", device);
    DeviceContext &ctx = DeviceContext::get(device);
    auto lock = ctx.lock();
    ctx.record_event(ev, stream);
}

void block_event(const StreamEvent &ev, int device, int stream)
{
    check_stream(device, stream);
    const StreamEvent::State e = ev.state();
    if (!e.recorded)
        return; // as CUDA: an event never recorded is complete
    DeviceContext &ctx = DeviceContext::get(device);
    if (e.device == device) {
        auto lock = ctx.lock();
        ctx.block_event(ev, stream);
        return;
    }
    // Another HPU's event: its job's fence crosses as a sync_file (libhpu
    // refuses another device's fence as a wait), exported under that
    // HPU's lock only (its reset recovery reopens the file the fence
    // belongs to: hpu.h's fence queries must not race with that; a failed
    // graph launch's export waits for the launch's end, which needs no
    // other lock) and imported into this device under its lock.
    int fd = -1;
    try {
        DeviceContext &from = DeviceContext::get(e.device);
        auto from_lock = from.lock();
        if (!e.job || hpu_fence_status(e.job->get()) == 0)
            return;
        fd = e.job->export_fd();
    } catch (const hpu::Error &err) {
        TORCH_CHECK(false, "HPU ", e.device, ": exporting an event's job '", e.what, "' for HPU ", device, ": ",
                    err.what());
    }
    try {
        auto lock = ctx.lock();
        ctx.block_foreign(fd, e.device, e.what, stream);
    } catch (...) {
        (void)close(fd);
        throw;
    }
    (void)close(fd);
}

bool query_event(const StreamEvent &ev)
{
    const StreamEvent::State e = ev.state(); // a copy: another thread may record ev meanwhile
    return !e.fence || hpu_fence_status(e.fence->get()) != 1; // issued when recorded (lazy mode too)
}

void synchronize_event(const StreamEvent &ev)
{
    const StreamEvent::State e = ev.state();
    if (!e.fence)
        return;
    // Waited for without the context's lock (other threads' ops go on);
    // a failure is then reported by the context.
    (void)hpu_fence_wait(e.fence->get(), HPU_TIMEOUT_INFINITE);
    if (!e.job || hpu_fence_status(e.job->get()) == 0)
        return;
    DeviceContext &ctx = DeviceContext::get(e.device);
    auto lock = ctx.lock();
    ctx.synchronize_event(e);
}

C10_REGISTER_GUARD_IMPL(HPU, HpuGuardImpl);

TORCH_LIBRARY_IMPL(aten, HPU, m) { m.impl("record_stream", TORCH_FN(record_stream_hpu)); }

} // namespace hpu_torch
