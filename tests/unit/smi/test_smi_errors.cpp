// SPDX-License-Identifier: MIT
// hpu-smi: the errors view (-q -d ERRORS, --errors), -i, and reset (-r).
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "hpu/hpu.hpp"
#include "smi.h"
#include "smi_run.h"

using hpu::smi::Backend;
using hpu::smi::ResetTarget;
using hpu::smi::Snapshot;

using hpu::test::run;

namespace {

Snapshot with_errors(const hpu::smi::Request & /*req*/ = {})
{
    Snapshot s;
    s.lib_version = HPU_MAKE_VERSION(1, 2, 0);
    s.driver_loaded = 1;
    hpu::smi::DeviceSnapshot a;
    a.index = 0;
    a.name = "H1";
    a.pci_addr = "0000:01:00.0";
    a.serial = "HPU-A";
    a.has_errors = true;
    a.errors.size = sizeof(a.errors);
    a.errors.mmu_faults = 3;
    a.errors.ecc_correctable = 12;
    a.errors.retired_pages = 1;
    a.errors.job_timeouts = 1000;
    a.errors.soft_resets = 2;
    a.errors.hard_resets = 1;
    a.errors.reset_generation = 1;
    hpu::smi::DeviceSnapshot b = a;
    b.index = 1;
    b.pci_addr = "0000:02:00.0";
    b.errors = {};
    s.devices = {a, b};
    return s;
}

struct Fake {
    std::vector<std::string> calls; // "id hard|soft"
    std::vector<unsigned> requests; // Request::need of each gather
    int result = 0;
    bool root = true;
    bool found = true;

    Backend backend()
    {
        Backend be;
        be.gather = [this](const hpu::smi::Request &req) {
            requests.push_back(req.need);
            return with_errors();
        };
        be.reset = [this](const std::string &id, bool hard, ResetTarget &t) {
            calls.push_back(id + (hard ? " hard" : " soft"));
            if (found) {
                t.index = 0;
                t.pci_addr = "0000:01:00.0";
            }
            return result;
        };
        be.is_root = [this]() { return root; };
        return be;
    }
};

const char *const kErrorsView = "HPU 0: H1 (PCI 0000:01:00.0)\n"
                                "    MMU faults                : 3\n"
                                "    Bad packets               : 0\n"
                                "    Privilege violations      : 0\n"
                                "    Engine hangs              : 0\n"
                                "    DMA bus errors            : 0\n"
                                "    ECC correctable           : 12\n"
                                "    ECC uncorrectable         : 0\n"
                                "    Retired HBM pages         : 1\n"
                                "    Job timeouts              : 1000\n"
                                "    Heartbeat losses          : 0\n"
                                "    Firmware fatal errors     : 0\n"
                                "    Thermal events            : 0\n"
                                "    Power events              : 0\n"
                                "    Soft resets               : 2\n"
                                "    Hard resets               : 1\n"
                                "    Reset generation          : 1\n";

} // namespace

TEST_CASE("errors view formatting", "[smi][errors]")
{
    const std::string view = hpu::smi::format_errors(with_errors());
    const std::string second = view.substr(view.find("\n\n") + 2);
    CHECK(view.substr(0, view.find("\n\n") + 1) == kErrorsView);
    CHECK(second.starts_with("HPU 1: H1 (PCI 0000:02:00.0)\n    MMU faults                : 0\n"));
    CHECK(second.ends_with("    Reset generation          : 0\n"));
    Snapshot none = with_errors();
    for (auto &d : none.devices)
        d.has_errors = false;
    CHECK(hpu::smi::format_errors(none).empty());
}

