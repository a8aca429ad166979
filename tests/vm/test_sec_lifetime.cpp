// SPDX-License-Identifier: MIT
// Lifetime of device memory across removal and failures (issue 9, defects 4
// and 5), raw ioctls:
//  - unbinding a device through sysfs completes within seconds while a
//    thread sits in VM_BIND UNMAP behind a job that never ends (WAIT on a
//    sync object nobody sets, with the longest timeout allowed); the UNMAP
//    returns (0 or ENODEV, as removal fails the job before or after it
//    unplugs), and the device binds again and runs a job;
//  - a TLB invalidation that does not complete (INJ_MMU_INV, debugfs
//    inject_mmu_inv) quarantines the unmapped buffer instead of freeing it,
//    says so in the kernel log, leads to a hard reset, and only that reset
//    gives the memory back; the device works afterwards and no HBM leaks.
//
// Copyright (c) 2026 The hpu authors
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "bind_util.h"
#include "err_util.h"
#include "vm_util.h"

using namespace vmt;

namespace {

constexpr const char *kPciDriver = "/sys/bus/pci/drivers/hpu";
constexpr std::uint32_t kForeverSob = 29;            // no test sets it
constexpr std::uint32_t kLongestTimeoutMs = 3600000; // HPU_JOB_TIMEOUT_MAX_MS

// Whether thread `tid` of this process sleeps inside an ioctl(2).
bool sleeps_in_ioctl(pid_t tid)
{
    const std::string dir = "/proc/self/task/" + std::to_string(tid);
    std::ifstream sc(dir + "/syscall");
    long nr = -1;
    if (!(sc >> nr) || nr != SYS_ioctl)
        return false;
    std::ifstream st(dir + "/stat");
    std::string stat;
    std::getline(st, stat);
    const auto p = stat.rfind(')');
    return p != std::string::npos && p + 2 < stat.size() && (stat[p + 2] == 'S' || stat[p + 2] == 'D');
}

// Writes `bdf` to the driver's unbind file in a child process (which may be
// stuck in the kernel for good on a broken driver) and waits up to
// timeout_ms for it. Returns the write's errno, or -1 on timeout.
int unbind_within(const std::string &bdf, int timeout_ms, pid_t &child)
{
    child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0)
        ::_exit(write_text(std::string(kPciDriver) + "/unbind", bdf));
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child, 0));
    REQUIRE(pidfd >= 0);
    pollfd p{pidfd, POLLIN, 0};
    const int r = ::poll(&p, 1, timeout_ms);
    ::close(pidfd);
    if (r <= 0)
        return -1;
    int st = 0;
    REQUIRE(::waitpid(child, &st, 0) == child);
    child = 0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -2;
}

void on_sigusr1(int /*sig*/) {}

// A debugfs quarantine counter of a device ("entries", "released", ...), or
// nothing if the driver has no such file.
std::optional<std::uint64_t> quarantine_value(const std::string &node, const std::string &key)
{
    const auto t = read_text(debugfs_dir(node) + "/quarantine");
    if (!t)
        return std::nullopt;
    const std::regex re("(^|\n)" + key + " ([0-9]+)");
    std::smatch m;
    if (!std::regex_search(*t, m, re))
        return std::nullopt;
    return std::stoull(m[2].str());
}

} // namespace

TEST_CASE("unbind completes while VM_BIND UNMAP waits for a job that never ends, then the device works again",
          "[security]")
{
    const auto devs = nodes_by_pci();
    REQUIRE(!devs.empty());
    const std::string bdf = devs[0].pci_addr;
    const BindGuard guard(bdf);
    REQUIRE(is_bound(bdf));

    // A SIGUSR1 interrupts the UNMAP's wait (no SA_RESTART): the way out
    // on a driver that would hang the unbind forever.
    struct sigaction sa {};
    sa.sa_handler = on_sigusr1;
    sigemptyset(&sa.sa_mask);
    struct sigaction old_sa {};
    REQUIRE(::sigaction(SIGUSR1, &sa, &old_sa) == 0);

    int unmap_err = -1;
    {
        Ctx c(devs[0].node);
        const Cb forever = Cb().wait(kForeverSob, 1);
        const std::uint64_t cb_va = c.put_cb(forever);
        std::uint32_t q = 0;
        std::uint32_t so = 0;
        REQUIRE(c.queue_create(0, q) == 0);
        REQUIRE(syncobj_create(c.fd(), so) == 0);
        REQUIRE(c.submit(q, cb_va, forever.bytes(), so, {}, kLongestTimeoutMs) == 0);
        // The job is on the stream and stays there.
        CHECK(syncobj_wait(c.fd(), so, 200ULL * 1000000ULL) == ETIME);

        std::atomic<pid_t> tid{0};
        std::atomic<bool> done{false};
        std::thread unmapper([&] {
            tid = static_cast<pid_t>(::syscall(SYS_gettid));
            drm_hpu_vm_bind b{};
            b.op = DRM_HPU_VM_UNMAP;
            b.va = cb_va;
            const int r = ::ioctl(c.fd(), DRM_IOCTL_HPU_VM_BIND, &b); // NOLINT(cppcoreguidelines-pro-type-vararg)
            unmap_err = r < 0 ? errno : 0;
            done = true;
        });
        // Until the thread sleeps in the ioctl (it waits for the job).
        const std::uint64_t t0 = now_ns();
        while (!done && (tid == 0 || !sleeps_in_ioctl(tid)) && ms_since(t0) < 10000)
            ::usleep(1000);
        CHECK(!done);
        REQUIRE(sleeps_in_ioctl(tid));

        pid_t child = 0;
        const std::uint64_t t1 = now_ns();
        const int e = unbind_within(bdf, 30000, child);
        const double ms = ms_since(t1);
        if (e == -1) {
            // Broken driver: free the unbind by interrupting the UNMAP, then fail.
            ::pthread_kill(unmapper.native_handle(), SIGUSR1);
            unmapper.join();
            int st = 0;
            ::waitpid(child, &st, 0);
            ::sigaction(SIGUSR1, &old_sa, nullptr);
            FAIL("unbind did not complete within 30 s while VM_BIND UNMAP waited for a job");
        }
        INFO("unbind took " << ms << " ms");
        CHECK(e == 0);
        CHECK(ms < 10000);
        // Removal failed the job, which ends the UNMAP's wait.
        const std::uint64_t t2 = now_ns();
        while (!done && ms_since(t2) < 10000)
            ::usleep(1000);
        if (!done)
            ::pthread_kill(unmapper.native_handle(), SIGUSR1);
        unmapper.join();
        CHECK(done);
        CHECK(!is_bound(bdf));
    } // the file closes on the unbound device
    ::sigaction(SIGUSR1, &old_sa, nullptr);
    INFO("UNMAP returned " << std::strerror(unmap_err));
    CHECK((unmap_err == ENODEV || unmap_err == 0));

    const int e = write_text(std::string(kPciDriver) + "/bind", bdf);
    INFO("bind " << bdf << ": " << std::strerror(e));
    REQUIRE(e == 0);
    REQUIRE(is_bound(bdf));
    Ctx c(node(0));
    std::uint32_t q = 0;
    REQUIRE(c.queue_create(0, q) == 0);
    const std::uint64_t hbm = c.hbm_buf(kHbmPage);
    CHECK(c.run(q, Cb().lin_dma(hbm, hbm + kHbmPage / 2, 4096)) == 1);
}

