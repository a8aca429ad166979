// SPDX-License-Identifier: MIT
// libhpu 1.3: telemetry (INFO TELEMETRY), firmware (INFO FIRMWARE), the PCIe
// link and hwmon directory (sysfs), and the processes using HPUs (DRM
// fdinfo under /proc).
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fcntl.h>

#include "compute.h"
#include "common.h"
#include "device.h"
#include "discovery.h"
#include "drm/hpu_accel.h"
#include "hpu/hpu.h"
#include "os.h"
#include "telemetry.h"

using hpu::detail::guarded;

struct hpu_process_list {
    std::vector<hpu_process> entries;
};

namespace hpu::detail {

namespace {

// "16.0 GT/s PCIe", "8 GT/s", "2.5 GT/s" -> MT/s; "Unknown..." -> 0.
std::optional<std::uint32_t> parse_link_speed(std::string_view text)
{
    text = trim(text);
    if (text.starts_with("Unknown"))
        return 0U;
    const auto sp = text.find(' ');
    if (sp == std::string_view::npos || !text.substr(sp + 1).starts_with("GT/s"))
        return std::nullopt;
    const std::string_view num = text.substr(0, sp);
    const auto dot = num.find('.');
    const auto whole = parse_num<std::uint64_t>(num.substr(0, dot));
    if (!whole || *whole > 1000)
        return std::nullopt;
    std::uint64_t mts = *whole * 1000;
    if (dot != std::string_view::npos) {
        std::string_view frac = num.substr(dot + 1);
        if (frac.empty() || frac.size() > 3 || !parse_num<std::uint64_t>(frac))
            return std::nullopt;
        std::uint64_t f = *parse_num<std::uint64_t>(frac);
        for (std::size_t i = frac.size(); i < 3; ++i)
            f *= 10;
        mts += f;
    }
    return static_cast<std::uint32_t>(mts);
}

std::uint32_t gen_of(std::uint32_t mts)
{
    // Every PCIe generation doubles the rate from gen 3 (8 GT/s) on; gens 1
    // and 2 are 2.5 and 5 GT/s.
    static constexpr std::pair<std::uint32_t, std::uint32_t> gens[] = { // NOLINT(modernize-avoid-c-arrays)
        {2500, 1}, {5000, 2}, {8000, 3}, {16000, 4}, {32000, 5}, {64000, 6}};
    for (const auto &[rate, gen] : gens) {
        if (mts == rate)
            return gen;
    }
    return 0;
}

std::optional<std::uint32_t> parse_width(std::string_view text)
{
    text = trim(text);
    if (text.starts_with("x"))
        text.remove_prefix(1);
    const auto v = parse_num<std::uint64_t>(text);
    if (!v || *v > 64)
        return std::nullopt;
    return static_cast<std::uint32_t>(*v);
}

// A size with an optional unit ("123", "4 KiB", "2 MiB") in bytes.
std::optional<std::uint64_t> parse_size(std::string_view v)
{
    v = trim(v);
    const auto sp = v.find(' ');
    const auto n = parse_num<std::uint64_t>(v.substr(0, sp));
    if (!n)
        return std::nullopt;
    if (sp == std::string_view::npos)
        return *n;
    const std::string_view unit = trim(v.substr(sp + 1));
    std::uint64_t mul = 0;
    if (unit == "B" || unit.empty()) {
        mul = 1;
    } else if (unit == "KiB") {
        mul = 1ULL << 10U;
    } else if (unit == "MiB") {
        mul = 1ULL << 20U;
    } else if (unit == "GiB") {
        mul = 1ULL << 30U;
    } else {
        return std::nullopt;
    }
    if (*n > UINT64_MAX / mul)
        return std::nullopt;
    return *n * mul;
}

} // namespace

namespace {

// The engine index of an fdinfo engine key: drm-engine-dma<e> is e,
// drm-engine-tpc the TPC engine, drm-engine-mme<n> MME n; nothing for
// another key.
std::optional<std::uint64_t> engine_index(std::string_view key)
{
    constexpr std::string_view kDma = "drm-engine-dma";
    constexpr std::string_view kMme = "drm-engine-mme";
    if (key == "drm-engine-tpc")
        return HPU_ENGINE_INDEX_TPC;
    if (key.starts_with(kDma))
        return parse_num<std::uint64_t>(key.substr(kDma.size()));
    if (key.starts_with(kMme)) {
        const auto n = parse_num<std::uint64_t>(key.substr(kMme.size()));
        if (n && *n < HPU_MAX_ENGINES)
            return HPU_ENGINE_INDEX_MME(*n);
    }
    return std::nullopt;
}

} // namespace

bool parse_fdinfo(std::string_view text, FdInfo &out)
{
    out = FdInfo{};
    bool have_id = false;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        const auto colon = line.find(':');
        if (colon == std::string_view::npos)
            continue;
        const std::string_view key = trim(line.substr(0, colon));
        const std::string_view val = trim(line.substr(colon + 1));
        if (key == "drm-driver") {
            out.driver = std::string(val);
        } else if (key == "drm-pdev") {
            out.pdev = std::string(val);
        } else if (key == "drm-client-id") {
            const auto id = parse_num<std::uint64_t>(val);
            if (!id)
                return false;
            out.client_id = *id;
            have_id = true;
        } else if (key == "drm-total-hbm") {
            const auto b = parse_size(val);
            if (!b)
                return false;
            out.hbm_total = *b;
        } else if (key == "drm-resident-hbm") {
            const auto b = parse_size(val);
            if (!b)
                return false;
            out.hbm_resident = *b;
        } else if (const auto e = engine_index(key)) {
            if (*e >= HPU_MAX_ENGINES)
                continue; // an engine this library has no room for
            const std::string_view num = val.ends_with(" ns") ? trim(val.substr(0, val.size() - 3)) : val;
            const auto ns = parse_num<std::uint64_t>(num);
            if (!ns)
                return false;
            out.engine_ns.at(*e) = *ns;
            out.num_engines = std::max(out.num_engines, static_cast<std::uint32_t>(*e + 1));
        }
    }
    return have_id;
}

