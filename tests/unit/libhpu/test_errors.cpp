// SPDX-License-Identifier: MIT
// libhpu 1.2 against the mocked kernel: error events (parsing, reading,
// the callback thread), fence error information, device loss and reopen,
// error counters, per-job timeouts and reset through sysfs.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "events.h"
#include "fixture.h"
#include "hpu/hpu.h"
#include "hpu/hpu.hpp"
#include "mock_os.h"

using hpu::test::Fixture;
using hpu::test::make_answer;
using hpu::test::MockOs;
using hpu::test::ScopedMock;
using Bytes = std::vector<std::uint8_t>;

namespace {

constexpr const char *kResetPath = "/sys/bus/pci/devices/0000:00:03.0/hpu_reset";

// Events a callback received, from whichever thread.
struct Sink {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<hpu_event> events;
    std::vector<int> results; // what the callback's own library calls returned
    std::function<int(hpu_device_t *)> action; // run inside the callback

    static void cb(hpu_device_t *dev, const hpu_event *ev, void *user)
    {
        auto *s = static_cast<Sink *>(user);
        int r = 0;
        if (s->action)
            r = s->action(dev);
        const std::lock_guard<std::mutex> lock(s->mu);
        s->events.push_back(*ev);
        s->results.push_back(r);
        s->cv.notify_all();
    }
    // Waits (at most 5 s) until n events arrived.
    bool wait_for(std::size_t n)
    {
        std::unique_lock<std::mutex> lock(mu);
        return cv.wait_for(lock, std::chrono::seconds(5), [&]() { return events.size() >= n; });
    }
    std::size_t count()
    {
        const std::lock_guard<std::mutex> lock(mu);
        return events.size();
    }
};

Bytes err_ev(std::uint32_t kind, std::uint32_t queue, std::uint64_t seq, std::uint32_t errno_value = EFAULT)
{
    return MockOs::error_event(kind, 2, queue, errno_value, seq, 0xdead000, 123456789);
}

// One queue, a recorded list and a submitted job whose fence is pending.
// The device's event of a TPC assert at pc with value info, naming the
// job (job_queue_id, job_seq; 0 for none).
Bytes assert_event(std::uint64_t pc, std::uint32_t info, std::uint32_t job_queue_id, std::uint64_t job_seq)
{
    const Bytes b = MockOs::error_event(HPU_ERROR_TPC_ASSERT, HPU_ENGINE_INDEX_TPC, 0, EDOM, 0, pc, 0);
    drm_hpu_event_error e{};
    std::memcpy(&e, b.data(), sizeof(e));
    e.info = info;
    e.job_queue_id = job_queue_id;
    e.job_seq = job_seq;
    return MockOs::bytes_of(e);
}

struct Job {
    hpu_queue_t *q = nullptr;
    hpu_cmdlist_t *cl = nullptr;
    hpu_fence_t *f = nullptr;
    explicit Job(Fixture &fx, std::uint32_t timeout_ms = HPU_JOB_TIMEOUT_DEFAULT)
    {
        fx.m.auto_complete = false;
        fx.queue_and_nop(q, cl);
        REQUIRE(hpu_queue_submit_timeout(q, cl, nullptr, 0, timeout_ms, &f) == 0);
    }
    Job(const Job &) = delete;
    Job &operator=(const Job &) = delete;
    Job(Job &&) = delete;
    Job &operator=(Job &&) = delete;
    ~Job()
    {
        hpu_fence_destroy(f);
        hpu_cmdlist_destroy(cl);
        hpu_queue_destroy(q);
    }
};

} // namespace

TEST_CASE("event parsing", "[libhpu][events]")
{
    using hpu::detail::parse_events;
    std::vector<hpu_event> out;

    SECTION("several events in one buffer, in order")
    {
        const Bytes b = MockOs::cat({err_ev(HPU_ERROR_MMU_FAULT, 3, 7), MockOs::reset_event(false, 4, 99),
                                     err_ev(HPU_ERROR_TIMEOUT, 4, 8, ETIMEDOUT)});
        CHECK(parse_events(b.data(), b.size(), out) == 0);
        REQUIRE(out.size() == 3);
        CHECK(out[0].size == sizeof(hpu_event));
        CHECK(out[0].type == HPU_EVENT_ERROR);
        CHECK(out[0].kind == HPU_ERROR_MMU_FAULT);
        CHECK(out[0].error == -EFAULT);
        CHECK(out[0].engine == 2);
        CHECK(out[0].queue_id == 3);
        CHECK(out[0].seq == 7);
        CHECK(out[0].address == 0xdead000);
        CHECK(out[0].timestamp_ns == 123456789);
        CHECK(out[0].hard == 0);
        CHECK(out[0].generation == 0);
        CHECK(out[1].type == HPU_EVENT_RESET);
        CHECK(out[1].hard == 0);
        CHECK(out[1].generation == 4);
        CHECK(out[1].timestamp_ns == 99);
        CHECK(out[1].kind == 0);
        CHECK(out[2].kind == HPU_ERROR_TIMEOUT);
        CHECK(out[2].error == -ETIMEDOUT);
    }
    SECTION("unknown types are skipped by their length")
    {
        drm_event vblank{};
        vblank.type = 0x01; // DRM_EVENT_VBLANK
        vblank.length = 32;
        Bytes other = MockOs::bytes_of(vblank);
        other.resize(32, 0xaa);
        const Bytes b = MockOs::cat({other, err_ev(HPU_ERROR_ECC, 0, 0), other});
        CHECK(parse_events(b.data(), b.size(), out) == 0);
        REQUIRE(out.size() == 1);
        CHECK(out[0].kind == HPU_ERROR_ECC);
    }
    SECTION("a longer event of a newer kernel: the known prefix is used")
    {
        Bytes e = err_ev(HPU_ERROR_BAD_PACKET, 1, 2);
        e.resize(e.size() + 16, 0x55);
        drm_event hdr{DRM_HPU_EVENT_ERROR, static_cast<__u32>(e.size())};
        std::memcpy(e.data(), &hdr, sizeof(hdr));
        const Bytes b = MockOs::cat({e, MockOs::reset_event(true, 9, 1)});
        CHECK(parse_events(b.data(), b.size(), out) == 0);
        REQUIRE(out.size() == 2);
        CHECK(out[0].kind == HPU_ERROR_BAD_PACKET);
        CHECK(out[1].hard == 1);
    }
    SECTION("a known type shorter than its structure is skipped")
    {
        drm_event hdr{DRM_HPU_EVENT_RESET, 16};
        Bytes shortev = MockOs::bytes_of(hdr);
        shortev.resize(16, 0);
        const Bytes b = MockOs::cat({shortev, err_ev(HPU_ERROR_PRIV, 1, 1)});
        CHECK(parse_events(b.data(), b.size(), out) == 0);
        REQUIRE(out.size() == 1);
        CHECK(out[0].kind == HPU_ERROR_PRIV);
    }
    SECTION("a truncated tail is left unparsed")
    {
        const Bytes whole = err_ev(HPU_ERROR_MMU_FAULT, 1, 1);
        Bytes b = MockOs::cat({whole, whole});
        b.resize(whole.size() + 20);
        CHECK(parse_events(b.data(), b.size(), out) == 20);
        CHECK(out.size() == 1);
        out.clear();
        CHECK(parse_events(b.data(), 5, out) == 5); // not even a header
        CHECK(out.empty());
    }
    SECTION("a length below the header size stops parsing")
    {
        drm_event hdr{DRM_HPU_EVENT_ERROR, 4};
        const Bytes b = MockOs::cat({MockOs::bytes_of(hdr), err_ev(HPU_ERROR_PRIV, 1, 1)});
        CHECK(parse_events(b.data(), b.size(), out) == b.size());
        CHECK(out.empty());
    }
    SECTION("errno values: 0 stays 0, nonsense becomes -EIO")
    {
        const Bytes b = MockOs::cat({err_ev(HPU_ERROR_ECC, 0, 0, 0), err_ev(HPU_ERROR_ECC, 0, 0, 100000)});
        CHECK(parse_events(b.data(), b.size(), out) == 0);
        REQUIRE(out.size() == 2);
        CHECK(out[0].error == 0);
        CHECK(out[1].error == -EIO);
    }
}

