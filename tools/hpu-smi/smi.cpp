// SPDX-License-Identifier: MIT
// hpu-smi: snapshot gathering, formatting and command-line handling.
//
// Copyright (c) 2026 The hpu authors
#include "smi.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <optional>
#include <ostream>
#include <sstream>
#include <utility>

#include <unistd.h>

#include "hpu/hpu.hpp"

namespace hpu::smi {

namespace {

Snapshot gather_impl(bool errors)
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
        if (errors) {
            d.errors = dev.error_counters();
            d.has_errors = true;
        }
        s.devices.push_back(std::move(d));
    }
    return s;
}

// An index: decimal digits only.
std::optional<unsigned int> parse_index(const std::string &id)
{
    unsigned int v = 0;
    const auto *end = id.data() + id.size();
    const auto [ptr, ec] = std::from_chars(id.data(), end, v);
    if (id.empty() || ec != std::errc() || ptr != end)
        return std::nullopt;
    return v;
}

// "bb:dd.f" -> "0000:bb:dd.f", lower case; other text unchanged.
std::string normalize_pci(std::string id)
{
    std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (std::count(id.begin(), id.end(), ':') == 1)
        id = "0000:" + id;
    return id;
}

} // namespace

Snapshot gather()
{
    return gather_impl(false);
}

Snapshot gather_errors()
{
    return gather_impl(true);
}

bool matches(const DeviceSnapshot &d, const std::string &id)
{
    if (const auto idx = parse_index(id))
        return *idx == d.index;
    return normalize_pci(id) == d.pci_addr;
}

int reset_device(const std::string &id, bool hard, ResetTarget &target)
{
    target = ResetTarget{};
    hpu_device_list_t *raw = nullptr;
    if (const int err = hpu_device_list_get(&raw); err < 0)
        return err;
    std::optional<unsigned int> index;
    for (std::size_t i = 0; i < hpu_device_list_size(raw); ++i) {
        const hpu_device_desc *d = hpu_device_list_at(raw, i);
        DeviceSnapshot snap;
        snap.index = d->index;
        snap.pci_addr = static_cast<const char *>(d->pci_addr);
        if (matches(snap, id)) {
            index = d->index;
            target.index = d->index;
            target.pci_addr = snap.pci_addr;
            break;
        }
    }
    hpu_device_list_free(raw);
    if (!index)
        return parse_index(id) || normalize_pci(id).find('.') != std::string::npos ? -ENODEV : -EINVAL;
    hpu_device_t *dev = nullptr;
    if (const int err = hpu_open_by_index(*index, &dev); err < 0)
        return err;
    const int err = hpu_device_reset(dev, hard ? HPU_RESET_HARD : HPU_RESET_SOFT);
    (void)hpu_close(dev);
    return err;
}

