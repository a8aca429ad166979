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

#include "hpu/hpu.h"

namespace hpu::smi {

// Exit statuses (see Documentation/hpu-smi.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;        // any other failure
inline constexpr int kExitUsage = 2;        // bad command line
inline constexpr int kExitPermission = 4;   // no access to a device node, or not root (-r)
inline constexpr int kExitNoDevices = 6;    // no HPU found (or none matches -i)

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
    bool has_errors = false;         // errors filled (gather_errors)
    hpu_error_counters errors{};
};

struct Snapshot {
    std::uint32_t lib_version = 0;  // HPU_MAKE_VERSION packing
    int driver_loaded = -1;         // 1 yes, 0 no, -1 unknown
    std::vector<DeviceSnapshot> devices;
};

// Reads every device through libhpu. Throws hpu::Error.
Snapshot gather();
// gather() plus the error counters of every device (INFO ERRORS).
Snapshot gather_errors();

// The device a reset was aimed at, once found.
struct ResetTarget {
    unsigned int index = 0;
    std::string pci_addr; // empty until the device was found
};
// Resets the HPU that id names (an index, or a PCI address "dddd:bb:dd.f"
// or "bb:dd.f") through libhpu (hpu_device_reset), soft or hard; fills
// target once the device is found. Returns 0 or a negative errno: -ENODEV
// with an empty target when no HPU matches, -EINVAL for a malformed id,
// else the open's or the driver's error.
int reset_device(const std::string &id, bool hard, ResetTarget &target);
using Resetter = std::function<int(const std::string &id, bool hard, ResetTarget &target)>;

// Whether id (an index or a PCI address, see reset_device) names d.
bool matches(const DeviceSnapshot &d, const std::string &id);

// Pure formatting.
std::string format_uuid(const std::array<std::uint8_t, 16> &uuid);
std::string format_version(std::uint32_t packed);
std::string format_driver_version(const DeviceSnapshot &d);
std::string format_list(const Snapshot &s);
std::string format_table(const Snapshot &s);
// The errors view (-q -d ERRORS, --errors): the counters of each device
// that has them, a blank line between devices.
std::string format_errors(const Snapshot &s);
std::string usage();

using Gatherer = std::function<Snapshot()>;

// What the command line acts on; tests replace each part.
struct Backend {
    Gatherer gather;                   // the table and -L
    Gatherer gather_errors;            // -q -d ERRORS, --errors
    Resetter reset;                    // -r
    std::function<bool()> is_root;     // -r: effective user id 0
};
// The real one (libhpu, geteuid).
Backend default_backend();

// The whole command: parses args (without argv[0]), writes to out and err,
// returns the exit status.
int run(const std::vector<std::string> &args, std::ostream &out, std::ostream &err, const Backend &be);
// The same with gather_fn for the table and -L, the rest real.
int run(const std::vector<std::string> &args, std::ostream &out, std::ostream &err,
        const Gatherer &gather_fn);

} // namespace hpu::smi

#endif // HPU_SMI_SMI_H
