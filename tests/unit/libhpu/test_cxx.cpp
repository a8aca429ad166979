// SPDX-License-Identifier: MIT
// The C++ RAII wrappers (hpu.hpp) against a mocked kernel.
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "hpu/hpu.hpp"
#include "mock_os.h"

using hpu::test::make_answer;
using hpu::test::MockOs;
using hpu::test::ScopedMock;

static_assert(!std::is_copy_constructible_v<hpu::Device>);
static_assert(!std::is_copy_assignable_v<hpu::Device>);
static_assert(std::is_nothrow_move_constructible_v<hpu::Device>);
static_assert(std::is_nothrow_move_assignable_v<hpu::Device>);

namespace {
void populate(MockOs &m)
{
    m.add_hpu(0, "0000:00:03.0", make_answer("SER-A", 1ULL << 31, 3));
    m.add_hpu(1, "0000:00:04.0", make_answer("SER-B", 1ULL << 32, 4, 4));
}
} // namespace

TEST_CASE("Device closes exactly once", "[cxx]")
{
    MockOs m;
    populate(m);
    const ScopedMock scoped(m);

    SECTION("destruction")
    {
        int fd = -1;
        {
            const auto dev = hpu::Device::open(0);
            fd = dev.fd();
            CHECK(m.close_calls == 0);
        }
        CHECK(m.close_calls == 1);
        CHECK(m.closed_fds == std::vector<int>{fd});
    }
    SECTION("move construction transfers ownership")
    {
        {
            auto a = hpu::Device::open(0);
            hpu_device_t *raw = a.get();
            hpu::Device b(std::move(a));
            CHECK_FALSE(a); // NOLINT(bugprone-use-after-move,hicpp-invalid-access-moved)
            CHECK(b.get() == raw);
        }
        CHECK(m.close_calls == 1);
    }
    SECTION("move assignment closes the overwritten device")
    {
        auto a = hpu::Device::open(0);
        auto b = hpu::Device::open(1);
        const int fd_b = b.fd();
        const int fd_a = a.fd();
        b = std::move(a);
        CHECK(m.close_calls == 1);
        CHECK(m.closed_fds == std::vector<int>{fd_b});
        CHECK(b.fd() == fd_a);
        b.reset();
        CHECK(m.close_calls == 2);
        b.reset();
        CHECK(m.close_calls == 2);
    }
    SECTION("release gives up ownership")
    {
        hpu_device_t *raw = nullptr;
        {
            auto a = hpu::Device::open(1);
            raw = a.release();
        }
        CHECK(m.close_calls == 0);
        CHECK(hpu_close(raw) == 0);
        CHECK(m.close_calls == 1);
    }
}

TEST_CASE("C++ discovery and info", "[cxx]")
{
    MockOs m;
    populate(m);
    const ScopedMock scoped(m);

    CHECK(hpu::device_count() == 2);
    const auto list = hpu::list_devices();
    REQUIRE(list.size() == 2);
    CHECK(list[1].index == 1);
    CHECK(list[1].pci_addr == "0000:00:04.0");
    CHECK(list[1].node == "/dev/accel/accel1");

    const auto dev = hpu::Device::open_pci("0000:00:04.0");
    const auto info = dev.info();
    CHECK(std::string(info.serial) == "SER-B");
    CHECK(info.hbm_size == (1ULL << 32));
    CHECK(info.num_nic == 4);
}

TEST_CASE("C++ errors carry errno and a message", "[cxx]")
{
    MockOs m;
    populate(m);
    const ScopedMock scoped(m);

    try {
        (void)hpu::Device::open(9);
        FAIL("no exception");
    } catch (const hpu::Error &e) {
        CHECK(e.errnum() == ENODEV);
        CHECK(e.code() == std::errc::no_such_device);
        CHECK_THAT(e.what(), Catch::Matchers::Equals("opening HPU 9: No such HPU device"));
    }

    m.open_fail["/dev/accel/accel0"] = -EACCES;
    try {
        (void)hpu::Device::open_pci("0000:00:03.0");
        FAIL("no exception");
    } catch (const hpu::Error &e) {
        CHECK(e.errnum() == EACCES);
        CHECK_THAT(e.what(), Catch::Matchers::StartsWith("opening HPU at PCI 0000:00:03.0: Permission denied"));
    }

    const auto dev = hpu::Device::open(1);
    m.ioctl_fail = -EFAULT;
    try {
        (void)dev.info();
        FAIL("no exception");
    } catch (const hpu::Error &e) {
        CHECK(e.errnum() == EFAULT);
    }

    m.list_fail["/sys/class/accel"] = -EIO;
    CHECK_THROWS_AS(hpu::list_devices(), hpu::Error);
    CHECK_THROWS_AS(hpu::device_count(), hpu::Error);

    const hpu::Device empty;
    CHECK_THROWS_AS(empty.info(), hpu::Error);
    CHECK_THROWS_AS(empty.fd(), hpu::Error);
}

