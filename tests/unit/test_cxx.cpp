// SPDX-License-Identifier: MIT
// The C++ RAII wrappers (hpu.hpp) against a mocked kernel.
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <string>
#include <type_traits>
#include <utility>

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
