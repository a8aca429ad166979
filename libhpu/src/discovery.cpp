// SPDX-License-Identifier: MIT
// Device discovery: which /sys/class/accel/accelN are HPUs, and where; the
// device list of the C ABI and hpu_driver_loaded().
//
// Copyright (c) 2026 The hpu authors
#include "compute.h"
#include "discovery.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>

#include <memory>
#include <string>
#include <vector>

#include "common.h"
#include "hpu/hpu.h"
#include "hw/hpu_regs.h"
#include "os.h"


namespace hpu::detail {
namespace {

std::string_view basename_of(std::string_view path)
{
    while (!path.empty() && path.back() == '/')
        path.remove_suffix(1);
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Parses a hex field of 1..max_digits digits; std::nullopt otherwise.
std::optional<unsigned long> parse_hex(std::string_view s, size_t max_digits)
{
    if (s.size() > max_digits)
        return std::nullopt;
    return parse_num<unsigned long>(s, 16);
}

// Reads a sysfs id file such as ".../vendor" ("0x1234\n").
int read_id(Os &os, const std::string &path, unsigned long &id)
{
    std::string text;
    if (const int err = os.read_file(path, text); err < 0)
        return err;
    std::string_view v = trim(text);
    if (v.starts_with("0x") || v.starts_with("0X"))
        v.remove_prefix(2);
    const auto parsed = parse_hex(v, 8);
    if (!parsed)
        return -EPROTO;
    id = *parsed;
    return 0;
}

// 1 if the accel device at dir is an HPU, 0 if not, or a negative errno.
int is_hpu(Os &os, const std::string &dir)
{
    std::string driver;
    const int err = os.read_link(dir + "/device/driver", driver);
    if (err == 0 && basename_of(driver) == kDriverName)
        return 1;
    if (err < 0 && err != -ENOENT)
        return err;
    unsigned long vendor = 0;
    unsigned long device = 0;
    int r = read_id(os, dir + "/device/vendor", vendor);
    if (r == 0)
        r = read_id(os, dir + "/device/device", device);
    if (r == -ENOENT || r == -EPROTO)
        return 0;
    if (r < 0)
        return r;
    return vendor == HPU_PCI_VENDOR_ID && device == HPU_PCI_DEVICE_ID ? 1 : 0;
}

} // namespace

std::optional<std::string> normalize_pci_addr(std::string_view in)
{
    // [domain:]bus:dev.func
    const auto dot = in.rfind('.');
    if (dot == std::string_view::npos)
        return std::nullopt;
    const auto func = parse_hex(in.substr(dot + 1), 1);
    const std::string_view head = in.substr(0, dot);
    const auto c2 = head.rfind(':');
    if (c2 == std::string_view::npos)
        return std::nullopt;
    const auto dev = parse_hex(head.substr(c2 + 1), 2);
    const std::string_view head2 = head.substr(0, c2);
    const auto c1 = head2.rfind(':');
    const auto bus = parse_hex(c1 == std::string_view::npos ? head2 : head2.substr(c1 + 1), 2);
    std::optional<unsigned long> domain = 0UL;
    if (c1 != std::string_view::npos)
        domain = parse_hex(head2.substr(0, c1), 8);
    if (!func || !dev || !bus || !domain || *func > 7 || *dev > 0x1f)
        return std::nullopt;
    std::array<char, 32> buf{};
    const int n = std::snprintf(buf.data(), buf.size(), "%04lx:%02lx:%02lx.%lx", *domain, *bus, // NOLINT(cppcoreguidelines-pro-type-vararg)
                                *dev, *func);
    if (n < 0 || static_cast<size_t>(n) >= buf.size())
        return std::nullopt;
    return std::string(buf.data(), static_cast<size_t>(n));
}

std::optional<unsigned int> parse_accel_name(std::string_view name)
{
    constexpr std::string_view prefix = "accel";
    if (!name.starts_with(prefix))
        return std::nullopt;
    name.remove_prefix(prefix.size());
    if (name.empty() || name.size() > 9 || name.find_first_not_of("0123456789") != std::string_view::npos)
        return std::nullopt;
    unsigned int v = 0;
    const auto [ptr, ec] = std::from_chars(name.data(), name.data() + name.size(), v);
    if (ec != std::errc() || ptr != name.data() + name.size())
        return std::nullopt;
    return v;
}

int discover(Os &os, std::vector<Entry> &out)
{
    out.clear();
    std::vector<std::string> names;
    if (const int err = os.list_dir(kAccelClassDir, names); err < 0)
        return err == -ENOENT ? 0 : err;

    std::vector<Entry> found;
    for (const auto &name : names) {
        const auto index = parse_accel_name(name);
        if (!index)
            continue; // e.g. a control node or an unrelated entry
        const std::string dir = std::string(kAccelClassDir) + "/" + name;
        const int hpu = is_hpu(os, dir);
        if (hpu < 0)
            return hpu;
        if (hpu == 0)
            continue;
        std::string target;
        if (const int err = os.read_link(dir + "/device", target); err < 0) {
            if (err == -ENOENT)
                continue; // removed while we looked
            return err;
        }
        auto addr = normalize_pci_addr(basename_of(target));
        if (!addr)
            continue; // not a PCI device: not an HPU
        found.push_back(Entry{*index, std::move(*addr), std::string(kAccelNodePrefix) + std::to_string(*index)});
    }
    std::sort(found.begin(), found.end(), [](const Entry &a, const Entry &b) { return a.index < b.index; });
    out = std::move(found);
    return 0;
}

} // namespace hpu::detail

using namespace hpu::detail; // NOLINT(google-build-using-namespace)

extern "C" {

HPU_EXPORT int hpu_device_count(void)
{
    hpu::detail::clear_error();
    return guarded([]() {
        std::vector<Entry> entries;
        const int err = discover(default_os(), entries);
        return err < 0 ? err : static_cast<int>(entries.size());
    });
}

HPU_EXPORT int hpu_device_list_get(hpu_device_list_t **out)
{
    hpu::detail::clear_error();
    if (out == nullptr)
        return -EINVAL;
    *out = nullptr;
    return guarded([out]() {
        std::vector<Entry> entries;
        if (const int err = discover(default_os(), entries); err < 0)
            return err;
        auto list = std::make_unique<hpu_device_list>();
        list->entries.reserve(entries.size());
        for (const auto &e : entries) {
            hpu_device_desc d{};
            d.index = e.index;
            copy_str(d.pci_addr, e.pci_addr);
            copy_str(d.node, e.node);
            list->entries.push_back(d);
        }
        *out = list.release();
        return 0;
    });
}

HPU_EXPORT void hpu_device_list_free(hpu_device_list_t *list)
{
    delete list; // NOLINT(cppcoreguidelines-owning-memory)
}

HPU_EXPORT size_t hpu_device_list_size(const hpu_device_list_t *list)
{
    return list == nullptr ? 0 : list->entries.size();
}

HPU_EXPORT const hpu_device_desc *hpu_device_list_at(const hpu_device_list_t *list, size_t i)
{
    if (list == nullptr || i >= list->entries.size())
        return nullptr;
    return &list->entries[i];
}

HPU_EXPORT int hpu_driver_loaded(void)
{
    hpu::detail::clear_error();
    return guarded([]() {
        std::vector<std::string> names;
        const int err = default_os().list_dir(kDriverModuleDir, names);
        if (err == -ENOENT)
            return 0;
        return err < 0 ? err : 1;
    });
}

} // extern "C"