TEST_CASE("errors view command line", "[smi][errors]")
{
    Fake fake;
    const Backend be = fake.backend();
    const std::string all = hpu::smi::format_errors(with_errors());
    for (const auto &args : std::vector<std::vector<std::string>>{
             {"-q", "-d", "ERRORS"}, {"-q", "-d", "errors"}, {"--query", "--display=ERRORS"}, {"--errors"}}) {
        const auto r = run(args, be);
        CHECK(r.status == 0);
        CHECK(r.out == all);
        CHECK(r.err.empty());
    }
    // Only the error counters are read (INFO ERRORS), nothing else.
    CHECK(fake.requests == std::vector<unsigned>(4, hpu::smi::kNeedErrors));
    SECTION("-i selects one device by index or PCI address")
    {
        for (const char *id : {"0", "0000:01:00.0", "01:00.0", "0000:01:00.0"}) {
            const auto r = run({"--errors", "-i", id}, be);
            CHECK(r.status == 0);
            CHECK(r.out == kErrorsView);
        }
        const auto r = run({"--errors", "--id=7"}, be);
        CHECK(r.status == hpu::smi::kExitNoDevices);
        CHECK(r.err == "hpu-smi: no HPU matches '-i 7'\n");
    }
    SECTION("usage errors")
    {
        CHECK(run({"-q", "-d", "BOGUS"}, be).err ==
              "hpu-smi: unknown section 'BOGUS' for -d (known: PRODUCT, POWER, CLOCK, TEMPERATURE, MEMORY, "
              "UTILIZATION, ECC, PCIE, NET, PROCESSES, ERRORS)\nTry 'hpu-smi -h' for help.\n");
        CHECK(run({"-q", "-d"}, be).status == hpu::smi::kExitUsage);
        CHECK(run({"-d", "ERRORS"}, be).err == "hpu-smi: -d goes with -q or --json\nTry 'hpu-smi -h' for help.\n");
        CHECK(run({"-q", "-L"}, be).status == hpu::smi::kExitUsage);
        CHECK(run({"-i"}, be).status == hpu::smi::kExitUsage);
    }
    SECTION("a kernel without INFO ERRORS: the error, exit 1")
    {
        Backend b2 = be;
        b2.gather = [](const hpu::smi::Request &) -> Snapshot { throw hpu::Error(-EINVAL, "querying HPU error counters"); };
        const auto r = run({"--errors"}, b2);
        CHECK(r.status == hpu::smi::kExitError);
        CHECK(r.out.empty());
        CHECK(r.err == "hpu-smi: querying HPU error counters: Invalid argument\n");
    }
}

