// SPDX-License-Identifier: MIT
// hpu-smi's data path (gather.cpp) on the mocked OS layer: -i opens only
// the devices it names, a device that fails is reported in its row while
// the others print, a PCI device without link attributes has an unknown
// link, and -l blocks SIGINT/SIGTERM before the first round.
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <csignal>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <pthread.h>

#include <catch2/catch_test_macros.hpp>

#include "mock_os.h"
#include "smi.h"
#include "smi_run.h"

using hpu::smi::Backend;
using hpu::test::make_answer;
using hpu::test::MockOs;
using hpu::test::ScopedMock;

using hpu::test::run;

namespace {

Backend backend(int &waits)
{
    Backend be = hpu::smi::default_backend();
    be.wait = [&waits](double) {
        ++waits;
        return true;
    };
    be.block_signals = []() { return true; };
    return be;
}

void populate(MockOs &m)
{
    m.add_hpu(0, "0000:00:03.0", make_answer("SER-A", 1ULL << 31, 3));
    m.add_hpu(1, "0000:00:04.0", make_answer("SER-B", 1ULL << 32, 4, 4));
}

} // namespace

TEST_CASE("option -i opens only the devices it names", "[smi][gather]")
{
    MockOs m;
    populate(m);
    const ScopedMock scoped(m);
    int waits = 0;
    m.open_fail["/dev/accel/accel0"] = -EACCES; // device 0 must not be touched
    const auto r = run({"-Q", "index,serial", "-f", "csv,noheader", "-i", "1"}, backend(waits));
    CHECK(r.status == 0);
    CHECK(r.out == "1, SER-B\n");
    CHECK(r.err.empty());
    CHECK(m.open_calls == 1);
    // By PCI address too; an index no device has is still exit 6.
    CHECK(run({"-L", "-i", "00:04.0"}, backend(waits)).status == 0);
    const auto none = run({"-L", "-i", "7"}, backend(waits));
    CHECK(none.status == hpu::smi::kExitNoDevices);
    CHECK(none.err == "hpu-smi: no HPU matches '-i 7'\n");
}

TEST_CASE("a device that fails shows its error; the others print", "[smi][gather]")
{
    MockOs m;
    populate(m);
    const ScopedMock scoped(m);
    int waits = 0;
    m.open_fail["/dev/accel/accel0"] = -EIO;
    SECTION("CSV: its row, exit 1")
    {
        const auto r = run({"-Q", "index,bus_id,serial,memory.used,status", "-f", "csv,noheader"}, backend(waits));
        CHECK(r.status == hpu::smi::kExitError);
        REQUIRE(r.out.find("0, 0000:00:03.0, n/a, n/a, error\n") == 0);
        CHECK(r.out.find("1, 0000:00:04.0, SER-B, ") != std::string::npos);
        CHECK(r.err.starts_with("hpu-smi: HPU 0 (0000:00:03.0): "));
    }
    SECTION("-q: an Error item instead of its sections; no access is exit 4")
    {
        m.open_fail["/dev/accel/accel0"] = -EACCES;
        const auto r = run({"-q", "-d", "MEMORY"}, backend(waits));
        CHECK(r.status == hpu::smi::kExitPermission);
        CHECK(r.out.find("HPU 0:  (PCI 0000:00:03.0)\n    Error                     : ") == 0);
        CHECK(r.out.find("HPU 1: ") != std::string::npos);
    }
    SECTION("-l: the loop goes on")
    {
        const auto r = run({"-L", "-l", "-c", "3"}, backend(waits));
        CHECK(waits == 2);
        CHECK(r.status == hpu::smi::kExitError); // of the last round
        CHECK(r.out.find("HPU 0: unknown (PCI 0000:00:03.0, error: ") == 0);
    }
}

TEST_CASE("a PCI device without link attributes has an unknown link", "[smi][gather]")
{
    MockOs m;
    populate(m);
    const ScopedMock scoped(m);
    int waits = 0;
    const auto r = run({"-Q", "index,pcie.link.gen.current,pcie.link.width.max", "-f", "csv,noheader"}, backend(waits));
    CHECK(r.status == 0);
    CHECK(r.out == "0, unknown, unknown\n1, unknown, unknown\n");
    CHECK(r.err.empty());
}

TEST_CASE("option -l: a signal while the first round gathers ends the loop cleanly", "[smi][loop]")
{
    // With the real backend, SIGINT and SIGTERM are blocked before the first
    // round: one raised while it gathers waits, the round prints whole, and
    // the wait takes it (exit 0). Before, it killed the process.
    Backend be = hpu::smi::default_backend();
    int rounds = 0;
    be.gather = [&rounds](const hpu::smi::Request &) {
        ++rounds;
        (void)::raise(SIGINT);
        hpu::smi::Snapshot s;
        s.devices.resize(1);
        s.devices[0].pci_addr = "0000:01:00.0";
        return s;
    };
    const auto r = run({"-Q", "index", "-f", "csv,noheader", "-l", "60"}, be);
    CHECK(r.status == 0);
    CHECK(r.out == "0\n");
    CHECK(rounds == 1);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    (void)::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

TEST_CASE("option -n reads each port's interface from sysfs", "[smi][gather][nic]")
{
    MockOs m;
    populate(m);
    const ScopedMock scoped(m);
    int waits = 0;
    // Device 1 (4 ports): hpu_en bound, ports 0 and 2 have interfaces.
    const std::string pci = "/sys/bus/pci/devices/0000:00:04.0";
    const std::string net = pci + "/hpu.en.1/net";
    m.dirs[pci] = {"hpu.en.1", "hwmon"};
    for (const auto &[ifname, port, carrier] :
         {std::tuple<std::string, int, const char *>{"eth5", 2, "0\n"}, {"eth4", 0, "1\n"}}) {
        m.dirs[net].push_back(ifname);
        std::string d = net;
        d.append("/").append(ifname);
        m.files[d + "/dev_port"] = std::to_string(port) + "\n";
        m.files[d + "/address"] = "02:48:50:00:00:0" + std::to_string(port) + "\n";
        m.files[d + "/mtu"] = "1500\n";
        m.files[d + "/flags"] = "0x1003\n";
        m.files[d + "/carrier"] = carrier;
        m.files[d + "/speed"] = "100000\n";
        for (const char *s : {"rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "rx_errors", "tx_errors",
                              "rx_dropped", "tx_dropped"})
            m.files[d + "/statistics/" + s] = "7\n";
    }
    const auto r = run({"-n", "link", "-i", "1"}, backend(waits));
    CHECK(r.status == 0);
    CHECK(r.out == "HPU 1 (0000:00:04.0) port 0: eth4 up\n"
                   "HPU 1 (0000:00:04.0) port 1: no interface (is hpu_en loaded?)\n"
                   "HPU 1 (0000:00:04.0) port 2: eth5 down\n"
                   "HPU 1 (0000:00:04.0) port 3: no interface (is hpu_en loaded?)\n");
    const auto q = run({"-Q", "index,nic.links_up,nic.link_state", "-f", "csv,noheader"}, backend(waits));
    CHECK(q.status == 0);
    CHECK(q.out == "0, 0, -|-|-|-|-|-|-|-|-|-\n1, 1, up|-|down|-\n");
}
