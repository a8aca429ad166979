// SPDX-License-Identifier: MIT
// hpu-smi: formatting of a fixed snapshot and the command line.
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <sstream>
#include <string>

#include <catch2/catch_test_macros.hpp>

#include "hpu/hpu.hpp"
#include "smi.h"
#include "smi_run.h"

using hpu::smi::Snapshot;

namespace {

Snapshot fixed(const hpu::smi::Request & /*req*/ = {})
{
    Snapshot s;
    s.lib_version = HPU_MAKE_VERSION(1, 0, 0);
    s.driver_loaded = 1;
    hpu::smi::DeviceSnapshot a;
    a.index = 0;
    a.name = "H1";
    a.pci_addr = "0000:01:00.0";
    a.serial = "HPU-A";
    a.uuid = {0x1b, 0x4e, 0x28, 0xba, 0x2f, 0xa1, 0x11, 0xd2, 0x88, 0x3f, 0x00, 0x16, 0xd3, 0xcc, 0xa4, 0x27};
    a.hbm_bytes = 2147483648ULL;
    a.driver_minor = 1;
    hpu::smi::DeviceSnapshot b = a;
    b.index = 1;
    b.pci_addr = "0000:02:00.0";
    b.serial = "HPU-LONG-SERIAL-0001";
    b.uuid.fill(0xff);
    b.hbm_bytes = 4294967296ULL + 1048575ULL; // rounds down to whole MiB
    b.driver_patch = 12;
    s.devices = {a, b};
    return s;
}

// hpu-smi on the fixed snapshot unless told otherwise.
hpu::test::Result run(const std::vector<std::string> &args, const hpu::smi::Gatherer &g = fixed)
{
    return hpu::test::run(args, g);
}

} // namespace

TEST_CASE("list (-L) lines", "[smi]")
{
    CHECK(hpu::smi::format_list(fixed()) ==
          "HPU 0: H1 (PCI 0000:01:00.0, SN HPU-A, UUID 1b4e28ba-2fa1-11d2-883f-0016d3cca427)\n"
          "HPU 1: H1 (PCI 0000:02:00.0, SN HPU-LONG-SERIAL-0001, UUID ffffffff-ffff-ffff-ffff-ffffffffffff)\n");
}

TEST_CASE("summary table of a driver without telemetry", "[smi]")
{
    // Only INFO DEVICE was read: the telemetry columns say n/a (the full
    // table is checked in test_smi_query.cpp).
    const std::string t = hpu::smi::format_table(fixed());
    CHECK(t.starts_with("hpu-smi 1.0.0  libhpu 1.0.0  driver 0.1.0,0.1.12  devices: 2\n"));
    CHECK(t.find("| HPU | Name | Bus-Id       | Serial               | Temp | Power / Cap | HBM Used / Total | DMA "
                 "| TPC | MME | Clock | Status |\n") != std::string::npos);
    CHECK(t.find("|   1 | H1   | 0000:02:00.0 | HPU-LONG-SERIAL-0001 |  n/a |         n/a |              n/a | n/a "
                 "| n/a | n/a |   n/a | n/a    |\n") != std::string::npos);
}

TEST_CASE("small helpers", "[smi]")
{
    std::array<std::uint8_t, 16> zero{};
    CHECK(hpu::smi::format_uuid(zero) == "00000000-0000-0000-0000-000000000000");
    CHECK(hpu::smi::format_version(HPU_MAKE_VERSION(2, 10, 255)) == "2.10.255");
}

TEST_CASE("command line", "[smi]")
{
    SECTION("no arguments prints the table")
    {
        const auto r = run({});
        CHECK(r.status == 0);
        CHECK(r.out == hpu::smi::format_table(fixed()));
        CHECK(r.err.empty());
    }
    SECTION("-L and --list")
    {
        for (const char *opt : {"-L", "--list"}) {
            const auto r = run({opt});
            CHECK(r.status == 0);
            CHECK(r.out == hpu::smi::format_list(fixed()));
        }
    }
    SECTION("-h")
    {
        const auto r = run({"-h"}, [](const hpu::smi::Request &) -> Snapshot { throw std::logic_error("must not gather"); });
        CHECK(r.status == 0);
        CHECK(r.out == hpu::smi::usage());
    }
    SECTION("--version")
    {
        const auto r = run({"--version"});
        CHECK(r.status == 0);
        CHECK(r.out == "hpu-smi 1.0.0 (libhpu 1.11.0)\n");
    }
    SECTION("unknown option")
    {
        const auto r = run({"-x"});
        CHECK(r.status == hpu::smi::kExitUsage);
        CHECK(r.out.empty());
        CHECK(r.err == "hpu-smi: unknown option '-x'\nTry 'hpu-smi -h' for help.\n");
    }
    SECTION("conflicting options")
    {
        CHECK(run({"-L", "--version"}).status == hpu::smi::kExitUsage);
    }
    SECTION("no devices: exit 6")
    {
        const auto r = run({}, [](const hpu::smi::Request &) {
            Snapshot s;
            s.driver_loaded = 1;
            return s;
        });
        CHECK(r.status == 6);
        CHECK(r.out.empty());
        CHECK(r.err == "No HPU devices were found\n");
    }
    SECTION("no devices and no driver: exit 6 with a hint")
    {
        const auto r = run({"-L"}, [](const hpu::smi::Request &) {
            Snapshot s;
            s.driver_loaded = 0;
            return s;
        });
        CHECK(r.status == 6);
        CHECK(r.err == "No HPU devices were found\n"
                       "hpu-smi: the hpu kernel driver is not loaded (try: modprobe hpu)\n");
    }
    SECTION("permission denied: exit 4")
    {
        const auto r = run({}, [](const hpu::smi::Request &) -> Snapshot { throw hpu::Error(-EACCES, "opening HPU 0"); });
        CHECK(r.status == hpu::smi::kExitPermission);
        CHECK(r.out.empty());
        CHECK(r.err == "hpu-smi: opening HPU 0: Permission denied (no access to the HPU device node)\n"
                       "hpu-smi: run as root or as a member of the group owning /dev/accel/accel*\n");
    }
    SECTION("other errors: exit 1")
    {
        const auto r = run({"-L"}, [](const hpu::smi::Request &) -> Snapshot { throw hpu::Error(-EIO, "querying HPU device info"); });
        CHECK(r.status == hpu::smi::kExitError);
        CHECK(r.err == "hpu-smi: querying HPU device info: Input/output error\n");
    }
}
