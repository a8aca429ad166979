// SPDX-License-Identifier: MIT
// hpu-smi: formatting. Pure functions from a Snapshot to text; nothing here
// reads the system. The labels, field names and layouts are documented in
// Documentation/hpu-smi.md and kept stable.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "smi.h"

namespace hpu::smi {

namespace {

constexpr const char *kNa = "n/a";

// The code point of the UTF-8 sequence at s[i] and its length in bytes;
// length 0 for a byte that starts no valid (shortest-form) sequence.
std::pair<std::uint32_t, std::size_t> utf8_at(const std::string &s, std::size_t i)
{
    const auto b = [&s](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned c = b(i);
    if (c < 0x80U)
        return {c, 1};
    std::size_t len = 0;
    std::uint32_t cp = 0;
    unsigned lo = 0x80U;
    unsigned hi = 0xbfU;
    if (c >= 0xc2U && c <= 0xdfU) {
        len = 2;
        cp = c & 0x1fU;
    } else if (c >= 0xe0U && c <= 0xefU) {
        len = 3;
        cp = c & 0x0fU;
        lo = c == 0xe0U ? 0xa0U : 0x80U;
        hi = c == 0xedU ? 0x9fU : 0xbfU; // no surrogates
    } else if (c >= 0xf0U && c <= 0xf4U) {
        len = 4;
        cp = c & 0x07U;
        lo = c == 0xf0U ? 0x90U : 0x80U;
        hi = c == 0xf4U ? 0x8fU : 0xbfU; // nothing above U+10FFFF
    } else {
        return {0, 0};
    }
    if (i + len > s.size())
        return {0, 0};
    for (std::size_t k = 1; k < len; ++k) {
        const unsigned cc = b(i + k);
        if (cc < (k == 1 ? lo : 0x80U) || cc > (k == 1 ? hi : 0xbfU))
            return {0, 0};
        cp = (cp << 6U) | (cc & 0x3fU);
    }
    return {cp, len};
}

// C0 and C1 control characters and DEL: what a terminal may act on.
bool is_control(std::uint32_t cp)
{
    return cp < 0x20U || (cp >= 0x7fU && cp <= 0x9fU);
}

} // namespace

std::string printable(const std::string &s)
{
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const auto [cp, len] = utf8_at(s, i);
        if (len == 0 || is_control(cp)) {
            out += '?';
            i += len == 0 ? 1 : len;
            continue;
        }
        out.append(s, i, len);
        i += len;
    }
    return out;
}

namespace {

template <typename... Args>
std::string fmt(const char *f, Args... args)
{
    std::array<char, 64> buf{};
    const int n = std::snprintf(buf.data(), buf.size(), f, args...); // NOLINT(cppcoreguidelines-pro-type-vararg)
    return n < 0 ? std::string() : std::string(buf.data(), std::min<std::size_t>(static_cast<std::size_t>(n), buf.size() - 1));
}

std::string celsius(std::int32_t mc)
{
    return fmt("%.1f", static_cast<double>(mc) / 1000.0);
}
std::string watts(std::uint32_t mw)
{
    return fmt("%.2f", static_cast<double>(mw) / 1000.0);
}
std::string joules(std::uint64_t uj)
{
    return fmt("%.3f", static_cast<double>(uj) / 1e6);
}
std::string mib(std::uint64_t bytes)
{
    return std::to_string(bytes >> 20U);
}
// Hundredths of a percent -> whole percent, rounded.
std::string percent(std::uint32_t hundredths)
{
    return std::to_string((hundredths + 50U) / 100U);
}

std::uint64_t usable(const DeviceSnapshot &d)
{
    return d.telemetry.hbm_total;
}
std::uint64_t free_bytes(const DeviceSnapshot &d)
{
    return d.telemetry.hbm_total > d.telemetry.hbm_used ? d.telemetry.hbm_total - d.telemetry.hbm_used : 0;
}
// Telemetry entries are engine indexes: the DMA engines from 0, the TPC
// engine at HPU_ENGINE_INDEX_TPC, the MMEs from HPU_ENGINE_INDEX_MME(0).
std::uint32_t dma_entries(const DeviceSnapshot &d)
{
    std::uint32_t n = std::min<std::uint32_t>(d.telemetry.num_engines, HPU_ENGINE_INDEX_TPC);
    if (d.num_dma != 0)
        n = std::min<std::uint32_t>(n, d.num_dma);
    return n;
}
bool has_tpc(const DeviceSnapshot &d)
{
    return d.num_tpc_engines > 0 && d.telemetry.num_engines > HPU_ENGINE_INDEX_TPC;
}
std::uint32_t mme_entries(const DeviceSnapshot &d)
{
    std::uint32_t n = 0;
    while (n < d.num_mme_engines && HPU_ENGINE_INDEX_MME(n) < d.telemetry.num_engines &&
           HPU_ENGINE_INDEX_MME(n) < HPU_MAX_ENGINES)
        ++n;
    return n;
}
std::uint32_t util_at(const DeviceSnapshot &d, std::uint32_t index)
{
    return index < HPU_MAX_ENGINES ? d.telemetry.engine_util[index] : 0; // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
}
// Mean utilisation of the n entries from first (0 for none).
std::uint32_t mean_of(const DeviceSnapshot &d, std::uint32_t first, std::uint32_t n)
{
    if (n == 0)
        return 0;
    std::uint64_t sum = 0;
    for (std::uint32_t i = 0; i < n; ++i)
        sum += util_at(d, first + i);
    return static_cast<std::uint32_t>((sum + n / 2) / n);
}
// Mean utilisation of the DMA engines.
std::uint32_t mean_util(const DeviceSnapshot &d)
{
    return mean_of(d, 0, dma_entries(d));
}
std::uint32_t mme_mean(const DeviceSnapshot &d)
{
    return mean_of(d, HPU_ENGINE_INDEX_MME(0), mme_entries(d));
}

std::string bits(std::uint32_t v, const std::vector<std::pair<std::uint32_t, const char *>> &names, const char *sep)
{
    std::string out;
    for (const auto &[bit, name] : names) {
        if ((v & bit) != 0U) {
            if (!out.empty())
                out += sep;
            out += name;
        }
    }
    return out.empty() ? "none" : out;
}

const std::vector<std::pair<std::uint32_t, const char *>> &throttle_names()
{
    static const std::vector<std::pair<std::uint32_t, const char *>> n = {
        {HPU_CLK_THROTTLE_THERMAL, "thermal"}, {HPU_CLK_THROTTLE_POWER, "power"}};
    return n;
}
const std::vector<std::pair<std::uint32_t, const char *>> &alarm_names()
{
    static const std::vector<std::pair<std::uint32_t, const char *>> n = {{HPU_OVER_TEMP_MAX, "temp-max"},
                                                                          {HPU_OVER_TEMP_CRIT, "temp-crit"},
                                                                          {HPU_OVER_POWER_CAP, "power-cap"},
                                                                          {HPU_OVER_HBM_TEMP_MAX, "hbm-temp-max"}};
    return n;
}

std::string fw_state_name(std::uint32_t s)
{
    switch (s) {
    case HPU_FIRMWARE_RUNNING:
        return "running";
    case HPU_FIRMWARE_BOOTING:
        return "booting";
    case HPU_FIRMWARE_FAILED:
        return "failed";
    case HPU_FIRMWARE_HALTED:
        return "halted";
    default:
        return "unknown-" + std::to_string(s);
    }
}

std::string fw_source_name(std::uint32_t s)
{
    switch (s) {
    case HPU_FIRMWARE_FROM_NONE:
        return "none";
    case HPU_FIRMWARE_FROM_HOST:
        return "host";
    case HPU_FIRMWARE_FROM_FLASH:
        return "flash";
    default:
        return "unknown-" + std::to_string(s);
    }
}

std::string link_value(std::uint32_t v)
{
    return v == 0 ? "unknown" : std::to_string(v);
}

std::string revision(const DeviceSnapshot &d)
{
    return std::to_string((d.revision >> 8U) & 0xffU) + "." + std::to_string(d.revision & 0xffU);
}

// The processes of device index d.
std::vector<const ProcessSnapshot *> processes_of(const Snapshot &s, unsigned int index)
{
    std::vector<const ProcessSnapshot *> out;
    for (const auto &p : s.processes) {
        if (p.index == index)
            out.push_back(&p);
    }
    return out;
}

} // namespace

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

std::string format_fw_version(std::uint32_t packed)
{
    return packed == 0 ? "none" : format_version(packed);
}

std::string format_driver_version(const DeviceSnapshot &d)
{
    return std::to_string(d.driver_major) + "." + std::to_string(d.driver_minor) + "." +
           std::to_string(d.driver_patch);
}

bool sensors_valid(const DeviceSnapshot &d)
{
    return d.has_telemetry && d.has_firmware && d.firmware.state == HPU_FIRMWARE_RUNNING;
}

std::string device_status(const DeviceSnapshot &d)
{
    if (!d.error.empty())
        return "error";
    if (!d.has_firmware)
        return kNa;
    switch (d.firmware.state) {
    case HPU_FIRMWARE_RUNNING:
        return "ok";
    case HPU_FIRMWARE_BOOTING:
        return "fw-booting";
    case HPU_FIRMWARE_FAILED:
        return "fw-failed";
    case HPU_FIRMWARE_HALTED:
        return "fw-halted";
    default:
        return "fw-unknown";
    }
}

std::string format_list(const Snapshot &s)
{
    std::string out;
    for (const auto &d : s.devices) {
        if (!d.has_info) {
            out += "HPU " + std::to_string(d.index) + ": unknown (PCI " + printable(d.pci_addr) +
                   ", error: " + printable(d.error) + ")\n";
            continue;
        }
        out += "HPU " + std::to_string(d.index) + ": " + printable(d.name) + " (PCI " + printable(d.pci_addr) +
               ", SN " + printable(d.serial) + ", UUID " + format_uuid(d.uuid) + ")\n";
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

std::string boxed(std::vector<Column> cols, std::vector<std::vector<std::string>> rows)
{
    for (auto &r : rows) {
        for (auto &cell : r)
            cell = printable(cell);
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
    std::string out = rule(cols, '-');
    out += row(cols, titles);
    out += rule(cols, '=');
    for (const auto &r : rows)
        out += row(cols, r);
    out += rule(cols, '-');
    return out;
}

} // namespace

std::string format_table(const Snapshot &s)
{
    std::vector<std::vector<std::string>> rows;
    rows.reserve(s.devices.size());
    std::string drivers;
    for (const auto &d : s.devices) {
        const bool ok = sensors_valid(d);
        const auto &t = d.telemetry;
        const std::string na = d.has_telemetry ? "-" : kNa;
        rows.push_back({std::to_string(d.index), d.name, d.pci_addr, d.serial,
                        ok ? fmt("%.0f C", static_cast<double>(t.temp_die_mc) / 1000.0) : na,
                        ok ? fmt("%.0f W / %.0f W", static_cast<double>(t.power_mw) / 1000.0,
                                 static_cast<double>(t.power_cap_mw) / 1000.0)
                           : na,
                        d.has_telemetry ? mib(t.hbm_used) + " / " + mib(d.hbm_bytes) + " MiB" : kNa,
                        d.has_telemetry ? percent(mean_util(d)) + " %" : kNa,
                        !d.has_telemetry ? kNa : has_tpc(d) ? percent(util_at(d, HPU_ENGINE_INDEX_TPC)) + " %" : "-",
                        !d.has_telemetry ? kNa : mme_entries(d) > 0 ? percent(mme_mean(d)) + " %" : "-",
                        ok ? std::to_string(t.clk_core_mhz) + " MHz" : na, device_status(d)});
        const std::string v = format_driver_version(d);
        if (drivers.find(v) == std::string::npos)
            drivers += (drivers.empty() ? "" : ",") + v;
    }
    std::string out = "hpu-smi " + std::string(HPU_SMI_VERSION) + "  libhpu " + format_version(s.lib_version) +
                      "  driver " + (drivers.empty() ? std::string(kNa) : drivers) +
                      "  devices: " + std::to_string(s.devices.size()) + "\n";
    out += boxed({{"HPU", true},
                  {"Name"},
                  {"Bus-Id"},
                  {"Serial"},
                  {"Temp", true},
                  {"Power / Cap", true},
                  {"HBM Used / Total", true},
                  {"DMA", true},
                  {"TPC", true},
                  {"MME", true},
                  {"Clock", true},
                  {"Status"}},
                 rows);
    if (!s.has_processes)
        return out;
    if (s.processes.empty())
        return out + "Processes: none\n";
    std::vector<std::vector<std::string>> prows;
    prows.reserve(s.processes.size());
    for (const auto &p : s.processes) {
        prows.push_back({std::to_string(p.index), std::to_string(p.pid), p.name, mib(p.hbm_bytes),
                         p.util == HPU_UTIL_UNKNOWN ? "-" : percent(p.util) + " %"});
    }
    return out + "Processes:\n" +
           boxed({{"HPU", true}, {"PID", true}, {"Process"}, {"HBM (MiB)", true}, {"Util", true}}, prows);
}

namespace {

constexpr std::size_t kLabel = 26;

std::string item(const std::string &label, const std::string &value)
{
    return "    " + pad(label, kLabel, false) + ": " + printable(value) + "\n";
}

std::string mac_text(const hpu_nic_port &n)
{
    return fmt("%02x:%02x:%02x:%02x:%02x:%02x", n.mac[0], n.mac[1], n.mac[2], n.mac[3], n.mac[4], n.mac[5]);
}

// Why a port has no data: "no interface (hpu_en not loaded)" or the error.
std::string nic_absent(const NicPortSnapshot &p)
{
    if (p.errnum == ENOENT)
        return "no interface (is hpu_en loaded?)";
    return std::string("error: ") + std::strerror(p.errnum);
}

std::string nic_summary(const NicPortSnapshot &p)
{
    if (!p.present)
        return nic_absent(p);
    const auto &n = p.nic;
    return printable(static_cast<const char *>(n.ifname)) + ", " + mac_text(n) + ", link " + nic_link_name(p) + ", " +
           (n.speed_mbps == 0 ? std::string("speed unknown") : std::to_string(n.speed_mbps) + " Mb/s") + ", MTU " +
           std::to_string(n.mtu);
}

std::string nic_counts(std::uint64_t packets, std::uint64_t bytes, std::uint64_t errors, std::uint64_t dropped)
{
    return std::to_string(packets) + " packets, " + std::to_string(bytes) + " bytes, " + std::to_string(errors) +
           " errors, " + std::to_string(dropped) + " dropped";
}

unsigned links_up(const DeviceSnapshot &d)
{
    return static_cast<unsigned>(std::count_if(d.nic.begin(), d.nic.end(), [](const NicPortSnapshot &p) {
        return p.present && p.nic.link == HPU_NIC_LINK_UP;
    }));
}

std::string errors_items(const hpu_error_counters &c)
{
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
    std::string out;
    for (const auto &[label, value] : rows)
        out += item(label, std::to_string(value));
    return out;
}

// A sensor value, or "n/a" while the firmware does not run.
std::string sensor(const DeviceSnapshot &d, const std::string &v, const std::string &unit)
{
    return sensors_valid(d) ? v + (unit.empty() ? "" : " " + unit) : std::string(kNa);
}

std::string section_items(const Snapshot &s, const DeviceSnapshot &d, unsigned sec)
{
    const auto &t = d.telemetry;
    const auto &f = d.firmware;
    std::string o;
    switch (sec) {
    case kProduct:
        o += item("Name", d.name);
        o += item("Serial", d.serial);
        o += item("UUID", format_uuid(d.uuid));
        o += item("Bus-Id", d.pci_addr);
        o += item("Revision", revision(d));
        o += item("Spec version", std::to_string(d.spec_version));
        o += item("Driver version", format_driver_version(d));
        o += item("Firmware version", format_fw_version(f.running_version));
        o += item("Firmware stored version", format_fw_version(f.stored_version));
        o += item("Firmware minimum version", format_fw_version(f.min_version));
        o += item("Firmware state", fw_state_name(f.state));
        o += item("Firmware build", f.running_build[0] != '\0' ? std::string(static_cast<const char *>(f.running_build)) : "none");
        o += item("Firmware boot source", fw_source_name(f.boot_source));
        o += item("Firmware boot error", std::to_string(f.boot_error));
        o += item("Firmware boots", std::to_string(f.boots));
        o += item("Status", device_status(d));
        break;
    case kPower:
        o += item("Draw", sensor(d, watts(t.power_mw), "W"));
        o += item("Cap", sensor(d, watts(t.power_cap_mw), "W"));
        o += item("Cap maximum", sensor(d, watts(t.power_cap_max_mw), "W"));
        o += item("Energy", sensor(d, joules(t.energy_uj), "J"));
        o += item("Core voltage", sensor(d, std::to_string(t.volt_core_mv), "mV"));
        o += item("HBM voltage", sensor(d, std::to_string(t.volt_hbm_mv), "mV"));
        break;
    case kClock:
        o += item("Core", sensor(d, std::to_string(t.clk_core_mhz), "MHz"));
        o += item("Core maximum", sensor(d, std::to_string(t.clk_core_max_mhz), "MHz"));
        o += item("HBM", sensor(d, std::to_string(t.clk_hbm_mhz), "MHz"));
        o += item("Throttle reasons", sensor(d, bits(t.throttle, throttle_names(), ", "), ""));
        break;
    case kTemperature:
        o += item("Die", sensor(d, celsius(t.temp_die_mc), "C"));
        o += item("HBM", sensor(d, celsius(t.temp_hbm_mc), "C"));
        o += item("Board", sensor(d, celsius(t.temp_board_mc), "C"));
        o += item("Die throttle limit", sensor(d, celsius(t.temp_max_mc), "C"));
        o += item("Die critical limit", sensor(d, celsius(t.temp_crit_mc), "C"));
        o += item("HBM limit", sensor(d, celsius(t.hbm_temp_max_mc), "C"));
        o += item("Alarms", sensor(d, bits(t.alarms, alarm_names(), ", "), ""));
        break;
    case kMemory:
        o += item("Total", mib(d.hbm_bytes) + " MiB");
        o += item("Usable", mib(usable(d)) + " MiB");
        o += item("Used", mib(t.hbm_used) + " MiB");
        o += item("Free", mib(free_bytes(d)) + " MiB");
        break;
    case kUtilization:
        o += item("DMA (mean)", percent(mean_util(d)) + " %");
        for (std::uint32_t i = 0; i < dma_entries(d); ++i)
            o += item("DMA " + std::to_string(i), percent(util_at(d, i)) + " %");
        if (has_tpc(d))
            o += item("TPC", percent(util_at(d, HPU_ENGINE_INDEX_TPC)) + " %");
        if (mme_entries(d) > 0) {
            o += item("MME (mean)", percent(mme_mean(d)) + " %");
            for (std::uint32_t i = 0; i < mme_entries(d); ++i)
                o += item("MME " + std::to_string(i), percent(util_at(d, HPU_ENGINE_INDEX_MME(i))) + " %");
        }
        o += item("Window", std::to_string(t.util_window_ms) + " ms");
        break;
    case kEcc:
        o += item("Correctable", std::to_string(d.errors.ecc_correctable));
        o += item("Uncorrectable", std::to_string(d.errors.ecc_uncorrectable));
        o += item("Retired pages", std::to_string(d.errors.retired_pages));
        break;
    case kPcie:
        o += item("Link generation", link_value(d.pcie.cur_gen));
        o += item("Link generation maximum", link_value(d.pcie.max_gen));
        o += item("Link width", d.pcie.cur_width == 0 ? "unknown" : "x" + std::to_string(d.pcie.cur_width));
        o += item("Link width maximum", d.pcie.max_width == 0 ? "unknown" : "x" + std::to_string(d.pcie.max_width));
        o += item("Link speed", d.pcie.cur_speed_mts == 0 ? "unknown" : fmt("%.1f GT/s", d.pcie.cur_speed_mts / 1000.0));
        break;
    case kNet:
        o += item("Ports", std::to_string(d.num_nic));
        o += item("Links up", std::to_string(links_up(d)));
        for (const auto &p : d.nic) {
            const std::string port = "Port " + std::to_string(p.port);
            o += item(port, nic_summary(p));
            if (p.present) {
                const auto &n = p.nic;
                o += item(port + " RX", nic_counts(n.rx_packets, n.rx_bytes, n.rx_errors, n.rx_dropped));
                o += item(port + " TX", nic_counts(n.tx_packets, n.tx_bytes, n.tx_errors, n.tx_dropped));
            }
        }
        break;
    case kProcesses: {
        const auto ps = processes_of(s, d.index);
        if (ps.empty())
            o += item("Processes", "none");
        for (const auto *p : ps) {
            o += item("PID " + std::to_string(p->pid),
                      p->name + ", HBM " + mib(p->hbm_bytes) + " MiB, util " +
                          (p->util == HPU_UTIL_UNKNOWN ? "-" : percent(p->util) + " %"));
        }
        break;
    }
    case kErrors:
        o += errors_items(d.errors);
        break;
    default:
        break;
    }
    return o;
}

const std::vector<std::pair<unsigned, const char *>> &sections()
{
    static const std::vector<std::pair<unsigned, const char *>> v = {
        {kProduct, "PRODUCT"}, {kPower, "POWER"}, {kClock, "CLOCK"}, {kTemperature, "TEMPERATURE"},
        {kMemory, "MEMORY"},   {kUtilization, "UTILIZATION"},        {kEcc, "ECC"},
        {kPcie, "PCIE"},       {kNet, "NET"},     {kProcesses, "PROCESSES"},
        {kErrors, "ERRORS"}};
    return v;
}

const char *section_title(unsigned sec)
{
    switch (sec) {
    case kProduct:
        return "Product";
    case kPower:
        return "Power";
    case kClock:
        return "Clock";
    case kTemperature:
        return "Temperature";
    case kMemory:
        return "Memory";
    case kUtilization:
        return "Utilization";
    case kEcc:
        return "ECC";
    case kPcie:
        return "PCIe";
    case kNet:
        return "NET";
    case kProcesses:
        return "Processes";
    default:
        return "Errors";
    }
}

} // namespace

unsigned parse_section(std::string_view name)
{
    std::string up(name);
    std::transform(up.begin(), up.end(), up.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    for (const auto &[bit, n] : sections()) {
        if (up == n)
            return bit;
    }
    return 0;
}

unsigned section_needs(unsigned sec)
{
    unsigned need = 0;
    if ((sec & kProduct) != 0U)
        need |= kNeedFirmware;
    if ((sec & (kPower | kClock | kTemperature | kMemory | kUtilization)) != 0U)
        need |= kNeedTelemetry | kNeedFirmware;
    if ((sec & (kEcc | kErrors)) != 0U)
        need |= kNeedErrors;
    if ((sec & kPcie) != 0U)
        need |= kNeedPcie;
    if ((sec & kProcesses) != 0U)
        need |= kNeedProcesses;
    if ((sec & kNet) != 0U)
        need |= kNeedNet;
    return need;
}

std::string format_errors(const Snapshot &s)
{
    std::string out;
    bool first = true;
    for (const auto &d : s.devices) {
        if (!d.has_errors && d.error.empty())
            continue;
        if (!first)
            out += "\n";
        first = false;
        out += "HPU " + std::to_string(d.index) + ": " + printable(d.name) + " (PCI " + printable(d.pci_addr) + ")\n";
        out += d.error.empty() ? errors_items(d.errors) : item("Error", d.error);
    }
    return out;
}

std::string nic_link_name(const NicPortSnapshot &p)
{
    if (!p.present)
        return "-";
    switch (p.nic.link) {
    case HPU_NIC_LINK_UP:
        return "up";
    case HPU_NIC_LINK_DOWN:
        return "down";
    default:
        return "unknown";
    }
}

std::optional<NicView> parse_nic_view(std::string_view name)
{
    if (name == "link")
        return NicView::Link;
    if (name == "ports")
        return NicView::Ports;
    if (name == "stats")
        return NicView::Stats;
    return std::nullopt;
}

std::string format_nic(const Snapshot &s, NicView view)
{
    std::string out;
    for (const auto &d : s.devices) {
        const std::string dev = "HPU " + std::to_string(d.index) + " (" + printable(d.pci_addr) + ")";
        if (!d.error.empty()) {
            out += dev + ": error: " + printable(d.error) + "\n";
            continue;
        }
        if (d.nic.empty()) {
            out += dev + ": no NIC ports\n";
            continue;
        }
        for (const auto &p : d.nic) {
            const std::string head = dev + " port " + std::to_string(p.port) + ": ";
            if (!p.present) {
                out += head + nic_absent(p) + "\n";
                continue;
            }
            const auto &n = p.nic;
            const std::string ifname = printable(static_cast<const char *>(n.ifname));
            switch (view) {
            case NicView::Link:
                out += head + ifname + " " + nic_link_name(p) + "\n";
                break;
            case NicView::Ports:
                out += head + ifname + " " + mac_text(n) + " MTU " + std::to_string(n.mtu) + " " +
                       (n.speed_mbps == 0 ? std::string("-") : std::to_string(n.speed_mbps) + " Mb/s") + "\n";
                break;
            case NicView::Stats:
                out += head + ifname + "\n";
                out += "    RX: " + nic_counts(n.rx_packets, n.rx_bytes, n.rx_errors, n.rx_dropped) + "\n";
                out += "    TX: " + nic_counts(n.tx_packets, n.tx_bytes, n.tx_errors, n.tx_dropped) + "\n";
                break;
            }
        }
    }
    return out;
}

std::string format_query(const Snapshot &s, unsigned sel)
{
    const bool single = (sel & (sel - 1)) == 0;
    std::string out;
    bool first = true;
    for (const auto &d : s.devices) {
        if (!first)
            out += "\n";
        first = false;
        out += "HPU " + std::to_string(d.index) + ": " + printable(d.name) + " (PCI " + printable(d.pci_addr) + ")\n";
        if (!d.error.empty()) {
            out += item("Error", d.error); // no section of a device that could not be read
            continue;
        }
        for (const auto &[bit, name] : sections()) {
            if ((sel & bit) == 0U)
                continue;
            if (!single)
                out += std::string("  ") + section_title(bit) + "\n";
            out += section_items(s, d, bit);
        }
    }
    return out;
}

// ---- -Q fields and CSV ----

namespace {

struct Field {
    const char *name;
    const char *unit;
    unsigned need;
    std::string (*value)(const DeviceSnapshot &);
};

std::string sens(const DeviceSnapshot &d, const std::string &v)
{
    return sensors_valid(d) ? v : std::string(kNa);
}

// NOLINTBEGIN(cppcoreguidelines-pro-bounds-constant-array-index)
const std::vector<Field> &fields()
{
    constexpr unsigned T = kNeedTelemetry | kNeedFirmware;
    static const std::vector<Field> f = {
        {"index", "", 0, [](const DeviceSnapshot &d) { return std::to_string(d.index); }},
        {"name", "", 0, [](const DeviceSnapshot &d) { return d.name; }},
        {"serial", "", 0, [](const DeviceSnapshot &d) { return d.serial; }},
        {"uuid", "", 0, [](const DeviceSnapshot &d) { return format_uuid(d.uuid); }},
        {"bus_id", "", 0, [](const DeviceSnapshot &d) { return d.pci_addr; }},
        {"driver_version", "", 0, [](const DeviceSnapshot &d) { return format_driver_version(d); }},
        {"fw_version", "", kNeedFirmware, [](const DeviceSnapshot &d) { return format_fw_version(d.firmware.running_version); }},
        {"fw_stored_version", "", kNeedFirmware,
         [](const DeviceSnapshot &d) { return format_fw_version(d.firmware.stored_version); }},
        {"fw_min_version", "", kNeedFirmware,
         [](const DeviceSnapshot &d) { return format_fw_version(d.firmware.min_version); }},
        {"fw_state", "", kNeedFirmware, [](const DeviceSnapshot &d) { return fw_state_name(d.firmware.state); }},
        {"status", "", kNeedFirmware, [](const DeviceSnapshot &d) { return device_status(d); }},
        {"temperature.die", "C", T, [](const DeviceSnapshot &d) { return sens(d, celsius(d.telemetry.temp_die_mc)); }},
        {"temperature.hbm", "C", T, [](const DeviceSnapshot &d) { return sens(d, celsius(d.telemetry.temp_hbm_mc)); }},
        {"temperature.board", "C", T,
         [](const DeviceSnapshot &d) { return sens(d, celsius(d.telemetry.temp_board_mc)); }},
        {"temperature.die.max", "C", T,
         [](const DeviceSnapshot &d) { return sens(d, celsius(d.telemetry.temp_max_mc)); }},
        {"temperature.die.crit", "C", T,
         [](const DeviceSnapshot &d) { return sens(d, celsius(d.telemetry.temp_crit_mc)); }},
        {"temperature.hbm.max", "C", T,
         [](const DeviceSnapshot &d) { return sens(d, celsius(d.telemetry.hbm_temp_max_mc)); }},
        {"power.draw", "W", T, [](const DeviceSnapshot &d) { return sens(d, watts(d.telemetry.power_mw)); }},
        {"power.cap", "W", T, [](const DeviceSnapshot &d) { return sens(d, watts(d.telemetry.power_cap_mw)); }},
        {"power.cap.max", "W", T, [](const DeviceSnapshot &d) { return sens(d, watts(d.telemetry.power_cap_max_mw)); }},
        {"energy", "J", T, [](const DeviceSnapshot &d) { return sens(d, joules(d.telemetry.energy_uj)); }},
        {"voltage.core", "mV", T,
         [](const DeviceSnapshot &d) { return sens(d, std::to_string(d.telemetry.volt_core_mv)); }},
        {"voltage.hbm", "mV", T, [](const DeviceSnapshot &d) { return sens(d, std::to_string(d.telemetry.volt_hbm_mv)); }},
        {"clocks.core", "MHz", T,
         [](const DeviceSnapshot &d) { return sens(d, std::to_string(d.telemetry.clk_core_mhz)); }},
        {"clocks.core.max", "MHz", T,
         [](const DeviceSnapshot &d) { return sens(d, std::to_string(d.telemetry.clk_core_max_mhz)); }},
        {"clocks.hbm", "MHz", T, [](const DeviceSnapshot &d) { return sens(d, std::to_string(d.telemetry.clk_hbm_mhz)); }},
        {"throttle", "", T, [](const DeviceSnapshot &d) { return sens(d, bits(d.telemetry.throttle, throttle_names(), "|")); }},
        {"alarms", "", T, [](const DeviceSnapshot &d) { return sens(d, bits(d.telemetry.alarms, alarm_names(), "|")); }},
        {"memory.total", "MiB", 0, [](const DeviceSnapshot &d) { return mib(d.hbm_bytes); }},
        {"memory.usable", "MiB", T, [](const DeviceSnapshot &d) { return mib(usable(d)); }},
        {"memory.used", "MiB", T, [](const DeviceSnapshot &d) { return mib(d.telemetry.hbm_used); }},
        {"memory.free", "MiB", T, [](const DeviceSnapshot &d) { return mib(free_bytes(d)); }},
        {"utilization.dma", "%", T, [](const DeviceSnapshot &d) { return percent(mean_util(d)); }},
        {"utilization.tpc", "%", T,
         [](const DeviceSnapshot &d) { return has_tpc(d) ? percent(util_at(d, HPU_ENGINE_INDEX_TPC)) : kNa; }},
        {"utilization.mme", "%", T,
         [](const DeviceSnapshot &d) { return mme_entries(d) > 0 ? percent(mme_mean(d)) : kNa; }},
        {"ecc.correctable", "", kNeedErrors, [](const DeviceSnapshot &d) { return std::to_string(d.errors.ecc_correctable); }},
        {"ecc.uncorrectable", "", kNeedErrors,
         [](const DeviceSnapshot &d) { return std::to_string(d.errors.ecc_uncorrectable); }},
        {"ecc.retired_pages", "", kNeedErrors, [](const DeviceSnapshot &d) { return std::to_string(d.errors.retired_pages); }},
        {"pcie.link.gen.current", "", kNeedPcie, [](const DeviceSnapshot &d) { return link_value(d.pcie.cur_gen); }},
        {"pcie.link.gen.max", "", kNeedPcie, [](const DeviceSnapshot &d) { return link_value(d.pcie.max_gen); }},
        {"pcie.link.width.current", "", kNeedPcie, [](const DeviceSnapshot &d) { return link_value(d.pcie.cur_width); }},
        {"pcie.link.width.max", "", kNeedPcie, [](const DeviceSnapshot &d) { return link_value(d.pcie.max_width); }},
        {"reset_count", "", 0, [](const DeviceSnapshot &d) { return std::to_string(d.reset_count); }},
        {"resets.hard", "", kNeedErrors, [](const DeviceSnapshot &d) { return std::to_string(d.errors.hard_resets); }},
        {"nic.ports", "", 0, [](const DeviceSnapshot &d) { return std::to_string(d.num_nic); }},
        {"nic.links_up", "", kNeedNet, [](const DeviceSnapshot &d) { return std::to_string(links_up(d)); }},
        {"nic.link_state", "", kNeedNet,
         [](const DeviceSnapshot &d) {
             std::string v;
             for (const auto &p : d.nic)
                 v += (v.empty() ? "" : "|") + nic_link_name(p);
             return v.empty() ? std::string(kNa) : v;
         }},
    };
    return f;
}
// NOLINTEND(cppcoreguidelines-pro-bounds-constant-array-index)

// <prefix><N>, N in 0..HPU_MAX_ENGINES-1: N, else -1.
int numbered_field(const std::string &name, const std::string &prefix)
{
    if (!name.starts_with(prefix) || name.size() == prefix.size() || name.size() > prefix.size() + 2)
        return -1;
    int n = 0;
    for (std::size_t i = prefix.size(); i < name.size(); ++i) {
        if (std::isdigit(static_cast<unsigned char>(name[i])) == 0)
            return -1;
        n = n * 10 + (name[i] - '0');
    }
    if (name.size() == prefix.size() + 2 && name[prefix.size()] == '0')
        return -1; // no leading zero
    return n < HPU_MAX_ENGINES ? n : -1;
}
int dma_field(const std::string &name)
{
    return numbered_field(name, "utilization.dma");
}
int mme_field(const std::string &name)
{
    return numbered_field(name, "utilization.mme");
}

std::string field_value(const DeviceSnapshot &d, const std::string &name)
{
    if (!d.error.empty()) {
        // A device that could not be read: its identity (when known), else n/a.
        const auto info = field_info(name);
        if (name != "index" && name != "bus_id" && name != "status" && (!d.has_info || !info || info->need != 0))
            return kNa;
    }
    if (const int n = dma_field(name); n >= 0) {
        if (static_cast<std::uint32_t>(n) >= dma_entries(d))
            return kNa;
        return percent(util_at(d, static_cast<std::uint32_t>(n)));
    }
    if (const int n = mme_field(name); n >= 0) {
        if (static_cast<std::uint32_t>(n) >= mme_entries(d))
            return kNa;
        return percent(util_at(d, HPU_ENGINE_INDEX_MME(static_cast<std::uint32_t>(n))));
    }
    for (const auto &f : fields()) {
        if (name == f.name)
            return f.value(d);
    }
    return kNa;
}

// RFC 4180 quoting for values holding the separator, quotes or line ends.
std::string csv_cell(const std::string &raw)
{
    std::string v = printable(raw); // no control characters, so no line ends either
    if (v.find_first_of(",\"") == std::string::npos)
        return v;
    std::string q = "\"";
    for (const char c : v) {
        if (c == '"')
            q += '"';
        q += c;
    }
    return q + "\"";
}

} // namespace

std::optional<FieldInfo> field_info(const std::string &name)
{
    if (dma_field(name) >= 0 || mme_field(name) >= 0)
        return FieldInfo{"%", kNeedTelemetry | kNeedFirmware};
    for (const auto &f : fields()) {
        if (name == f.name)
            return FieldInfo{f.unit, f.need};
    }
    return std::nullopt;
}

std::vector<std::string> field_names()
{
    std::vector<std::string> out;
    out.reserve(fields().size() + 1);
    for (const auto &f : fields()) {
        out.emplace_back(f.name);
        if (std::string(f.name) == "utilization.dma")
            out.emplace_back("utilization.dma<N>");
        if (std::string(f.name) == "utilization.mme")
            out.emplace_back("utilization.mme<N>");
    }
    return out;
}

std::string format_csv_header(const std::vector<std::string> &names, const CsvOptions &o)
{
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i > 0)
            out += ", ";
        out += names[i];
        const auto info = field_info(names[i]);
        if (o.units && info && !info->unit.empty())
            out += " [" + info->unit + "]";
    }
    return out + "\n";
}

std::string format_csv_rows(const Snapshot &s, const std::vector<std::string> &names, const CsvOptions &o)
{
    std::string out;
    for (const auto &d : s.devices) {
        for (std::size_t i = 0; i < names.size(); ++i) {
            if (i > 0)
                out += ", ";
            std::string v = field_value(d, names[i]);
            const auto info = field_info(names[i]);
            if (o.units && info && !info->unit.empty() && v != kNa)
                v += " " + info->unit;
            out += csv_cell(v);
        }
        out += "\n";
    }
    return out;
}

// ---- JSON ----

namespace {

std::string jstr(const std::string &s)
{
    std::string out = "\"";
    for (std::size_t i = 0; i < s.size();) {
        const auto [cp, len] = utf8_at(s, i);
        if (len == 0) {
            out += "\\ufffd"; // not UTF-8
            ++i;
            continue;
        }
        switch (cp) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (is_control(cp)) {
                out += fmt("\\u%04x", static_cast<unsigned>(cp));
            } else {
                out.append(s, i, len);
            }
        }
        i += len;
    }
    return out + "\"";
}

// A JSON object being written: members in order, two-space indentation.
class Obj {
public:
    explicit Obj(int depth) : depth_(depth) {}
    Obj &raw(const std::string &key, const std::string &json)
    {
        members_.emplace_back(key, json);
        return *this;
    }
    Obj &str(const std::string &key, const std::string &v) { return raw(key, jstr(v)); }
    template <typename T>
    Obj &num(const std::string &key, T v)
    {
        return raw(key, std::to_string(v));
    }
    // A sensor value: null while the firmware does not run.
    template <typename T>
    Obj &sens(const DeviceSnapshot &d, const std::string &key, T v)
    {
        return raw(key, sensors_valid(d) ? std::to_string(v) : "null");
    }
    [[nodiscard]] std::string done() const
    {
        if (members_.empty())
            return "{}";
        const std::string in(static_cast<std::size_t>(depth_ + 1) * 2, ' ');
        std::string out = "{\n";
        for (std::size_t i = 0; i < members_.size(); ++i) {
            out += in + jstr(members_[i].first) + ": " + members_[i].second;
            out += i + 1 < members_.size() ? ",\n" : "\n";
        }
        return out + std::string(static_cast<std::size_t>(depth_) * 2, ' ') + "}";
    }

private:
    int depth_;
    std::vector<std::pair<std::string, std::string>> members_;
};

std::string jarray(const std::vector<std::string> &items, int depth, bool inline_items)
{
    if (items.empty())
        return "[]";
    if (inline_items) {
        std::string out = "[";
        for (std::size_t i = 0; i < items.size(); ++i)
            out += (i > 0 ? ", " : "") + items[i];
        return out + "]";
    }
    const std::string in(static_cast<std::size_t>(depth + 1) * 2, ' ');
    std::string out = "[\n";
    for (std::size_t i = 0; i < items.size(); ++i)
        out += in + items[i] + (i + 1 < items.size() ? ",\n" : "\n");
    return out + std::string(static_cast<std::size_t>(depth) * 2, ' ') + "]";
}

std::string jbits(const DeviceSnapshot &d, std::uint32_t v, const std::vector<std::pair<std::uint32_t, const char *>> &names)
{
    if (!sensors_valid(d))
        return "null";
    std::vector<std::string> items;
    for (const auto &[bit, name] : names) {
        if ((v & bit) != 0U)
            items.push_back(jstr(name));
    }
    return jarray(items, 0, true);
}

std::string jpercent(std::uint32_t hundredths)
{
    return fmt("%.2f", static_cast<double>(hundredths) / 100.0);
}

std::string json_device(const Snapshot &s, const DeviceSnapshot &d, unsigned sel, int depth)
{
    const auto &t = d.telemetry;
    const auto &f = d.firmware;
    Obj o(depth);
    o.num("index", d.index).str("name", d.name).str("bus_id", d.pci_addr).str("serial", d.serial);
    o.str("uuid", format_uuid(d.uuid));
    if (!d.error.empty()) {
        o.str("status", device_status(d)).str("error", d.error);
        return o.done(); // no section of a device that could not be read
    }
    if (d.has_firmware)
        o.str("status", device_status(d));
    if ((sel & kProduct) != 0U) {
        Obj fw(depth + 2);
        fw.str("version", format_fw_version(f.running_version))
            .str("stored_version", format_fw_version(f.stored_version))
            .str("min_version", format_fw_version(f.min_version))
            .str("state", fw_state_name(f.state))
            .str("build", static_cast<const char *>(f.running_build))
            .str("boot_source", fw_source_name(f.boot_source))
            .num("boot_error", f.boot_error)
            .num("boots", f.boots);
        Obj p(depth + 1);
        p.str("revision", revision(d)).num("spec_version", d.spec_version).str("driver_version", format_driver_version(d));
        p.raw("firmware", fw.done());
        o.raw("product", p.done());
    }
    if ((sel & kPower) != 0U) {
        Obj p(depth + 1);
        p.sens(d, "draw_mw", t.power_mw)
            .sens(d, "cap_mw", t.power_cap_mw)
            .sens(d, "cap_max_mw", t.power_cap_max_mw)
            .sens(d, "energy_uj", t.energy_uj)
            .sens(d, "voltage_core_mv", t.volt_core_mv)
            .sens(d, "voltage_hbm_mv", t.volt_hbm_mv);
        o.raw("power", p.done());
    }
    if ((sel & kClock) != 0U) {
        Obj c(depth + 1);
        c.sens(d, "core_mhz", t.clk_core_mhz).sens(d, "core_max_mhz", t.clk_core_max_mhz).sens(d, "hbm_mhz", t.clk_hbm_mhz);
        c.raw("throttle", jbits(d, t.throttle, throttle_names()));
        o.raw("clocks", c.done());
    }
    if ((sel & kTemperature) != 0U) {
        Obj c(depth + 1);
        c.sens(d, "die_mc", t.temp_die_mc)
            .sens(d, "hbm_mc", t.temp_hbm_mc)
            .sens(d, "board_mc", t.temp_board_mc)
            .sens(d, "die_max_mc", t.temp_max_mc)
            .sens(d, "die_crit_mc", t.temp_crit_mc)
            .sens(d, "hbm_max_mc", t.hbm_temp_max_mc);
        c.raw("alarms", jbits(d, t.alarms, alarm_names()));
        o.raw("temperature", c.done());
    }
    if ((sel & kMemory) != 0U) {
        Obj c(depth + 1);
        c.num("total_bytes", d.hbm_bytes)
            .num("usable_bytes", usable(d))
            .num("used_bytes", t.hbm_used)
            .num("free_bytes", free_bytes(d));
        o.raw("memory", c.done());
    }
    if ((sel & kUtilization) != 0U) {
        std::vector<std::string> per;
        for (std::uint32_t i = 0; i < dma_entries(d); ++i)
            per.push_back(jpercent(util_at(d, i)));
        std::vector<std::string> mme;
        for (std::uint32_t i = 0; i < mme_entries(d); ++i)
            mme.push_back(jpercent(util_at(d, HPU_ENGINE_INDEX_MME(i))));
        Obj c(depth + 1);
        c.num("window_ms", t.util_window_ms).raw("dma_mean_percent", jpercent(mean_util(d)));
        c.raw("dma_percent", jarray(per, 0, true));
        c.raw("tpc_percent", has_tpc(d) ? jpercent(util_at(d, HPU_ENGINE_INDEX_TPC)) : "null");
        c.raw("mme_mean_percent", mme.empty() ? "null" : jpercent(mme_mean(d)));
        c.raw("mme_percent", jarray(mme, 0, true));
        o.raw("utilization", c.done());
    }
    if ((sel & kEcc) != 0U) {
        Obj c(depth + 1);
        c.num("correctable", d.errors.ecc_correctable)
            .num("uncorrectable", d.errors.ecc_uncorrectable)
            .num("retired_pages", d.errors.retired_pages);
        o.raw("ecc", c.done());
    }
    if ((sel & kPcie) != 0U) {
        const auto opt = [](std::uint32_t v) { return v == 0 ? std::string("null") : std::to_string(v); };
        Obj c(depth + 1);
        c.raw("gen_current", opt(d.pcie.cur_gen))
            .raw("gen_max", opt(d.pcie.max_gen))
            .raw("width_current", opt(d.pcie.cur_width))
            .raw("width_max", opt(d.pcie.max_width))
            .raw("speed_current_mts", opt(d.pcie.cur_speed_mts))
            .raw("speed_max_mts", opt(d.pcie.max_speed_mts));
        o.raw("pcie", c.done());
    }
    if ((sel & kNet) != 0U) {
        std::vector<std::string> ports;
        for (const auto &p : d.nic) {
            Obj c(depth + 3);
            c.num("port", p.port);
            if (p.present) {
                const auto &n = p.nic;
                c.str("interface", printable(static_cast<const char *>(n.ifname)))
                    .str("mac", mac_text(n))
                    .str("link", nic_link_name(p))
                    .raw("admin_up", n.admin_up != 0 ? "true" : "false")
                    .raw("speed_mbps", n.speed_mbps == 0 ? std::string("null") : std::to_string(n.speed_mbps))
                    .num("mtu", n.mtu)
                    .num("rx_packets", n.rx_packets)
                    .num("tx_packets", n.tx_packets)
                    .num("rx_bytes", n.rx_bytes)
                    .num("tx_bytes", n.tx_bytes)
                    .num("rx_errors", n.rx_errors)
                    .num("tx_errors", n.tx_errors)
                    .num("rx_dropped", n.rx_dropped)
                    .num("tx_dropped", n.tx_dropped);
            } else {
                c.raw("interface", "null").str("error", nic_absent(p));
            }
            ports.push_back(c.done());
        }
        Obj c(depth + 1);
        c.num("ports", d.num_nic).num("links_up", links_up(d)).raw("interfaces", jarray(ports, depth + 2, false));
        o.raw("net", c.done());
    }
    if ((sel & kProcesses) != 0U) {
        std::vector<std::string> items;
        for (const auto *p : processes_of(s, d.index)) {
            Obj c(depth + 2);
            c.num("pid", p->pid)
                .str("name", p->name)
                .num("clients", p->clients)
                .num("hbm_bytes", p->hbm_bytes)
                .raw("utilization_percent", p->util == HPU_UTIL_UNKNOWN ? "null" : jpercent(p->util));
            items.push_back(c.done());
        }
        o.raw("processes", jarray(items, depth + 1, false));
    }
    if ((sel & kErrors) != 0U) {
        const hpu_error_counters &c = d.errors;
        Obj e(depth + 1);
        e.num("mmu_faults", c.mmu_faults)
            .num("bad_packets", c.bad_packets)
            .num("priv_violations", c.priv_violations)
            .num("engine_hangs", c.engine_hangs)
            .num("dma_bus_errors", c.dma_bus_errors)
            .num("ecc_correctable", c.ecc_correctable)
            .num("ecc_uncorrectable", c.ecc_uncorrectable)
            .num("retired_pages", c.retired_pages)
            .num("job_timeouts", c.job_timeouts)
            .num("heartbeat_losses", c.heartbeat_losses)
            .num("fw_fatal", c.fw_fatal)
            .num("thermal_events", c.thermal_events)
            .num("power_events", c.power_events)
            .num("soft_resets", c.soft_resets)
            .num("hard_resets", c.hard_resets)
            .num("reset_generation", c.reset_generation);
        o.raw("errors", e.done());
    }
    return o.done();
}

} // namespace

std::string format_json(const Snapshot &s, unsigned sel)
{
    std::vector<std::string> devs;
    devs.reserve(s.devices.size());
    for (const auto &d : s.devices)
        devs.push_back(json_device(s, d, sel, 2));
    Obj top(0);
    top.str("hpu_smi_version", HPU_SMI_VERSION).str("libhpu_version", format_version(s.lib_version));
    top.raw("driver_loaded", s.driver_loaded < 0 ? "null" : (s.driver_loaded != 0 ? "true" : "false"));
    top.raw("devices", jarray(devs, 1, false));
    return top.done() + "\n";
}

} // namespace hpu::smi
