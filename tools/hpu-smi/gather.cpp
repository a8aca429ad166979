// SPDX-License-Identifier: MIT
// hpu-smi: the data path. Everything comes from libhpu; each device is
// opened once, discovery runs once, /proc is scanned once for all devices.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include <csignal>
#include <ctime>
#include <pthread.h>
#include <unistd.h>

#include "hpu/hpu.hpp"
#include "smi.h"

namespace hpu::smi {

namespace {

std::optional<unsigned int> parse_index(const std::string &id)
{
    unsigned int v = 0;
    const auto *end = id.data() + id.size();
    const auto [ptr, ec] = std::from_chars(id.data(), end, v);
    if (id.empty() || ec != std::errc() || ptr != end)
        return std::nullopt;
    return v;
}

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// "bb:dd.f" -> "0000:bb:dd.f", lower case; other text unchanged.
std::string normalize_pci(std::string id)
{
    id = lower(std::move(id));
    if (std::count(id.begin(), id.end(), ':') == 1)
        id = "0000:" + id;
    return id;
}

bool is_uuid(const std::string &id)
{
    if (id.size() != 36)
        return false;
    for (std::size_t i = 0; i < id.size(); ++i) {
        const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash != (id[i] == '-') || (!dash && std::isxdigit(static_cast<unsigned char>(id[i])) == 0))
            return false;
    }
    return true;
}

bool is_pci(const std::string &id)
{
    // [domain:]bus:dev.func, hex digits.
    const std::string n = normalize_pci(id);
    if (n.size() < 12 || n[n.size() - 2] != '.' || n[n.size() - 5] != ':' || n[n.size() - 8] != ':')
        return false;
    return std::all_of(n.begin(), n.end(),
                       [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0 || c == ':' || c == '.'; });
}

DeviceSnapshot identity(const hpu_device_info &info, const hpu::DeviceEntry &entry)
{
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
    d.revision = info.revision;
    d.spec_version = info.spec_version;
    d.num_dma = info.num_dma;
    // Zero from a library before 1.4 (a shorter hpu_device_info): no compute engines shown.
    if (info.size >= offsetof(hpu_device_info, class_engines) + sizeof(info.class_engines)) {
        d.num_tpc_engines = info.class_engines[HPU_ENGINE_CLASS_TPC];
        d.num_mme_engines = info.class_engines[HPU_ENGINE_CLASS_MME];
    }
    d.num_nic = info.num_nic;
    d.reset_count = info.reset_count;
    return d;
}

} // namespace

bool valid_id(const std::string &id)
{
    return parse_index(id).has_value() || is_pci(id) || is_uuid(id);
}

bool matches(const DeviceSnapshot &d, const std::string &id)
{
    if (const auto idx = parse_index(id))
        return *idx == d.index;
    if (is_uuid(id))
        return lower(id) == format_uuid(d.uuid);
    return normalize_pci(id) == d.pci_addr;
}

bool may_match(const DeviceSnapshot &d, const std::string &id)
{
    return matches(d, id) || (!d.has_info && is_uuid(id));
}