static_assert(!std::is_copy_constructible_v<hpu::Buffer>);
static_assert(!std::is_copy_assignable_v<hpu::Buffer>);
static_assert(std::is_nothrow_move_constructible_v<hpu::Buffer>);
static_assert(std::is_nothrow_move_assignable_v<hpu::Buffer>);
static_assert(!std::is_copy_constructible_v<hpu::Queue>);
static_assert(std::is_nothrow_move_constructible_v<hpu::Queue>);
static_assert(std::is_nothrow_move_assignable_v<hpu::Queue>);
static_assert(!std::is_copy_constructible_v<hpu::CommandList>);
static_assert(std::is_nothrow_move_constructible_v<hpu::CommandList>);
static_assert(std::is_nothrow_move_assignable_v<hpu::CommandList>);
static_assert(!std::is_copy_constructible_v<hpu::Fence>);
static_assert(!std::is_copy_assignable_v<hpu::Fence>);
static_assert(std::is_nothrow_move_constructible_v<hpu::Fence>);
static_assert(std::is_nothrow_move_assignable_v<hpu::Fence>);

TEST_CASE("C++ buffers, queues, command lists and fences release exactly once", "[cxx]")
{
    MockOs m;
    populate(m);
    const ScopedMock scoped(m);
    {
        const auto dev = hpu::Device::open(0);
        CHECK(dev.dma_engines() == 8);
        CHECK(dev.memory_info().size == sizeof(hpu_memory_info));

        auto host = hpu::Buffer::create(dev, 4096, HPU_MEM_HOST);
        auto hbm = hpu::Buffer::create(dev, 1, HPU_MEM_DEVICE);
        REQUIRE(host.host_ptr() != nullptr);
        CHECK(hbm.host_ptr() == nullptr);
        CHECK(hbm.size() == 2U << 20);
        CHECK(hbm.va() != 0);
        const int fd = hbm.export_fd();
        {
            const auto imported = hpu::Buffer::import_fd(dev, fd, hbm.size());
            CHECK(imported.va() != hbm.va());
        }
        CHECK(m.close(fd) == 0);

        auto q = hpu::Queue::create(dev, 1);
        auto cl = hpu::CommandList::create(dev);
        cl.nop().copy(hbm.va(), host.va(), 4096).memset(hbm.va(), 0, 64).write_value(hbm.va(), 1);
        cl.sob_update(0, HPU_SOB_ADD, 1).wait_sob(0, 1);
        CHECK(cl.bytes() == 8 + 32 + 32 + 16 + 16 + 16);
        auto f1 = q.submit(cl);
        auto f2 = q.submit(cl, {&f1});
        CHECK(f2.wait());
        CHECK(f1.status() == 0);
        cl.clear();
        CHECK(cl.bytes() == 0);

        // Move assignment over a live fence destroys it.
        const std::size_t syncobjs = m.syncobjs.size();
        f1 = std::move(f2);
        CHECK(m.syncobjs.size() == syncobjs - 1);
        CHECK_FALSE(f2); // NOLINT(bugprone-use-after-move,hicpp-invalid-access-moved)

        auto f3 = q.copy(hbm.va(), host.va(), 64);
        auto f4 = q.memset(hbm.va(), 0x11, 64);
        auto f5 = q.write_value(hbm.va(), 7);
        const int sf = f5.export_fd();
        const auto f6 = hpu::Fence::import_fd(dev, sf);
        CHECK(m.close(sf) == 0);
        CHECK(f6.wait(std::chrono::milliseconds(1)));

        hpu::Buffer moved(std::move(host));
        CHECK_FALSE(host); // NOLINT(bugprone-use-after-move,hicpp-invalid-access-moved)
        CHECK(moved.host_ptr() != nullptr);
        hpu_buffer_t *raw = moved.release();
        CHECK(hpu_buffer_destroy(raw) == 0);
    }
    CHECK(m.leaks() == 0);
    CHECK(m.misuse == 0);
}

