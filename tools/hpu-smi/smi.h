// SPDX-License-Identifier: MIT
// hpu-smi internals: the data (a Snapshot gathered from libhpu) apart from
// its presentation (pure formatting functions), and the command line.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SMI_SMI_H
#define HPU_SMI_SMI_H

#include <array>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace hpu::smi {

// Exit statuses (see Documentation/hpu-smi.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;        // any other failure
inline constexpr int kExitUsage = 2;        // bad command line
inline constexpr int kExitPermission = 4;   // no access to a device node
inline constexpr int kExitNoDevices = 6;    // no HPU found

struct DeviceSnapshot {
    unsigned int index = 0;
    std::string name;           // chip name, "H1"
    std::string pci_addr;       // "0000:01:00.0"
    std::string serial;
    std::array<std::uint8_t, 16> uuid{};
    std::uint64_t hbm_bytes = 0;
    std::uint16_t driver_major = 0;
    std::uint16_t driver_minor = 0;
    std::uint16_t driver_patch = 0;
};

struct Snapshot {
    std::uint32_t lib_version = 0;  // HPU_MAKE_VERSION packing
    int driver_loaded = -1;         // 1 yes, 0 no, -1 unknown
    std::vector<DeviceSnapshot> devices;
};

// Reads every device through libhpu. Throws hpu::Error.
Snapshot gather();

// Pure formatting.
std::string format_uuid(const std::array<std::uint8_t, 16> &uuid);
std::string format_version(std::uint32_t packed);
std::string format_driver_version(const DeviceSnapshot &d);
std::string format_list(const Snapshot &s);
std::string format_table(const Snapshot &s);
std::string usage();

using Gatherer = std::function<Snapshot()>;

// The whole command: parses args (without argv[0]), writes to out and err,
// returns the exit status.
int run(const std::vector<std::string> &args, std::ostream &out, std::ostream &err,
        const Gatherer &gather_fn);

} // namespace hpu::smi

#endif // HPU_SMI_SMI_H
