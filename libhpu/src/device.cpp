// SPDX-License-Identifier: MIT
// Devices: open, close, information, reset and reopen (recovery), loss.
//
// Copyright (c) 2026 The hpu authors
#include "compute.h"
#include "device.h"
#include "uqueue.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>

#include "common.h"
#include "discovery.h"
#include "drm/hpu_accel.h"
#include "events.h"
#include "hpu/hpu.h"
#include "kmd.h"
#include "os.h"

namespace hpu::detail {

int open_entry(Os &os, const Entry &entry, hpu_device **out)
{
    auto dev = std::make_unique<hpu_device>(os);
    dev->entry = entry;
    const int fd = os.open(entry.node, O_RDWR);
    if (fd < 0)
        return fd;
    dev->kmd.set_fd(fd);
    watch_forks();
    dev->uq_fork_gen = fork_generation();
    *out = dev.release();
    return 0;
}

} // namespace hpu::detail

using namespace hpu::detail; // NOLINT(google-build-using-namespace)

namespace {

const char *chip_name(uint32_t chip_id)
{
    return chip_id == HPU_CHIP_H1 ? "H1" : "unknown";
}

} // namespace

extern "C" {

HPU_EXPORT int hpu_open_by_index(unsigned int index, hpu_device_t **out)
{
    hpu::detail::clear_error();
    if (out == nullptr)
        return -EINVAL;
    *out = nullptr;
    return guarded([index, out]() {
        std::vector<Entry> entries;
        if (const int err = hpu::detail::discover(default_os(), entries); err < 0)
            return err;
        const auto it = std::find_if(entries.begin(), entries.end(),
                                     [index](const Entry &e) { return e.index == index; });
        return it == entries.end() ? -ENODEV : open_entry(default_os(), *it, out);
    });
}

HPU_EXPORT int hpu_open_by_pci(const char *bdf, hpu_device_t **out)
{
    hpu::detail::clear_error();
    if (out == nullptr)
        return -EINVAL;
    *out = nullptr;
    if (bdf == nullptr)
        return -EINVAL;
    return guarded([bdf, out]() {
        const auto addr = normalize_pci_addr(bdf);
        if (!addr)
            return -EINVAL;
        std::vector<Entry> entries;
        if (const int err = hpu::detail::discover(default_os(), entries); err < 0)
            return err;
        const auto it = std::find_if(entries.begin(), entries.end(),
                                     [&addr](const Entry &e) { return e.pci_addr == *addr; });
        return it == entries.end() ? -ENODEV : open_entry(default_os(), *it, out);
    });
}

HPU_EXPORT int hpu_close(hpu_device_t *dev)
{
    hpu::detail::clear_error();
    if (dev == nullptr)
        return 0;
    if (events_on_thread(dev))
        return -EDEADLK; // from the callback: the thread cannot join itself
    events_stop(dev);
    dev->kernels.clear(); // their buffers, while the file is open
    drop_spare_rings(dev);
    // The queues graphs made on first use (graph.cpp); the graphs are gone.
    for (std::uint32_t s = 0; s < dev->graph_queues.size(); ++s) {
        if ((dev->graph_queues_made & (1U << s)) != 0)
            (void)dev->kmd.queue_destroy(dev->graph_queues.at(s));
    }
    const int err = dev->fd() >= 0 ? dev->os().close(dev->fd()) : 0;
    delete dev; // NOLINT(cppcoreguidelines-owning-memory)
    return err;
}

HPU_EXPORT int hpu_device_get_fd(const hpu_device_t *dev)
{
    hpu::detail::clear_error();
    return dev == nullptr ? -EINVAL : dev->fd();
}

HPU_EXPORT int hpu_device_get_info(hpu_device_t *dev, hpu_device_info *out)
{
    hpu::detail::clear_error();
    if (dev == nullptr || out == nullptr || out->size < sizeof(out->size))
        return -EINVAL;

    drm_hpu_info_device answer{};
    if (const int err = dev->kmd.info_device(answer); err < 0)
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
    info.caps = (answer.caps & DRM_HPU_CAP_HBM_MMAP) != 0 ? HPU_DEVICE_CAP_HBM_MMAP : 0;
    static_assert(sizeof(info.class_engines) == sizeof(answer.class_engines));
    std::memcpy(static_cast<uint8_t *>(info.class_engines), static_cast<const uint8_t *>(answer.class_engines),
                sizeof(info.class_engines));
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

    fill_sized(info, out);
    return 0;
}

HPU_EXPORT int hpu_device_list_open(const hpu_device_list_t *list, size_t i, hpu_device_t **out)
{
    hpu::detail::clear_error();
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
        return open_entry(default_os(), e, out);
    });
}

