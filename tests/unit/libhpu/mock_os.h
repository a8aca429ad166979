// SPDX-License-Identifier: MIT
// A fake kernel for libhpu's unit tests: a mock Os with an in-memory sysfs
// (files, symbolic links, directories), device nodes answering the hpu
// ioctls (INFO, buffer objects, VM_BIND, queues, SUBMIT) and the standard
// DRM ones libhpu uses (GEM close, PRIME, syncobjs), sync_file fds, mmap, a
// settable monotonic clock, call counters and failure injection. Every
// kernel object it hands out is tracked, so a test can check that each was
// released exactly once (leaks() and misuse).
//
// The mock is built in layers, one header per topic, each class deriving
// from the one before: mock_host.h (sysfs, /proc, clock, fds),
// mock_events.h (DRM events, eventfds, poll/read/write), mock_sync.h
// (syncobjs, fences, waits, dma-buf and sync_file fds), mock_driver.h (the
// fake hpu driver: INFO, buffers, VM_BIND, queues, SUBMIT, open/close/
// ioctl/mmap, failure injection).
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_MOCK_OS_H
#define HPU_TESTS_MOCK_OS_H

#include <cstring>

#include "drm/hpu_accel.h"
#include "mock_driver.h"
#include "os.h"

namespace hpu::test {

class MockOs final : public MockDriver {};

// Installs a MockOs for the lifetime of the object.
class ScopedMock {
public:
    explicit ScopedMock(MockOs &mock) : prev_(hpu::detail::set_default_os(&mock)) {}
    ScopedMock(const ScopedMock &) = delete;
    ScopedMock &operator=(const ScopedMock &) = delete;
    ScopedMock(ScopedMock &&) = delete;
    ScopedMock &operator=(ScopedMock &&) = delete;
    ~ScopedMock() { hpu::detail::set_default_os(prev_); }

private:
    hpu::detail::Os *prev_;
};

// A plausible INFO answer.
inline drm_hpu_info_device make_answer(const char *serial, __u64 hbm, __u8 bus, __u8 nics = 10)
{
    drm_hpu_info_device a{};
    a.chip_id = DRM_HPU_CHIP_H1;
    a.revision = 0x0100;
    a.hbm_size = hbm;
    a.pci_domain = 0;
    a.pci_bus = bus;
    a.pci_dev = 0;
    a.pci_func = 0;
    a.hbm_stacks = 4;
    a.num_dma = 8;
    a.num_tpc = 8;
    a.num_mme = 2;
    a.num_nic = nics;
    a.spec_version = 1;
    std::strncpy(static_cast<char *>(a.serial), serial, sizeof(a.serial) - 1);
    for (unsigned int i = 0; i < sizeof(a.uuid); ++i)
        a.uuid[i] = static_cast<__u8>(0x10 + i + bus); // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
    a.driver_major = 0;
    a.driver_minor = 1;
    a.driver_patch = 2;
    a.msix_vectors = 16;
    a.reset_count = 3;
    a.class_engines[DRM_HPU_ENGINE_DMA] = 8;
    a.class_engines[DRM_HPU_ENGINE_TPC] = 1;
    a.class_engines[DRM_HPU_ENGINE_MME] = 2;
    a.caps = DRM_HPU_CAP_HBM_MMAP;
    return a;
}

} // namespace hpu::test

#endif // HPU_TESTS_MOCK_OS_H