TEST_CASE("hpu_error_kind_name and the new hpu_strerror texts", "[libhpu][events]")
{
    CHECK(std::string(hpu_error_kind_name(HPU_ERROR_NONE)) == "none");
    CHECK(std::string(hpu_error_kind_name(HPU_ERROR_MMU_FAULT)) == "mmu-fault");
    CHECK(std::string(hpu_error_kind_name(HPU_ERROR_BAD_PACKET)) == "bad-packet");
    CHECK(std::string(hpu_error_kind_name(HPU_ERROR_PRIV)) == "priv");
    CHECK(std::string(hpu_error_kind_name(HPU_ERROR_ENGINE_HANG)) == "engine-hang");
    CHECK(std::string(hpu_error_kind_name(HPU_ERROR_DMA_BUS)) == "dma-bus");
    CHECK(std::string(hpu_error_kind_name(HPU_ERROR_ECC)) == "ecc");
    CHECK(std::string(hpu_error_kind_name(HPU_ERROR_TIMEOUT)) == "timeout");
    CHECK(std::string(hpu_error_kind_name(HPU_ERROR_DEVICE_LOST)) == "device-lost");
    CHECK(std::string(hpu_error_kind_name(HPU_ERROR_BAD_LAUNCH)) == "bad-launch");
    CHECK(std::string(hpu_error_kind_name(HPU_ERROR_TPC_ILLEGAL)) == "tpc-illegal");
    CHECK(std::string(hpu_error_kind_name(HPU_ERROR_TPC_ASSERT)) == "tpc-assert");
    CHECK(std::string(hpu_error_kind_name(99)) == "unknown");
    STATIC_REQUIRE(HPU_ERROR_BAD_LAUNCH == DRM_HPU_ERROR_BAD_LAUNCH);
    STATIC_REQUIRE(HPU_ERROR_TPC_ILLEGAL == DRM_HPU_ERROR_TPC_ILLEGAL);
    STATIC_REQUIRE(HPU_ERROR_TPC_ASSERT == DRM_HPU_ERROR_TPC_ASSERT);
    STATIC_REQUIRE(HPU_ENGINE_INDEX_TPC == DRM_HPU_ENGINE_INDEX_TPC);
    STATIC_REQUIRE(HPU_ENGINE_INDEX_MME(1) == DRM_HPU_ENGINE_INDEX_MME(1));
    CHECK(std::string(hpu_strerror(-ENOEXEC)) ==
          "The device refused a TPC launch or GEMM (bad kernel binary, launch or tensor descriptor)");
    CHECK(std::string(hpu_strerror(-EILSEQ)) == "A TPC core hit an illegal instruction or ran off its code");
    CHECK(std::string(hpu_strerror(-EDOM)) == "A TPC kernel's assertion failed");
    // The kinds are the uapi's.
    STATIC_REQUIRE(HPU_ERROR_MMU_FAULT == DRM_HPU_ERROR_MMU_FAULT);
    STATIC_REQUIRE(HPU_ERROR_DEVICE_LOST == DRM_HPU_ERROR_DEVICE_LOST);
    STATIC_REQUIRE(HPU_ERROR_TIMEOUT == DRM_HPU_ERROR_TIMEOUT);
    STATIC_REQUIRE(HPU_JOB_TIMEOUT_MAX_MS == 3600000u);

    CHECK(std::string(hpu_strerror(-EBUSY)) == "Device or resource busy (a reset in progress, or the job is still pending)");
    CHECK(std::string(hpu_strerror(-EDEADLK)) == "Not allowed from the HPU event callback");
    CHECK(std::string(hpu_strerror(-EOPNOTSUPP)) == "Not supported by the hpu driver");
    CHECK(std::string(hpu_strerror(-EHWPOISON)) == "Uncorrectable memory error (HBM ECC)");
    CHECK(std::string(hpu_strerror(-ETIMEDOUT)) == "The job timed out on the device");
}

TEST_CASE("process_events reads, notes and delivers in order", "[libhpu][events]")
{
    Fixture fx;
    Sink sink;
    CHECK(hpu_device_process_events(nullptr, nullptr, nullptr) == -EINVAL);
    CHECK(hpu_device_event_fd(nullptr) == -EINVAL);

    SECTION("event_fd enables events once, with the whole error event, and is the device fd")
    {
        CHECK_FALSE(fx.m.events_on(fx.fd()));
        CHECK(hpu_device_event_fd(fx.dev) == fx.fd());
        CHECK(fx.m.events_on(fx.fd()));
        CHECK(fx.m.events_flags(fx.fd()) == (DRM_HPU_EVENTS_ENABLE | DRM_HPU_EVENTS_ERROR_INFO));
        CHECK(hpu_device_event_fd(fx.dev) == fx.fd());
        CHECK(fx.m.request_calls[DRM_IOCTL_HPU_EVENTS] == 1);
    }
    SECTION("a driver that refuses ERROR_INFO: events are enabled without it")
    {
        fx.m.events_old_driver = true;
        CHECK(hpu_device_event_fd(fx.dev) == fx.fd());
        CHECK(fx.m.events_on(fx.fd()));
        CHECK(fx.m.events_flags(fx.fd()) == DRM_HPU_EVENTS_ENABLE);
        CHECK(fx.m.request_calls[DRM_IOCTL_HPU_EVENTS] == 2);
    }
    SECTION("nothing pending: 0, no read")
    {
        CHECK(hpu_device_process_events(fx.dev, &Sink::cb, &sink) == 0);
        CHECK(fx.m.read_calls == 0);
        CHECK(sink.count() == 0);
    }
    SECTION("several events in one read, and short reads (one event each)")
    {
        REQUIRE(hpu_device_event_fd(fx.dev) >= 0);
        fx.m.push_read(fx.fd(), MockOs::cat({err_ev(HPU_ERROR_MMU_FAULT, 1, 1), err_ev(HPU_ERROR_PRIV, 1, 2)}));
        fx.m.push_read(fx.fd(), MockOs::reset_event(false, 0, 10));
        fx.m.push_read(fx.fd(), err_ev(HPU_ERROR_ECC, 0, 0));
        CHECK(hpu_device_process_events(fx.dev, &Sink::cb, &sink) == 4);
        CHECK(fx.m.read_calls == 3);
        REQUIRE(sink.events.size() == 4);
        CHECK(sink.events[0].kind == HPU_ERROR_MMU_FAULT);
        CHECK(sink.events[1].kind == HPU_ERROR_PRIV);
        CHECK(sink.events[2].type == HPU_EVENT_RESET);
        CHECK(sink.events[3].kind == HPU_ERROR_ECC);
        CHECK(fx.m.queued(fx.fd()) == 0);
        CHECK(hpu_device_is_lost(fx.dev) == 0); // a soft reset keeps the file
        CHECK(hpu_device_process_events(fx.dev, &Sink::cb, &sink) == 0);
    }
    SECTION("unknown events are skipped and not counted; NULL callback just notes")
    {
        drm_event other{0x1234, 16};
        Bytes o = MockOs::bytes_of(other);
        o.resize(16);
        fx.m.push_read(fx.fd(), MockOs::cat({o, err_ev(HPU_ERROR_ECC, 0, 0), o}));
        CHECK(hpu_device_process_events(fx.dev, nullptr, nullptr) == 1);
    }
    SECTION("a failed read: the error, and -ENODEV marks the device lost")
    {
        fx.m.fail_next_read(fx.fd(), -ENODEV);
        CHECK(hpu_device_process_events(fx.dev, &Sink::cb, &sink) == -ENODEV);
        CHECK(hpu_device_is_lost(fx.dev) == 1);
    }
    SECTION("a driver without events: the ioctl's error")
    {
        fx.m.request_fail[DRM_IOCTL_HPU_EVENTS] = -ENOTTY;
        CHECK(hpu_device_process_events(fx.dev, nullptr, nullptr) == -ENOTTY);
        CHECK(hpu_device_event_fd(fx.dev) == -ENOTTY);
    }
}

