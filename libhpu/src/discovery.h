// SPDX-License-Identifier: MIT
// Device discovery through /sys/class/accel (internal to libhpu).
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SRC_DISCOVERY_H
#define HPU_SRC_DISCOVERY_H

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hpu/hpu.h"

namespace hpu::detail {

class Os;

inline constexpr const char *kAccelClassDir = "/sys/class/accel";
inline constexpr const char *kAccelNodePrefix = "/dev/accel/accel";
inline constexpr const char *kDriverModuleDir = "/sys/module/hpu";
inline constexpr const char *kDriverName = "hpu";

struct Entry {
    unsigned int index = 0;
    std::string pci_addr; // normalised "dddd:bb:dd.f"
    std::string node;     // "/dev/accel/accelN"
};

// Normalises a PCI address ("dddd:bb:dd.f" or "bb:dd.f", any hex case) to
// "dddd:bb:dd.f" in lower case; std::nullopt when malformed.
std::optional<std::string> normalize_pci_addr(std::string_view in);

// Parses "accelN" into N; std::nullopt for any other name.
std::optional<unsigned int> parse_accel_name(std::string_view name);

// Finds the HPUs under /sys/class/accel, ordered by index. Returns 0 or a
// negative errno value. A missing /sys/class/accel means no device (0).
int discover(Os &os, std::vector<Entry> &out);

} // namespace hpu::detail

// A snapshot of the HPUs found (hpu_device_list_t of the C ABI).
struct hpu_device_list {
    std::vector<hpu_device_desc> entries;
};

#endif // HPU_SRC_DISCOVERY_H