namespace {

// One sample: every (pid, device) with the distinct clients summed, and the
// engine counters of each client on its own (utilisation is diffed per
// client: a client that closes between the samples must not make the sum
// go backwards).
struct Key {
    std::string pdev;
    int pid = 0;
    bool operator<(const Key &o) const { return std::tie(pdev, pid) < std::tie(o.pdev, o.pid); }
};
struct ClientKey {
    Key proc;
    std::uint64_t client_id = 0;
    bool operator<(const ClientKey &o) const
    {
        return std::tie(proc, client_id) < std::tie(o.proc, o.client_id);
    }
};
struct Sample {
    std::map<Key, hpu_process> procs;
    std::map<ClientKey, EngineNs> clients;
};

std::string read_comm(Os &os, const std::string &base)
{
    std::string comm;
    if (os.read_file(base + "/comm", comm) < 0)
        return {};
    return std::string(trim(comm));
}

// The HPU clients of one process into out; false when the process changed
// identity (its name) while its fds were read: a PID reused in between.
bool scan_process(Os &os, const std::optional<std::string> &only, int pid, const std::string &base,
                  const std::vector<std::string> &fds, Sample &out)
{
    std::string text;
    std::string target;
    Sample mine;
    std::string comm;
    bool have_comm = false;
    const std::string fd_dir = base + "/fd/";
    const std::string info_dir = base + "/fdinfo/";
    for (const auto &fd : fds) {
        if (os.read_link(fd_dir + fd, target) < 0 || !target.starts_with(kAccelNodePrefix))
            continue;
        if (os.read_file(info_dir + fd, text) < 0)
            continue;
        FdInfo info;
        if (!parse_fdinfo(text, info) || info.driver != kDriverName)
            continue;
        const auto pdev = normalize_pci_addr(info.pdev);
        if (!pdev || (only && *pdev != *only))
            continue;
        const Key key{*pdev, pid};
        if (!mine.clients.try_emplace(ClientKey{key, info.client_id}, info.engine_ns).second)
            continue; // a dup of a file already counted
        if (!have_comm) {
            // Read before the first HPU client counts and again after the
            // last one (below): the clients in between belong to the process
            // of that name.
            comm = read_comm(os, base);
            have_comm = true;
        }
        auto [it, fresh] = mine.procs.try_emplace(key);
        hpu_process &e = it->second;
        if (fresh) {
            e.size = sizeof(hpu_process);
            e.pid = static_cast<std::int32_t>(pid);
            copy_str(e.comm, comm);
            copy_str(e.pci_addr, *pdev);
            e.util = HPU_UTIL_UNKNOWN;
            std::fill(std::begin(e.engine_util), std::end(e.engine_util), HPU_UTIL_UNKNOWN);
        }
        ++e.clients;
        e.hbm_total += info.hbm_total;
        e.hbm_resident += info.hbm_resident;
        e.num_engines = std::max(e.num_engines, info.num_engines);
        for (std::size_t i = 0; i < HPU_MAX_ENGINES; ++i)
            e.engine_ns[i] += info.engine_ns.at(i); // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
    }
    if (mine.procs.empty())
        return true;
    if (read_comm(os, base) != comm)
        return false; // renamed or replaced while we looked: not listed this time
    out.procs.merge(mine.procs);
    out.clients.merge(mine.clients);
    return true;
}

int scan(Os &os, const std::optional<std::string> &only, Sample &out)
{
    std::vector<std::string> pids;
    if (const int err = os.list_dir(kProcDir, pids); err < 0)
        return err;
    std::vector<std::string> fds;
    for (const auto &p : pids) {
        const auto pid = parse_num<std::uint64_t>(p);
        if (!pid || *pid == 0 || *pid > INT32_MAX)
            continue;
        const std::string base = std::string(kProcDir) + "/" + p;
        // Unreadable (another user's) or gone: not listed.
        if (os.list_dir(base + "/fd", fds) < 0)
            continue;
        (void)scan_process(os, only, static_cast<int>(*pid), base, fds, out);
    }
    return 0;
}

std::uint32_t share(std::uint64_t busy, std::uint64_t interval)
{
    if (interval == 0)
        return 0;
    const long double s = static_cast<long double>(busy) * 10000.0L / static_cast<long double>(interval);
    return s >= 10000.0L ? 10000U : static_cast<std::uint32_t>(s + 0.5L);
}

} // namespace