TEST_CASE("device loss", "[libhpu][events][reset]")
{
    Fixture fx;
    CHECK(hpu_device_is_lost(nullptr) == -EINVAL);
    CHECK(hpu_device_is_lost(fx.dev) == 0);

    SECTION("any -ENODEV from the kernel")
    {
        fx.m.dead_fds.insert(fx.fd());
        hpu_memory_info mi{};
        mi.size = sizeof(mi);
        CHECK(hpu_device_memory_info(fx.dev, &mi) == -ENODEV);
        CHECK(hpu_device_is_lost(fx.dev) == 1);
    }
    SECTION("-ENODEV from the INFO DEVICE query")
    {
        fx.m.dead_fds.insert(fx.fd());
        hpu_device_info di{};
        di.size = sizeof(di);
        CHECK(hpu_device_get_info(fx.dev, &di) == -ENODEV);
        CHECK(hpu_device_is_lost(fx.dev) == 1);
    }
    SECTION("other errors do not")
    {
        fx.m.ioctl_fail = -EIO;
        hpu_memory_info mi{};
        mi.size = sizeof(mi);
        CHECK(hpu_device_memory_info(fx.dev, &mi) == -EIO);
        CHECK(hpu_device_is_lost(fx.dev) == 0);
    }
    SECTION("a hard reset event")
    {
        REQUIRE(hpu_device_event_fd(fx.dev) >= 0);
        fx.m.hard_reset(1);
        CHECK(hpu_device_process_events(fx.dev, nullptr, nullptr) == 1);
        CHECK(hpu_device_is_lost(fx.dev) == 1);
        uint64_t gen = 0;
        CHECK(hpu_device_reset_generation(fx.dev, &gen) == -ENODEV);
    }
    SECTION("an error event of kind DEVICE_LOST")
    {
        fx.m.push_read(fx.fd(), err_ev(HPU_ERROR_DEVICE_LOST, 1, 1, ENODEV));
        CHECK(hpu_device_process_events(fx.dev, nullptr, nullptr) == 1);
        CHECK(hpu_device_is_lost(fx.dev) == 1);
    }
}

TEST_CASE("fence error information", "[libhpu][events][fence]")
{
    Fixture fx;
    hpu_error_info info{};
    info.size = sizeof(info);

    SECTION("argument checks")
    {
        Job job(fx);
        CHECK(hpu_fence_error_info(nullptr, &info) == -EINVAL);
        CHECK(hpu_fence_error_info(job.f, nullptr) == -EINVAL);
        hpu_error_info tiny{};
        tiny.size = 2;
        CHECK(hpu_fence_error_info(job.f, &tiny) == -EINVAL);
    }
    SECTION("pending: -EBUSY; success: error 0 and no kind")
    {
        Job job(fx);
        CHECK(hpu_fence_error_info(job.f, &info) == -EBUSY);
        fx.m.complete_jobs(0);
        REQUIRE(hpu_fence_error_info(job.f, &info) == 0);
        CHECK(info.size == sizeof(info));
        CHECK(info.error == 0);
        CHECK(info.kind == HPU_ERROR_NONE);
        CHECK(info.engine == HPU_ENGINE_NONE);
        CHECK(info.queue_id == fx.m.jobs.at(0).req.queue_id);
        CHECK(info.seq == fx.m.jobs.at(0).req.seq);
    }
    SECTION("failed, events on: the event of the same queue and seq, read on demand")
    {
        REQUIRE(hpu_device_event_fd(fx.dev) >= 0);
        Job other(fx);
        Job job(fx);
        const auto &req = fx.m.jobs.at(1).req;
        fx.m.complete_jobs(-EFAULT);
        // The event of the other job and an unrelated device error first.
        fx.m.push_read(fx.fd(), MockOs::cat({err_ev(HPU_ERROR_PRIV, fx.m.jobs.at(0).req.queue_id, fx.m.jobs.at(0).req.seq),
                                             err_ev(HPU_ERROR_ECC, 0, 0)}));
        fx.m.push_read(fx.fd(), MockOs::error_event(HPU_ERROR_MMU_FAULT, 5, req.queue_id, EFAULT, req.seq, 0x7000, 42));
        REQUIRE(hpu_fence_error_info(job.f, &info) == 0);
        CHECK(info.error == -EFAULT);
        CHECK(info.kind == HPU_ERROR_MMU_FAULT);
        CHECK(info.engine == 5);
        CHECK(info.address == 0x7000);
        CHECK(info.timestamp_ns == 42);
        CHECK(info.queue_id == req.queue_id);
        CHECK(info.seq == req.seq);
        REQUIRE(hpu_fence_error_info(other.f, &info) == 0);
        CHECK(info.kind == HPU_ERROR_PRIV);
        // The events read on demand are still delivered to the next reader.
        Sink sink;
        CHECK(hpu_device_process_events(fx.dev, &Sink::cb, &sink) == 3);
    }
    SECTION("a compute error: address and info from the device event of the same kind and engine")
    {
        REQUIRE(hpu_device_event_fd(fx.dev) >= 0);
        Job job(fx);
        const auto &req = fx.m.jobs.at(0).req;
        fx.m.complete_jobs(-EDOM);
        drm_hpu_event_error dev_ev{};
        dev_ev.base.type = DRM_HPU_EVENT_ERROR;
        dev_ev.base.length = sizeof(dev_ev);
        dev_ev.kind = HPU_ERROR_TPC_ASSERT;
        dev_ev.engine = HPU_ENGINE_INDEX_TPC;
        dev_ev.errno_value = EDOM;
        dev_ev.address = 0x1c0; // program counter
        dev_ev.info = 0xdeadbeef;
        // An assert of another engine index must not be taken.
        drm_hpu_event_error other = dev_ev;
        other.engine = 3;
        other.info = 1;
        fx.m.push_read(fx.fd(), MockOs::cat({MockOs::bytes_of(dev_ev), MockOs::bytes_of(other),
                                             MockOs::error_event(HPU_ERROR_TPC_ASSERT, HPU_ENGINE_INDEX_TPC,
                                                                 req.queue_id, EDOM, req.seq, 0, 77)}));
        REQUIRE(hpu_fence_error_info(job.f, &info) == 0);
        CHECK(info.error == -EDOM);
        CHECK(info.kind == HPU_ERROR_TPC_ASSERT);
        CHECK(info.engine == HPU_ENGINE_INDEX_TPC);
        CHECK(info.address == 0x1c0);
        CHECK(info.info == 0xdeadbeef);
        CHECK(info.timestamp_ns == 77);
        // The callback sees info on the device event.
        Sink sink;
        CHECK(hpu_device_process_events(fx.dev, &Sink::cb, &sink) == 3);
        REQUIRE(sink.events.size() == 3);
        CHECK(sink.events[0].info == 0xdeadbeef);
        CHECK(sink.events[0].address == 0x1c0);
        CHECK(sink.events[0].queue_id == 0);
        CHECK(sink.events[2].info == 0);
    }
    SECTION("a compute error: the device event that names the job, not a later one of the same kind and engine")
    {
        REQUIRE(hpu_device_event_fd(fx.dev) >= 0);
        Job job(fx);
        const auto &req = fx.m.jobs.at(0).req;
        fx.m.complete_jobs(-EDOM);
        // This job's assert; another job's on the same engine, read after
        // it; and one the driver could not pair with a job.
        fx.m.push_read(fx.fd(), MockOs::cat({assert_event(0x40, 7, req.queue_id, req.seq),
                                             MockOs::error_event(HPU_ERROR_TPC_ASSERT, HPU_ENGINE_INDEX_TPC,
                                                                 req.queue_id, EDOM, req.seq, 0, 77),
                                             assert_event(0x80, 8, req.queue_id, req.seq + 1),
                                             assert_event(0xc0, 9, 0, 0)}));
        REQUIRE(hpu_fence_error_info(job.f, &info) == 0);
        CHECK(info.kind == HPU_ERROR_TPC_ASSERT);
        CHECK(info.address == 0x40);
        CHECK(info.info == 7);
        // The callback sees which job each device event names.
        Sink sink;
        CHECK(hpu_device_process_events(fx.dev, &Sink::cb, &sink) == 4);
        REQUIRE(sink.events.size() == 4);
        CHECK(sink.events[0].job_queue_id == req.queue_id);
        CHECK(sink.events[0].job_seq == req.seq);
        CHECK(sink.events[3].job_queue_id == 0);
    }
    SECTION("a compute error whose device event names another job: the latest that names none")
    {
        REQUIRE(hpu_device_event_fd(fx.dev) >= 0);
        Job job(fx);
        const auto &req = fx.m.jobs.at(0).req;
        fx.m.complete_jobs(-EDOM);
        fx.m.push_read(fx.fd(), MockOs::cat({assert_event(0x40, 7, 0, 0),
                                             assert_event(0x80, 8, req.queue_id, req.seq + 1),
                                             MockOs::error_event(HPU_ERROR_TPC_ASSERT, HPU_ENGINE_INDEX_TPC,
                                                                 req.queue_id, EDOM, req.seq, 0, 77)}));
        REQUIRE(hpu_fence_error_info(job.f, &info) == 0);
        CHECK(info.address == 0x40);
        CHECK(info.info == 7);
    }
    SECTION("an error event of a driver before info (48 bytes) is still read")
    {
        REQUIRE(hpu_device_event_fd(fx.dev) >= 0);
        Job job(fx);
        const auto &req = fx.m.jobs.at(0).req;
        fx.m.complete_jobs(-EFAULT);
        auto b = MockOs::error_event(HPU_ERROR_MMU_FAULT, 2, req.queue_id, EFAULT, req.seq, 0x5000, 9);
        constexpr std::uint32_t kOld = offsetof(drm_hpu_event_error, info);
        b.resize(kOld);
        drm_event h{};
        std::memcpy(&h, b.data(), sizeof(h));
        h.length = kOld;
        std::memcpy(b.data(), &h, sizeof(h));
        fx.m.push_read(fx.fd(), b);
        REQUIRE(hpu_fence_error_info(job.f, &info) == 0);
        CHECK(info.kind == HPU_ERROR_MMU_FAULT);
        CHECK(info.address == 0x5000);
        CHECK(info.info == 0);
    }
    SECTION("failed without an event: only the errno")
    {
        Job job(fx);
        fx.m.complete_jobs(-ETIMEDOUT);
        REQUIRE(hpu_fence_error_info(job.f, &info) == 0);
        CHECK(info.error == -ETIMEDOUT);
        CHECK(info.kind == HPU_ERROR_NONE);
        CHECK(info.address == 0);
        CHECK(fx.m.read_calls == 0); // events are off: nothing read
    }
    SECTION("an event of another seq does not match")
    {
        REQUIRE(hpu_device_event_fd(fx.dev) >= 0);
        Job job(fx);
        fx.m.complete_jobs(-EIO);
        fx.m.push_read(fx.fd(), err_ev(HPU_ERROR_DMA_BUS, fx.m.jobs.at(0).req.queue_id, 999));
        REQUIRE(hpu_fence_error_info(job.f, &info) == 0);
        CHECK(info.error == -EIO);
        CHECK(info.kind == HPU_ERROR_NONE);
    }
    SECTION("a smaller caller structure is filled up to its size")
    {
        Job job(fx);
        fx.m.complete_jobs(-EIO);
        std::array<std::uint8_t, sizeof(hpu_error_info) + 8> raw{};
        raw.fill(0xee);
        hpu_error_info part{};
        part.size = offsetof(hpu_error_info, engine);
        std::memcpy(raw.data(), &part, sizeof(part.size));
        REQUIRE(hpu_fence_error_info(job.f, reinterpret_cast<hpu_error_info *>(raw.data())) == 0); // NOLINT
        hpu_error_info got{};
        std::memcpy(&got, raw.data(), offsetof(hpu_error_info, engine));
        CHECK(got.size == offsetof(hpu_error_info, engine));
        CHECK(got.error == -EIO);
        CHECK(raw.at(offsetof(hpu_error_info, engine)) == 0xee);
    }
    SECTION("an imported fence: the errno only")
    {
        Job job(fx);
        fx.m.complete_jobs(-EIO);
        int sfd = -1;
        REQUIRE(hpu_fence_export_fd(job.f, &sfd) == 0);
        hpu_fence_t *imp = nullptr;
        REQUIRE(hpu_fence_import_fd(fx.dev, sfd, &imp) == 0);
        REQUIRE(hpu_fence_error_info(imp, &info) == 0);
        CHECK(info.error == -EIO);
        CHECK(info.queue_id == 0);
        CHECK(info.seq == 0);
        CHECK(hpu_fence_destroy(imp) == 0);
        fx.m.close(sfd);
    }
}

