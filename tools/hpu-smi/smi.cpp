// SPDX-License-Identifier: MIT
// hpu-smi: the command line (see Documentation/hpu-smi.md). The data comes
// from gather.cpp, the text from format.cpp.
//
// Copyright (c) 2026 The hpu authors
#include "smi.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <ostream>
#include <utility>

#include "hpu/hpu.hpp"

namespace hpu::smi {

std::string usage()
{
    return "Usage: hpu-smi [OPTION]...\n"
           "Show the HPUs (hpu deep-learning accelerators) of this machine.\n"
           "\n"
           "  (no option)            summary table of every device, then the processes\n"
           "  -L, --list             one line per device: index, name, PCI address, serial, UUID\n"
           "  -q, --query            detailed query of every section (or those of -d)\n"
           "  -d, --display LIST     sections of -q and --json, comma separated: PRODUCT,\n"
           "                         POWER, CLOCK, TEMPERATURE, MEMORY, UTILIZATION, ECC,\n"
           "                         PCIE, NET, PROCESSES, ERRORS\n"
           "      --errors           the same as -q -d ERRORS\n"
           "  -Q, --query-hpu LIST   the given fields (comma separated) of every device, one\n"
           "                         CSV line per device (field names: see the manual)\n"
           "  -f, --format FORMAT    with -Q: csv[,noheader][,nounits] (default csv)\n"
           "      --json             everything -q shows, as one JSON document\n"
           "      --fw-versions      running, stored and minimum firmware version of each device\n"
           "  -n, --nic VIEW         the NIC ports: link (link state), ports (interface, MAC,\n"
           "                         MTU, speed) or stats (interface counters)\n"
           "  -i, --id LIST          only these devices: index, PCI address (dddd:bb:dd.f or\n"
           "                         bb:dd.f) or UUID, comma separated\n"
           "  -l, --loop [SECONDS]   repeat every SECONDS (default 1) until interrupted\n"
           "  -c, --count N          with -l: stop after N rounds\n"
           "      --sample-ms MS     interval over which process utilisation is measured\n"
           "                         (default 100; 0: not measured)\n"
           "  -r, --reset            reset the device given with -i (root only): soft reset\n"
           "                         (compute and DMA engines) unless --hard\n"
           "      --hard             with -r: hard reset (the whole device; HBM contents\n"
           "                         are lost and every process must reopen the device)\n"
           "  -h, --help             show this help and exit\n"
           "      --version          show the hpu-smi and libhpu versions and exit\n"
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

enum class Mode { Table, List, Query, Csv, Json, FwVersions, Nic, Reset, Help, Version };

struct Options {
    Mode mode = Mode::Table;
    std::optional<std::string> id; // -i as given
    std::vector<std::string> ids;   // -i split at commas
    bool hard = false;
    unsigned sections = 0;          // -d (0: not given)
    std::vector<std::string> fields; // -Q
    bool format_given = false;
    CsvOptions csv;
    bool loop = false;
    double interval = 1.0;
    long count = 0;                 // -c (0: unlimited)
    std::uint32_t sample_ms = 100;
    NicView nic = NicView::Link;    // -n
};

int usage_error(std::ostream &err, const std::string &msg)
{
    err << "hpu-smi: " << msg << "\nTry 'hpu-smi -h' for help.\n";
    return kExitUsage;
}

std::vector<std::string> split(const std::string &s)
{
    std::vector<std::string> out;
    std::size_t b = 0;
    for (;;) {
        const auto c = s.find(',', b);
        std::string part = s.substr(b, c == std::string::npos ? std::string::npos : c - b);
        const auto f = part.find_first_not_of(' ');
        const auto l = part.find_last_not_of(' ');
        out.push_back(f == std::string::npos ? std::string() : part.substr(f, l - f + 1));
        if (c == std::string::npos)
            return out;
        b = c + 1;
    }
}

std::optional<double> parse_seconds(const std::string &v)
{
    if (v.empty() || v.find_first_not_of("0123456789.") != std::string::npos)
        return std::nullopt;
    char *end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (end == nullptr || *end != '\0' || d < 0.01 || d > 86400.0)
        return std::nullopt;
    return d;
}

std::optional<long> parse_count(const std::string &v, long lo, long hi)
{
    long n = 0;
    const auto *e = v.data() + v.size();
    const auto [p, ec] = std::from_chars(v.data(), e, n);
    if (v.empty() || ec != std::errc() || p != e || n < lo || n > hi)
        return std::nullopt;
    return n;
}

// Parses args into o; returns kExitOk or a usage error (already reported).
int parse(const std::vector<std::string> &args, Options &o, std::ostream &err) // NOLINT(readability-function-cognitive-complexity)
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
            if (a.starts_with(longname + "="))
                return false;
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
            ok = o.mode == Mode::Json || set_mode(Mode::Query);
        } else if (a == "--json") {
            if (o.mode == Mode::Query)
                mode_set = false; // -q --json: the JSON of -q's data
            ok = set_mode(Mode::Json);
        } else if (a == "--errors") {
            ok = set_mode(Mode::Query);
            o.sections |= kErrors;
        } else if (a == "--fw-versions") {
            ok = set_mode(Mode::FwVersions);
        } else if (a == "-n" || a == "--nic" || a.starts_with("--nic=")) {
            std::string v;
            if (!value("--nic", v))
                return usage_error(err, "option '" + a + "' needs a view (link, ports or stats)");
            const auto view = parse_nic_view(v);
            if (!view)
                return usage_error(err, "unknown view '" + v + "' for -n (known: link, ports, stats)");
            ok = set_mode(Mode::Nic);
            o.nic = *view;
        } else if (a == "-r" || a == "--reset") {
            ok = set_mode(Mode::Reset);
        } else if (a == "--hard") {
            o.hard = true;
        } else if (a == "-d" || a == "--display" || a.starts_with("--display=")) {
            std::string v;
            if (!value("--display", v))
                return usage_error(err, "option '" + a + "' needs a value (a list of sections)");
            for (const auto &name : split(v)) {
                const unsigned sec = parse_section(name);
                if (sec == 0) {
                    return usage_error(err, "unknown section '" + name +
                                                "' for -d (known: PRODUCT, POWER, CLOCK, TEMPERATURE, MEMORY, "
                                                "UTILIZATION, ECC, PCIE, NET, PROCESSES, ERRORS)");
                }
                o.sections |= sec;
            }
        } else if (a == "-Q" || a == "--query-hpu" || a.starts_with("--query-hpu=")) {
            std::string v;
            if (!value("--query-hpu", v) || v.empty())
                return usage_error(err, "option '" + a + "' needs a list of fields");
            ok = set_mode(Mode::Csv);
            for (const auto &f : split(v)) {
                if (!field_info(f))
                    return usage_error(err, "unknown field '" + f + "' for -Q (see the manual for the field names)");
                o.fields.push_back(f);
            }
        } else if (a == "-f" || a == "--format" || a.starts_with("--format=")) {
            std::string v;
            if (!value("--format", v))
                return usage_error(err, "option '" + a + "' needs a value (csv[,noheader][,nounits])");
            const auto parts = split(v);
            if (parts.front() != "csv")
                return usage_error(err, "unknown format '" + v + "' (known: csv[,noheader][,nounits])");
            for (std::size_t k = 1; k < parts.size(); ++k) {
                if (parts[k] == "noheader") {
                    o.csv.header = false;
                } else if (parts[k] == "nounits") {
                    o.csv.units = false;
                } else {
                    return usage_error(err, "unknown format option '" + parts[k] + "' (known: noheader, nounits)");
                }
            }
            o.format_given = true;
        } else if (a == "-i" || a == "--id" || a.starts_with("--id=")) {
            std::string v;
            if (!value("--id", v) || v.empty())
                return usage_error(err, "option '" + a + "' needs a device (an index, a PCI address or a UUID)");
            if (o.id && *o.id != v)
                return usage_error(err, "only one -i may be given (it takes a comma-separated list)");
            o.id = v;
        } else if (a == "-l" || a == "--loop" || a.starts_with("--loop=")) {
            o.loop = true;
            std::string v;
            if (a.starts_with("--loop=")) {
                v = a.substr(7);
            } else if (i + 1 < args.size() && !args[i + 1].empty() &&
                       std::isdigit(static_cast<unsigned char>(args[i + 1][0])) != 0) {
                v = args[++i];
            }
            if (!v.empty()) {
                const auto sec = parse_seconds(v);
                if (!sec)
                    return usage_error(err, "bad interval '" + v + "' for -l (seconds, 0.01 to 86400)");
                o.interval = *sec;
            }
        } else if (a == "-c" || a == "--count" || a.starts_with("--count=")) {
            std::string v;
            const auto n = value("--count", v) ? parse_count(v, 1, 1000000000L) : std::nullopt;
            if (!n)
                return usage_error(err, "option '" + a + "' needs a count (1 or more)");
            o.count = *n;
        } else if (a == "--sample-ms" || a.starts_with("--sample-ms=")) {
            std::string v;
            const auto n = value("--sample-ms", v) ? parse_count(v, 0, 60000) : std::nullopt;
            if (!n)
                return usage_error(err, "option '" + a + "' needs milliseconds (0 to 60000)");
            o.sample_ms = static_cast<std::uint32_t>(*n);
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
    if (o.sections != 0 && o.mode != Mode::Query && o.mode != Mode::Json)
        return usage_error(err, "-d goes with -q or --json");
    if (o.format_given && o.mode != Mode::Csv)
        return usage_error(err, "-f goes with -Q");
    if (o.count != 0 && !o.loop)
        return usage_error(err, "-c goes with -l");
    if (o.loop && (o.mode == Mode::Reset || o.mode == Mode::Help || o.mode == Mode::Version))
        return usage_error(err, "-l does not go with -r, -h or --version");
    if (o.id) {
        o.ids = split(*o.id);
        for (const auto &id : o.ids) {
            if (!valid_id(id))
                return usage_error(err, "'" + id + "' is neither a device index, a PCI address nor a UUID");
        }
    }
    if (o.mode == Mode::Reset && !o.id)
        return usage_error(err, "-r needs the device to reset: hpu-smi -r -i <index|pci|uuid> [--hard]");
    if (o.mode == Mode::Reset && o.ids.size() != 1)
        return usage_error(err, "-r resets one device at a time");
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

Request request_of(const Options &o)
{
    Request r;
    r.sample_ms = o.sample_ms;
    r.ids = o.ids;
    switch (o.mode) {
    case Mode::Table:
        r.need = kNeedTelemetry | kNeedFirmware | kNeedProcesses;
        break;
    case Mode::Query:
    case Mode::Json:
        r.need = section_needs(o.sections != 0 ? o.sections : kSectionAll);
        break;
    case Mode::Csv:
        for (const auto &f : o.fields)
            r.need |= field_info(f)->need;
        break;
    case Mode::FwVersions:
        r.need = kNeedFirmware;
        break;
    case Mode::Nic:
        r.need = kNeedNet;
        break;
    default:
        break;
    }
    return r;
}

std::string format_fw_versions(const Snapshot &s)
{
    std::string out;
    for (const auto &d : s.devices) {
        const auto &f = d.firmware;
        if (!d.error.empty()) {
            out += "HPU " + std::to_string(d.index) + " (" + d.pci_addr + "): error: " + printable(d.error) + "\n";
            continue;
        }
        out += "HPU " + std::to_string(d.index) + " (" + d.pci_addr + "): running " +
               format_fw_version(f.running_version) + ", stored " + format_fw_version(f.stored_version) +
               ", minimum " + format_fw_version(f.min_version) + ", status " + device_status(d) + "\n";
    }
    return out;
}

// The errors of the devices that failed, on err; the exit status they make:
// kExitPermission when one was refused access, else kExitError (kExitOk
// when none failed).
int report_device_errors(const Snapshot &snap, std::ostream &err)
{
    int st = kExitOk;
    for (const auto &d : snap.devices) {
        if (d.error.empty())
            continue;
        err << "hpu-smi: HPU " << d.index << " (" << d.pci_addr << "): " << printable(d.error) << "\n";
        if (d.errnum == EACCES || d.errnum == EPERM) {
            st = kExitPermission;
        } else if (st == kExitOk) {
            st = kExitError;
        }
    }
    return st;
}

// One round: gather, select, print. Returns an exit status that ends the
// command (kExitOk to go on); dev_status receives the status the
// devices that failed make (report_device_errors).
int round(const Options &o, std::ostream &out, std::ostream &err, const Backend &be, bool first, int &dev_status)
{
    dev_status = kExitOk;
    Snapshot snap;
    try {
        snap = be.gather(request_of(o));
    } catch (const hpu::Error &e) {
        return report_error(e, err);
    } catch (const std::exception &e) {
        err << "hpu-smi: " << e.what() << "\n";
        return kExitError;
    }
    if (snap.devices.empty() && (o.ids.empty() || snap.discovered == 0)) {
        err << "No HPU devices were found\n";
        if (snap.driver_loaded == 0)
            err << "hpu-smi: the hpu kernel driver is not loaded (try: modprobe hpu)\n";
        return kExitNoDevices;
    }
    if (!o.ids.empty()) {
        for (const auto &id : o.ids) {
            if (std::none_of(snap.devices.begin(), snap.devices.end(),
                             [&id](const DeviceSnapshot &d) { return may_match(d, id); })) {
                err << "hpu-smi: no HPU matches '-i " << id << "'\n";
                return kExitNoDevices;
            }
        }
        std::erase_if(snap.devices, [&o](const DeviceSnapshot &d) {
            return std::none_of(o.ids.begin(), o.ids.end(), [&d](const std::string &id) { return may_match(d, id); });
        });
        std::erase_if(snap.processes, [&snap](const ProcessSnapshot &p) {
            return std::none_of(snap.devices.begin(), snap.devices.end(),
                                [&p](const DeviceSnapshot &d) { return d.index == p.index; });
        });
    }
    const unsigned sections = o.sections != 0 ? o.sections : kSectionAll;
    if (!first && (o.mode == Mode::Table || o.mode == Mode::Query || o.mode == Mode::FwVersions ||
                   o.mode == Mode::List || o.mode == Mode::Nic))
        out << "\n";
    switch (o.mode) {
    case Mode::List:
        out << format_list(snap);
        break;
    case Mode::Query:
        out << (sections == kErrors ? format_errors(snap) : format_query(snap, sections));
        break;
    case Mode::Json:
        out << format_json(snap, sections);
        break;
    case Mode::Csv:
        if (first && o.csv.header)
            out << format_csv_header(o.fields, o.csv);
        out << format_csv_rows(snap, o.fields, o.csv);
        break;
    case Mode::FwVersions:
        out << format_fw_versions(snap);
        break;
    case Mode::Nic:
        out << format_nic(snap, o.nic);
        break;
    default:
        out << format_table(snap);
        break;
    }
    out.flush();
    dev_status = report_device_errors(snap, err);
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
    // -l: SIGINT and SIGTERM are blocked before the first round, so they
    // never cut a round's output; every wait takes them (sigtimedwait).
    if (o.loop && be.block_signals && !be.block_signals()) {
        err << "hpu-smi: cannot block SIGINT and SIGTERM\n";
        return kExitError;
    }
    for (long n = 1;; ++n) {
        int device_st = kExitOk;
        if (const int st = round(o, out, err, be, n == 1, device_st); st != kExitOk)
            return st;
        // A device that failed does not end the loop; the status is that
        // of the last round.
        if (!o.loop || (o.count != 0 && n >= o.count))
            return device_st;
        if (!be.wait(o.interval))
            return kExitOk; // SIGINT or SIGTERM: a clean stop
    }
}

int run(const std::vector<std::string> &args, std::ostream &out, std::ostream &err, const Gatherer &gather_fn)
{
    Backend be = default_backend();
    be.gather = gather_fn;
    return run(args, out, err, be);
}

} // namespace hpu::smi
