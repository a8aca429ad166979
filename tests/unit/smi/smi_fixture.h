// SPDX-License-Identifier: MIT
// A fixed hpu-smi snapshot for the formatting tests: two devices with every
// field set (the second with its firmware failed), three processes.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_SMI_FIXTURE_H
#define HPU_TESTS_SMI_FIXTURE_H

#include <cstring>

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