TEST_CASE("C++ Buffer::map: device memory, a user pointer, an import; throws on a device that cannot map", "[cxx]")
{
    MockOs m;
    populate(m);
    const ScopedMock scoped(m);
    {
        const auto dev = hpu::Device::open(0);
        auto hbm = hpu::Buffer::create(dev, 1, HPU_MEM_DEVICE);
        void *p = hbm.map();
        CHECK(p != nullptr);
        CHECK(hbm.host_ptr() == p);
        CHECK(hbm.map() == p);

        std::vector<std::uint8_t> mem(4096);
        const auto user = hpu::Buffer::from_user(dev, mem.data(), mem.size());
        CHECK(user.map() == mem.data());

        const int fd = hbm.export_fd();
        {
            const auto imported = hpu::Buffer::import_fd(dev, fd, hbm.size());
            CHECK(imported.map() != nullptr);
        }
        CHECK(m.close(fd) == 0);

        m.hbm_mmap = false;
        const auto other = hpu::Buffer::create(dev, 1, HPU_MEM_DEVICE);
        try {
            (void)other.map();
            FAIL("map() of device memory on a device that cannot map it did not throw");
        } catch (const hpu::Error &e) {
            CHECK(e.errnum() == EOPNOTSUPP);
        }
        CHECK(other.host_ptr() == nullptr);
    }
    CHECK(m.leaks() == 0);
    CHECK(m.misuse == 0);
}

TEST_CASE("C++ fence waits: timeouts and job errors", "[cxx]")
{
    MockOs m;
    populate(m);
    const ScopedMock scoped(m);
    {
        const auto dev = hpu::Device::open(0);
        auto q = hpu::Queue::create(dev, 0);
        m.auto_complete = false;
        const auto f = q.write_value(0x100000000ULL, 1);
        const std::int64_t t0 = m.now_ns;
        CHECK_FALSE(f.wait(std::chrono::microseconds(5)));
        CHECK(m.wait_deadlines.back() == t0 + 5000);
        CHECK_FALSE(f.wait(std::chrono::nanoseconds(-1)));
        CHECK(f.status() == 1);
        m.complete_jobs(-EFAULT);
        try {
            (void)f.wait();
            FAIL("no exception");
        } catch (const hpu::Error &e) {
            CHECK(e.errnum() == EFAULT);
            CHECK_THAT(e.what(), Catch::Matchers::StartsWith("HPU job: Bad address"));
        }
        CHECK(f.status() == -EFAULT);

        CHECK_THROWS_AS(hpu::Queue::create(dev, 99), hpu::Error);
        CHECK_THROWS_AS(hpu::Buffer::create(dev, 0, HPU_MEM_HOST), hpu::Error);
        auto cl = hpu::CommandList::create(dev);
        CHECK_THROWS_AS(cl.sob_update(32, HPU_SOB_SET, 0), hpu::Error);
        CHECK_THROWS_AS(q.submit(cl), hpu::Error); // empty
        const hpu::Fence none;
        CHECK_THROWS_AS((void)none.status(), hpu::Error);
        CHECK_THROWS_AS((void)none.wait(), hpu::Error);
        CHECK_THROWS_AS((void)none.signal_time(), hpu::Error);
        const auto g = q.write_value(0x100000000ULL, 2);
        CHECK_FALSE(g.signal_time().has_value()); // pending
        m.complete_jobs();
        m.jobs.back().fence->timestamp_ns = 4242;
        CHECK(g.signal_time() == std::optional<std::uint64_t>(4242));
        m.jobs.front().fence->timestamp_ns = 4000;
        CHECK(f.signal_time() == std::optional<std::uint64_t>(4000)); // failed: a time all the same
        m.on_wait = [&m]() { m.complete_jobs(); };
    }
    CHECK(m.leaks() == 0);
    CHECK(m.misuse == 0);
}
