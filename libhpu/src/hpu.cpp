// SPDX-License-Identifier: MIT
// The C ABI of libhpu (include/hpu/hpu.h). No C++ exception crosses it:
// every entry point catches and reports -ENOMEM (allocation) or -EIO.
//
// Copyright (c) 2026 The hpu authors
#include "hpu/hpu.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>

#include "device.h"
#include "discovery.h"
#include "drm/hpu_accel.h"
#include "os.h"

using hpu::detail::Entry;
using hpu::detail::guarded;
using hpu::detail::os;

struct hpu_device_list {
    std::vector<hpu_device_desc> entries;
};

namespace {

// Copies src into a fixed char array, truncating, always NUL terminated.
template <size_t N>
void copy_str(char (&dst)[N], std::string_view src) // NOLINT(modernize-avoid-c-arrays)
{
    const size_t n = std::min(src.size(), N - 1);
    std::memcpy(static_cast<char *>(dst), src.data(), n);
    dst[n] = '\0'; // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
}

int open_entry(const Entry &entry, hpu_device_t **out)
{
    auto dev = std::make_unique<hpu_device>();
    dev->entry = entry;
    const int fd = os().open(entry.node, O_RDWR);
    if (fd < 0)
        return fd;
    dev->fd = fd;
    *out = dev.release();
    return 0;
}

const char *chip_name(uint32_t chip_id)
{
    return chip_id == HPU_CHIP_H1 ? "H1" : "unknown";
}

} // namespace

