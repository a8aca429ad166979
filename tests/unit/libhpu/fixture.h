// SPDX-License-Identifier: MIT
// Shared set-up of libhpu's unit tests: a MockOs installed for the lifetime
// of a fixture, populated with HPUs answering INFO, and one device opened.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_FIXTURE_H
#define HPU_TESTS_FIXTURE_H

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include <catch2/catch_test_macros.hpp>

#include "hpu/hpu.h"
#include "mock_os.h"

namespace hpu::test {

// Two HPUs (8 DMA engines each, 2 GiB of HBM) at 0000:00:03.0 and
// 0000:00:04.0.
inline void add_two_hpus(MockOs &m)
{
    m.add_hpu(0, "0000:00:03.0", make_answer("SER-A", 1ULL << 31, 3));
    m.add_hpu(1, "0000:00:04.0", make_answer("SER-B", 1ULL << 31, 4));
}

// A mock with two HPUs (add_two_hpus) and the first one open; closed
// (unchecked) at the end.
struct Fixture {
    MockOs m;
    ScopedMock scoped{m};
    hpu_device_t *dev = nullptr;
    Fixture()
    {
        add_two_hpus(m);
        REQUIRE(hpu_open_by_index(0, &dev) == 0);
    }
    Fixture(const Fixture &) = delete;
    Fixture &operator=(const Fixture &) = delete;
    Fixture(Fixture &&) = delete;
    Fixture &operator=(Fixture &&) = delete;
    ~Fixture() { hpu_close(dev); }

    // A DMA queue (priority 0) and a command list holding one NOP.
    void queue_and_nop(hpu_queue_t *&q, hpu_cmdlist_t *&cl) const
    {
        REQUIRE(hpu_queue_create(dev, HPU_ENGINE_DMA, 0, &q) == 0);
        REQUIRE(hpu_cmdlist_create(dev, &cl) == 0);
        REQUIRE(hpu_cmd_nop(cl) == 0);
    }
    [[nodiscard]] std::pair<hpu_queue_t *, hpu_cmdlist_t *> queue_and_nop() const
    {
        hpu_queue_t *q = nullptr;
        hpu_cmdlist_t *cl = nullptr;
        queue_and_nop(q, cl);
        return {q, cl};
    }

    [[nodiscard]] int fd() const { return hpu_device_get_fd(dev); }

    // Records with rec into a fresh list, submits it on a new queue of
    // engine class cls and returns the command buffer the kernel received;
    // inspect (if any) runs before the list and queue are destroyed, while
    // what the packets name (descriptors) is still mapped.
    template <typename Rec>
    std::vector<std::uint8_t> recorded(Rec &&rec, std::uint32_t cls = HPU_ENGINE_DMA,
                                       const std::function<void()> &inspect = {})
    {
        hpu_cmdlist_t *cl = nullptr;
        hpu_queue_t *q = nullptr;
        REQUIRE(hpu_cmdlist_create(dev, &cl) == 0);
        REQUIRE(hpu_queue_create(dev, cls, 0, &q) == 0);
        rec(cl);
        REQUIRE(hpu_queue_submit(q, cl, nullptr, 0, nullptr) == 0);
        std::vector<std::uint8_t> b = m.jobs.back().cb;
        if (inspect)
            inspect();
        CHECK(hpu_cmdlist_destroy(cl) == 0);
        CHECK(hpu_queue_destroy(q) == 0);
        return b;
    }

    // Every object released exactly once.
    void check_clean() const
    {
        CHECK(m.leaks() == 0);
        CHECK(m.misuse == 0);
    }
};

// A mock filled by Populate, installed, with device Index open, for
// TEST_CASE_METHOD. The test closes dev itself (and checks the result).
template <void (*Populate)(MockOs &), unsigned int Index>
struct OpenDevice {
    MockOs m;
    ScopedMock scoped{m};
    hpu_device_t *dev = nullptr;
    OpenDevice()
    {
        Populate(m);
        REQUIRE(hpu_open_by_index(Index, &dev) == 0);
    }
};

} // namespace hpu::test

#endif // HPU_TESTS_FIXTURE_H