namespace {

// Whether req.ids (empty: all) selects the device of entry without opening
// it: 1 yes, 0 no, -1 only its UUID can tell.
int selected(const Request &req, const hpu::DeviceEntry &entry)
{
    if (req.ids.empty())
        return 1;
    DeviceSnapshot d;
    d.index = entry.index;
    d.pci_addr = entry.pci_addr;
    bool uuid = false;
    for (const auto &id : req.ids) {
        if (is_uuid(id)) {
            uuid = true;
        } else if (matches(d, id)) {
            return 1;
        }
    }
    return uuid ? -1 : 0;
}

// Reads one device into d; throws hpu::Error (d keeps what was read).
void read_device(const Request &req, const hpu::DeviceList &list, std::size_t i, DeviceSnapshot &d, bool &wanted)
{
    const hpu::DeviceEntry entry = list.at(i);
    const hpu::Device dev = list.open(i);
    d = identity(dev.info(), entry);
    if (!wanted) {
        wanted = std::any_of(req.ids.begin(), req.ids.end(), [&d](const std::string &id) { return matches(d, id); });
        if (!wanted)
            return;
    }
    if ((req.need & kNeedTelemetry) != 0U) {
        d.telemetry = dev.telemetry();
        d.has_telemetry = true;
    }
    if ((req.need & (kNeedFirmware | kNeedTelemetry)) != 0U) {
        d.firmware = dev.firmware_info();
        d.has_firmware = true;
    }
    if ((req.need & kNeedErrors) != 0U) {
        d.errors = dev.error_counters();
        d.has_errors = true;
    }
    if ((req.need & kNeedPcie) != 0U) {
        try {
            d.pcie = dev.pcie_link();
        } catch (const hpu::Error &e) {
            if (e.errnum() != ENOENT)
                throw;
            // No link attributes (e.g. a virtual function): all unknown.
            d.pcie = hpu_pcie_link{};
            d.pcie.size = sizeof(d.pcie);
        }
        d.has_pcie = true;
    }
    if ((req.need & kNeedNet) != 0U) {
        d.nic.clear();
        for (unsigned int p = 0; p < d.num_nic; ++p) {
            NicPortSnapshot n;
            n.port = p;
            try {
                n.nic = dev.nic_port(p);
                n.present = true;
            } catch (const hpu::Error &e) {
                // No interface (hpu_en not loaded), or one that could
                // not be read: shown per port, the device stays readable.
                n.errnum = e.errnum();
            }
            d.nic.push_back(n);
        }
        d.has_nic = true;
    }
}

} // namespace

Snapshot gather(const Request &req)
{
    Snapshot s;
    s.lib_version = hpu::version();
    s.driver_loaded = hpu_driver_loaded();
    if (s.driver_loaded < 0)
        s.driver_loaded = -1;
    const auto list = hpu::DeviceList::discover();
    s.discovered = list.size();
    s.devices.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
        const hpu::DeviceEntry entry = list.at(i);
        const int sel = selected(req, entry);
        if (sel == 0)
            continue; // never opened
        DeviceSnapshot d;
        d.index = entry.index;
        d.pci_addr = entry.pci_addr;
        d.has_info = false;
        bool wanted = sel > 0;
        try {
            read_device(req, list, i, d, wanted);
        } catch (const hpu::Error &e) {
            d.error = e.what();
            d.errnum = e.errnum();
            d.index = entry.index;
            d.pci_addr = entry.pci_addr;
            // Kept when selected, or when only its unknown UUID could tell.
            wanted = wanted || !d.has_info;
        }
        if (wanted)
            s.devices.push_back(std::move(d));
    } // each device is closed here, before the process scan
    if ((req.need & kNeedProcesses) != 0U) {
        const int self = static_cast<int>(::getpid());
        for (const auto &p : hpu::list_processes(nullptr, std::chrono::milliseconds(req.sample_ms))) {
            const std::string addr = static_cast<const char *>(p.pci_addr);
            const auto dev = std::find_if(s.devices.begin(), s.devices.end(),
                                          [&addr](const DeviceSnapshot &d) { return d.pci_addr == addr; });
            if (p.pid == self || dev == s.devices.end())
                continue;
            ProcessSnapshot ps;
            ps.index = dev->index;
            ps.pci_addr = addr;
            ps.pid = p.pid;
            ps.name = static_cast<const char *>(p.comm);
            ps.clients = p.clients;
            ps.hbm_bytes = p.hbm_total;
            ps.util = p.util;
            s.processes.push_back(std::move(ps));
        }
        std::stable_sort(s.processes.begin(), s.processes.end(), [](const ProcessSnapshot &a, const ProcessSnapshot &b) {
            return a.index != b.index ? a.index < b.index : a.pid < b.pid;
        });
        s.has_processes = true;
    }
    return s;
}