TEST_CASE("fence error information, waiting for the device event", "[libhpu][events][fence]")
{
    using clock = std::chrono::steady_clock;
    Fixture fx;
    hpu_error_info info{};
    info.size = sizeof(info);
    constexpr std::uint64_t kLong = 20ULL * 1000000000ULL; // never reached when the code is right

    SECTION("argument checks; a pending job is -EBUSY at once")
    {
        Job job(fx);
        CHECK(hpu_fence_error_info_wait(nullptr, &info, 0) == -EINVAL);
        CHECK(hpu_fence_error_info_wait(job.f, nullptr, 0) == -EINVAL);
        hpu_error_info tiny{};
        tiny.size = 2;
        CHECK(hpu_fence_error_info_wait(job.f, &tiny, 0) == -EINVAL);
        CHECK(hpu_fence_error_info_wait(job.f, &info, kLong) == -EBUSY);
    }
    SECTION("the job's own event first, the device event later: waits for it")
    {
        REQUIRE(hpu_device_event_fd(fx.dev) >= 0);
        Job job(fx);
        const auto &req = fx.m.jobs.at(0).req;
        fx.m.complete_jobs(-EDOM);
        fx.m.push_read(fx.fd(), MockOs::error_event(HPU_ERROR_TPC_ASSERT, HPU_ENGINE_INDEX_TPC, req.queue_id, EDOM,
                                                    req.seq, 0, 5));
        // Without waiting, the device event's half is not there yet.
        REQUIRE(hpu_fence_error_info(job.f, &info) == 0);
        CHECK(info.kind == HPU_ERROR_TPC_ASSERT);
        CHECK(info.info == 0);
        std::thread late([&]() {
            std::this_thread::sleep_for(std::chrono::milliseconds(120)); // longer than one 50 ms slice
            fx.m.push_read(fx.fd(), assert_event(0x40, 0xabcd, req.queue_id, req.seq));
        });
        const auto t0 = clock::now();
        const int r = hpu_fence_error_info_wait(job.f, &info, kLong);
        const auto took = clock::now() - t0;
        late.join();
        REQUIRE(r == 0);
        CHECK(info.error == -EDOM);
        CHECK(info.kind == HPU_ERROR_TPC_ASSERT);
        CHECK(info.address == 0x40);
        CHECK(info.info == 0xabcd);
        CHECK(took < std::chrono::nanoseconds(kLong));
    }
    SECTION("the same while the callback thread reads the file")
    {
        Sink sink;
        REQUIRE(hpu_device_set_error_callback(fx.dev, &Sink::cb, &sink) == 0);
        Job job(fx);
        const auto &req = fx.m.jobs.at(0).req;
        fx.m.complete_jobs(-EDOM);
        fx.m.push_read(fx.fd(), MockOs::error_event(HPU_ERROR_TPC_ASSERT, HPU_ENGINE_INDEX_TPC, req.queue_id, EDOM,
                                                    req.seq, 0, 5));
        REQUIRE(sink.wait_for(1)); // the thread has taken the job's event
        std::thread late([&]() {
            std::this_thread::sleep_for(std::chrono::milliseconds(120));
            fx.m.push_read(fx.fd(), assert_event(0x80, 7, req.queue_id, req.seq));
        });
        const int r = hpu_fence_error_info_wait(job.f, &info, kLong);
        late.join();
        REQUIRE(r == 0);
        CHECK(info.address == 0x80);
        CHECK(info.info == 7);
        REQUIRE(sink.wait_for(2));
        REQUIRE(hpu_device_set_error_callback(fx.dev, nullptr, nullptr) == 0);
    }
    SECTION("the device event never comes: 0 after the timeout, address and info 0")
    {
        REQUIRE(hpu_device_event_fd(fx.dev) >= 0);
        Job job(fx);
        const auto &req = fx.m.jobs.at(0).req;
        fx.m.complete_jobs(-EFAULT);
        fx.m.push_read(fx.fd(), MockOs::error_event(HPU_ERROR_MMU_FAULT, 5, req.queue_id, EFAULT, req.seq, 0, 9));
        const auto t0 = clock::now();
        REQUIRE(hpu_fence_error_info_wait(job.f, &info, 150000000ULL) == 0);
        CHECK(clock::now() - t0 >= std::chrono::milliseconds(150));
        CHECK(info.kind == HPU_ERROR_MMU_FAULT);
        CHECK(info.address == 0);
        CHECK(info.info == 0);
    }
    SECTION("nothing to wait for: other kinds, a success, events off")
    {
        const auto t0 = clock::now();
        {
            REQUIRE(hpu_device_event_fd(fx.dev) >= 0);
            Job job(fx);
            const auto &req = fx.m.jobs.at(0).req;
            fx.m.complete_jobs(-EPERM);
            fx.m.push_read(fx.fd(), err_ev(HPU_ERROR_PRIV, req.queue_id, req.seq, EPERM));
            REQUIRE(hpu_fence_error_info_wait(job.f, &info, kLong) == 0);
            CHECK(info.kind == HPU_ERROR_PRIV);
        }
        {
            Job ok(fx);
            fx.m.complete_jobs(0);
            REQUIRE(hpu_fence_error_info_wait(ok.f, &info, kLong) == 0);
            CHECK(info.error == 0);
        }
        CHECK(clock::now() - t0 < std::chrono::nanoseconds(kLong));
    }
    SECTION("C++: error_info(wait) and wait() carry the device event's info")
    {
        REQUIRE(hpu_device_event_fd(fx.dev) >= 0);
        fx.m.auto_complete = false;
        hpu_queue_t *q = nullptr;
        hpu_cmdlist_t *cl = nullptr;
        fx.queue_and_nop(q, cl);
        {
            hpu_fence_t *raw = nullptr;
            REQUIRE(hpu_queue_submit(q, cl, nullptr, 0, &raw) == 0);
            const hpu::Fence f{raw};
            const auto &req = fx.m.jobs.at(0).req;
            fx.m.complete_jobs(-EDOM);
            fx.m.push_read(fx.fd(), MockOs::error_event(HPU_ERROR_TPC_ASSERT, HPU_ENGINE_INDEX_TPC, req.queue_id,
                                                        EDOM, req.seq, 0, 5));
            std::thread late([&]() {
                std::this_thread::sleep_for(std::chrono::milliseconds(80));
                fx.m.push_read(fx.fd(), assert_event(0x100, 99, req.queue_id, req.seq));
            });
            bool threw = false;
            try {
                (void)f.wait();
            } catch (const hpu::Error &e) {
                threw = true;
                CHECK(e.info().info == 99);
                CHECK(e.info().address == 0x100);
            }
            late.join();
            CHECK(threw);
            CHECK(f.error_info(std::chrono::seconds(1)).info == 99);
        }
        hpu_cmdlist_destroy(cl);
        hpu_queue_destroy(q);
    }
}

