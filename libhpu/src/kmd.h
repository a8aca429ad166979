// SPDX-License-Identifier: MIT
// The kernel-interface layer of libhpu: one method per ioctl of the hpu
// driver (and of the DRM core objects it uses: GEM, PRIME, syncobj, the
// sync_file of a fence). This is the only code in the library that fills
// drm_hpu_* and drm_* ioctl structures; callers pass and get plain values.
//
// Every method returns 0 (or the ioctl's non-negative result) or a negative
// errno value, restarts the call on EINTR and EAGAIN (with the same
// arguments, so an absolute wait deadline stays the same), and marks the
// device lost on -ENODEV when it was given the device's flag. With
// HPU_TRACE=ioctl in the environment when the device is opened, each call
// is printed to stderr with its arguments, its result and its duration
// (Documentation/libhpu.md).
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SRC_KMD_H
#define HPU_SRC_KMD_H

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <span>

#include "drm/hpu_accel.h"
#include "os.h"

namespace hpu::detail {

// A syncobj and its timeline point (0 for a binary syncobj).
struct SyncPoint {
    std::uint32_t handle = 0;
    std::uint64_t point = 0;
};

// The arguments of DRM_IOCTL_HPU_SUBMIT.
struct SubmitArgs {
    std::uint32_t queue_id = 0;
    std::uint64_t cb_va = 0;
    std::uint32_t cb_size = 0;
    std::span<const SyncPoint> waits;   // at most DRM_HPU_MAX_SYNCS
    std::span<const SyncPoint> signals; // at most DRM_HPU_MAX_SYNCS
    std::uint32_t timeout_ms = 0;
};

// Whether HPU_TRACE names the ioctl trace ("ioctl" or "all" in its
// comma-separated list); read anew on each call.
bool ioctl_trace_requested();

class Kmd {
public:
    // A DRM file fd (-1: none yet) reached through os. lost (may be null) is
    // set when a call reports -ENODEV.
    Kmd(Os &os, int fd, std::atomic<bool> *lost = nullptr);

    [[nodiscard]] Os &os() const { return *os_; }
    [[nodiscard]] int fd() const { return fd_; }
    // The file of this device after a reopen (the caller closes the old).
    void set_fd(int fd) { fd_ = fd; }
    // Where the ioctl trace goes (nullptr: off). Defaults to stderr when
    // ioctl_trace_requested() at construction.
    void set_trace(std::FILE *out) { trace_ = out; }

    // DRM_IOCTL_HPU_INFO for op into answer (size bytes); -EPROTO when the
    // kernel answers less than min_size (default: size; answers only grow).
    int info(std::uint32_t op, void *answer, std::uint32_t size, std::uint32_t min_size = 0);
    // INFO DEVICE; from a driver without class_engines (answering less),
    // class_engines[DMA] is num_dma (at most 8) and the other classes 0.
    int info_device(drm_hpu_info_device &out);
    int info_memory(drm_hpu_info_memory &out) { return info(DRM_HPU_INFO_MEMORY, &out, sizeof(out)); }
    int info_errors(drm_hpu_info_errors &out) { return info(DRM_HPU_INFO_ERRORS, &out, sizeof(out)); }
    int info_telemetry(drm_hpu_info_telemetry &out) { return info(DRM_HPU_INFO_TELEMETRY, &out, sizeof(out)); }
    int info_firmware(drm_hpu_info_firmware &out) { return info(DRM_HPU_INFO_FIRMWARE, &out, sizeof(out)); }
    // INFO USER_QUEUES (driver 1.2, devices with DRM_HPU_CAP_USER_QUEUES).
    int info_user_queues(drm_hpu_info_uq &out) { return info(DRM_HPU_INFO_USER_QUEUES, &out, sizeof(out)); }

    // DRM_IOCTL_HPU_BO_CREATE: flags are DRM_HPU_BO_*; size is updated to
    // the size the kernel made.
    int bo_create(std::uint64_t &size, std::uint32_t flags, std::uint32_t &handle);
    // DRM_IOCTL_HPU_BO_USERPTR over the pages [addr, addr + size).
    int bo_userptr(std::uint64_t addr, std::uint64_t size, bool readonly, std::uint32_t &handle);
    // DRM_IOCTL_HPU_BO_MMAP_OFFSET: the fake offset to mmap handle at.
    int bo_mmap_offset(std::uint32_t handle, std::uint64_t &offset);
    // DRM_IOCTL_HPU_VM_BIND: maps size bytes of handle from its start at a
    // va the kernel picks (-EPROTO if it answers 0), or unmaps va.
    int vm_map(std::uint32_t handle, std::uint64_t size, bool readonly, std::uint64_t &va);
    int vm_unmap(std::uint64_t va);
    // DRM_IOCTL_GEM_CLOSE.
    int gem_close(std::uint32_t handle);
    // DRM_IOCTL_PRIME_FD_TO_HANDLE / _HANDLE_TO_FD (a close-on-exec,
    // read-write dma-buf fd; -EPROTO if the kernel answers none).
    int prime_import(int fd, std::uint32_t &handle);
    int prime_export(std::uint32_t handle, int &fd);

