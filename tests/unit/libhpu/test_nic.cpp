// SPDX-License-Identifier: MIT
// libhpu 1.7: hpu_device_get_nic_port() against a mocked sysfs: where the
// port's interface is found, how each attribute is parsed, and the errors.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "hpu/hpu.h"
#include "fixture.h"
#include "mock_os.h"
#include "nic.h"

using hpu::test::make_answer;
using hpu::test::MockOs;

namespace {

constexpr const char *kBdf0 = "0000:00:03.0";
constexpr const char *kPci = "/sys/bus/pci/devices/0000:00:03.0";

void populate(MockOs &m)
{
    m.add_hpu(0, kBdf0, make_answer("SER-A", 1ULL << 31, 3, 4));
}

using Dev0 = hpu::test::OpenDevice<populate, 0>;

// An interface ifname with dev_port port under dir (a "net" directory),
// up with carrier, and counters 1000 + k.
void add_iface(MockOs &m, const std::string &dir, const std::string &ifname, unsigned int port)
{
    m.dirs[dir].push_back(ifname);
    const std::string d = dir + "/" + ifname;
    m.files[d + "/dev_port"] = std::to_string(port) + "\n";
    m.files[d + "/address"] = "02:48:50:0a:0b:0" + std::to_string(port) + "\n";
    m.files[d + "/mtu"] = "1500\n";
    m.files[d + "/flags"] = "0x1003\n";
    m.files[d + "/carrier"] = "1\n";
    m.files[d + "/speed"] = "100000\n";
    const char *stats[] = {"rx_packets", "tx_packets", "rx_bytes",   "tx_bytes", // NOLINT(modernize-avoid-c-arrays)
                           "rx_errors",  "tx_errors",  "rx_dropped", "tx_dropped"};
    unsigned int k = 0;
    for (const char *s : stats)
        m.files[d + "/statistics/" + s] = std::to_string(1000 + k++) + "\n";
}

// The aux device hpu.en.<id> under the PCI function, with its net dir.
std::string add_aux(MockOs &m, unsigned int id)
{
    const std::string name = "hpu.en." + std::to_string(id);
    m.dirs[kPci].push_back(name);
    return std::string(kPci) + "/" + name + "/net";
}

} // namespace

TEST_CASE("parse_mac: six colon-separated hex bytes, nothing else", "[libhpu][nic]")
{
    std::array<std::uint8_t, 6> mac{};
    CHECK(hpu::detail::parse_mac("02:48:50:0a:FF:c0\n", mac));
    CHECK(mac == std::array<std::uint8_t, 6>{0x02, 0x48, 0x50, 0x0a, 0xff, 0xc0});
    const auto bad = GENERATE(as<std::string>{}, "", "02:48:50:0a:ff", "02:48:50:0a:ff:c0:11", "02-48-50-0a-ff-c0",
                              "02:48:50:0a:ff:cg", "02:48:50:0a:ff:+1", "0248:50:0a:ff:c0:1");
    CHECK_FALSE(hpu::detail::parse_mac(bad, mac));
}

