// SPDX-License-Identifier: MIT
// device.cpp - the HPU device guard: which HPU is current on each thread,
// how many there are, and the one (default) stream of each.
//
// Copyright (c) 2026 The hpu authors
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "hpu_torch.h"

namespace hpu_torch {

namespace {

thread_local int t_current_device = 0; // NOLINT: the guard's per-thread state

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
    // One stream per device: every op of a device runs in call order.
    [[nodiscard]] c10::Stream getStream(c10::Device d) const noexcept override
    {
        return c10::Stream(c10::Stream::DEFAULT, d);
    }
    [[nodiscard]] c10::Stream getDefaultStream(c10::Device d) const override
    {
        return c10::Stream(c10::Stream::DEFAULT, d);
    }
    [[nodiscard]] c10::Stream exchangeStream(c10::Stream s) const noexcept override { return s; }
    [[nodiscard]] c10::DeviceIndex deviceCount() const noexcept override
    {
        return static_cast<c10::DeviceIndex>(device_count());
    }
    // Events order work across streams; with one stream per device they
    // have nothing to order (recording is a no-op, queries say done).
    void record(void ** /*event*/, const c10::Stream & /*stream*/, const c10::DeviceIndex /*device_index*/,
                const c10::EventFlag /*flag*/) const override
    {
    }
    void block(void * /*event*/, const c10::Stream & /*stream*/) const override {}
    [[nodiscard]] bool queryEvent(void * /*event*/) const override { return true; }
    void destroyEvent(void * /*event*/, const c10::DeviceIndex /*device_index*/) const noexcept override {}
    [[nodiscard]] bool queryStream(const c10::Stream & /*stream*/) const override { return true; }
    void synchronizeStream(const c10::Stream &stream) const override
    {
        auto &ctx = DeviceContext::get(stream.device_index());
        auto lock = ctx.lock();
        ctx.synchronize();
    }
};

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

C10_REGISTER_GUARD_IMPL(HPU, HpuGuardImpl);

} // namespace hpu_torch
