// SPDX-License-Identifier: MIT
// libhpu 1.7: the NIC ports of a device as the network stack shows them.
// The hpu_en driver registers one Ethernet interface per port, a child of
// the port's auxiliary device ("hpu.en.<n>") under the PCI function, with
// dev_port set to the port index; everything here is read from sysfs.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common.h"
#include "compute.h"
#include "device.h"
#include "drm/hpu_accel.h"
#include "hpu/hpu.h"
#include "nic.h"
#include "os.h"
#include "telemetry.h"

using hpu::detail::guarded;

namespace hpu::detail {

namespace {

// A sysfs number: the whole file's text, blanks and the newline aside.
template <typename T>
std::optional<T> sysfs_num(std::string_view text)
{
    return parse_num<T>(trim(text));
}

// The directories that may hold the device's network interfaces: "net"
// under each hpu.en auxiliary device, and under the PCI function itself.
std::vector<std::string> net_dirs(Os &os, const std::string &pci)
{
    std::vector<std::string> names;
    std::vector<std::string> out;
    if (os.list_dir(pci, names) == 0) {
        std::sort(names.begin(), names.end());
        for (const auto &n : names) {
            if (n.starts_with(kNicAuxPrefix)) {
                std::string d = pci;
                d.append("/").append(n).append("/net");
                out.push_back(std::move(d));
            }
        }
    }
    out.push_back(pci + "/net");
    return out;
}

} // namespace

bool parse_mac(std::string_view text, std::array<std::uint8_t, 6> &mac)
{
    text = trim(text);
    if (text.size() != 17)
        return false;
    for (std::size_t i = 0; i < 6; ++i) {
        if (i > 0 && text[3 * i - 1] != ':')
            return false;
        const auto v = parse_num<std::uint8_t>(text.substr(3 * i, 2), 16);
        if (!v)
            return false;
        mac.at(i) = *v;
    }
    return true;
}

int find_nic_iface(Os &os, const std::string &pci, std::uint32_t port, std::string &dir, std::string &ifname)
{
    for (const auto &d : net_dirs(os, pci)) {
        std::vector<std::string> ifaces;
        const int lerr = os.list_dir(d, ifaces);
        if (lerr == -ENOENT) {
            continue;
        }
        if (lerr < 0) {
            return lerr;
        }
        std::sort(ifaces.begin(), ifaces.end());
        for (const auto &i : ifaces) {
            std::string text;
            std::string base = d;
            base.append("/").append(i);
            if (os.read_file(base + "/dev_port", text) < 0)
                continue;
            const auto p = sysfs_num<std::uint32_t>(text);
            if (p && *p == port) {
                dir = std::move(base);
                ifname = i;
                return 0;
            }
        }
    }
    return -ENOENT;
}

int read_nic_port(Os &os, const std::string &dir, hpu_nic_port &out)
{
    std::string text;
    std::array<std::uint8_t, 6> mac{};
    if (const int err = os.read_file(dir + "/address", text); err < 0)
        return err;
    if (!parse_mac(text, mac))
        return -EPROTO;
    std::memcpy(static_cast<std::uint8_t *>(out.mac), mac.data(), mac.size());
    if (const int err = os.read_file(dir + "/mtu", text); err < 0)
        return err;
    const auto mtu = sysfs_num<std::uint32_t>(text);
    if (!mtu)
        return -EPROTO;
    out.mtu = *mtu;
    if (const int err = os.read_file(dir + "/flags", text); err < 0)
        return err;
    std::string_view hex = trim(text);
    if (hex.starts_with("0x") || hex.starts_with("0X"))
        hex.remove_prefix(2);
    const auto flags = parse_num<std::uint32_t>(hex, 16);
    if (!flags)
        return -EPROTO;
    out.admin_up = (*flags & 1U) != 0U ? 1 : 0;
    // carrier and speed fail with -EINVAL while the interface is down.
    out.link = HPU_NIC_LINK_UNKNOWN;
    if (const int err = os.read_file(dir + "/carrier", text); err == 0) {
        const auto c = sysfs_num<std::uint32_t>(text);
        if (!c || *c > 1)
            return -EPROTO;
        out.link = *c == 1 ? HPU_NIC_LINK_UP : HPU_NIC_LINK_DOWN;
    } else if (err != -EINVAL) {
        return err;
    }
    out.speed_mbps = 0;
    if (const int err = os.read_file(dir + "/speed", text); err == 0) {
        const auto sp = sysfs_num<std::int64_t>(text);
        if (!sp)
            return -EPROTO;
        if (*sp > 0 && *sp <= UINT32_MAX)
            out.speed_mbps = static_cast<std::uint32_t>(*sp);
    } else if (err != -EINVAL) {
        return err;
    }
    const std::pair<const char *, std::uint64_t *> stats[] = { // NOLINT(modernize-avoid-c-arrays)
        {"rx_packets", &out.rx_packets}, {"tx_packets", &out.tx_packets}, {"rx_bytes", &out.rx_bytes},
        {"tx_bytes", &out.tx_bytes},     {"rx_errors", &out.rx_errors},   {"tx_errors", &out.tx_errors},
        {"rx_dropped", &out.rx_dropped}, {"tx_dropped", &out.tx_dropped},
    };
    for (const auto &[name, field] : stats) {
        if (const int err = os.read_file(dir + "/statistics/" + name, text); err < 0)
            return err;
        const auto v = sysfs_num<std::uint64_t>(text);
        if (!v)
            return -EPROTO;
        *field = *v;
    }
    return 0;
}

} // namespace hpu::detail

extern "C" {

HPU_EXPORT int hpu_device_get_nic_port(hpu_device_t *dev, uint32_t port, hpu_nic_port *out)
{
    hpu::detail::clear_error();
    if (dev == nullptr || out == nullptr || out->size < sizeof(out->size))
        return -EINVAL;
    drm_hpu_info_device info{};
    if (const int err = dev->kmd.info_device(info); err < 0)
        return err;
    if (port >= info.num_nic) {
        std::string msg = "port ";
        msg.append(std::to_string(port)).append(" does not exist: the device has ");
        msg.append(std::to_string(info.num_nic)).append(" NIC ports");
        return hpu::detail::set_error(-EINVAL, msg);
    }
    return guarded([dev, port, out]() {
        std::string dir;
        std::string ifname;
        const std::string pci = hpu::detail::pci_dir(dev);
        if (const int err = hpu::detail::find_nic_iface(dev->os(), pci, port, dir, ifname); err < 0)
            return err;
        if (ifname.size() >= HPU_NIC_IFNAME_MAX)
            return -EPROTO;
        hpu_nic_port p{};
        p.port = port;
        std::memcpy(static_cast<char *>(p.ifname), ifname.c_str(), ifname.size() + 1);
        if (const int err = hpu::detail::read_nic_port(dev->os(), dir, p); err < 0)
            return err;
        hpu::detail::fill_sized(p, out);
        return 0;
    });
}

} // extern "C"
