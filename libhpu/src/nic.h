// SPDX-License-Identifier: MIT
// NIC port helpers shared by nic.cpp and the unit tests (internal to
// libhpu): where the port's network interface is in sysfs and how its
// attributes are parsed.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SRC_NIC_H
#define HPU_SRC_NIC_H

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "hpu/hpu.h"
#include "os.h"

namespace hpu::detail {

// Directory names of the Ethernet auxiliary devices under the PCI function
// ("<module>.<name>.<id>").
inline constexpr std::string_view kNicAuxPrefix = "hpu.en.";

// "02:48:50:0a:0b:0c" (a trailing newline allowed) into mac; false if the
// text is anything else.
bool parse_mac(std::string_view text, std::array<std::uint8_t, 6> &mac);

// The sysfs directory and name of the interface of port under the PCI
// directory pci: 0, -ENOENT if no interface has that dev_port, or a
// listing's error.
int find_nic_iface(Os &os, const std::string &pci, std::uint32_t port, std::string &dir, std::string &ifname);

// Reads the interface at dir into out (all but size, port and ifname).
int read_nic_port(Os &os, const std::string &dir, hpu_nic_port &out);

} // namespace hpu::detail

#endif // HPU_SRC_NIC_H