HPU_EXPORT int hpu_device_is_lost(const hpu_device_t *dev)
{
    hpu::detail::clear_error();
    if (dev == nullptr)
        return -EINVAL;
    return dev->lost.load(std::memory_order_acquire) ? 1 : 0;
}

HPU_EXPORT int hpu_device_reopen(hpu_device_t *dev)
{
    hpu::detail::clear_error();
    if (dev == nullptr)
        return -EINVAL;
    if (events_on_thread(dev))
        return -EDEADLK;
    return guarded([dev]() {
        std::vector<Entry> entries;
        if (const int err = discover(dev->os(), entries); err < 0)
            return err;
        const auto it = std::find_if(entries.begin(), entries.end(),
                                     [dev](const Entry &e) { return e.pci_addr == dev->entry.pci_addr; });
        if (it == entries.end())
            return -ENODEV;
        const int fd = dev->os().open(it->node, O_RDWR);
        if (fd < 0)
            return fd;
        const bool had_thread = dev->ev.cb != nullptr;
        const bool was_enabled = dev->ev.enabled.load(std::memory_order_acquire);
        events_stop(dev);
        if (was_enabled) {
            Kmd fresh(dev->os(), fd); // not yet the device's file
            if (const int err = events_enable_on(fresh); err < 0) {
                (void)dev->os().close(fd);
                if (had_thread && events_start(dev) < 0)
                    dev->ev.cb = nullptr;
                return err;
            }
            // What the old file still holds (the reset event, typically)
            // is delivered after the switch.
            (void)events_drain(dev);
        }
        (void)dev->os().close(dev->fd());
        dev->kmd.set_fd(fd);
        dev->entry = *it;
        ++dev->epoch;
        // Objects of the old file: its buffers, sync objects and queues
        // (freed outside the lock: a buffer's release takes it).
        std::map<std::string, KernelRef, std::less<>> old_kernels;
        {
            const std::lock_guard<std::mutex> lock(dev->mu);
            dev->gem_refs.clear();
            old_kernels.swap(dev->kernels);
            dev->sobs_used = 0;
            dev->graph_queues_made = 0;
        }
        old_kernels.clear();
        drop_spare_rings(dev); // of the old file: nothing to unmap
        {
            const std::lock_guard<std::mutex> lock(dev->uq_mu);
            dev->uq_live = 0; // the old file's queues died with it
            dev->uq_fork_gen = fork_generation();
        }
        {
            const std::lock_guard<std::mutex> lock(dev->ev.store_mu);
            dev->ev.errors.clear();
        }
        dev->lost.store(false, std::memory_order_release);
        if (had_thread) {
            if (const int err = events_start(dev); err < 0) {
                dev->ev.cb = nullptr;
                dev->ev.user = nullptr;
                return err;
            }
        }
        return 0;
    });
}

HPU_EXPORT int hpu_device_reset(hpu_device_t *dev, uint32_t flags)
{
    hpu::detail::clear_error();
    if (dev == nullptr || (flags & ~HPU_RESET_HARD) != 0)
        return -EINVAL;
    return guarded([dev, flags]() {
        const bool hard = (flags & HPU_RESET_HARD) != 0;
        const std::string path = "/sys/bus/pci/devices/" + dev->entry.pci_addr + "/" + std::string(kResetAttr);
        // As an operator's "echo hard > ..." writes it.
        const int err = dev->os().write_file(path, hard ? "hard\n" : "soft\n");
        if (err == -ENOENT)
            return -EOPNOTSUPP;
        if (err < 0)
            return err;
        if (hard)
            dev->lost.store(true, std::memory_order_release); // this file is stale now
        return 0;
    });
}

} // extern "C"
