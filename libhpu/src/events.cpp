// SPDX-License-Identifier: MIT
// Errors and events (API 1.2); reset and recovery are in device.cpp.
//
// Events: with DRM_HPU_EVENTS_ENABLE the driver queues DRM events on the
// device file. Every reader (the callback thread, hpu_device_process_events,
// hpu_fence_error_info) goes through events_drain(): under read_mu it polls the fd
// without blocking and reads whole events, so read(2) never blocks even
// though the fd is a blocking one. Each event read is noted (errors kept
// for fence matching, resets mark the device lost) and queued in pending
// until a callback has been given it.
//
// The callback thread polls the device fd and an eventfd; writing the
// eventfd wakes it (stop, or events another reader left pending). A
// callback is replaced by stopping the thread (join) and starting a new
// one, so the old callback has returned for good when the call returns.
//
// Copyright (c) 2026 The hpu authors
#include "compute.h"
#include "events.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <poll.h>

#include "common.h"
#include "device.h"
#include "drm/hpu_accel.h"
#include "fence.h"
#include "kmd.h"
#include "os.h"

namespace hpu::detail {

namespace {

// One read gets every event the kernel holds (DRM allows 4 KiB per file).
constexpr std::size_t kReadSize = 4096;
// Reads per drain at most, so a flood of events cannot hold a reader forever.
constexpr int kMaxReads = 64;
constexpr std::uint32_t kMaxErrno = 4095;

hpu_event from_error(const drm_hpu_event_error &e)
{
    hpu_event ev{};
    ev.size = sizeof(ev);
    ev.type = HPU_EVENT_ERROR;
    ev.timestamp_ns = e.timestamp_ns;
    // A positive errno; anything else would be a driver bug: -EIO.
    if (e.errno_value != 0)
        ev.error = e.errno_value <= kMaxErrno ? -static_cast<std::int32_t>(e.errno_value) : -EIO;
    ev.kind = e.kind;
    ev.engine = e.engine;
    ev.queue_id = e.queue_id;
    ev.seq = e.seq;
    ev.address = e.address;
    ev.info = e.info;
    ev.job_queue_id = e.job_queue_id;
    ev.job_seq = e.job_seq;
    return ev;
}

// Without DRM_HPU_EVENTS_ERROR_INFO (or from a driver before it) an error
// event ends before drm_hpu_event_error.info.
constexpr std::size_t kErrorEventMin = offsetof(drm_hpu_event_error, info);

// The kinds whose address (and info) the driver sends in a second event of
// the device (queue 0) rather than in the failed job's event.
bool detail_in_device_event(std::uint32_t kind)
{
    return kind == HPU_ERROR_MMU_FAULT || kind == HPU_ERROR_BAD_LAUNCH || kind == HPU_ERROR_TPC_ILLEGAL ||
           kind == HPU_ERROR_TPC_ASSERT;
}

hpu_event from_reset(const drm_hpu_event_reset &e)
{
    hpu_event ev{};
    ev.size = sizeof(ev);
    ev.type = HPU_EVENT_RESET;
    ev.timestamp_ns = e.timestamp_ns;
    ev.hard = e.hard != 0 ? 1 : 0;
    ev.generation = e.generation;
    return ev;
}

bool on_event_thread(const hpu_device *dev)
{
    return dev->ev.thread_id.load(std::memory_order_acquire) == std::this_thread::get_id();
}

// Remembers an event read from the file: errors for fence matching, loss.
void note_event(hpu_device *dev, const hpu_event &e)
{
    if ((e.type == HPU_EVENT_RESET && e.hard != 0) || (e.type == HPU_EVENT_ERROR && e.kind == HPU_ERROR_DEVICE_LOST))
        dev->lost.store(true, std::memory_order_release);
    const std::lock_guard<std::mutex> lock(dev->ev.store_mu);
    if (e.type == HPU_EVENT_ERROR) {
        dev->ev.errors.push_back(e);
        if (dev->ev.errors.size() > HPU_ERROR_HISTORY)
            dev->ev.errors.pop_front();
        ++dev->ev.errors_noted;
        dev->ev.noted_cv.notify_all();
    }
    dev->ev.pending.push_back(e);
    if (dev->ev.pending.size() > HPU_ERROR_HISTORY)
        dev->ev.pending.pop_front(); // nobody delivers them: keep the newest
}

} // namespace

int events_drain(hpu_device *dev)
{
    const std::lock_guard<std::mutex> lock(dev->ev.read_mu);
    std::vector<std::uint8_t> buf(kReadSize);
    std::vector<hpu_event> evs;
    int count = 0;
    for (int i = 0; i < kMaxReads; ++i) {
        pollfd p{dev->fd(), POLLIN, 0};
        const int n = dev->os().poll(&p, 1, 0);
        if (n == -EINTR)
            continue;
        if (n < 0)
            return n;
        if (n == 0 || (p.revents & POLLIN) == 0)
            break;
        const long r = dev->os().read(dev->fd(), buf.data(), buf.size());
        if (r == -EAGAIN)
            break;
        if (r < 0)
            return note_error(dev, static_cast<int>(r));
        if (r == 0)
            return -EPROTO;
        evs.clear();
        (void)parse_events(buf.data(), static_cast<std::size_t>(r), evs);
        for (const auto &e : evs)
            note_event(dev, e);
        count += static_cast<int>(evs.size());
    }
    return count;
}

namespace {

std::deque<hpu_event> take_pending(hpu_device *dev)
{
    const std::lock_guard<std::mutex> lock(dev->ev.store_mu);
    return std::exchange(dev->ev.pending, {});
}

void deliver(hpu_device *dev, const std::deque<hpu_event> &evs, hpu_event_fn cb, void *user)
{
    if (cb == nullptr)
        return;
    for (const auto &e : evs) {
        try {
            cb(dev, &e, user);
        } catch (...) { // NOLINT(bugprone-empty-catch)
            // A C++ callback must not throw into the library: ignore.
        }
    }
}

void thread_main(hpu_device *dev, int wake_fd) noexcept
{
    EventState &ev = dev->ev;
    ev.thread_id.store(std::this_thread::get_id(), std::memory_order_release);
    try {
        deliver(dev, take_pending(dev), ev.cb, ev.user);
        while (!ev.stop.load(std::memory_order_acquire)) {
            std::array<pollfd, 2> p{{{dev->fd(), POLLIN, 0}, {wake_fd, POLLIN, 0}}};
            const int n = dev->os().poll(p.data(), p.size(), -1);
            if (n == -EINTR)
                continue;
            if (n < 0)
                break;
            if (p[1].revents != 0) {
                if (ev.stop.load(std::memory_order_acquire))
                    break;
                std::uint64_t v = 0;
                (void)dev->os().read(wake_fd, &v, sizeof(v));
            }
            int err = 0;
            if ((p[0].revents & POLLIN) != 0) {
                err = events_drain(dev);
            } else if ((p[0].revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) {
                err = -EIO;
            }
            deliver(dev, take_pending(dev), ev.cb, ev.user);
            if (err < 0)
                break; // the file is unusable: stop rather than spin
        }
    } catch (...) { // NOLINT(bugprone-empty-catch)
        // Allocation failure: the thread ends; events stay queued.
    }
    ev.thread_id.store(std::thread::id(), std::memory_order_release);
}

// Wakes the thread (if any) so that it delivers pending events.
void events_kick(hpu_device *dev)
{
    const std::lock_guard<std::mutex> lock(dev->ev.store_mu);
    if (dev->ev.wake_fd >= 0 && !dev->ev.pending.empty()) {
        const std::uint64_t one = 1;
        (void)dev->os().write(dev->ev.wake_fd, &one, sizeof(one));
    }
}

int enable_events(hpu_device *dev)
{
    if (dev->ev.enabled.load(std::memory_order_acquire))
        return 0;
    if (const int err = events_enable_on(dev->kmd); err < 0)
        return err;
    dev->ev.enabled.store(true, std::memory_order_release);
    return 0;
}

int info_errors(hpu_device *dev, drm_hpu_info_errors &answer)
{
    answer = {};
    return dev->kmd.info_errors(answer);
}

} // namespace

int events_enable_on(Kmd &kmd)
{
    // The whole error event (info, and the job a device event concerns);
    // a driver before DRM_HPU_EVENTS_ERROR_INFO refuses the flag: ask
    // without it (its events end before info).
    const int err = kmd.events(DRM_HPU_EVENTS_ENABLE | DRM_HPU_EVENTS_ERROR_INFO);
    if (err != -EINVAL)
        return err;
    return kmd.events(DRM_HPU_EVENTS_ENABLE);
}

std::size_t parse_events(const std::uint8_t *buf, std::size_t len, std::vector<hpu_event> &out)
{
    std::size_t off = 0;
    while (len - off >= sizeof(drm_event)) {
        drm_event hdr{};
        std::memcpy(&hdr, buf + off, sizeof(hdr)); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        if (hdr.length < sizeof(drm_event) || hdr.length > len - off)
            break;
        const std::uint8_t *p = buf + off; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        if (hdr.type == DRM_HPU_EVENT_ERROR && hdr.length >= kErrorEventMin) {
            drm_hpu_event_error e{};
            std::memcpy(&e, p, std::min<std::size_t>(hdr.length, sizeof(e)));
            out.push_back(from_error(e));
        } else if (hdr.type == DRM_HPU_EVENT_RESET && hdr.length >= sizeof(drm_hpu_event_reset)) {
            drm_hpu_event_reset e{};
            std::memcpy(&e, p, sizeof(e));
            out.push_back(from_reset(e));
        }
        off += hdr.length;
    }
    return len - off;
}

int events_start(hpu_device *dev)
{
    EventState &ev = dev->ev;
    const int wfd = dev->os().eventfd();
    if (wfd < 0)
        return wfd;
    ev.stop.store(false, std::memory_order_release);
    {
        const std::lock_guard<std::mutex> lock(ev.store_mu);
        ev.wake_fd = wfd;
    }
    try {
        ev.thread = std::thread(thread_main, dev, wfd);
    } catch (const std::system_error &) {
        const std::lock_guard<std::mutex> lock(ev.store_mu);
        ev.wake_fd = -1;
        (void)dev->os().close(wfd);
        return -EAGAIN;
    }
    return 0;
}

void events_stop(hpu_device *dev) noexcept
{
    EventState &ev = dev->ev;
    if (!ev.thread.joinable())
        return;
    ev.stop.store(true, std::memory_order_release);
    {
        const std::lock_guard<std::mutex> lock(ev.store_mu);
        const std::uint64_t one = 1;
        (void)dev->os().write(ev.wake_fd, &one, sizeof(one));
    }
    try {
        ev.thread.join();
    } catch (const std::system_error &) {
        ev.thread.detach(); // cannot happen: not called from the thread
    }
    const std::lock_guard<std::mutex> lock(ev.store_mu);
    (void)dev->os().close(ev.wake_fd);
    ev.wake_fd = -1;
}

bool events_on_thread(const hpu_device *dev) noexcept
{
    return on_event_thread(dev);
}

} // namespace hpu::detail

using namespace hpu::detail; // NOLINT(google-build-using-namespace)

extern "C" {

HPU_EXPORT const char *hpu_error_kind_name(uint32_t kind)
{
    switch (kind) {
    case HPU_ERROR_NONE:
        return "none";
    case HPU_ERROR_MMU_FAULT:
        return "mmu-fault";
    case HPU_ERROR_BAD_PACKET:
        return "bad-packet";
    case HPU_ERROR_PRIV:
        return "priv";
    case HPU_ERROR_ENGINE_HANG:
        return "engine-hang";
    case HPU_ERROR_DMA_BUS:
        return "dma-bus";
    case HPU_ERROR_ECC:
        return "ecc";
    case HPU_ERROR_TIMEOUT:
        return "timeout";
    case HPU_ERROR_DEVICE_LOST:
        return "device-lost";
    case HPU_ERROR_BAD_LAUNCH:
        return "bad-launch";
    case HPU_ERROR_TPC_ILLEGAL:
        return "tpc-illegal";
    case HPU_ERROR_TPC_ASSERT:
        return "tpc-assert";
    default:
        return "unknown";
    }
}

HPU_EXPORT int hpu_fence_error_info(hpu_fence_t *f, hpu_error_info *out)
{
    hpu::detail::clear_error();
    if (f == nullptr || out == nullptr || out->size < sizeof(out->size))
        return -EINVAL;
    return guarded([&]() {
        int st = 0;
        if (const int err = fence_state(f, st); err < 0)
            return err;
        if (st == 1)
            return -EBUSY;
        hpu_error_info info{};
        info.error = st;
        info.engine = HPU_ENGINE_NONE;
        info.queue_id = f->queue_id;
        info.seq = f->seq;
        hpu_device *dev = f->dev;
        if (st < 0 && f->queue_id != 0 && !stale(dev, f->epoch)) {
            if (dev->ev.enabled.load(std::memory_order_acquire) && events_drain(dev) > 0)
                events_kick(dev);
            const std::lock_guard<std::mutex> lock(dev->ev.store_mu);
            const auto &errs = dev->ev.errors;
            const auto it = std::find_if(errs.rbegin(), errs.rend(), [f](const hpu_event &e) {
                return e.queue_id == f->queue_id && e.seq == f->seq;
            });
            if (it != errs.rend()) {
                info.kind = it->kind;
                info.engine = it->engine;
                info.address = it->address;
                info.info = it->info;
                info.timestamp_ns = it->timestamp_ns;
                if (detail_in_device_event(it->kind)) {
                    const std::uint32_t kind = it->kind;
                    const std::uint32_t engine = it->engine;
                    // The device event that names this job; else the
                    // latest of its kind and engine that names none.
                    auto dev_ev = std::find_if(errs.rbegin(), errs.rend(), [&](const hpu_event &e) {
                        return e.queue_id == 0 && e.kind == kind && e.job_queue_id == f->queue_id &&
                               e.job_seq == f->seq;
                    });
                    if (dev_ev == errs.rend()) {
                        dev_ev = std::find_if(errs.rbegin(), errs.rend(), [&](const hpu_event &e) {
                            return e.queue_id == 0 && e.kind == kind && e.engine == engine && e.job_queue_id == 0;
                        });
                    }
                    if (dev_ev != errs.rend()) {
                        info.address = dev_ev->address;
                        info.info = dev_ev->info;
                    }
                }
            }
        }
        fill_sized(info, out);
        return 0;
    });
}

namespace {

// Whether a failed job's info still lacks what its device event brings.
bool detail_missing(const hpu_error_info &i)
{
    return i.error < 0 && detail_in_device_event(i.kind) && i.address == 0 && i.info == 0;
}

} // namespace

// Asks again until the device event arrives or the time is up. Whoever
// reads the file (hpu_fence_error_info here, the callback thread, another
// caller) notes errors under store_mu and notifies noted_cv. While a
// callback thread runs, this one waits on noted_cv rather than the fd (the
// thread may take the event first); otherwise it polls the fd. Each wait
// lasts at most 50 ms, so a thread started or stopped meanwhile costs one
// such slice at most.
HPU_EXPORT int hpu_fence_error_info_wait(hpu_fence_t *f, hpu_error_info *out, uint64_t timeout_ns)
{
    hpu::detail::clear_error();
    if (f == nullptr || out == nullptr || out->size < sizeof(out->size))
        return -EINVAL;
    return guarded([&]() {
        using clock = std::chrono::steady_clock;
        constexpr std::uint64_t kMaxWaitNs = 3600ULL * 1000000000ULL; // an hour: no overflow below
        const auto end = clock::now() + std::chrono::nanoseconds(std::min(timeout_ns, kMaxWaitNs));
        hpu_device *dev = f->dev;
        hpu_error_info mine{};
        mine.size = sizeof(mine);
        for (;;) {
            std::uint64_t noted = 0;
            {
                const std::lock_guard<std::mutex> lock(dev->ev.store_mu);
                noted = dev->ev.errors_noted;
            }
            if (const int err = hpu_fence_error_info(f, &mine); err < 0)
                return err;
            const auto now = clock::now();
            if (!detail_missing(mine) || now >= end || !dev->ev.enabled.load(std::memory_order_acquire) ||
                stale(dev, f->epoch))
                break;
            const auto slice = std::min<clock::duration>(end - now, std::chrono::milliseconds(50));
            if (dev->ev.thread_id.load(std::memory_order_acquire) != std::thread::id()) {
                std::unique_lock<std::mutex> lock(dev->ev.store_mu);
                (void)dev->ev.noted_cv.wait_for(lock, slice, [&]() { return dev->ev.errors_noted != noted; });
            } else {
                pollfd p{dev->fd(), POLLIN, 0};
                const auto ms = std::chrono::ceil<std::chrono::milliseconds>(slice).count();
                (void)dev->os().poll(&p, 1, static_cast<int>(ms));
            }
        }
        // The answer in the caller's structure (its size honoured).
        return hpu_fence_error_info(f, out);
    });
}

HPU_EXPORT int hpu_device_event_fd(hpu_device_t *dev)
{
    hpu::detail::clear_error();
    if (dev == nullptr)
        return -EINVAL;
    if (const int err = enable_events(dev); err < 0)
        return err;
    return dev->fd();
}

HPU_EXPORT int hpu_device_process_events(hpu_device_t *dev, hpu_event_fn cb, void *user)
{
    hpu::detail::clear_error();
    if (dev == nullptr)
        return -EINVAL;
    return guarded([&]() {
        if (const int err = enable_events(dev); err < 0)
            return err;
        const int n = events_drain(dev);
        const auto evs = take_pending(dev);
        deliver(dev, evs, cb, user);
        return n < 0 ? n : static_cast<int>(evs.size());
    });
}

HPU_EXPORT int hpu_device_set_error_callback(hpu_device_t *dev, hpu_event_fn cb, void *user)
{
    hpu::detail::clear_error();
    if (dev == nullptr)
        return -EINVAL;
    if (on_event_thread(dev))
        return -EDEADLK;
    events_stop(dev);
    dev->ev.cb = nullptr;
    dev->ev.user = nullptr;
    if (cb == nullptr)
        return 0;
    if (const int err = enable_events(dev); err < 0)
        return err;
    dev->ev.cb = cb;
    dev->ev.user = user;
    if (const int err = events_start(dev); err < 0) {
        dev->ev.cb = nullptr;
        dev->ev.user = nullptr;
        return err;
    }
    return 0;
}

HPU_EXPORT int hpu_device_reset_generation(hpu_device_t *dev, uint64_t *out)
{
    hpu::detail::clear_error();
    if (dev == nullptr || out == nullptr)
        return -EINVAL;
    drm_hpu_info_errors answer{};
    if (const int err = info_errors(dev, answer); err < 0)
        return err;
    *out = answer.reset_generation;
    return 0;
}

HPU_EXPORT int hpu_device_error_counters(hpu_device_t *dev, hpu_error_counters *out)
{
    hpu::detail::clear_error();
    if (dev == nullptr || out == nullptr || out->size < sizeof(out->size))
        return -EINVAL;
    drm_hpu_info_errors a{};
    if (const int err = info_errors(dev, a); err < 0)
        return err;
    hpu_error_counters c{};
    c.mmu_faults = a.mmu_faults;
    c.bad_packets = a.bad_packets;
    c.priv_violations = a.priv_violations;
    c.engine_hangs = a.engine_hangs;
    c.dma_bus_errors = a.dma_bus_errors;
    c.ecc_correctable = a.ecc_correctable;
    c.ecc_uncorrectable = a.ecc_uncorrectable;
    c.retired_pages = a.retired_pages;
    c.job_timeouts = a.job_timeouts;
    c.heartbeat_losses = a.heartbeat_losses;
    c.fw_fatal = a.fw_fatal;
    c.thermal_events = a.thermal_events;
    c.power_events = a.power_events;
    c.soft_resets = a.soft_resets;
    c.hard_resets = a.hard_resets;
    c.reset_generation = a.reset_generation;
    fill_sized(c, out);
    return 0;
}

} // extern "C"
