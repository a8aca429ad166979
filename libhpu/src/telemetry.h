// SPDX-License-Identifier: MIT
// Telemetry helpers shared by telemetry.cpp and the unit tests (internal to
// libhpu): fdinfo and sysfs parsing, the process scan.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SRC_TELEMETRY_H
#define HPU_SRC_TELEMETRY_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hpu/hpu.h"
#include "os.h"

namespace hpu::detail {

inline constexpr const char *kPciDevicesDir = "/sys/bus/pci/devices";
inline constexpr const char *kProcDir = "/proc";

// The keys of one DRM fdinfo file this library reads.
struct FdInfo {
    std::string driver;           // drm-driver
    std::string pdev;             // drm-pdev, as written
    std::uint64_t client_id = 0;  // drm-client-id
    std::uint64_t hbm_total = 0;  // drm-total-hbm, bytes
    std::uint64_t hbm_resident = 0; // drm-resident-hbm, bytes
    std::uint32_t num_engines = 0;  // highest drm-engine-dma<e> + 1
    std::array<std::uint64_t, HPU_MAX_ENGINES> engine_ns{};
};

// Parses fdinfo text; false when drm-client-id is missing or a known key
// has a malformed value (the file is then ignored).
bool parse_fdinfo(std::string_view text, FdInfo &out);

using EngineNs = std::array<std::uint64_t, HPU_MAX_ENGINES>;

// Adds to busy the engine ns one DRM client spent between two samples:
// now minus before (nullptr: a client that appeared in between, counted
// from 0; a counter that went backwards: a new client, counted from 0).
void add_client_busy(const EngineNs &now, const EngineNs *before, EngineNs &busy);

// Sets the utilisation of now from busy (the engine ns its clients spent,
// summed with add_client_busy) over interval_ns.
void apply_utilisation(hpu_process &now, const EngineNs &busy, std::uint64_t interval_ns);

// Scans /proc (once, or twice sample_ms apart when the first scan found a
// process); only the device at PCI address *only when given.
int list_processes(Os &os, const std::optional<std::string> &only, std::uint32_t sample_ms, std::vector<hpu_process> &out);

// Parses the four PCI link attributes; -EPROTO when malformed.
// The sysfs directory of the device's PCI function.
std::string pci_dir(const hpu_device *dev);

int parse_pcie_link(const std::string &cur_speed, const std::string &cur_width, const std::string &max_speed,
                    const std::string &max_width, hpu_pcie_link &out);

} // namespace hpu::detail

#endif // HPU_SRC_TELEMETRY_H
