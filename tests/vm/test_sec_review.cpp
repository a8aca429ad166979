// SPDX-License-Identifier: MIT
// Findings of the review after issue 9, raw ioctls and sysfs:
//  - a stream that does not stop at shutdown (INJ_QUIESCE "streams",
//    debugfs inject_quiesce): removal turns bus mastering off, says so,
//    and resets the function before letting go; the device binds again,
//    was reset before use and runs jobs;
//  - a hard reset that fails (INJ_QUIESCE "hard_reset"): the device is
//    unusable, its memory stays out of use (bus mastering off), the log says
//    so; removal resets the function; the device binds again and works, and
//    the closed context's page tables went back before the unbind;
//  - an FLR with the driver bound (sysfs reset, reset_method flr): the
//    driver has quiesced and recovered by the time the reset returns.
// (The limits findings, unprivileged_contexts and root-only usage
// counters, are tested in test_sec_limits.cpp.)
//
// Copyright (c) 2026 The hpu authors
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "bind_util.h"
#include "err_util.h"
#include "vm_util.h"

using namespace vmt;

namespace {

constexpr const char *kDrv = kHpuDriverDir;
constexpr std::uint32_t kForeverSob = 29; // no test sets it

std::string pci(const std::string &bdf) { return pci_dir(bdf); }
std::string accel_node(const std::string &bdf) { return accel_node_of(bdf); }

std::string trim(std::string s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.pop_back();
    return s;
}

// Puts a device's reset_method back.
struct MethodGuard {
    std::string bdf;
    std::string method;
    MethodGuard(std::string b, std::string m) : bdf(std::move(b)), method(std::move(m)) {}
    MethodGuard(const MethodGuard &) = delete;
    MethodGuard &operator=(const MethodGuard &) = delete;
    MethodGuard(MethodGuard &&) = delete;
    MethodGuard &operator=(MethodGuard &&) = delete;
    ~MethodGuard()
    {
        if (!method.empty())
            write_text(pci(bdf) + "/reset_method", method);
    }
};

// PCI_COMMAND of a device, from its configuration space.
std::uint16_t pci_command(const std::string &bdf)
{
    const int fd = ::open((pci(bdf) + "/config").c_str(), O_RDONLY | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
    REQUIRE(fd >= 0);
    std::array<unsigned char, 2> b{};
    const ssize_t n = ::pread(fd, b.data(), b.size(), 4);
    ::close(fd);
    REQUIRE(n == 2);
    return static_cast<std::uint16_t>(b[0] | (b[1] << 8));
}
constexpr std::uint16_t kPciCommandMaster = 0x4;

// The device (last bound HPU) works: a job copies within HBM.
void device_works(const std::string &bdf)
{
    REQUIRE(is_bound(bdf));
    const std::string n = accel_node(bdf);
    REQUIRE(!n.empty());
    Ctx c(n);
    std::uint32_t q = 0;
    REQUIRE(c.queue_create(0, q) == 0);
    const std::uint64_t hbm = c.hbm_buf(kHbmPage);
    CHECK(c.run(q, Cb().lin_dma(hbm, hbm + kHbmPage / 2, 4096)) == 1);
}

std::string last_bdf()
{
    const auto devs = nodes_by_pci();
    REQUIRE(!devs.empty());
    return devs.back().pci_addr;
}

} // namespace

TEST_CASE("a stream that does not stop at shutdown: bus mastering off, the removal resets the function, "
          "the device works after rebind",
          "[security]")
{
    const std::string bdf = last_bdf();
    const BindGuard guard(bdf);
    const std::string path = accel_node(bdf);
    REQUIRE(!path.empty());
    KmsgTail klog;

    inject(path, "inject_quiesce", "streams");
    REQUIRE(write_text(std::string(kDrv) + "/unbind", bdf) == 0);
    REQUIRE(!is_bound(bdf));
    // Nothing the device does reaches memory after the unbind.
    CHECK((pci_command(bdf) & kPciCommandMaster) == 0);

    const std::string log = klog.read_new();
    INFO("kernel log:\n" << log);
    CHECK(std::regex_search(log, std::regex("[0-9]+ streams did not stop at shutdown: bus mastering turned off "
                                            "before their jobs fail")));
    CHECK(log.find("device not quiesced: function reset at removal, bus mastering off") != std::string::npos);

    const int e = write_text(std::string(kDrv) + "/bind", bdf);
    INFO("bind " << bdf << ": " << std::strerror(e));
    REQUIRE(e == 0);
    // The device was reset before the new instance used it.
    const auto inj = read_text(debugfs_dir(accel_node(bdf)) + "/inject_quiesce");
    REQUIRE(inj.has_value());
    CHECK(*inj == "0x0\n");
    device_works(bdf);
}

TEST_CASE("a hard reset that fails: the device is unusable and off the bus, the removal resets the function, "
          "the device works after rebind",
          "[security]")
{
    const std::string bdf = last_bdf();
    const BindGuard guard(bdf);
    const std::string path = accel_node(bdf);
    REQUIRE(!path.empty());
    // Page tables in use, from the PCI device's limits directory: readable
    // while the device stays bound, also once it is unusable (unplugged).
    const std::string pt_used = pci(bdf) + "/limits/page_tables_used";
    const auto pt0 = read_u64(pt_used);
    REQUIRE(pt0.has_value());
    KmsgTail klog;

    {
        Ctx c(path);
        std::uint32_t q = 0;
        REQUIRE(c.queue_create(0, q) == 0);
        const std::uint64_t hbm = c.hbm_buf(kHbmPage);
        (void)hbm;
        // A job on the stream when the reset fails.
        const Cb forever = Cb().wait(kForeverSob, 1);
        const std::uint64_t cb_va = c.put_cb(forever);
        std::uint32_t so = 0;
        REQUIRE(syncobj_create(c.fd(), so) == 0);
        REQUIRE(c.submit(q, cb_va, forever.bytes(), so, {}, 0) == 0);

        inject(path, "inject_quiesce", "hard_reset");
        const int re = write_text(reset_attr(path), "hard");
        INFO("hard reset: " << std::strerror(re));
        CHECK(re != 0);

        // The device is gone for users (unplugged: even DRM core ioctls
        // fail with ENODEV now).
        const int w = syncobj_wait(c.fd(), so, 10ULL * 1000000000ULL);
        CHECK((w == 0 || w == ENODEV));
        std::uint32_t q2 = 0;
        CHECK(c.queue_create(0, q2) == ENODEV);
        CHECK(::access(path.c_str(), F_OK) != 0);
    }
    CHECK((pci_command(bdf) & kPciCommandMaster) == 0);
    // Before the unbind, in the same driver instance (a new one starts from
    // nothing and could not show a leak): the closed context's page tables
    // went back.
    CHECK(eventually([&] { return read_u64(pt_used) == pt0; }, 5000));

    REQUIRE(write_text(std::string(kDrv) + "/unbind", bdf) == 0);
    const std::string log = klog.read_new();
    INFO("kernel log:\n" << log);
    CHECK(std::regex_search(log, std::regex("hard reset failed \\(-?[0-9]+\\): the device is unusable")));
    CHECK(log.find("bus mastering turned off: the device may still run; its memory stays out of use until it is "
                   "unbound") != std::string::npos);
    CHECK(log.find("device not quiesced: function reset at removal, bus mastering off") != std::string::npos);

    const int e = write_text(std::string(kDrv) + "/bind", bdf);
    INFO("bind " << bdf << ": " << std::strerror(e));
    REQUIRE(e == 0);
    REQUIRE(is_bound(bdf));
    const auto inj = read_text(debugfs_dir(accel_node(bdf)) + "/inject_quiesce");
    REQUIRE(inj.has_value());
    CHECK(*inj == "0x0\n");
    device_works(bdf);
}

TEST_CASE("FLR with the driver bound: the driver has recovered when the reset returns", "[security]")
{
    const std::string bdf = last_bdf();
    const std::string methods = trim(read_text(pci(bdf) + "/reset_method").value_or(""));
    REQUIRE(methods.find("flr") != std::string::npos);
    const MethodGuard mguard(bdf, methods);
    const std::string path = accel_node(bdf);
    REQUIRE(!path.empty());
    const std::uint64_t hard0 = errors_now(path).hard_resets;
    const std::uint64_t gen0 = errors_now(path).reset_generation;
    KmsgTail klog;

    REQUIRE(write_text(pci(bdf) + "/reset_method", "flr") == 0);
    REQUIRE(write_text(pci(bdf) + "/reset", "1") == 0);

    // No waiting: the reset returned once the driver was done.
    const drm_hpu_info_errors after = errors_now(path);
    CHECK(after.hard_resets == hard0 + 1);
    CHECK(after.reset_generation == gen0 + 1);
    CHECK(trim(read_text(pci(bdf) + "/status").value_or("")) == "operational");
    device_works(bdf);
    const std::string log = klog.read_new();
    INFO("kernel log:\n" << log);
    CHECK(log.find("hard reset: function level reset; every context is lost") != std::string::npos);
    CHECK(log.find("heartbeat lost") == std::string::npos);
}
