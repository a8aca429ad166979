// SPDX-License-Identifier: MIT
// hpu-smi internals: the data (a Snapshot gathered from libhpu, gather.cpp)
// apart from its presentation (pure formatting functions, format.cpp), and
// the command line (smi.cpp).
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SMI_SMI_H
#define HPU_SMI_SMI_H

#include <array>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
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

// What a view needs beyond INFO DEVICE (bits of Request::need).
inline constexpr unsigned kNeedTelemetry = 1U << 0U;  // INFO TELEMETRY (always with FIRMWARE)
inline constexpr unsigned kNeedFirmware = 1U << 1U;   // INFO FIRMWARE
inline constexpr unsigned kNeedErrors = 1U << 2U;     // INFO ERRORS
inline constexpr unsigned kNeedPcie = 1U << 3U;       // sysfs link attributes
inline constexpr unsigned kNeedProcesses = 1U << 4U;  // /proc fdinfo scan
inline constexpr unsigned kNeedNet = 1U << 5U;        // NIC ports' interfaces (sysfs)
inline constexpr unsigned kNeedAll = 0x3fU;

struct Request {
    unsigned need = 0;
    std::uint32_t sample_ms = 0; // per-process utilisation interval (0: none)
    // -i: only these devices (index, PCI address, UUID); empty: all. A
    // device named by index or PCI address alone is opened only if named;
    // a UUID needs every device opened until it is found.
    std::vector<std::string> ids;
};

// One NIC port: its network interface when the hpu_en driver registered
// one (present), else the error reading it (ENOENT: no interface).
struct NicPortSnapshot {
    unsigned int port = 0;
    bool present = false;
    int errnum = 0;
    hpu_nic_port nic{};
};

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
    std::uint32_t revision = 0;      // [15:8] major, [7:0] minor
    std::uint32_t spec_version = 0;
    unsigned int num_dma = 0;
    unsigned int num_tpc_engines = 0; // TPC engines to queue to (1: the cluster; 0 before spec 6)
    unsigned int num_mme_engines = 0; // MMEs to queue to
    unsigned int num_nic = 0;
    std::uint32_t reset_count = 0;   // soft resets the device completed
    bool has_errors = false;         // errors filled (kNeedErrors)
    hpu_error_counters errors{};
    bool has_telemetry = false;      // kNeedTelemetry
    hpu_telemetry telemetry{};
    bool has_firmware = false;       // kNeedFirmware
    hpu_firmware_info firmware{};
    bool has_pcie = false;           // kNeedPcie
    hpu_pcie_link pcie{};
    bool has_nic = false;            // kNeedNet: nic holds num_nic entries
    std::vector<NicPortSnapshot> nic;
    // A device that could not be read (mid-reset, gone, no access): the
    // error message and errno; only index and pci_addr (and what was read
    // before the failure) are valid.
    std::string error;
    int errnum = 0;
    bool has_info = true;            // false: name, serial, UUID unknown
};

struct ProcessSnapshot {
    unsigned int index = 0;          // of the device
    std::string pci_addr;
    int pid = 0;
    std::string name;
    std::uint32_t clients = 0;
    std::uint64_t hbm_bytes = 0;
    std::uint32_t util = HPU_UTIL_UNKNOWN; // hundredths of a percent
};

struct Snapshot {
    std::uint32_t lib_version = 0;  // HPU_MAKE_VERSION packing
    int driver_loaded = -1;         // 1 yes, 0 no, -1 unknown
    std::vector<DeviceSnapshot> devices;
    std::size_t discovered = 0;     // devices discovery found (before -i)
    bool has_processes = false;     // processes filled (kNeedProcesses)
    std::vector<ProcessSnapshot> processes; // ordered by device index, then pid
};

// Reads what req asks for through libhpu: discovers once, opens each
// device (that req.ids selects) once, scans /proc once for all devices
// (after closing them, and without hpu-smi itself). A device that fails
// is recorded with its error (DeviceSnapshot::error) and the others are
// still read; a PCI device without link attributes has an all-unknown
// link. Throws hpu::Error for what concerns every device (discovery, the
// process scan).
Snapshot gather(const Request &req);

// The device a reset was aimed at, once found.
struct ResetTarget {
    unsigned int index = 0;
    std::string pci_addr; // empty until the device was found
};
// Resets the HPU that id names (an index, a PCI address "dddd:bb:dd.f" or
// "bb:dd.f", or a UUID) through libhpu (hpu_device_reset), soft or hard;
// fills target once the device is found. Returns 0 or a negative errno:
// -ENODEV with an empty target when no HPU matches, -EINVAL for a
// malformed id, else the open's or the driver's error.
int reset_device(const std::string &id, bool hard, ResetTarget &target);
using Resetter = std::function<int(const std::string &id, bool hard, ResetTarget &target)>;

