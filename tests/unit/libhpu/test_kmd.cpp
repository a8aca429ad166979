// SPDX-License-Identifier: MIT
// The kernel-interface layer (kmd.h): the Os of each device, the restart on
// EINTR/EAGAIN, and the HPU_TRACE=ioctl trace.
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <catch2/catch_test_macros.hpp>

#include "device.h"
#include "fixture.h"
#include "hpu/hpu.h"
#include "kmd.h"
#include "mock_os.h"

using hpu::test::make_answer;
using hpu::test::MockOs;

namespace {

struct CloseFile {
    void operator()(std::FILE *f) const noexcept { (void)std::fclose(f); } // NOLINT(cppcoreguidelines-owning-memory)
};

// What a trace wrote, read back from a temporary file.
std::string contents(std::FILE *f)
{
    std::fflush(f);
    std::rewind(f);
    std::string s;
    int c = 0;
    while ((c = std::fgetc(f)) != EOF)
        s += static_cast<char>(c);
    return s;
}

// Sets HPU_TRACE for the lifetime of the object.
class ScopedTraceEnv {
public:
    explicit ScopedTraceEnv(const char *value)
    {
        REQUIRE(::setenv("HPU_TRACE", value, 1) == 0); // NOLINT(concurrency-mt-unsafe)
    }
    ScopedTraceEnv(const ScopedTraceEnv &) = delete;
    ScopedTraceEnv &operator=(const ScopedTraceEnv &) = delete;
    ScopedTraceEnv(ScopedTraceEnv &&) = delete;
    ScopedTraceEnv &operator=(ScopedTraceEnv &&) = delete;
    ~ScopedTraceEnv() { ::unsetenv("HPU_TRACE"); } // NOLINT(concurrency-mt-unsafe)
};

} // namespace

TEST_CASE("each device keeps the Os it was opened with", "[kmd]")
{
    MockOs a;
    MockOs b;
    a.add_hpu(0, "0000:00:03.0", make_answer("SER-A", 1ULL << 31, 3));
    b.add_hpu(0, "0000:00:03.0", make_answer("SER-B", 1ULL << 31, 3));
    const hpu::detail::Entry e{0, "0000:00:03.0", "/dev/accel/accel0"};
    hpu_device *da = nullptr;
    hpu_device *db = nullptr;
    REQUIRE(hpu::detail::open_entry(a, e, &da) == 0);
    REQUIRE(hpu::detail::open_entry(b, e, &db) == 0);
    // Neither is the default: the real OS stays installed.
    CHECK(&hpu::detail::default_os() == &hpu::detail::real_os());

    hpu_device_info ia{};
    ia.size = sizeof(ia);
    hpu_device_info ib{};
    ib.size = sizeof(ib);
    REQUIRE(hpu_device_get_info(da, &ia) == 0);
    REQUIRE(hpu_device_get_info(db, &ib) == 0);
    CHECK(std::string(static_cast<const char *>(ia.serial)) == "SER-A");
    CHECK(std::string(static_cast<const char *>(ib.serial)) == "SER-B");
    CHECK(a.ioctl_calls == 1);
    CHECK(b.ioctl_calls == 1);

    hpu_buffer_t *buf = nullptr;
    REQUIRE(hpu_buffer_create(db, 4096, HPU_MEM_HOST, &buf) == 0);
    CHECK(a.gem.empty());
    CHECK(b.gem.size() == 1);
    CHECK(hpu_buffer_destroy(buf) == 0);

    CHECK(hpu_close(da) == 0);
    CHECK(hpu_close(db) == 0);
    CHECK(a.close_calls == 1);
    CHECK(b.close_calls == 1);
    CHECK(a.leaks() == 0);
    CHECK(b.leaks() == 0);
    CHECK(b.misuse == 0);
}

TEST_CASE("an ioctl interrupted or told to try again is restarted", "[kmd]")
{
    hpu::test::Fixture f;
    f.m.wait_script = {-EINTR, -EAGAIN, -EINTR};
    hpu_queue_t *q = nullptr;
    hpu_cmdlist_t *cl = nullptr;
    f.queue_and_nop(q, cl);
    hpu_fence_t *fence = nullptr;
    REQUIRE(hpu_queue_submit(q, cl, nullptr, 0, &fence) == 0);
    CHECK(hpu_fence_wait(fence, 1000000) == 0);
    // Three restarts with the same absolute deadline, then the wait that
    // succeeds.
    REQUIRE(f.m.wait_deadlines.size() == 4);
    CHECK(f.m.wait_deadlines[0] == f.m.wait_deadlines[3]);
    CHECK(hpu_fence_destroy(fence) == 0);
    CHECK(hpu_cmdlist_destroy(cl) == 0);
    CHECK(hpu_queue_destroy(q) == 0);
}

TEST_CASE("HPU_TRACE selects the ioctl trace", "[kmd]")
{
    {
        const ScopedTraceEnv env("ioctl");
        CHECK(hpu::detail::ioctl_trace_requested());
    }
    {
        const ScopedTraceEnv env("events,all");
        CHECK(hpu::detail::ioctl_trace_requested());
    }
    {
        const ScopedTraceEnv env("events,ioctls");
        CHECK_FALSE(hpu::detail::ioctl_trace_requested());
    }
    CHECK_FALSE(hpu::detail::ioctl_trace_requested());
}

TEST_CASE("HPU_TRACE=ioctl prints each call with its arguments, result and duration", "[kmd]")
{
    MockOs m;
    hpu::test::add_two_hpus(m);
    const hpu::test::ScopedMock scoped(m);
    hpu_device_t *dev = nullptr;
    {
        const ScopedTraceEnv env("ioctl");
        REQUIRE(hpu_open_by_index(0, &dev) == 0);
    }
    const std::unique_ptr<std::FILE, CloseFile> out(std::tmpfile());
    REQUIRE(out);
    dev->kmd.set_trace(out.get());
    const std::string fd = std::to_string(hpu_device_get_fd(dev));

    hpu_device_info info{};
    info.size = sizeof(info);
    REQUIRE(hpu_device_get_info(dev, &info) == 0);
    std::string text = contents(out.get());
    CHECK(text.starts_with("hpu: ioctl fd=" + fd + " INFO op=DEVICE size="));
    CHECK(text.find(" = 0 size=") != std::string::npos);
    CHECK(text.ends_with(" us]\n"));

    m.request_fail[DRM_IOCTL_HPU_QUEUE_CREATE] = -EINVAL;
    hpu_queue_t *q = nullptr;
    CHECK(hpu_queue_create(dev, HPU_ENGINE_DMA, 3, &q) == -EINVAL);
    text = contents(out.get());
    CHECK(text.find("QUEUE_CREATE class=0 engine=3 = -22 (EINVAL) [") != std::string::npos);

    hpu_buffer_t *buf = nullptr;
    REQUIRE(hpu_buffer_create(dev, 4096, HPU_MEM_HOST, &buf) == 0);
    CHECK(hpu_buffer_destroy(buf) == 0);
    text = contents(out.get());
    for (const char *call : {"BO_CREATE size=4096", "VM_BIND MAP handle=", "BO_MMAP_OFFSET handle=", "VM_BIND UNMAP va=0x",
                             "GEM_CLOSE handle="})
        CHECK(text.find(call) != std::string::npos);
    CHECK(hpu_close(dev) == 0);
}