Backend default_backend()
{
    return Backend{gather, gather_errors, reset_device, []() { return ::geteuid() == 0; }};
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

std::string format_errors(const Snapshot &s)
{
    static constexpr std::size_t kLabel = 26;
    std::string out;
    bool first = true;
    for (const auto &d : s.devices) {
        if (!d.has_errors)
            continue;
        if (!first)
            out += "\n";
        first = false;
        out += "HPU " + std::to_string(d.index) + ": " + d.name + " (PCI " + d.pci_addr + ")\n";
        const hpu_error_counters &c = d.errors;
        const std::pair<const char *, std::uint64_t> rows[] = { // NOLINT(modernize-avoid-c-arrays)
            {"MMU faults", c.mmu_faults},
            {"Bad packets", c.bad_packets},
            {"Privilege violations", c.priv_violations},
            {"Engine hangs", c.engine_hangs},
            {"DMA bus errors", c.dma_bus_errors},
            {"ECC correctable", c.ecc_correctable},
            {"ECC uncorrectable", c.ecc_uncorrectable},
            {"Retired HBM pages", c.retired_pages},
            {"Job timeouts", c.job_timeouts},
            {"Heartbeat losses", c.heartbeat_losses},
            {"Firmware fatal errors", c.fw_fatal},
            {"Thermal events", c.thermal_events},
            {"Power events", c.power_events},
            {"Soft resets", c.soft_resets},
            {"Hard resets", c.hard_resets},
            {"Reset generation", c.reset_generation},
        };
        for (const auto &[label, value] : rows)
            out += "    " + pad(label, kLabel, false) + ": " + std::to_string(value) + "\n";
    }
    return out;
}

std::string usage()
{
    return "Usage: hpu-smi [OPTION]...\n"
           "Show the HPUs (hpu deep-learning accelerators) of this machine.\n"
           "\n"
           "  (no option)          summary table of every device\n"
           "  -L, --list           one line per device: index, name, PCI address, serial, UUID\n"
           "  -q, --query          detailed query; with -d ERRORS (the default section):\n"
           "                       error and reset counters of every device\n"
           "  -d, --display LIST   sections of -q: ERRORS\n"
           "      --errors         the same as -q -d ERRORS\n"
           "  -i, --id DEVICE      only the device with this index or PCI address\n"
           "  -r, --reset          reset the device given with -i (root only): soft reset\n"
           "                       (compute and DMA engines) unless --hard\n"
           "      --hard           with -r: hard reset (the whole device; HBM contents\n"
           "                       are lost and every process must reopen the device)\n"
           "  -h, --help           show this help and exit\n"
           "      --version        show the hpu-smi and libhpu versions and exit\n"
           "\n"
           "Exit status: 0 success, 1 error, 2 bad usage, 4 permission denied (or -r\n"
           "without root), 6 no HPU devices were found (or none matches -i).\n";
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

namespace {

enum class Mode { Table, List, Query, Reset, Help, Version };

struct Options {
    Mode mode = Mode::Table;
    std::optional<std::string> id;
    bool hard = false;
    bool display = false; // -d given
};

int usage_error(std::ostream &err, const std::string &msg)
{
    err << "hpu-smi: " << msg << "\nTry 'hpu-smi -h' for help.\n";
    return kExitUsage;
}

// Parses args into o; returns kExitOk or a usage error (already reported).
int parse(const std::vector<std::string> &args, Options &o, std::ostream &err)
{
    bool mode_set = false;
    const auto set_mode = [&](Mode m) {
        if (mode_set && o.mode != m)
            return false;
        o.mode = m;
        mode_set = true;
        return true;
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string &a = args[i];
        // The value of an option: "--opt=v", or the next argument.
        const auto value = [&](const std::string &longname, std::string &v) {
            if (a.size() > longname.size() + 1 && a.compare(0, longname.size() + 1, longname + "=") == 0) {
                v = a.substr(longname.size() + 1);
                return true;
            }
            if (i + 1 >= args.size())
                return false;
            v = args[++i];
            return true;
        };
        bool ok = true;
        if (a == "-L" || a == "--list") {
            ok = set_mode(Mode::List);
        } else if (a == "-h" || a == "--help") {
            ok = set_mode(Mode::Help);
        } else if (a == "--version") {
            ok = set_mode(Mode::Version);
        } else if (a == "-q" || a == "--query") {
            ok = set_mode(Mode::Query);
        } else if (a == "--errors") {
            ok = set_mode(Mode::Query);
            o.display = true;
        } else if (a == "-r" || a == "--reset") {
            ok = set_mode(Mode::Reset);
        } else if (a == "--hard") {
            o.hard = true;
        } else if (a == "-d" || a == "--display" || a.starts_with("--display=")) {
            std::string v;
            if (!value("--display", v))
                return usage_error(err, "option '" + a + "' needs a value (ERRORS)");
            std::string upper = v;
            std::transform(upper.begin(), upper.end(), upper.begin(),
                           [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
            if (upper != "ERRORS")
                return usage_error(err, "unknown section '" + v + "' for -d (known: ERRORS)");
            o.display = true;
        } else if (a == "-i" || a == "--id" || a.starts_with("--id=")) {
            std::string v;
            if (!value("--id", v) || v.empty())
                return usage_error(err, "option '" + a + "' needs a device (an index or a PCI address)");
            if (o.id && *o.id != v)
                return usage_error(err, "only one device may be given with -i");
            o.id = v;
        } else {
            err << "hpu-smi: unknown option '" << a << "'\nTry 'hpu-smi -h' for help.\n";
            return kExitUsage;
        }
        if (!ok) {
            err << "hpu-smi: conflicting options\nTry 'hpu-smi -h' for help.\n";
            return kExitUsage;
        }
    }
    if (o.hard && o.mode != Mode::Reset)
        return usage_error(err, "--hard goes with -r");
    if (o.display && o.mode != Mode::Query)
        return usage_error(err, "-d goes with -q");
    if (o.mode == Mode::Reset && !o.id)
        return usage_error(err, "-r needs the device to reset: hpu-smi -r -i <index|pci> [--hard]");
    return kExitOk;
}

int report_reset_error(int r, const Options &o, const ResetTarget &t, std::ostream &err)
{
    const std::string kind = o.hard ? "hard" : "soft";
    const int e = r < 0 ? -r : r;
    if (t.pci_addr.empty() && (e == ENODEV || e == EINVAL)) {
        if (e == EINVAL)
            return usage_error(err, "'" + *o.id + "' is neither a device index nor a PCI address");
        err << "hpu-smi: no HPU matches '-i " << *o.id << "'\n";
        return kExitNoDevices;
    }
    const std::string name = t.pci_addr.empty() ? "'" + *o.id + "'"
                                                : "HPU " + std::to_string(t.index) + " (" + t.pci_addr + ")";
    err << "hpu-smi: " << kind << " reset of " << name << " failed: " << hpu_strerror(r) << "\n";
    switch (e) {
    case EACCES:
    case EPERM:
        err << "hpu-smi: the kernel refused: resetting an HPU needs root\n";
        return kExitPermission;
    case EBUSY:
        err << "hpu-smi: the driver refused: a reset is already in progress or the device cannot be reset now; "
               "try again later\n";
        break;
    case EIO:
        err << (o.hard ? "hpu-smi: the device did not come back; see the kernel log (dmesg)\n"
                       : "hpu-smi: the soft reset failed; see the kernel log (dmesg); a hard reset (--hard) may help\n");
        break;
    case ENODEV:
        err << "hpu-smi: the device is gone (removed or unbound)\n";
        break;
    case EOPNOTSUPP:
        err << "hpu-smi: the loaded hpu driver offers no reset (too old?)\n";
        break;
    case EINVAL:
        err << "hpu-smi: the driver rejected the request\n";
        break;
    default:
        break;
    }
    return kExitError;
}

int do_reset(const Options &o, std::ostream &out, std::ostream &err, const Backend &be)
{
    if (!be.is_root()) {
        err << "hpu-smi: resetting an HPU needs root; run hpu-smi -r as root (e.g. with sudo)\n";
        return kExitPermission;
    }
    ResetTarget t;
    int r = 0;
    try {
        r = be.reset(*o.id, o.hard, t);
    } catch (const std::exception &e) {
        err << "hpu-smi: " << e.what() << "\n";
        return kExitError;
    }
    if (r < 0)
        return report_reset_error(r, o, t, err);
    out << "HPU " << t.index << " (" << t.pci_addr << "): " << (o.hard ? "hard" : "soft") << " reset done\n";
    return kExitOk;
}

} // namespace

int run(const std::vector<std::string> &args, std::ostream &out, std::ostream &err, const Backend &be)
{
    Options o;
    if (const int st = parse(args, o, err); st != kExitOk)
        return st;
    if (o.mode == Mode::Help) {
        out << usage();
        return kExitOk;
    }
    if (o.mode == Mode::Version) {
        out << "hpu-smi " << HPU_SMI_VERSION << " (libhpu " << format_version(hpu::version()) << ")\n";
        return kExitOk;
    }
    if (o.mode == Mode::Reset)
        return do_reset(o, out, err, be);

    Snapshot snap;
    try {
        snap = o.mode == Mode::Query ? be.gather_errors() : be.gather();
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
    if (o.id) {
        std::erase_if(snap.devices, [&o](const DeviceSnapshot &d) { return !matches(d, *o.id); });
        if (snap.devices.empty()) {
            err << "hpu-smi: no HPU matches '-i " << *o.id << "'\n";
            return kExitNoDevices;
        }
    }
    switch (o.mode) {
    case Mode::List:
        out << format_list(snap);
        break;
    case Mode::Query:
        out << format_errors(snap);
        break;
    default:
        out << format_table(snap);
        break;
    }
    return kExitOk;
}

int run(const std::vector<std::string> &args, std::ostream &out, std::ostream &err, const Gatherer &gather_fn)
{
    Backend be = default_backend();
    be.gather = gather_fn;
    return run(args, out, err, be);
}

} // namespace hpu::smi