TEST_CASE_METHOD(Dev0, "NIC port: the interface under the port's aux device", "[libhpu][nic]")
{
    m.dirs["/sys/bus/pci/devices"];
    const std::string net = add_aux(m, 0);
    m.dirs[kPci].push_back("hwmon");
    add_iface(m, net, "eth2", 1);
    add_iface(m, net, "eth1", 0);
    hpu_nic_port p{};
    p.size = sizeof(p);

    SECTION("every field of an up port")
    {
        REQUIRE(hpu_device_get_nic_port(dev, 1, &p) == 0);
        CHECK(p.size == sizeof(p));
        CHECK(p.port == 1);
        CHECK(std::string(static_cast<const char *>(p.ifname)) == "eth2");
        CHECK(p.mac[0] == 0x02);
        CHECK(p.mac[5] == 0x01);
        CHECK(p.link == HPU_NIC_LINK_UP);
        CHECK(p.admin_up == 1);
        CHECK(p.mtu == 1500);
        CHECK(p.speed_mbps == 100000);
        CHECK(p.rx_packets == 1000);
        CHECK(p.tx_packets == 1001);
        CHECK(p.rx_bytes == 1002);
        CHECK(p.tx_bytes == 1003);
        CHECK(p.rx_errors == 1004);
        CHECK(p.tx_errors == 1005);
        CHECK(p.rx_dropped == 1006);
        CHECK(p.tx_dropped == 1007);
    }
    SECTION("no carrier; an interface that is down")
    {
        m.files[net + "/eth1/carrier"] = "0\n";
        m.files[net + "/eth1/speed"] = "-1\n";
        REQUIRE(hpu_device_get_nic_port(dev, 0, &p) == 0);
        CHECK(p.link == HPU_NIC_LINK_DOWN);
        CHECK(p.speed_mbps == 0);
        // Down: the kernel refuses carrier and speed with -EINVAL.
        m.files[net + "/eth1/flags"] = "0x1002\n";
        m.read_fail[net + "/eth1/carrier"] = -EINVAL;
        m.read_fail[net + "/eth1/speed"] = -EINVAL;
        REQUIRE(hpu_device_get_nic_port(dev, 0, &p) == 0);
        CHECK(p.link == HPU_NIC_LINK_UNKNOWN);
        CHECK(p.admin_up == 0);
        CHECK(p.speed_mbps == 0);
    }
    SECTION("a port without an interface, a port the device lacks")
    {
        CHECK(hpu_device_get_nic_port(dev, 2, &p) == -ENOENT);
        CHECK(hpu_device_get_nic_port(dev, 4, &p) == -EINVAL);
        CHECK(std::string(hpu_last_error()).find("port 4 does not exist") != std::string::npos);
        CHECK(hpu_device_get_nic_port(dev, UINT32_MAX, &p) == -EINVAL);
    }
    SECTION("malformed attributes: -EPROTO")
    {
        const auto [file, text] = GENERATE(table<std::string, std::string>({
            {"address", "02:48:50:0a:0b\n"},
            {"mtu", "big\n"},
            {"flags", "0xzz\n"},
            {"carrier", "2\n"},
            {"speed", "fast\n"},
            {"statistics/rx_bytes", "-5\n"},
            {"statistics/tx_dropped", "\n"},
        }));
        m.files[net + "/eth1/" + file] = text;
        CHECK(hpu_device_get_nic_port(dev, 0, &p) == -EPROTO);
    }
    SECTION("an unreadable attribute: its error")
    {
        m.read_fail[net + "/eth1/statistics/rx_packets"] = -EACCES;
        CHECK(hpu_device_get_nic_port(dev, 0, &p) == -EACCES);
        m.read_fail.clear();
        m.read_fail[net + "/eth1/carrier"] = -EIO;
        CHECK(hpu_device_get_nic_port(dev, 0, &p) == -EIO);
    }
    SECTION("an interface name too long for the structure")
    {
        add_iface(m, net, "a-very-long-name", 3);
        CHECK(hpu_device_get_nic_port(dev, 3, &p) == -EPROTO);
    }
    SECTION("arguments, and a caller's smaller structure")
    {
        CHECK(hpu_device_get_nic_port(nullptr, 0, &p) == -EINVAL);
        CHECK(hpu_device_get_nic_port(dev, 0, nullptr) == -EINVAL);
        p.size = 0;
        CHECK(hpu_device_get_nic_port(dev, 0, &p) == -EINVAL);
        hpu_nic_port small{};
        small.size = 8;
        small.mtu = 77;
        REQUIRE(hpu_device_get_nic_port(dev, 0, &small) == 0);
        CHECK(small.size == 8);
        CHECK(small.port == 0);
        CHECK(small.mtu == 77);
    }
    CHECK(hpu_close(dev) == 0);
}

TEST_CASE_METHOD(Dev0, "NIC port: an interface directly under the PCI function; no driver at all",
                 "[libhpu][nic]")
{
    hpu_nic_port p{};
    p.size = sizeof(p);
    // No hpu_en: nothing under the function.
    m.dirs[kPci];
    CHECK(hpu_device_get_nic_port(dev, 0, &p) == -ENOENT);
    add_iface(m, std::string(kPci) + "/net", "enp0s3", 2);
    REQUIRE(hpu_device_get_nic_port(dev, 2, &p) == 0);
    CHECK(std::string(static_cast<const char *>(p.ifname)) == "enp0s3");
    // A listing that fails for another reason than a missing directory.
    m.list_fail[std::string(kPci) + "/net"] = -EACCES;
    CHECK(hpu_device_get_nic_port(dev, 2, &p) == -EACCES);
    CHECK(hpu_close(dev) == 0);
}