void add_client_busy(const EngineNs &now, const EngineNs *before, EngineNs &busy)
{
    for (std::size_t i = 0; i < HPU_MAX_ENGINES; ++i) {
        const std::uint64_t b = before != nullptr ? before->at(i) : 0;
        const std::uint64_t n = now.at(i);
        // A counter that went backwards: the id was reused by a new client.
        busy.at(i) += n >= b ? n - b : n;
    }
}

void apply_utilisation(hpu_process &now, const EngineNs &busy, std::uint64_t interval_ns)
{
    now.sample_ns = interval_ns;
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < HPU_MAX_ENGINES; ++i) {
        now.engine_util[i] = i < now.num_engines ? share(busy.at(i), interval_ns) : 0; // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
        if (i < now.num_engines)
            sum += busy.at(i);
    }
    now.util = now.num_engines == 0 ? 0 : share(sum, interval_ns * now.num_engines);
}

int list_processes(Os &os, const std::optional<std::string> &only, std::uint32_t sample_ms, std::vector<hpu_process> &out)
{
    out.clear();
    Sample first;
    if (const int err = scan(os, only, first); err < 0)
        return err;
    // The interval runs from the end of one scan to the end of the next.
    const std::int64_t t0 = os.monotonic_ns();
    Sample last;
    if (sample_ms > 0 && !first.procs.empty()) {
        os.sleep_ns(static_cast<std::int64_t>(sample_ms) * 1000000LL);
        if (const int err = scan(os, only, last); err < 0)
            return err;
        const std::int64_t t1 = os.monotonic_ns();
        const auto interval = static_cast<std::uint64_t>(t1 > t0 ? t1 - t0 : 1);
        // Diffed per client: a client new in the second sample counts from
        // 0, one gone from it contributes nothing.
        std::map<Key, EngineNs> busy;
        for (const auto &[ck, ns] : last.clients) {
            const auto it = first.clients.find(ck);
            add_client_busy(ns, it == first.clients.end() ? nullptr : &it->second, busy[ck.proc]);
        }
        for (auto &[key, p] : last.procs)
            apply_utilisation(p, busy[key], interval);
    } else {
        last = std::move(first);
    }
    out.reserve(last.procs.size());
    for (auto &[key, p] : last.procs)
        out.push_back(p);
    return 0;
}