    // DRM_IOCTL_SYNCOBJ_CREATE / _DESTROY.
    // signalled: the new syncobj holds a signalled fence (DRM_SYNCOBJ_CREATE_SIGNALED).
    int syncobj_create(std::uint32_t &handle, bool signalled = false);
    int syncobj_destroy(std::uint32_t handle);
    // DRM_IOCTL_SYNCOBJ_WAIT on one binary syncobj until the absolute
    // CLOCK_MONOTONIC deadline (-ETIME); waits for a fence to be attached.
    int syncobj_wait(std::uint32_t handle, std::int64_t deadline_ns);
    // DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT for one point (deadline as above).
    int syncobj_timeline_wait(std::uint32_t handle, std::uint64_t point, std::int64_t deadline_ns);
    // DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD / _FD_TO_HANDLE with the sync_file
    // flags: the fence of handle as a new sync_file fd (-EPROTO if none),
    // or the fence of sync_file fd put into handle.
    int syncobj_export_sync_file(std::uint32_t handle, int &fd);
    int syncobj_import_sync_file(std::uint32_t handle, int fd);

    // DRM_IOCTL_HPU_QUEUE_CREATE / _DESTROY; engine_class is a
    // DRM_HPU_ENGINE_* value.
    int queue_create(std::uint32_t engine_class, std::uint32_t engine, std::uint32_t &queue_id);
    int queue_destroy(std::uint32_t queue_id);
    // DRM_IOCTL_HPU_SUBMIT: the kernel's sequence number of the job in seq.
    int submit(const SubmitArgs &args, std::uint64_t &seq);
    // DRM_IOCTL_HPU_SUBMIT_ARRAY (driver 1.1): the jobs of args (1 to
    // DRM_HPU_MAX_SUBMITS) queued in order, all or none; seqs (as many as
    // args) get their sequence numbers.
    int submit_array(std::span<const SubmitArgs> args, std::span<std::uint64_t> seqs);
    // DRM_IOCTL_HPU_UQ_CREATE (driver 1.2): req's In fields as given (the
    // rest zero), its Out fields filled on success.
    int uq_create(drm_hpu_uq_create &req);
    // DRM_IOCTL_HPU_UQ_WAIT: 0 with status (0 or a negative errno: the
    // point's job's, or the dead queue's) and done (descriptors completed),
    // -ETIME once the absolute CLOCK_MONOTONIC deadline passed (0: no
    // sleep), or the call's error.
    int uq_wait(std::uint32_t queue_id, std::uint64_t point, std::int64_t deadline_ns, std::int32_t &status,
                std::uint64_t &done);
    // DRM_IOCTL_HPU_UQ_FENCE: the fence of point into the binary syncobj handle.
    int uq_fence(std::uint32_t queue_id, std::uint64_t point, std::uint32_t handle);
    // DRM_IOCTL_HPU_EVENTS with DRM_HPU_EVENTS_* flags.
    int events(std::uint32_t flags);

    // SYNC_IOC_FILE_INFO on a sync_file fd: its status (1 signalled, 0
    // active, or the fence's negative error). Not this device's file: an
    // error there does not mark the device lost. With timestamp_ns, the
    // fd must hold one fence (a job's): *timestamp_ns gets the
    // CLOCK_MONOTONIC time it signalled (0 while active), from the fence's
    // struct sync_fence_info.
    int sync_file_status(int fd, std::int32_t &status, std::uint64_t *timestamp_ns = nullptr);
    // SYNC_IOC_FILE_INFO twice on a sync_file fd of any number of fences
    // (a merged or imported one too): their count, then each one's
    // struct sync_fence_info. timestamp_ns gets the latest CLOCK_MONOTONIC
    // time one of them signalled, 0 while any is active or when none
    // carries a time.
    int sync_file_signal_time(int fd, std::uint64_t &timestamp_ns);
    // SYNC_IOC_MERGE on sync_file fd with fd2: a new sync_file in merged
    // that signals when both have, in error if a fence of them pending at
    // the call fails (the kernel leaves signalled fences out, errors too).
    int sync_file_merge(int fd, int fd2, int &merged);

private:
    class Trace;
    template <typename In, typename Out>
    int call(const char *name, unsigned long request, void *arg, In &&in, Out &&out);
    int ioctl(int fd, unsigned long request, void *arg);
    template <typename Out>
    int sync_file_call(int fd, const char *name, unsigned long request, void *arg, Out &&out);
    template <typename Wait> int until_deadline(std::int64_t deadline_ns, Wait &&wait);

    Os *os_;
    int fd_;
    std::atomic<bool> *lost_;
    std::FILE *trace_ = nullptr;
};

} // namespace hpu::detail

#endif // HPU_SRC_KMD_H