extern "C" {

HPU_EXPORT uint32_t hpu_get_version(void)
{
    return HPU_API_VERSION;
}

HPU_EXPORT const char *hpu_strerror(int err)
{
    const int e = err < 0 ? -err : err;
    switch (e) {
    case 0:
        return "Success";
    case ENODEV:
        return "No such HPU device";
    case ENOENT:
        return "No such file or directory (is the hpu driver loaded?)";
    case EACCES:
    case EPERM:
        return "Permission denied (no access to the HPU device node)";
    case EINVAL:
        return "Invalid argument";
    case EFAULT:
        return "Bad address (unmapped memory or a device MMU fault)";
    case ETIME:
        return "Timer expired (the fence did not signal in time)";
    case ETIMEDOUT:
        return "The job timed out on the device";
    case ECANCELED:
        return "The job was cancelled (device reset or queue destroyed)";
    case ENOSPC:
        return "Command list full";
    case EXDEV:
        return "Object belongs to another HPU device";
    case ENOMEM:
        return "Out of memory";
    case EPROTO:
        return "Unexpected answer from the hpu driver (version mismatch?)";
    case ENOTTY:
        return "Not an hpu device (ioctl not supported)";
    case EIO:
        return "Input/output error";
    case EBUSY:
        return "Device or resource busy (a reset in progress, or the job is still pending)";
    case EDEADLK:
        return "Not allowed from the HPU event callback";
    case EOPNOTSUPP:
        return "Not supported by the hpu driver";
    case EHWPOISON:
        return "Uncorrectable memory error (HBM ECC)";
    default:
        break;
    }
    const char *desc = strerrordesc_np(e);
    return desc != nullptr ? desc : "Unknown error";
}

HPU_EXPORT int hpu_device_count(void)
{
    return guarded([]() {
        std::vector<Entry> entries;
        const int err = hpu::detail::discover(entries);
        return err < 0 ? err : static_cast<int>(entries.size());
    });
}

HPU_EXPORT int hpu_device_list_get(hpu_device_list_t **out)
{
    if (out == nullptr)
        return -EINVAL;
    *out = nullptr;
    return guarded([out]() {
        std::vector<Entry> entries;
        if (const int err = hpu::detail::discover(entries); err < 0)
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

HPU_EXPORT int hpu_open_by_index(unsigned int index, hpu_device_t **out)
{
    if (out == nullptr)
        return -EINVAL;
    *out = nullptr;
    return guarded([index, out]() {
        std::vector<Entry> entries;
        if (const int err = hpu::detail::discover(entries); err < 0)
            return err;
        const auto it = std::find_if(entries.begin(), entries.end(),
                                     [index](const Entry &e) { return e.index == index; });
        return it == entries.end() ? -ENODEV : open_entry(*it, out);
    });
}

HPU_EXPORT int hpu_open_by_pci(const char *bdf, hpu_device_t **out)
{
    if (out == nullptr)
        return -EINVAL;
    *out = nullptr;
    if (bdf == nullptr)
        return -EINVAL;
    return guarded([bdf, out]() {
        const auto addr = hpu::detail::normalize_pci_addr(bdf);
        if (!addr)
            return -EINVAL;
        std::vector<Entry> entries;
        if (const int err = hpu::detail::discover(entries); err < 0)
            return err;
        const auto it = std::find_if(entries.begin(), entries.end(),
                                     [&addr](const Entry &e) { return e.pci_addr == *addr; });
        return it == entries.end() ? -ENODEV : open_entry(*it, out);
    });
}

HPU_EXPORT int hpu_close(hpu_device_t *dev)
{
    if (dev == nullptr)
        return 0;
    if (hpu::detail::events_on_thread(dev))
        return -EDEADLK; // from the callback: the thread cannot join itself
    hpu::detail::events_stop(dev);
    const int err = dev->fd >= 0 ? os().close(dev->fd) : 0;
    delete dev; // NOLINT(cppcoreguidelines-owning-memory)
    return err;
}

HPU_EXPORT int hpu_device_get_fd(const hpu_device_t *dev)
{
    return dev == nullptr ? -EINVAL : dev->fd;
}

HPU_EXPORT int hpu_device_get_info(hpu_device_t *dev, hpu_device_info *out)
{
    if (dev == nullptr || out == nullptr || out->size < sizeof(out->size))
        return -EINVAL;

    drm_hpu_info_device answer{};
    if (const int err = hpu::detail::query_info(dev, DRM_HPU_INFO_DEVICE, &answer, sizeof(answer)); err < 0)
        return err;

    hpu_device_info info{};
    info.chip_id = answer.chip_id;
    info.revision = answer.revision;
    info.spec_version = answer.spec_version;
    info.hbm_size = answer.hbm_size;
    info.index = dev->entry.index;
    info.pci_domain = answer.pci_domain;
    info.pci_bus = answer.pci_bus;
    info.pci_dev = answer.pci_dev;
    info.pci_func = answer.pci_func;
    info.hbm_stacks = answer.hbm_stacks;
    info.num_dma = answer.num_dma;
    info.num_tpc = answer.num_tpc;
    info.num_mme = answer.num_mme;
    info.num_nic = answer.num_nic;
    info.driver_major = answer.driver_major;
    info.driver_minor = answer.driver_minor;
    info.driver_patch = answer.driver_patch;
    info.msix_vectors = answer.msix_vectors;
    info.reset_count = answer.reset_count;
    static_assert(sizeof(info.serial) > sizeof(answer.serial));
    copy_str(info.serial, std::string_view(static_cast<const char *>(answer.serial),
                                           strnlen(static_cast<const char *>(answer.serial),
                                                   sizeof(answer.serial))));
    static_assert(sizeof(info.uuid) == sizeof(answer.uuid));
    std::memcpy(static_cast<uint8_t *>(info.uuid), static_cast<const uint8_t *>(answer.uuid), sizeof(info.uuid));
    copy_str(info.name, chip_name(answer.chip_id));
    std::array<char, HPU_PCI_ADDR_MAX> pci{};
    const int n = std::snprintf(pci.data(), pci.size(), "%04x:%02x:%02x.%x", // NOLINT(cppcoreguidelines-pro-type-vararg)
                                static_cast<unsigned>(answer.pci_domain), static_cast<unsigned>(answer.pci_bus),
                                static_cast<unsigned>(answer.pci_dev), static_cast<unsigned>(answer.pci_func));
    if (n < 0)
        return -EIO;
    copy_str(info.pci_addr, std::string_view(pci.data()));

    const auto filled = static_cast<uint32_t>(std::min<size_t>(out->size, sizeof(info)));
    info.size = filled;
    std::memcpy(out, &info, filled);
    return 0;
}

HPU_EXPORT int hpu_device_list_open(const hpu_device_list_t *list, size_t i, hpu_device_t **out)
{
    if (out == nullptr)
        return -EINVAL;
    *out = nullptr;
    if (list == nullptr)
        return -EINVAL;
    if (i >= list->entries.size())
        return -ENODEV;
    return guarded([list, i, out]() {
        const hpu_device_desc &d = list->entries[i];
        const Entry e{d.index, static_cast<const char *>(d.pci_addr), static_cast<const char *>(d.node)};
        return open_entry(e, out);
    });
}

HPU_EXPORT int hpu_driver_loaded(void)
{
    return guarded([]() {
        std::vector<std::string> names;
        const int err = os().list_dir(hpu::detail::kDriverModuleDir, names);
        if (err == -ENOENT)
            return 0;
        return err < 0 ? err : 1;
    });
}

} // extern "C"