int reset_device(const std::string &id, bool hard, ResetTarget &target)
{
    target = ResetTarget{};
    if (!valid_id(id))
        return -EINVAL;
    hpu_device_list_t *raw = nullptr;
    if (const int err = hpu_device_list_get(&raw); err < 0)
        return err;
    hpu_device_t *dev = nullptr;
    int err = 0;
    for (std::size_t i = 0; i < hpu_device_list_size(raw) && dev == nullptr; ++i) {
        const hpu_device_desc *d = hpu_device_list_at(raw, i);
        DeviceSnapshot snap;
        snap.index = d->index;
        snap.pci_addr = static_cast<const char *>(d->pci_addr);
        if (is_uuid(id)) {
            // The UUID needs INFO: open each device until one matches.
            hpu_device_t *h = nullptr;
            if (err = hpu_device_list_open(raw, i, &h); err < 0)
                break;
            hpu_device_info info{};
            info.size = sizeof(info);
            err = hpu_device_get_info(h, &info);
            std::copy(std::begin(info.uuid), std::end(info.uuid), snap.uuid.begin());
            if (err == 0 && matches(snap, id)) {
                dev = h;
            } else {
                (void)hpu_close(h);
            }
            if (err < 0)
                break;
        } else if (matches(snap, id)) {
            err = hpu_device_list_open(raw, i, &dev);
            if (err < 0)
                dev = nullptr;
        }
        if (dev != nullptr || err < 0) {
            target.index = snap.index;
            target.pci_addr = snap.pci_addr;
            break;
        }
    }
    hpu_device_list_free(raw);
    if (err < 0)
        return err;
    if (dev == nullptr)
        return -ENODEV;
    err = hpu_device_reset(dev, hard ? HPU_RESET_HARD : HPU_RESET_SOFT);
    (void)hpu_close(dev);
    return err;
}

namespace {

sigset_t stop_signals()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    return set;
}

// Blocks SIGINT and SIGTERM in this thread (and the threads it starts):
// run() does so before the first round of -l, so a signal waits for
// wait_or_signal() and never ends the process in the middle of a round
// (nor of its output).
bool block_stop_signals()
{
    const sigset_t set = stop_signals();
    return ::pthread_sigmask(SIG_BLOCK, &set, nullptr) == 0;
}

// Waits for SIGINT or SIGTERM (blocked by block_stop_signals()) at most
// seconds; false when one came, also when it came before the call (while
// a round gathered).
bool wait_or_signal(double seconds)
{
    const sigset_t set = stop_signals();
    if (!block_stop_signals())
        return false;
    const auto ns = static_cast<long long>(seconds * 1e9);
    timespec end{};
    ::clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += static_cast<time_t>(ns / 1000000000LL);
    end.tv_nsec += static_cast<long>(ns % 1000000000LL);
    if (end.tv_nsec >= 1000000000L) {
        end.tv_nsec -= 1000000000L;
        ++end.tv_sec;
    }
    for (;;) {
        timespec now{};
        ::clock_gettime(CLOCK_MONOTONIC, &now);
        const long long left =
            (static_cast<long long>(end.tv_sec) - now.tv_sec) * 1000000000LL + (end.tv_nsec - now.tv_nsec);
        timespec t{};
        if (left > 0) {
            t.tv_sec = static_cast<time_t>(left / 1000000000LL);
            t.tv_nsec = static_cast<long>(left % 1000000000LL);
        }
        // With t zero this only takes a signal already pending.
        const int sig = ::sigtimedwait(&set, nullptr, &t);
        if (sig == SIGINT || sig == SIGTERM)
            return false;
        if (sig < 0 && errno != EINTR && errno != EAGAIN)
            return false;
        if (left <= 0)
            return true;
    }
}

} // namespace

Backend default_backend()
{
    return Backend{gather, reset_device, []() { return ::geteuid() == 0; }, wait_or_signal, block_stop_signals};
}

} // namespace hpu::smi