TEST_CASE("per-submission timeout", "[libhpu][fence]")
{
    Fixture fx;
    auto [q, cl] = fx.queue_and_nop();
    hpu_fence_t *f = nullptr;

    REQUIRE(hpu_queue_submit_timeout(q, cl, nullptr, 0, 2500, &f) == 0);
    CHECK(fx.m.jobs.back().req.timeout_ms == 2500);
    CHECK(hpu_fence_destroy(f) == 0);
    REQUIRE(hpu_queue_submit_timeout(q, cl, nullptr, 0, HPU_JOB_TIMEOUT_MAX_MS, nullptr) == 0);
    CHECK(fx.m.jobs.back().req.timeout_ms == HPU_JOB_TIMEOUT_MAX_MS);
    REQUIRE(hpu_queue_submit(q, cl, nullptr, 0, nullptr) == 0);
    CHECK(fx.m.jobs.back().req.timeout_ms == 0); // the driver's default
    REQUIRE(hpu_queue_copy(q, 0x1000, 0x2000, 64, nullptr) == 0);
    CHECK(fx.m.jobs.back().req.timeout_ms == 0);

    const int calls = fx.m.ioctl_calls;
    CHECK(hpu_queue_submit_timeout(q, cl, nullptr, 0, HPU_JOB_TIMEOUT_MAX_MS + 1, &f) == -EINVAL);
    CHECK(f == nullptr);
    CHECK(fx.m.ioctl_calls == calls);

    // A job stopped for its timeout fails with -ETIMEDOUT.
    fx.m.auto_complete = false;
    REQUIRE(hpu_queue_submit_timeout(q, cl, nullptr, 0, 10, &f) == 0);
    fx.m.complete_jobs(-ETIMEDOUT);
    CHECK(hpu_fence_wait(f, 0) == -ETIMEDOUT);
    CHECK(hpu_fence_destroy(f) == 0);

    CHECK(hpu_cmdlist_destroy(cl) == 0);
    CHECK(hpu_queue_destroy(q) == 0);
    CHECK(fx.m.leaks() == 0);
    CHECK(fx.m.misuse == 0);
}

TEST_CASE("error counters", "[libhpu][counters]")
{
    Fixture fx;
    drm_hpu_info_errors &a = fx.m.errors_answer;
    std::uint64_t v = 100;
    for (__u64 *p : {&a.mmu_faults, &a.bad_packets, &a.priv_violations, &a.engine_hangs, &a.dma_bus_errors,
                             &a.ecc_correctable, &a.ecc_uncorrectable, &a.retired_pages, &a.job_timeouts,
                             &a.heartbeat_losses, &a.fw_fatal, &a.thermal_events, &a.power_events, &a.soft_resets,
                             &a.hard_resets, &a.reset_generation})
        *p = ++v;

    SECTION("every field, from INFO op ERRORS")
    {
        hpu_error_counters c{};
        c.size = sizeof(c);
        REQUIRE(hpu_device_error_counters(fx.dev, &c) == 0);
        CHECK(fx.m.last_info.op == DRM_HPU_INFO_ERRORS);
        CHECK(fx.m.last_info.size == sizeof(drm_hpu_info_errors));
        CHECK(c.size == sizeof(c));
        CHECK(c.reserved0 == 0);
        CHECK(c.mmu_faults == 101);
        CHECK(c.bad_packets == 102);
        CHECK(c.priv_violations == 103);
        CHECK(c.engine_hangs == 104);
        CHECK(c.dma_bus_errors == 105);
        CHECK(c.ecc_correctable == 106);
        CHECK(c.ecc_uncorrectable == 107);
        CHECK(c.retired_pages == 108);
        CHECK(c.job_timeouts == 109);
        CHECK(c.heartbeat_losses == 110);
        CHECK(c.fw_fatal == 111);
        CHECK(c.thermal_events == 112);
        CHECK(c.power_events == 113);
        CHECK(c.soft_resets == 114);
        CHECK(c.hard_resets == 115);
        CHECK(c.reset_generation == 116);
        std::uint64_t gen = 0;
        REQUIRE(hpu_device_reset_generation(fx.dev, &gen) == 0);
        CHECK(gen == 116);
    }
    SECTION("an older caller's smaller structure")
    {
        std::array<std::uint8_t, sizeof(hpu_error_counters)> raw{};
        raw.fill(0xcc);
        const std::uint32_t sz = offsetof(hpu_error_counters, priv_violations);
        std::memcpy(raw.data(), &sz, sizeof(sz));
        auto *c = reinterpret_cast<hpu_error_counters *>(raw.data()); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        REQUIRE(hpu_device_error_counters(fx.dev, c) == 0);
        hpu_error_counters got{};
        std::memcpy(&got, raw.data(), sz);
        CHECK(got.size == sz);
        CHECK(got.bad_packets == 102);
        CHECK(raw.at(sz) == 0xcc);
    }
    SECTION("errors")
    {
        hpu_error_counters c{};
        c.size = 0;
        CHECK(hpu_device_error_counters(fx.dev, &c) == -EINVAL);
        CHECK(hpu_device_error_counters(nullptr, &c) == -EINVAL);
        c.size = sizeof(c);
        fx.m.answer_size = sizeof(drm_hpu_info_errors) - 8; // an older kernel's answer
        CHECK(hpu_device_error_counters(fx.dev, &c) == -EPROTO);
        fx.m.answer_size = -1;
        fx.m.ioctl_fail = -EINVAL; // a kernel without INFO ERRORS
        CHECK(hpu_device_error_counters(fx.dev, &c) == -EINVAL);
        std::uint64_t gen = 0;
        CHECK(hpu_device_reset_generation(fx.dev, nullptr) == -EINVAL);
        CHECK(hpu_device_reset_generation(fx.dev, &gen) == -EINVAL);
    }
}

