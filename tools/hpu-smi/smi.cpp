// SPDX-License-Identifier: MIT
// hpu-smi: snapshot gathering, formatting and command-line handling.
//
// Copyright (c) 2026 The hpu authors
#include "smi.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "hpu/hpu.hpp"

namespace hpu::smi {

Snapshot gather()
{
    Snapshot s;
    s.lib_version = hpu::version();
    s.driver_loaded = hpu_driver_loaded();
    if (s.driver_loaded < 0)
        s.driver_loaded = -1;
    for (const auto &entry : hpu::list_devices()) {
        const auto dev = hpu::Device::open(entry.index);
        const hpu_device_info info = dev.info();
        DeviceSnapshot d;
        d.index = entry.index;
        d.name = static_cast<const char *>(info.name);
        d.pci_addr = entry.pci_addr;
        d.serial = static_cast<const char *>(info.serial);
        std::copy(std::begin(info.uuid), std::end(info.uuid), d.uuid.begin());
        d.hbm_bytes = info.hbm_size;
        d.driver_major = info.driver_major;
        d.driver_minor = info.driver_minor;
        d.driver_patch = info.driver_patch;
        s.devices.push_back(std::move(d));
    }
    return s;
}

std::string format_uuid(const std::array<std::uint8_t, 16> &uuid)
{
    static constexpr std::string_view hex = "0123456789abcdef";
    std::string out;
    out.reserve(36);
    for (std::size_t i = 0; i < uuid.size(); ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out += '-';
        out += hex[uuid.at(i) >> 4U];
        out += hex[uuid.at(i) & 0xfU];
    }
    return out;
}

std::string format_version(std::uint32_t packed)
{
    return std::to_string((packed >> 16U) & 0xffU) + "." + std::to_string((packed >> 8U) & 0xffU) + "." +
           std::to_string(packed & 0xffU);
}

std::string format_driver_version(const DeviceSnapshot &d)
{
    return std::to_string(d.driver_major) + "." + std::to_string(d.driver_minor) + "." +
           std::to_string(d.driver_patch);
}

std::string format_list(const Snapshot &s)
{
    std::string out;
    for (const auto &d : s.devices) {
        out += "HPU " + std::to_string(d.index) + ": " + d.name + " (PCI " + d.pci_addr + ", SN " + d.serial +
               ", UUID " + format_uuid(d.uuid) + ")\n";
    }
    return out;
}

namespace {

struct Column {
    std::string title;
    bool right = false;
    std::size_t width = 0;
};

std::string pad(const std::string &text, std::size_t width, bool right)
{
    const std::string fill(width > text.size() ? width - text.size() : 0, ' ');
    return right ? fill + text : text + fill;
}

std::string rule(const std::vector<Column> &cols, char c)
{
    std::string line = "+";
    for (const auto &col : cols)
        line += std::string(col.width + 2, c) + "+";
    return line + "\n";
}

std::string row(const std::vector<Column> &cols, const std::vector<std::string> &cells)
{
    std::string line = "|";
    for (std::size_t i = 0; i < cols.size(); ++i)
        line += " " + pad(cells.at(i), cols.at(i).width, cols.at(i).right) + " |";
    return line + "\n";
}

} // namespace

std::string format_table(const Snapshot &s)
{
    std::vector<Column> cols = {
        {"HPU", true}, {"Name", false}, {"Bus-Id", false}, {"Serial", false}, {"HBM (MiB)", true}, {"Driver", false},
    };
    std::vector<std::vector<std::string>> rows;
    rows.reserve(s.devices.size());
    for (const auto &d : s.devices) {
        rows.push_back({std::to_string(d.index), d.name, d.pci_addr, d.serial,
                        std::to_string(d.hbm_bytes / (1024ULL * 1024ULL)), format_driver_version(d)});
    }
    for (auto &col : cols)
        col.width = col.title.size();
    for (const auto &r : rows) {
        for (std::size_t i = 0; i < cols.size(); ++i)
            cols.at(i).width = std::max(cols.at(i).width, r.at(i).size());
    }

    std::vector<std::string> titles;
    titles.reserve(cols.size());
    for (const auto &col : cols)
        titles.push_back(col.title);

    std::string out = "hpu-smi " + std::string(HPU_SMI_VERSION) + "  libhpu " + format_version(s.lib_version) +
                      "  devices: " + std::to_string(s.devices.size()) + "\n";
    out += rule(cols, '-');
    out += row(cols, titles);
    out += rule(cols, '=');
    for (const auto &r : rows)
        out += row(cols, r);
    out += rule(cols, '-');
    return out;
}

std::string usage()
{
    return "Usage: hpu-smi [OPTION]\n"
           "Show the HPUs (hpu deep-learning accelerators) of this machine.\n"
           "\n"
           "  (no option)    summary table of every device\n"
           "  -L, --list     one line per device: index, name, PCI address, serial, UUID\n"
           "  -h, --help     show this help and exit\n"
           "      --version  show the hpu-smi and libhpu versions and exit\n"
           "\n"
           "Exit status: 0 success, 1 error, 2 bad usage, 4 permission denied,\n"
           "6 no HPU devices were found.\n";
}

namespace {

int report_error(const hpu::Error &e, std::ostream &err)
{
    err << "hpu-smi: " << e.what() << "\n";
    if (e.errnum() == EACCES || e.errnum() == EPERM) {
        err << "hpu-smi: run as root or as a member of the group owning /dev/accel/accel*\n";
        return kExitPermission;
    }
    return kExitError;
}

} // namespace

int run(const std::vector<std::string> &args, std::ostream &out, std::ostream &err, const Gatherer &gather_fn)
{
    enum class Mode { Table, List, Help, Version } mode = Mode::Table;
    for (const auto &a : args) {
        Mode m = Mode::Table;
        if (a == "-L" || a == "--list") {
            m = Mode::List;
        } else if (a == "-h" || a == "--help") {
            m = Mode::Help;
        } else if (a == "--version") {
            m = Mode::Version;
        } else {
            err << "hpu-smi: unknown option '" << a << "'\nTry 'hpu-smi -h' for help.\n";
            return kExitUsage;
        }
        if (mode != Mode::Table && mode != m) {
            err << "hpu-smi: conflicting options\nTry 'hpu-smi -h' for help.\n";
            return kExitUsage;
        }
        mode = m;
    }
    if (mode == Mode::Help) {
        out << usage();
        return kExitOk;
    }
    if (mode == Mode::Version) {
        out << "hpu-smi " << HPU_SMI_VERSION << " (libhpu " << format_version(hpu::version()) << ")\n";
        return kExitOk;
    }

    Snapshot snap;
    try {
        snap = gather_fn();
    } catch (const hpu::Error &e) {
        return report_error(e, err);
    } catch (const std::exception &e) {
        err << "hpu-smi: " << e.what() << "\n";
        return kExitError;
    }
    if (snap.devices.empty()) {
        err << "No HPU devices were found\n";
        if (snap.driver_loaded == 0)
            err << "hpu-smi: the hpu kernel driver is not loaded (try: modprobe hpu)\n";
        return kExitNoDevices;
    }
    out << (mode == Mode::List ? format_list(snap) : format_table(snap));
    return kExitOk;
}

} // namespace hpu::smi