std::string pci_dir(const hpu_device *dev)
{
    return std::string(kPciDevicesDir) + "/" + dev->entry.pci_addr;
}

int parse_pcie_link(const std::string &cur_speed, const std::string &cur_width, const std::string &max_speed,
                    const std::string &max_width, hpu_pcie_link &out)
{
    const auto cs = parse_link_speed(cur_speed);
    const auto cw = parse_width(cur_width);
    const auto ms = parse_link_speed(max_speed);
    const auto mw = parse_width(max_width);
    if (!cs || !cw || !ms || !mw)
        return -EPROTO;
    out.cur_speed_mts = *cs;
    out.cur_gen = gen_of(*cs);
    out.cur_width = *cw;
    out.max_speed_mts = *ms;
    out.max_gen = gen_of(*ms);
    out.max_width = *mw;
    return 0;
}

} // namespace hpu::detail

extern "C" {

HPU_EXPORT int hpu_device_get_telemetry(hpu_device_t *dev, hpu_telemetry *out)
{
    hpu::detail::clear_error();
    if (dev == nullptr || out == nullptr || out->size < sizeof(out->size))
        return -EINVAL;
    drm_hpu_info_telemetry a{};
    if (const int err = dev->kmd.info_telemetry(a); err < 0)
        return err;
    static_assert(DRM_HPU_MAX_ENGINES_UTIL <= HPU_MAX_ENGINES);
    if (a.num_engines > DRM_HPU_MAX_ENGINES_UTIL)
        return -EPROTO;
    hpu_telemetry t{};
    t.num_engines = a.num_engines;
    t.timestamp_ns = a.timestamp_ns;
    t.energy_uj = a.energy_uj;
    t.hbm_total = a.hbm_total;
    t.hbm_used = a.hbm_used;
    t.temp_die_mc = a.temp_die_mc;
    t.temp_hbm_mc = a.temp_hbm_mc;
    t.temp_board_mc = a.temp_board_mc;
    t.temp_max_mc = a.temp_max_mc;
    t.temp_crit_mc = a.temp_crit_mc;
    t.hbm_temp_max_mc = a.hbm_temp_max_mc;
    t.power_mw = a.power_mw;
    t.power_cap_mw = a.power_cap_mw;
    t.power_cap_max_mw = a.power_cap_max_mw;
    t.volt_core_mv = a.volt_core_mv;
    t.volt_hbm_mv = a.volt_hbm_mv;
    t.clk_core_mhz = a.clk_core_mhz;
    t.clk_core_max_mhz = a.clk_core_max_mhz;
    t.clk_hbm_mhz = a.clk_hbm_mhz;
    t.throttle = a.throttle;
    t.alarms = a.alarms;
    t.util_window_ms = a.util_window_ms;
    for (std::size_t i = 0; i < a.num_engines; ++i) {
        t.engine_util[i] = std::min<std::uint32_t>(a.engine_util[i], 10000U); // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
        t.engine_busy_ns[i] = a.engine_busy_ns[i]; // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
    }
    hpu::detail::fill_sized(t, out);
    return 0;
}

HPU_EXPORT int hpu_device_get_firmware_info(hpu_device_t *dev, hpu_firmware_info *out)
{
    hpu::detail::clear_error();
    if (dev == nullptr || out == nullptr || out->size < sizeof(out->size))
        return -EINVAL;
    drm_hpu_info_firmware a{};
    if (const int err = dev->kmd.info_firmware(a); err < 0)
        return err;
    hpu_firmware_info f{};
    f.running_version = a.running_version;
    f.stored_version = a.stored_version;
    f.min_version = a.min_version;
    f.state = a.state;
    f.boot_source = a.boot_source;
    f.boot_error = a.boot_error;
    f.boots = a.boots;
    static_assert(sizeof(f.running_build) == sizeof(a.running_build));
    hpu::detail::copy_str(f.running_build,
                          std::string_view(static_cast<const char *>(a.running_build),
                                           strnlen(static_cast<const char *>(a.running_build),
                                                   sizeof(a.running_build))));
    hpu::detail::fill_sized(f, out);
    return 0;
}

HPU_EXPORT int hpu_device_get_pcie_link(hpu_device_t *dev, hpu_pcie_link *out)
{
    hpu::detail::clear_error();
    if (dev == nullptr || out == nullptr || out->size < sizeof(out->size))
        return -EINVAL;
    return guarded([dev, out]() {
        const std::string dir = hpu::detail::pci_dir(dev);
        std::string text[4];         // NOLINT(modernize-avoid-c-arrays)
        const char *names[4] = {"current_link_speed", "current_link_width", "max_link_speed", // NOLINT(modernize-avoid-c-arrays)
                                "max_link_width"};
        for (std::size_t i = 0; i < 4; ++i) {
            if (const int err = dev->os().read_file(dir + "/" + names[i], text[i]); err < 0) // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
                return err;
        }
        hpu_pcie_link l{};
        if (const int err = hpu::detail::parse_pcie_link(text[0], text[1], text[2], text[3], l); err < 0)
            return err;
        hpu::detail::fill_sized(l, out);
        return 0;
    });
}

HPU_EXPORT int hpu_device_hwmon_path(hpu_device_t *dev, char *buf, size_t len)
{
    hpu::detail::clear_error();
    if (dev == nullptr || buf == nullptr || len == 0)
        return -EINVAL;
    return guarded([dev, buf, len]() {
        const std::string dir = hpu::detail::pci_dir(dev) + "/hwmon";
        std::vector<std::string> names;
        if (const int err = dev->os().list_dir(dir, names); err < 0)
            return err;
        std::sort(names.begin(), names.end());
        const auto it = std::find_if(names.begin(), names.end(),
                                     [](const std::string &n) { return n.starts_with("hwmon"); });
        if (it == names.end())
            return -ENOENT;
        const std::string path = dir + "/" + *it;
        if (path.size() + 1 > len)
            return -ERANGE;
        std::memcpy(buf, path.c_str(), path.size() + 1);
        return 0;
    });
}

HPU_EXPORT int hpu_device_list_processes(hpu_device_t *dev, uint32_t sample_ms, hpu_process_list_t **out)
{
    hpu::detail::clear_error();
    if (out == nullptr)
        return -EINVAL;
    *out = nullptr;
    return guarded([dev, sample_ms, out]() {
        std::optional<std::string> only;
        if (dev != nullptr)
            only = dev->entry.pci_addr;
        auto list = std::make_unique<hpu_process_list>();
        if (const int err = hpu::detail::list_processes(dev != nullptr ? dev->os() : hpu::detail::default_os(), only, sample_ms, list->entries); err < 0)
            return err;
        *out = list.release();
        return 0;
    });
}

HPU_EXPORT size_t hpu_process_list_size(const hpu_process_list_t *list)
{
    return list == nullptr ? 0 : list->entries.size();
}

HPU_EXPORT const hpu_process *hpu_process_list_at(const hpu_process_list_t *list, size_t i)
{
    if (list == nullptr || i >= list->entries.size())
        return nullptr;
    return &list->entries[i];
}

HPU_EXPORT void hpu_process_list_free(hpu_process_list_t *list)
{
    delete list; // NOLINT(cppcoreguidelines-owning-memory)
}

} // extern "C"