TEST_CASE("reset through the driver's sysfs attribute", "[libhpu][reset]")
{
    Fixture fx;
    fx.m.files[kResetPath] = "";

    SECTION("soft and hard write the kernel's words; hard loses this file")
    {
        REQUIRE(hpu_device_reset(fx.dev, HPU_RESET_SOFT) == 0);
        REQUIRE(fx.m.written.size() == 1);
        CHECK(fx.m.written[0].first == kResetPath);
        CHECK(fx.m.written[0].second == "soft\n");
        CHECK(hpu_device_is_lost(fx.dev) == 0);
        REQUIRE(hpu_device_reset(fx.dev, HPU_RESET_HARD) == 0);
        CHECK(fx.m.written[1].second == "hard\n");
        CHECK(hpu_device_is_lost(fx.dev) == 1);
    }
    SECTION("argument checks, before any system call")
    {
        CHECK(hpu_device_reset(nullptr, 0) == -EINVAL);
        CHECK(hpu_device_reset(fx.dev, 2) == -EINVAL);
        CHECK(fx.m.written.empty());
    }
    SECTION("each kernel error is returned as is")
    {
        const int err = GENERATE(-EBUSY, -EIO, -ENODEV, -EACCES, -EPERM, -EINVAL);
        fx.m.write_fail[kResetPath] = err;
        CHECK(hpu_device_reset(fx.dev, HPU_RESET_HARD) == err);
        CHECK(hpu_device_is_lost(fx.dev) == 0); // nothing happened
    }
    SECTION("no attribute: the driver cannot reset")
    {
        fx.m.files.erase(kResetPath);
        CHECK(hpu_device_reset(fx.dev, HPU_RESET_SOFT) == -EOPNOTSUPP);
    }
}

TEST_CASE("reopen after a hard reset", "[libhpu][reset]")
{
    Fixture fx;
    const int old_fd = fx.fd();
    CHECK(hpu_device_reopen(nullptr) == -EINVAL);

    SECTION("old objects are stale: -ENODEV without a system call; destroy frees them")
    {
        REQUIRE(hpu_device_event_fd(fx.dev) >= 0);
        hpu_buffer_t *host = nullptr;
        hpu_buffer_t *hbm = nullptr;
        hpu_queue_t *q = nullptr;
        hpu_cmdlist_t *cl = nullptr;
        hpu_fence_t *done = nullptr;
        hpu_fence_t *pending = nullptr;
        REQUIRE(hpu_buffer_create(fx.dev, 4096, HPU_MEM_HOST, &host) == 0);
        REQUIRE(hpu_buffer_create(fx.dev, 4096, HPU_MEM_DEVICE, &hbm) == 0);
        fx.queue_and_nop(q, cl);
        REQUIRE(hpu_queue_submit(q, cl, nullptr, 0, &done) == 0);
        REQUIRE(hpu_fence_wait(done, 0) == 0); // result cached
        fx.m.auto_complete = false;
        REQUIRE(hpu_queue_submit(q, cl, nullptr, 0, &pending) == 0);

        fx.m.hard_reset(1);
        CHECK(hpu_device_process_events(fx.dev, nullptr, nullptr) == 1);
        CHECK(hpu_device_is_lost(fx.dev) == 1);
        CHECK(hpu_queue_copy(q, 0x1000, 0x2000, 8, nullptr) == -ENODEV); // the kernel says so

        REQUIRE(hpu_device_reopen(fx.dev) == 0);
        CHECK(hpu_device_is_lost(fx.dev) == 0);
        CHECK(fx.fd() != old_fd);
        CHECK(fx.m.open_fds.count(old_fd) == 0);    // old file closed
        CHECK(fx.m.events_on(fx.fd()));              // events re-enabled
        const std::map<unsigned long, int> before = fx.m.request_calls;

        int dmabuf = -1;
        CHECK(hpu_buffer_export_fd(host, &dmabuf) == -ENODEV);
        CHECK(hpu_queue_submit(q, cl, nullptr, 0, nullptr) == -ENODEV);
        CHECK(hpu_queue_copy(q, 0x1000, 0x2000, 8, nullptr) == -ENODEV);
        CHECK(hpu_cmd_nop(cl) == -ENODEV);
        CHECK(hpu_cmd_copy(cl, 0x1000, 0x2000, 8) == -ENODEV);
        CHECK(hpu_cmdlist_reset(cl) == -ENODEV);
        CHECK(hpu_fence_wait(pending, 0) == -ENODEV);
        CHECK(hpu_fence_status(pending) == -ENODEV);
        CHECK(hpu_fence_wait(done, 0) == 0); // known before: still reported
        hpu_error_info info{};
        info.size = sizeof(info);
        CHECK(hpu_fence_error_info(pending, &info) == -ENODEV);
        CHECK(hpu_fence_export_fd(pending, &dmabuf) == -ENODEV);
        std::uint64_t ns = 1;
        CHECK(hpu_fence_signal_time(pending, &ns) == -ENODEV);
        CHECK(hpu_fence_signal_time(done, &ns) == -ENODEV); // its result is known, its syncobj gone
        CHECK(ns == 0);

        const int munmaps = fx.m.munmap_calls;
        CHECK(hpu_fence_destroy(done) == 0);
        CHECK(hpu_fence_destroy(pending) == 0);
        CHECK(hpu_cmdlist_destroy(cl) == 0);
        CHECK(hpu_queue_destroy(q) == 0);
        CHECK(hpu_buffer_destroy(host) == 0);
        CHECK(hpu_buffer_destroy(hbm) == 0);
        CHECK(fx.m.munmap_calls == munmaps + 2); // host buffer and the list's command buffer
        CHECK(fx.m.request_calls == before);     // nothing sent to the new file
        CHECK(fx.m.misuse == 0);

        // The new file works.
        hpu_buffer_t *nb = nullptr;
        REQUIRE(hpu_buffer_create(fx.dev, 4096, HPU_MEM_HOST, &nb) == 0);
        CHECK(hpu_buffer_destroy(nb) == 0);
    }
    SECTION("device memory of the old file: hpu_buffer_map -ENODEV, a mapping made before stays")
    {
        hpu_buffer_t *unmapped = nullptr;
        hpu_buffer_t *mapped = nullptr;
        REQUIRE(hpu_buffer_create(fx.dev, 4096, HPU_MEM_DEVICE, &unmapped) == 0);
        REQUIRE(hpu_buffer_create(fx.dev, 4096, HPU_MEM_DEVICE, &mapped) == 0);
        void *before = nullptr;
        REQUIRE(hpu_buffer_map(mapped, &before) == 0);
        REQUIRE(hpu_device_reopen(fx.dev) == 0);
        const int ioctls = fx.m.ioctl_calls;
        const int mmaps = fx.m.mmap_calls;
        void *p = &fx;
        CHECK(hpu_buffer_map(unmapped, &p) == -ENODEV);
        CHECK(p == nullptr);
        CHECK(hpu_buffer_host_ptr(unmapped) == nullptr);
        void *again = nullptr;
        CHECK(hpu_buffer_map(mapped, &again) == 0); // hpu.h: the old mapping until destroy
        CHECK(again == before);
        CHECK(fx.m.ioctl_calls == ioctls);
        CHECK(fx.m.mmap_calls == mmaps);
        const int munmaps = fx.m.munmap_calls;
        CHECK(hpu_buffer_destroy(unmapped) == 0);
        CHECK(hpu_buffer_destroy(mapped) == 0);
        CHECK(fx.m.munmap_calls == munmaps + 1);
    }
    SECTION("the handle-number space of the new file is not touched by old handles")
    {
        hpu_buffer_t *old = nullptr;
        REQUIRE(hpu_buffer_create(fx.dev, 4096, HPU_MEM_DEVICE, &old) == 0);
        REQUIRE(hpu_device_reopen(fx.dev) == 0); // reopen without a reset is allowed too
        const auto gem_before = fx.m.gem.size();
        CHECK(hpu_buffer_destroy(old) == 0);
        CHECK(fx.m.gem.size() == gem_before); // no GEM_CLOSE went to the new file
    }
    SECTION("the device is gone: -ENODEV, handle unchanged")
    {
        fx.m.dirs["/sys/class/accel"].clear();
        CHECK(hpu_device_reopen(fx.dev) == -ENODEV);
        CHECK(fx.fd() == old_fd);
    }
    SECTION("the open fails: its error, handle unchanged")
    {
        fx.m.open_fail["/dev/accel/accel0"] = -EACCES;
        CHECK(hpu_device_reopen(fx.dev) == -EACCES);
        CHECK(fx.fd() == old_fd);
        CHECK(fx.m.open_fds.count(old_fd) == 1);
    }
    SECTION("re-enabling events fails: the new file is closed, handle unchanged")
    {
        REQUIRE(hpu_device_event_fd(fx.dev) >= 0);
        fx.m.request_fail[DRM_IOCTL_HPU_EVENTS] = -ENOMEM;
        const auto opened = fx.m.open_fds.size();
        CHECK(hpu_device_reopen(fx.dev) == -ENOMEM);
        CHECK(fx.fd() == old_fd);
        CHECK(fx.m.open_fds.size() == opened);
    }
    SECTION("the accel index changed: found again by PCI address")
    {
        fx.m.dirs["/sys/class/accel"].clear();
        fx.m.add_hpu(5, "0000:00:03.0", make_answer("SER-A", 1ULL << 31, 3));
        REQUIRE(hpu_device_reopen(fx.dev) == 0);
        CHECK(fx.m.open_fds.at(fx.fd()) == "/dev/accel/accel5");
        hpu_device_info di{};
        di.size = sizeof(di);
        REQUIRE(hpu_device_get_info(fx.dev, &di) == 0);
        CHECK(di.index == 5);
    }
}