TEST_CASE("reset (-r)", "[smi][reset]")
{
    Fake fake;

    SECTION("soft by default, --hard for a hard reset; success says so")
    {
        auto r = run({"-r", "-i", "0"}, fake.backend());
        CHECK(r.status == 0);
        CHECK(r.out == "HPU 0 (0000:01:00.0): soft reset done\n");
        CHECK(r.err.empty());
        r = run({"--reset", "--id", "0000:01:00.0", "--hard"}, fake.backend());
        CHECK(r.status == 0);
        CHECK(r.out == "HPU 0 (0000:01:00.0): hard reset done\n");
        CHECK(fake.calls == std::vector<std::string>{"0 soft", "0000:01:00.0 hard"});
    }
    SECTION("not root: refused before anything, exit 4")
    {
        fake.root = false;
        const auto r = run({"-r", "-i", "0", "--hard"}, fake.backend());
        CHECK(r.status == hpu::smi::kExitPermission);
        CHECK(r.out.empty());
        CHECK(r.err == "hpu-smi: resetting an HPU needs root; run hpu-smi -r as root (e.g. with sudo)\n");
        CHECK(fake.calls.empty());
    }
    SECTION("usage errors come before the root check")
    {
        fake.root = false;
        auto r = run({"-r"}, fake.backend());
        CHECK(r.status == hpu::smi::kExitUsage);
        CHECK(r.err == "hpu-smi: -r needs the device to reset: hpu-smi -r -i <index|pci|uuid> [--hard]\n"
                       "Try 'hpu-smi -h' for help.\n");
        r = run({"-i", "0", "--hard"}, fake.backend());
        CHECK(r.err == "hpu-smi: --hard goes with -r\nTry 'hpu-smi -h' for help.\n");
        CHECK(run({"-r", "-i", "0", "-L"}, fake.backend()).status == hpu::smi::kExitUsage);
        CHECK(run({"-r", "-i", "0", "-i", "1"}, fake.backend()).status == hpu::smi::kExitUsage);
        CHECK(fake.calls.empty());
    }
    SECTION("no such device: exit 6; malformed id: exit 2")
    {
        fake.found = false;
        fake.result = -ENODEV;
        auto r = run({"-r", "-i", "9"}, fake.backend());
        CHECK(r.status == hpu::smi::kExitNoDevices);
        CHECK(r.out.empty());
        CHECK(r.err == "hpu-smi: no HPU matches '-i 9'\n");
        fake.result = -EINVAL;
        r = run({"-r", "-i", "zz"}, fake.backend());
        CHECK(r.status == hpu::smi::kExitUsage);
        CHECK(r.err == "hpu-smi: 'zz' is neither a device index, a PCI address nor a UUID\nTry 'hpu-smi -h' for help.\n");
        CHECK(fake.calls == std::vector<std::string>{"9 soft"}); // refused before the reset
        CHECK(run({"-r", "-i", "0,1"}, fake.backend()).status == hpu::smi::kExitUsage);
    }
    SECTION("each refusal of the kernel: never a success message")
    {
        struct Case {
            int err;
            int status;
            std::string text;
        };
        const auto c = GENERATE(
            Case{-EBUSY, 1,
                 "hpu-smi: hard reset of HPU 0 (0000:01:00.0) failed: Device or resource busy (a reset in progress, "
                 "or the job is still pending)\n"
                 "hpu-smi: the driver refused: a reset is already in progress or the device cannot be reset now; "
                 "try again later\n"},
            Case{-EIO, 1,
                 "hpu-smi: hard reset of HPU 0 (0000:01:00.0) failed: Input/output error\n"
                 "hpu-smi: the device did not come back; see the kernel log (dmesg)\n"},
            Case{-ENODEV, 1,
                 "hpu-smi: hard reset of HPU 0 (0000:01:00.0) failed: No such HPU device\n"
                 "hpu-smi: the device is gone (removed or unbound)\n"},
            Case{-EACCES, 4,
                 "hpu-smi: hard reset of HPU 0 (0000:01:00.0) failed: Permission denied (no access to the HPU "
                 "device node)\nhpu-smi: the kernel refused: resetting an HPU needs root\n"},
            Case{-EOPNOTSUPP, 1,
                 "hpu-smi: hard reset of HPU 0 (0000:01:00.0) failed: Not supported by the hpu driver\n"
                 "hpu-smi: the loaded hpu driver offers no reset (too old?)\n"},
            Case{-EINVAL, 1,
                 "hpu-smi: hard reset of HPU 0 (0000:01:00.0) failed: Invalid argument\n"
                 "hpu-smi: the driver rejected the request\n"});
        fake.result = c.err;
        const auto r = run({"-r", "-i", "0", "--hard"}, fake.backend());
        CHECK(r.status == c.status);
        CHECK(r.out.empty());
        CHECK(r.err == c.text);
    }
    SECTION("a soft reset that fails suggests --hard")
    {
        fake.result = -EIO;
        const auto r = run({"-r", "-i", "0"}, fake.backend());
        CHECK(r.status == 1);
        CHECK(r.err == "hpu-smi: soft reset of HPU 0 (0000:01:00.0) failed: Input/output error\n"
                       "hpu-smi: the soft reset failed; see the kernel log (dmesg); a hard reset (--hard) may help\n");
    }
}

TEST_CASE("matching -i", "[smi]")
{
    hpu::smi::DeviceSnapshot d;
    d.index = 3;
    d.pci_addr = "0000:0a:00.0";
    CHECK(hpu::smi::matches(d, "3"));
    CHECK_FALSE(hpu::smi::matches(d, "4"));
    CHECK(hpu::smi::matches(d, "0000:0a:00.0"));
    CHECK(hpu::smi::matches(d, "0A:00.0"));
    CHECK_FALSE(hpu::smi::matches(d, "0b:00.0"));
    CHECK_FALSE(hpu::smi::matches(d, ""));
}
