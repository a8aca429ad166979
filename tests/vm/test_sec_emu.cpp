// SPDX-License-Identifier: MIT
// Issue 9, device model, from the guest, tag [security]: a function level
// reset (FLR) of an HPU is the spec's power-on reset (spec version 5). With
// the driver unbound, the test marks BAR0's SCRATCH through the sysfs
// resource0 mapping, selects the flr reset method and resets the function
// through sysfs; SCRATCH is back to 0 and the boot ROM starts again (the
// firmware the driver booted is gone), then the driver binds again, boots
// the firmware and runs a job. Every device is bound again at the end,
// whatever happens.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <dirent.h>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "err_util.h"
#include "hw/hpu_regs.h"
#include "vm_util.h"

using namespace vmt;

namespace {

const char *const kDrv = "/sys/bus/pci/drivers/hpu";

std::string trim(std::string s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.pop_back();
    return s;
}

std::vector<std::string> bound_bdfs()
{
    std::vector<std::string> v;
    if (DIR *d = ::opendir(kDrv)) {
        while (const dirent *e = ::readdir(d)) {
            if (std::strncmp(e->d_name, "0000:", 5) == 0)
                v.emplace_back(e->d_name);
        }
        ::closedir(d);
    }
    std::sort(v.begin(), v.end());
    return v;
}

std::string pci(const std::string &bdf) { return "/sys/bus/pci/devices/" + bdf; }

std::string accel_node(const std::string &bdf)
{
    std::string node;
    if (DIR *d = ::opendir((pci(bdf) + "/accel").c_str())) {
        while (const dirent *e = ::readdir(d)) {
            if (std::strncmp(e->d_name, "accel", 5) == 0)
                node = std::string("/dev/accel/") + e->d_name;
        }
        ::closedir(d);
    }
    return node;
}

// BAR0 of an unbound device through sysfs resource0.
class Bar0 {
public:
    explicit Bar0(const std::string &bdf)
    {
        fd_ = ::open((pci(bdf) + "/resource0").c_str(), O_RDWR | O_SYNC | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
        REQUIRE(fd_ >= 0);
        p_ = ::mmap(nullptr, HPU_BAR_REGS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
        REQUIRE(p_ != MAP_FAILED);
    }
    Bar0(const Bar0 &) = delete;
    Bar0 &operator=(const Bar0 &) = delete;
    Bar0(Bar0 &&) = delete;
    Bar0 &operator=(Bar0 &&) = delete;
    ~Bar0()
    {
        ::munmap(p_, HPU_BAR_REGS_SIZE);
        ::close(fd_);
    }
    [[nodiscard]] std::uint32_t rd(std::uint32_t off) const { return *reg(off); }
    void wr(std::uint32_t off, std::uint32_t v) const { *reg(off) = v; }

private:
    [[nodiscard]] volatile std::uint32_t *reg(std::uint32_t off) const
    {
        return static_cast<volatile std::uint32_t *>(p_) + off / 4; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    }
    int fd_ = -1;
    void *p_ = nullptr;
};

// Binds the device again when the test ends, whatever happens.
struct Rebind {
    std::string bdf;
    std::string method;         // reset_method to restore
    Rebind(const Rebind &) = delete;
    Rebind &operator=(const Rebind &) = delete;
    Rebind(Rebind &&) = delete;
    Rebind &operator=(Rebind &&) = delete;
    Rebind(std::string b, std::string m) : bdf(std::move(b)), method(std::move(m)) {}
    ~Rebind()
    {
        if (!method.empty())
            write_text(pci(bdf) + "/reset_method", method);
        if (::access((std::string(kDrv) + "/" + bdf).c_str(), F_OK) != 0)
            write_text(std::string(kDrv) + "/bind", bdf);
    }
};

} // namespace

TEST_CASE("FLR from the guest resets the HPU as a power-on reset; the driver binds again and runs a job",
          "[security]")
{
    const auto bdfs = bound_bdfs();
    REQUIRE(!bdfs.empty());
    const std::string &bdf = bdfs.back();
    const std::string methods = trim(read_text(pci(bdf) + "/reset_method").value_or(""));
    INFO("reset methods of " << bdf << ": " << methods);
    REQUIRE(methods.find("flr") != std::string::npos);
    Rebind guard(bdf, methods);

    REQUIRE(write_text(std::string(kDrv) + "/unbind", bdf) == 0);
    {
        const Bar0 bar(bdf);
        REQUIRE(bar.rd(HPU_REG_MAGIC) == HPU_MAGIC_VALUE);
        REQUIRE(bar.rd(HPU_REG_CPU_STATUS) == HPU_CPU_RUNNING); // booted by the driver
        bar.wr(HPU_REG_SCRATCH, 0x5ec0f1a9);
        REQUIRE(bar.rd(HPU_REG_SCRATCH) == 0x5ec0f1a9);

        REQUIRE(write_text(pci(bdf) + "/reset_method", "flr") == 0);
        REQUIRE(write_text(pci(bdf) + "/reset", "1") == 0);

        CHECK(bar.rd(HPU_REG_MAGIC) == HPU_MAGIC_VALUE);
        CHECK(bar.rd(HPU_REG_SCRATCH) == 0U);
        const std::uint32_t cpu = bar.rd(HPU_REG_CPU_STATUS);
        INFO("CPU_STATUS after the FLR: " << cpu);
        CHECK((cpu == HPU_CPU_ROM_INIT || cpu == HPU_CPU_WAIT_IMAGE));
        CHECK(bar.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    }

    REQUIRE(write_text(std::string(kDrv) + "/bind", bdf) == 0);
    const std::string node = accel_node(bdf);
    REQUIRE(!node.empty());
    Ctx c(node);
    std::uint32_t q = 0;
    REQUIRE(c.queue_create(0, q) == 0);
    const std::uint64_t hbm = c.hbm_buf(kHbmPage);
    CHECK(c.run(q, Cb().lin_dma(hbm, hbm + kHbmPage / 2, 4096)) == 1);
}

// With the driver bound, the PCI core calls the driver's reset_done after
// the FLR: the driver recovers as from a hard reset (contexts lost, the
// firmware booted again) and the device runs jobs again.
TEST_CASE("FLR with the driver bound: the driver recovers with a hard reset and runs a job", "[security]")
{
    const auto bdfs = bound_bdfs();
    REQUIRE(!bdfs.empty());
    const std::string &bdf = bdfs.back();
    const std::string methods = trim(read_text(pci(bdf) + "/reset_method").value_or(""));
    REQUIRE(methods.find("flr") != std::string::npos);
    Rebind guard(bdf, methods);
    const std::string node = accel_node(bdf);
    REQUIRE(!node.empty());
    const std::uint64_t hard0 = errors_now(node).hard_resets;

    REQUIRE(write_text(pci(bdf) + "/reset_method", "flr") == 0);
    REQUIRE(write_text(pci(bdf) + "/reset", "1") == 0);

    // The recovery runs in the driver's reset work: wait for it to be done.
    const std::uint64_t t0 = now_ns();
    std::uint64_t hard = hard0;
    std::string status;
    for (;;) {
        hard = errors_now(node).hard_resets;
        status = trim(read_text(pci(bdf) + "/status").value_or(""));
        if ((hard > hard0 && status == "operational") || ms_since(t0) > 30000)
            break;
        ::usleep(10000);
    }
    INFO("hard resets " << hard0 << " -> " << hard << ", status " << status);
    REQUIRE(hard == hard0 + 1);
    REQUIRE(status == "operational");
    Ctx c(node);
    std::uint32_t q = 0;
    REQUIRE(c.queue_create(0, q) == 0);
    const std::uint64_t hbm = c.hbm_buf(kHbmPage);
    CHECK(c.run(q, Cb().lin_dma(hbm, hbm + kHbmPage / 2, 4096)) == 1);
}
