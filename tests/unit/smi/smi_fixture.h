// SPDX-License-Identifier: MIT
// A fixed hpu-smi snapshot for the formatting tests: two devices with every
// field set (the second with its firmware failed), three processes.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_SMI_FIXTURE_H
#define HPU_TESTS_SMI_FIXTURE_H

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "hpu/hpu.h"
#include "sample_telemetry.h"
#include "smi.h"

namespace hpu::test {

inline hpu::smi::Snapshot smi_full()
{
    hpu::smi::Snapshot s;
    s.lib_version = HPU_MAKE_VERSION(1, 3, 0);
    s.driver_loaded = 1;
    hpu::smi::DeviceSnapshot a;
    a.index = 0;
    a.name = "H1";
    a.pci_addr = "0000:01:00.0";
    a.serial = "HPU-A";
    a.uuid = {0x1b, 0x4e, 0x28, 0xba, 0x2f, 0xa1, 0x11, 0xd2, 0x88, 0x3f, 0x00, 0x16, 0xd3, 0xcc, 0xa4, 0x27};
    a.hbm_bytes = 2147483648ULL;
    a.driver_minor = 1;
    a.revision = 0x0100;
    a.spec_version = 4;
    a.num_dma = 8;
    a.num_nic = 10;
    a.reset_count = 3;
    a.has_errors = true;
    a.errors.size = sizeof(a.errors);
    a.errors.mmu_faults = 3;
    a.errors.ecc_correctable = 12;
    a.errors.retired_pages = 1;
    a.errors.hard_resets = 1;
    a.errors.reset_generation = 1;
    a.has_telemetry = true;
    auto &t = a.telemetry;
    t.size = sizeof(t);
    hpu::test::fill_sample_telemetry(t);
    // Spec version 6: the TPC engine (index 8) and two MMEs (9, 10).
    a.num_tpc_engines = 1;
    a.num_mme_engines = 2;
    t.num_engines = 11;
    t.engine_util[HPU_ENGINE_INDEX_TPC] = 2500;
    t.engine_util[HPU_ENGINE_INDEX_MME(0)] = 5000;
    t.engine_util[HPU_ENGINE_INDEX_MME(1)] = 1000;
    t.throttle = HPU_CLK_THROTTLE_POWER;
    t.alarms = HPU_OVER_POWER_CAP | HPU_OVER_TEMP_MAX;
    a.has_firmware = true;
    auto &f = a.firmware;
    f.size = sizeof(f);
    f.running_version = HPU_MAKE_FW_VERSION(1, 2, 3);
    f.stored_version = HPU_MAKE_FW_VERSION(1, 2, 0);
    f.min_version = HPU_MAKE_FW_VERSION(1, 0, 0);
    f.state = HPU_FIRMWARE_RUNNING;
    f.boot_source = HPU_FIRMWARE_FROM_FLASH;
    f.boots = 2;
    std::strncpy(static_cast<char *>(f.running_build), "build-42", sizeof(f.running_build) - 1);
    a.has_pcie = true;
    a.pcie = {sizeof(hpu_pcie_link), 16000, 4, 16, 16000, 4, 16, 0};
    // NIC ports: 0 up with traffic, 1 without carrier, 2 administratively
    // down, 3 unreadable, the others without an interface.
    a.has_nic = true;
    for (unsigned int p = 0; p < a.num_nic; ++p) {
        hpu::smi::NicPortSnapshot n;
        n.port = p;
        n.present = p < 3;
        n.errnum = p == 3 ? EACCES : p > 3 ? ENOENT : 0;
        if (n.present) {
            n.nic.size = sizeof(n.nic);
            n.nic.port = p;
            const std::string ifname = "eth" + std::to_string(p + 1);
            std::strncpy(static_cast<char *>(n.nic.ifname), ifname.c_str(), sizeof(n.nic.ifname) - 1);
            const std::uint8_t mac[6] = {0x02, 0x48, 0x50, 0xab, 0xcd, static_cast<std::uint8_t>(0x10 + p)}; // NOLINT(modernize-avoid-c-arrays)
            std::memcpy(static_cast<std::uint8_t *>(n.nic.mac), static_cast<const std::uint8_t *>(mac), sizeof(mac));
            n.nic.link = p == 0 ? HPU_NIC_LINK_UP : p == 1 ? HPU_NIC_LINK_DOWN : HPU_NIC_LINK_UNKNOWN;
            n.nic.admin_up = p < 2 ? 1 : 0;
            n.nic.mtu = p == 0 ? 9000 : 1500;
            n.nic.speed_mbps = p == 0 ? 100000 : 0;
            n.nic.rx_packets = 10 * p + 1;
            n.nic.tx_packets = 10 * p + 2;
            n.nic.rx_bytes = 1000 * p + 3;
            n.nic.tx_bytes = 1000 * p + 4;
            n.nic.rx_errors = p;
            n.nic.tx_errors = 0;
            n.nic.rx_dropped = 5;
            n.nic.tx_dropped = 6;
        }
        a.nic.push_back(n);
    }

    hpu::smi::DeviceSnapshot b = a;
    b.index = 1;
    b.pci_addr = "0000:02:00.0";
    b.serial = "HPU-B";
    b.uuid.fill(0xff);
    b.hbm_bytes = 4294967296ULL;
    b.num_nic = 4;
    b.errors = {};
    b.telemetry.hbm_total = 4294967296ULL - (2ULL << 20U);
    b.telemetry.hbm_used = 0;
    b.num_tpc_engines = 0; // a device before the compute engines
    b.num_mme_engines = 0;
    b.telemetry.num_engines = 2;
    b.telemetry.engine_util[0] = 0;
    b.telemetry.engine_util[1] = 0;
    b.firmware.state = HPU_FIRMWARE_FAILED; // sensors read n/a
    b.firmware.running_version = 0;
    b.firmware.boot_source = HPU_FIRMWARE_FROM_NONE;
    b.firmware.boot_error = 8;
    b.firmware.running_build[0] = '\0';
    b.pcie = {sizeof(hpu_pcie_link), 0, 0, 0, 16000, 4, 16, 0};
    b.nic.clear(); // hpu_en not loaded
    for (unsigned int p = 0; p < b.num_nic; ++p) {
        hpu::smi::NicPortSnapshot n;
        n.port = p;
        n.errnum = ENOENT;
        b.nic.push_back(n);
    }
    s.devices = {a, b};

    s.has_processes = true;
    s.processes = {
        {0, "0000:01:00.0", 300, "trainer", 2, 6ULL << 20U, 7500},
        {0, "0000:01:00.0", 301, "bystander", 1, 2ULL << 20U, HPU_UTIL_UNKNOWN},
        {1, "0000:02:00.0", 302, "idle \"job\"", 1, 0, 0},
    };
    return s;
}

} // namespace hpu::test

#endif // HPU_TESTS_SMI_FIXTURE_H