// Whether id (an index, a PCI address or a UUID) names d.
bool matches(const DeviceSnapshot &d, const std::string &id);
// Whether id may name d: matches(), or d failed before its UUID was known
// and id is a UUID.
bool may_match(const DeviceSnapshot &d, const std::string &id);
// Whether id has the form of an index, a PCI address or a UUID.
bool valid_id(const std::string &id);

// ---- Pure formatting ----
// s with every byte that is not valid UTF-8 and every control character
// (C0, DEL, C1; ESC included) replaced by '?': text from other users
// (process names) or devices must not reach a terminal raw.
std::string printable(const std::string &s);
std::string format_uuid(const std::array<std::uint8_t, 16> &uuid);
std::string format_version(std::uint32_t packed);
std::string format_fw_version(std::uint32_t packed);   // "1.2.3", "none" for 0
std::string format_driver_version(const DeviceSnapshot &d);
// "ok", "fw-booting", "fw-failed", "fw-halted" (needs the firmware info).
std::string device_status(const DeviceSnapshot &d);
// Whether the sensor values are valid (the firmware runs).
bool sensors_valid(const DeviceSnapshot &d);
std::string format_list(const Snapshot &s);
std::string format_table(const Snapshot &s);
// The errors view (-q -d ERRORS, --errors): the counters of each device
// that has them, a blank line between devices.
std::string format_errors(const Snapshot &s);

// -n views of the NIC ports (hl-smi's -n): link state, the interface and
// MAC of each port, the interface counters.
enum class NicView { Link, Ports, Stats };
// The NicView of a -n name, or std::nullopt.
std::optional<NicView> parse_nic_view(std::string_view name);
std::string format_nic(const Snapshot &s, NicView view);
// "up", "down", "unknown" (interface down) or "-" (no interface).
std::string nic_link_name(const NicPortSnapshot &p);

// Sections of -q (-d); kSectionAll is every one, in this order.
enum Section : unsigned {
    kProduct = 1U << 0U,
    kPower = 1U << 1U,
    kClock = 1U << 2U,
    kTemperature = 1U << 3U,
    kMemory = 1U << 4U,
    kUtilization = 1U << 5U,
    kEcc = 1U << 6U,
    kPcie = 1U << 7U,
    kNet = 1U << 8U,
    kProcesses = 1U << 9U,
    kErrors = 1U << 10U,
};
inline constexpr unsigned kSectionAll = 0x7ffU;
// The section of a -d name (any case), or 0.
unsigned parse_section(std::string_view name);
// What the sections need from gather().
unsigned section_needs(unsigned sections);
// The -q view of the selected sections, a blank line between devices.
std::string format_query(const Snapshot &s, unsigned sel);
// --json: one JSON document with the selected sections (see
// tools/hpu-smi/hpu-smi.schema.json).
std::string format_json(const Snapshot &s, unsigned sel);

// -Q fields (Documentation/hpu-smi.md). A field name's unit ("" for none)
// and what it needs; std::nullopt for an unknown name.
struct FieldInfo {
    std::string unit;
    unsigned need = 0;
};
std::optional<FieldInfo> field_info(const std::string &name);
// Every field name (for the help and the documentation check).
std::vector<std::string> field_names();
struct CsvOptions {
    bool header = true;
    bool units = true;
};
// The CSV header line of fields.
std::string format_csv_header(const std::vector<std::string> &names, const CsvOptions &o);
// One CSV line per device.
std::string format_csv_rows(const Snapshot &s, const std::vector<std::string> &names, const CsvOptions &o);

std::string usage();

using Gatherer = std::function<Snapshot(const Request &)>;

// What the command line acts on; tests replace each part.
struct Backend {
    Gatherer gather;
    Resetter reset;                            // -r
    std::function<bool()> is_root;             // -r: effective user id 0
    // -l: waits seconds; false when asked to stop (SIGINT, SIGTERM).
    std::function<bool(double seconds)> wait;
    // -l: blocks SIGINT and SIGTERM (before the first round) so that only
    // wait() takes them; false when that failed. Optional.
    std::function<bool()> block_signals;
};
// The real one (libhpu, geteuid, sigtimedwait).
Backend default_backend();

// The whole command: parses args (without argv[0]), writes to out and err,
// returns the exit status.
int run(const std::vector<std::string> &args, std::ostream &out, std::ostream &err, const Backend &be);
// The same with gather_fn, the rest real.
int run(const std::vector<std::string> &args, std::ostream &out, std::ostream &err,
        const Gatherer &gather_fn);

} // namespace hpu::smi

#endif // HPU_SMI_SMI_H
