// SPDX-License-Identifier: MIT
// Sync objects and ASID reuse (issue 9, defect 3), raw ioctls: a context
// (an open file, in this process or another one) sets its 32 sync objects
// and closes; the next context that gets the same ASID must find them all
// at 0. A WAIT for 0 (EQ) on each passes; a WAIT for the old value (GE)
// does not pass early: the job fails -ETIMEDOUT after its short per-job
// timeout.
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "vm_util.h"

using namespace vmt;

namespace {

constexpr std::uint32_t kSobs = 32;
constexpr std::uint32_t kWaitTimeoutMs = 100;

std::uint32_t old_value(std::uint32_t sob)
{
    return 0x1000U + sob;
}

// Opens the device as the previous tenant, sets every sync object of its
// context and runs the job to completion; returns the ASID (0 on failure).
// Closes the file (munmap first, so the last reference goes) on return.
std::uint32_t leave_values(const std::string &path)
{
    Ctx c(path);
    std::uint32_t q = 0;
    if (c.queue_create(0, q) != 0)
        return 0;
    Cb cb;
    for (std::uint32_t i = 0; i < kSobs; ++i)
        cb.sob_update(i, old_value(i));
    // Check they hold, so the next tenant's result means something.
    for (std::uint32_t i = 0; i < kSobs; ++i)
        cb.wait(i, old_value(i), WAIT_EQ);
    if (c.run(q, cb, nullptr, 10000) != 1)
        return 0;
    return c.mem().asid;
}

// The previous tenant is a forked process: its file is released when it
// exits, before waitpid() returns.
std::uint32_t leave_values_in_child(const std::string &path)
{
    int pfd[2] = {-1, -1};
    REQUIRE(::pipe(pfd) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(pfd[0]);
        std::uint32_t asid = 0;
        try {
            asid = leave_values(path);
        } catch (...) {
            asid = 0;
        }
        std::ignore = ::write(pfd[1], &asid, sizeof(asid));
        ::_exit(asid != 0 ? 0 : 1);
    }
    ::close(pfd[1]);
    std::uint32_t asid = 0;
    const bool got = ::read(pfd[0], &asid, sizeof(asid)) == sizeof(asid);
    ::close(pfd[0]);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(got);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    return asid;
}

// Opens contexts until one has `asid` (ASIDs are handed out lowest first,
// so normally the first); closes the others. held keeps the one found.
Ctx &open_with_asid(const std::string &path, std::uint32_t asid, std::vector<std::unique_ptr<Ctx>> &held)
{
    Ctx *mine = nullptr;
    for (int i = 0; i < 63 && mine == nullptr; ++i) {
        held.push_back(std::make_unique<Ctx>(path));
        if (held.back()->mem().asid == asid)
            mine = held.back().get();
    }
    REQUIRE(mine != nullptr);
    std::unique_ptr<Ctx> keep;
    for (auto &c : held) {
        if (c.get() == mine)
            keep = std::move(c);
    }
    held.clear();
    held.push_back(std::move(keep));
    return *mine;
}

} // namespace

TEST_CASE("a context reusing an ASID finds its 32 sync objects at 0", "[security][sob]")
{
    const std::string path = node(0);
    std::uint32_t asid = 0;

    SECTION("after another file of this process") {
        asid = leave_values(path);
        REQUIRE(asid != 0);
    }
    SECTION("after another process") { asid = leave_values_in_child(path); }

    std::vector<std::unique_ptr<Ctx>> held;
    Ctx &c = open_with_asid(path, asid, held);
    std::uint32_t q = 0;
    REQUIRE(c.queue_create(0, q) == 0);
    INFO("ASID " << asid);

    // Every sync object reads 0: a WAIT for exactly 0 passes at once.
    Cb zero;
    for (std::uint32_t i = 0; i < kSobs; ++i)
        zero.wait(i, 0, WAIT_EQ);
    CHECK(c.run(q, zero, nullptr, 5000) == 1);

    // A wait for the old value does not pass early.
    for (std::uint32_t i = 0; i < kSobs; ++i) {
        INFO("sync object " << i);
        CHECK(c.run(q, Cb().wait(i, old_value(i), WAIT_GE), nullptr, kWaitTimeoutMs) == -ETIMEDOUT);
    }

    // Its own values work as usual (and nothing is left for the next one
    // if the checks above failed).
    Cb own;
    for (std::uint32_t i = 0; i < kSobs; ++i)
        own.sob_update(i, 7).wait(i, 7, WAIT_EQ).sob_update(i, 0);
    CHECK(c.run(q, own, nullptr, 5000) == 1);
}