TEST_CASE("a TLB invalidation that does not complete keeps the unmapped buffer out of use until a hard reset",
          "[security]")
{
    const std::string path = node(0);
    const auto released0 = quarantine_value(path, "released");
    CHECK(released0.has_value());
    CHECK(quarantine_value(path, "entries") == 0);
    const std::uint64_t hbm_used0 = memory_now(path).hbm_used;
    const std::uint64_t hard0 = errors_now(path).hard_resets;
    KmsgTail klog;

    {
        Ctx c(path);
        REQUIRE(enable_events(c.fd()) == 0);
        std::uint32_t h = 0;
        std::uint64_t size = 0;
        REQUIRE(c.bo_create(kHbmPage, DRM_HPU_BO_HBM, h, 0, &size) == 0);
        std::uint64_t va = 0;
        REQUIRE(c.map(h, 0, size, va) == 0);

        inject(path, "inject_mmu_inv", "stuck");
        // The range is free in the context; the device may still reach the buffer.
        CHECK(c.unmap(va) == 0);
        CHECK(c.gem_close(h) == 0);

        // The driver asks for a hard reset; this file's context is lost.
        std::vector<Event> ev;
        const bool reset = read_events_until(c.fd(), ev, 30000, [](const Event &e) {
            return e.type == DRM_HPU_EVENT_RESET && e.rst.hard != 0;
        });
        INFO(describe(ev));
        CHECK(reset);
    }

    // Only the reset gave the quarantined buffer back.
    const std::uint64_t t0 = now_ns();
    while (quarantine_value(path, "released").value_or(0) <= released0.value_or(0) && ms_since(t0) < 30000)
        ::usleep(10000);
    CHECK(quarantine_value(path, "released").value_or(0) > released0.value_or(0));
    CHECK(quarantine_value(path, "entries") == 0);
    CHECK(errors_now(path).hard_resets > hard0);

    const std::string log = klog.read_new();
    INFO("kernel log:\n" << log);
    std::smatch m;
    const std::regex quar("ASID [0-9]+: quarantined a mapping after a TLB invalidation that did not complete "
                          "\\(([0-9]+) bytes of HBM, [0-9]+ bytes of host memory\\): the device may still "
                          "reach it; kept out of use until a hard reset");
    REQUIRE(std::regex_search(log, m, quar));
    CHECK(std::stoull(m[1].str()) >= kHbmPage);
    const auto q_at = log.find("quarantined a mapping");
    CHECK(q_at != std::string::npos);
    const auto reset_at = log.find("hard reset: quarantined memory");
    const auto rel_at = log.find("released ");
    CHECK(reset_at != std::string::npos);
    CHECK(rel_at != std::string::npos);
    CHECK(q_at < reset_at);
    CHECK(reset_at < rel_at);
    CHECK(std::regex_search(log, std::regex("released [0-9]+ quarantined entries .*: a hard reset proved the "
                                            "device quiet")));

    // The device works and nothing leaked.
    Ctx c(path);
    std::uint32_t q = 0;
    REQUIRE(c.queue_create(0, q) == 0);
    const std::uint64_t hbm = c.hbm_buf(kHbmPage);
    CHECK(c.run(q, Cb().lin_dma(hbm, hbm + kHbmPage / 2, 4096)) == 1);
    drm_hpu_info_memory mem{};
    REQUIRE(info_memory(c.fd(), mem) == 0);
    CHECK(mem.hbm_used == hbm_used0 + kHbmPage);
}