TEST_CASE("the callback thread", "[libhpu][events][thread]")
{
    Fixture fx;
    Sink sink;
    CHECK(hpu_device_set_error_callback(nullptr, &Sink::cb, &sink) == -EINVAL);

    SECTION("delivers events as they come, stops and joins cleanly")
    {
        REQUIRE(hpu_device_set_error_callback(fx.dev, &Sink::cb, &sink) == 0);
        CHECK(fx.m.events_on(fx.fd()));
        CHECK(fx.m.eventfds() == 1);
        fx.m.push_read(fx.fd(), err_ev(HPU_ERROR_MMU_FAULT, 1, 1));
        REQUIRE(sink.wait_for(1));
        fx.m.push_read(fx.fd(), MockOs::cat({err_ev(HPU_ERROR_ECC, 0, 0), MockOs::reset_event(false, 0, 1)}));
        REQUIRE(sink.wait_for(3));
        CHECK(sink.events[0].kind == HPU_ERROR_MMU_FAULT);
        CHECK(sink.events[1].kind == HPU_ERROR_ECC);
        CHECK(sink.events[2].type == HPU_EVENT_RESET);
        REQUIRE(hpu_device_set_error_callback(fx.dev, nullptr, nullptr) == 0);
        CHECK(fx.m.eventfds() == 0);
        // Stopped: nothing more is delivered, events stay queued.
        fx.m.push_read(fx.fd(), err_ev(HPU_ERROR_ECC, 0, 0));
        CHECK(hpu_device_process_events(fx.dev, nullptr, nullptr) == 1);
        CHECK(sink.count() == 3);
    }
    SECTION("hpu_close stops the thread")
    {
        REQUIRE(hpu_device_set_error_callback(fx.dev, &Sink::cb, &sink) == 0);
        CHECK(hpu_close(fx.dev) == 0);
        fx.dev = nullptr;
        CHECK(fx.m.eventfds() == 0);
        CHECK(fx.m.leaks() == 0);
    }
    SECTION("start and stop many times, replacing the callback")
    {
        Sink other;
        for (int i = 0; i < 50; ++i) {
            REQUIRE(hpu_device_set_error_callback(fx.dev, &Sink::cb, (i % 2) != 0 ? &sink : &other) == 0);
            if (i % 5 == 0)
                fx.m.push_read(fx.fd(), err_ev(HPU_ERROR_ECC, 0, static_cast<std::uint64_t>(i)));
        }
        // The last one runs (i = 49: sink); once replaced, a callback is never called again.
        const std::size_t other_count = other.count();
        fx.m.push_read(fx.fd(), err_ev(HPU_ERROR_PRIV, 1, 1000));
        bool seen = false;
        for (int i = 0; i < 500 && !seen; ++i) {
            {
                const std::lock_guard<std::mutex> lock(sink.mu);
                seen = std::any_of(sink.events.begin(), sink.events.end(), [](const hpu_event &e) { return e.seq == 1000; });
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        CHECK(seen);
        CHECK(other.count() == other_count);
        CHECK(sink.count() + other.count() == 11); // ten ECC events and the last, each exactly once
        REQUIRE(hpu_device_set_error_callback(fx.dev, nullptr, nullptr) == 0);
        CHECK(fx.m.eventfds() == 0);
    }
    SECTION("calls from the callback that would join the thread: -EDEADLK")
    {
        sink.action = [](hpu_device_t *d) {
            const int a = hpu_device_set_error_callback(d, nullptr, nullptr);
            const int b = hpu_device_reopen(d);
            const int c = hpu_close(d);
            const int lost = hpu_device_is_lost(d);
            return a == -EDEADLK && b == -EDEADLK && c == -EDEADLK && lost == 0 ? 1 : 0;
        };
        REQUIRE(hpu_device_set_error_callback(fx.dev, &Sink::cb, &sink) == 0);
        fx.m.push_read(fx.fd(), err_ev(HPU_ERROR_ECC, 0, 0));
        REQUIRE(sink.wait_for(1));
        CHECK(sink.results.at(0) == 1);
    }
    SECTION("fence error information from inside the callback")
    {
        Job job(fx);
        fx.m.complete_jobs(-EFAULT);
        const auto &req = fx.m.jobs.at(0).req;
        hpu_fence_t *f = job.f;
        sink.action = [f](hpu_device_t *) {
            hpu_error_info i{};
            i.size = sizeof(i);
            return hpu_fence_error_info(f, &i) == 0 ? static_cast<int>(i.kind) : -1;
        };
        REQUIRE(hpu_device_set_error_callback(fx.dev, &Sink::cb, &sink) == 0);
        fx.m.push_read(fx.fd(), err_ev(HPU_ERROR_MMU_FAULT, req.queue_id, req.seq));
        REQUIRE(sink.wait_for(1));
        CHECK(sink.results.at(0) == HPU_ERROR_MMU_FAULT);
        REQUIRE(hpu_device_set_error_callback(fx.dev, nullptr, nullptr) == 0);
    }
    SECTION("events another reader took are still delivered by the thread")
    {
        Job job(fx);
        fx.m.complete_jobs(-EFAULT);
        const auto &req = fx.m.jobs.at(0).req;
        REQUIRE(hpu_device_set_error_callback(fx.dev, &Sink::cb, &sink) == 0);
        // Several rounds: whoever reads first, the thread delivers each once.
        for (std::uint64_t i = 0; i < 20; ++i) {
            fx.m.push_read(fx.fd(), err_ev(HPU_ERROR_MMU_FAULT, req.queue_id, req.seq));
            hpu_error_info info{};
            info.size = sizeof(info);
            CHECK(hpu_fence_error_info(job.f, &info) == 0);
        }
        REQUIRE(sink.wait_for(20));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        CHECK(sink.count() == 20);
    }
    SECTION("a hard reset: the callback sees it, the device reopens, the thread continues")
    {
        REQUIRE(hpu_device_set_error_callback(fx.dev, &Sink::cb, &sink) == 0);
        fx.m.hard_reset(3);
        REQUIRE(sink.wait_for(1));
        CHECK(sink.events[0].type == HPU_EVENT_RESET);
        CHECK(sink.events[0].hard == 1);
        CHECK(sink.events[0].generation == 3);
        CHECK(hpu_device_is_lost(fx.dev) == 1);
        REQUIRE(hpu_device_reopen(fx.dev) == 0);
        CHECK(fx.m.eventfds() == 1);
        CHECK(fx.m.events_on(fx.fd()));
        fx.m.push_read(fx.fd(), err_ev(HPU_ERROR_ECC, 0, 0));
        REQUIRE(sink.wait_for(2));
        CHECK(sink.events[1].kind == HPU_ERROR_ECC);
    }
    SECTION("the thread ends by itself when the file fails; stop still joins")
    {
        REQUIRE(hpu_device_set_error_callback(fx.dev, &Sink::cb, &sink) == 0);
        fx.m.fail_next_read(fx.fd(), -ENODEV);
        for (int i = 0; i < 500 && hpu_device_is_lost(fx.dev) == 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        CHECK(hpu_device_is_lost(fx.dev) == 1);
        CHECK(hpu_device_set_error_callback(fx.dev, nullptr, nullptr) == 0);
        CHECK(fx.m.eventfds() == 0);
    }
    SECTION("failures to start leave nothing behind")
    {
        fx.m.request_fail[DRM_IOCTL_HPU_EVENTS] = -ENOTTY;
        CHECK(hpu_device_set_error_callback(fx.dev, &Sink::cb, &sink) == -ENOTTY);
        fx.m.request_fail.clear();
        fx.m.eventfd_fail = -EMFILE;
        CHECK(hpu_device_set_error_callback(fx.dev, &Sink::cb, &sink) == -EMFILE);
        CHECK(fx.m.eventfds() == 0);
        fx.m.eventfd_fail = 0;
        CHECK(hpu_device_set_error_callback(fx.dev, &Sink::cb, &sink) == 0);
        CHECK(fx.m.eventfds() == 1);
    }
}

TEST_CASE("C++: typed errors, callback, timeouts, counters", "[cxx][events]")
{
    MockOs m;
    m.add_hpu(0, "0000:00:03.0", make_answer("SER-A", 1ULL << 31, 3));
    const ScopedMock scoped(m);
    m.files[kResetPath] = "";

    SECTION("a failed job throws hpu::Error with its kind")
    {
        auto dev = hpu::Device::open(0);
        (void)dev.event_fd();
        auto q = hpu::Queue::create(dev, 0);
        auto cl = hpu::CommandList::create(dev);
        cl.nop();
        m.auto_complete = false;
        auto f = q.submit(cl, std::chrono::milliseconds(1500));
        CHECK(m.jobs.back().req.timeout_ms == 1500);
        const auto &req = m.jobs.back().req;
        m.complete_jobs(-EFAULT);
        m.push_read(dev.fd(), MockOs::error_event(HPU_ERROR_MMU_FAULT, 1, req.queue_id, EFAULT, req.seq, 0xabc000, 7));
        try {
            (void)f.wait();
            FAIL("no exception");
        } catch (const hpu::Error &e) {
            CHECK(e.errnum() == EFAULT);
            CHECK(e.kind() == HPU_ERROR_MMU_FAULT);
            CHECK(e.info().address == 0xabc000);
            CHECK(e.info().engine == 1);
            CHECK_FALSE(e.device_lost());
            CHECK(std::string(e.what()) ==
                  "HPU job: Bad address (unmapped memory or a device MMU fault) (mmu-fault, engine 1, address 0xabc000)");
        }
        CHECK(f.error_info().kind == HPU_ERROR_MMU_FAULT);
        CHECK_THROWS_AS(q.submit(cl, std::chrono::hours(2)), hpu::Error);
    }
    SECTION("without an event: kind none, the plain message")
    {
        auto dev = hpu::Device::open(0);
        auto q = hpu::Queue::create(dev, 0);
        m.job_error = -ECANCELED;
        auto f = q.write_value(0x1000, 1);
        try {
            (void)f.wait();
            FAIL("no exception");
        } catch (const hpu::Error &e) {
            CHECK(e.kind() == HPU_ERROR_NONE);
            CHECK(std::string(e.what()) == "HPU job: The job was cancelled (device reset or queue destroyed)");
        }
        const hpu::Error lost(-ENODEV, "x");
        CHECK(lost.device_lost());
        CHECK(lost.info().error == -ENODEV);
    }
    SECTION("std::function callback, moved with the device, stopped by reset()")
    {
        std::mutex mu;
        std::condition_variable cv;
        std::vector<std::uint32_t> kinds;
        auto dev = hpu::Device::open(0);
        dev.set_error_callback([&](const hpu::Event &e) {
            const std::lock_guard<std::mutex> lock(mu);
            kinds.push_back(e.kind);
            cv.notify_all();
            throw std::runtime_error("ignored by the library");
        });
        hpu::Device moved(std::move(dev));
        m.push_read(moved.fd(), MockOs::cat({MockOs::error_event(HPU_ERROR_ECC, 0, 0, 0, 0, 0, 0),
                                             MockOs::error_event(HPU_ERROR_PRIV, 0, 1, EPERM, 1, 0, 0)}));
        {
            std::unique_lock<std::mutex> lock(mu);
            REQUIRE(cv.wait_for(lock, std::chrono::seconds(5), [&]() { return kinds.size() >= 2; }));
        }
        CHECK(kinds == std::vector<std::uint32_t>{HPU_ERROR_ECC, HPU_ERROR_PRIV});
        moved.set_error_callback({});
        moved.reset();
        CHECK(m.eventfds() == 0);
        CHECK(m.leaks() == 0);
    }
    SECTION("process_events, counters, generation, lost, reopen, hw_reset")
    {
        auto dev = hpu::Device::open(0);
        m.errors_answer.job_timeouts = 5;
        m.errors_answer.reset_generation = 2;
        CHECK(dev.error_counters().job_timeouts == 5);
        CHECK(dev.reset_generation() == 2);
        std::vector<std::uint32_t> types;
        m.push_read(dev.fd(), MockOs::reset_event(true, 3, 0));
        CHECK(dev.process_events([&](const hpu::Event &e) { types.push_back(e.type); }) == 1);
        CHECK(types == std::vector<std::uint32_t>{HPU_EVENT_RESET});
        CHECK(dev.is_lost());
        dev.reopen();
        CHECK_FALSE(dev.is_lost());
        dev.hw_reset();
        CHECK(m.written.back().second == "soft\n");
        m.write_fail[kResetPath] = -EBUSY;
        try {
            dev.hw_reset(true);
            FAIL("no exception");
        } catch (const hpu::Error &e) {
            CHECK(e.errnum() == EBUSY);
        }
    }
    SECTION("release() removes the callback first")
    {
        auto dev = hpu::Device::open(0);
        dev.set_error_callback([](const hpu::Event &) {});
        CHECK(m.eventfds() == 1);
        hpu_device_t *raw = dev.release();
        CHECK(m.eventfds() == 0);
        CHECK(hpu_close(raw) == 0);
    }
}
