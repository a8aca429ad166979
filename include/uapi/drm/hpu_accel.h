/* SPDX-License-Identifier: MIT */
/*
 * hpu_accel.h - ioctl ABI of the hpu DRM accel driver (/dev/accel/accelN).
 *
 * Rules (Documentation/process/botching-up-ioctls.rst): every structure is
 * padded explicitly to a multiple of 64 bits, pointers travel as __u64,
 * every flags, pad and reserved field must be zero (the kernel rejects
 * anything else with -EINVAL), and structures only ever grow at the end.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef _UAPI_DRM_HPU_ACCEL_H_
#define _UAPI_DRM_HPU_ACCEL_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_HPU_INFO			0x00
#define DRM_HPU_BO_CREATE		0x01
#define DRM_HPU_BO_USERPTR		0x02
#define DRM_HPU_BO_MMAP_OFFSET		0x03
#define DRM_HPU_VM_BIND			0x04
#define DRM_HPU_QUEUE_CREATE		0x05
#define DRM_HPU_QUEUE_DESTROY		0x06
#define DRM_HPU_SUBMIT			0x07
#define DRM_HPU_EVENTS			0x08
#define DRM_HPU_SUBMIT_ARRAY		0x09
#define DRM_HPU_UQ_CREATE		0x0a
#define DRM_HPU_UQ_WAIT			0x0b
#define DRM_HPU_UQ_FENCE		0x0c

#define DRM_IOCTL_HPU_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_HPU_INFO, struct drm_hpu_info)
#define DRM_IOCTL_HPU_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_HPU_BO_CREATE, struct drm_hpu_bo_create)
#define DRM_IOCTL_HPU_BO_USERPTR \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_HPU_BO_USERPTR, struct drm_hpu_bo_userptr)
#define DRM_IOCTL_HPU_BO_MMAP_OFFSET \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_HPU_BO_MMAP_OFFSET, struct drm_hpu_bo_mmap_offset)
#define DRM_IOCTL_HPU_VM_BIND \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_HPU_VM_BIND, struct drm_hpu_vm_bind)
#define DRM_IOCTL_HPU_QUEUE_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_HPU_QUEUE_CREATE, struct drm_hpu_queue_create)
#define DRM_IOCTL_HPU_QUEUE_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_HPU_QUEUE_DESTROY, struct drm_hpu_queue_destroy)
#define DRM_IOCTL_HPU_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_HPU_SUBMIT, struct drm_hpu_submit)
#define DRM_IOCTL_HPU_EVENTS \
	DRM_IOW(DRM_COMMAND_BASE + DRM_HPU_EVENTS, struct drm_hpu_events)
#define DRM_IOCTL_HPU_SUBMIT_ARRAY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_HPU_SUBMIT_ARRAY, struct drm_hpu_submit_array)
#define DRM_IOCTL_HPU_UQ_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_HPU_UQ_CREATE, struct drm_hpu_uq_create)
#define DRM_IOCTL_HPU_UQ_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_HPU_UQ_WAIT, struct drm_hpu_uq_wait)
#define DRM_IOCTL_HPU_UQ_FENCE \
	DRM_IOW(DRM_COMMAND_BASE + DRM_HPU_UQ_FENCE, struct drm_hpu_uq_fence)

/**
 * enum drm_hpu_info_op - what &struct drm_hpu_info asks for
 * @DRM_HPU_INFO_DEVICE: identity of the device, &struct drm_hpu_info_device.
 * @DRM_HPU_INFO_MEMORY: HBM use of the device and of the calling context,
 *	&struct drm_hpu_info_memory.
 * @DRM_HPU_INFO_ERRORS: error and reset counters of the device,
 *	&struct drm_hpu_info_errors.
 * @DRM_HPU_INFO_TELEMETRY: sensors, clocks, engine utilisation and HBM use,
 *	&struct drm_hpu_info_telemetry.
 * @DRM_HPU_INFO_FIRMWARE: firmware versions and boot state,
 *	&struct drm_hpu_info_firmware.
 * @DRM_HPU_INFO_USER_QUEUES: what user queues this file may create,
 *	&struct drm_hpu_info_uq (driver 1.2, devices with
 *	%DRM_HPU_CAP_USER_QUEUES; -EOPNOTSUPP on other devices).
 */
enum drm_hpu_info_op {
	DRM_HPU_INFO_DEVICE = 0,
	DRM_HPU_INFO_MEMORY = 1,
	DRM_HPU_INFO_ERRORS = 2,
	DRM_HPU_INFO_TELEMETRY = 3,
	DRM_HPU_INFO_FIRMWARE = 4,
	DRM_HPU_INFO_USER_QUEUES = 5,
};

/**
 * struct drm_hpu_info - query information about the device
 *
 * The kernel writes the answer for @op to the buffer at @ptr. It copies at
 * most @size bytes of its answer (a shorter buffer gets a prefix: answers
 * only grow at the end) and sets @size to the full size of its answer. A
 * call with @size 0 copies nothing and only reports the size.
 */
struct drm_hpu_info {
	/** @op: In: an &enum drm_hpu_info_op value. */
	__u32 op;
	/** @flags: In: must be zero. */
	__u32 flags;
	/** @ptr: In: user pointer to the answer buffer. */
	__u64 ptr;
	/** @size: In: size of the buffer at @ptr. Out: size of the answer. */
	__u32 size;
	/** @pad: In: must be zero. */
	__u32 pad;
};

/** DRM_HPU_CHIP_H1: &drm_hpu_info_device.chip_id of the first chip. */
#define DRM_HPU_CHIP_H1			1

/**
 * DRM_HPU_MAX_ENGINE_CLASSES: entries of &drm_hpu_info_device.class_engines,
 * room for every DRM_HPU_ENGINE_* class there is or will be.
 */
#define DRM_HPU_MAX_ENGINE_CLASSES	8

/**
 * struct drm_hpu_info_device - answer to %DRM_HPU_INFO_DEVICE
 *
 * All fields are Out.
 */
struct drm_hpu_info_device {
	/** @chip_id: chip identifier, DRM_HPU_CHIP_*. */
	__u32 chip_id;
	/** @revision: silicon revision, [15:8] major and [7:0] minor. */
	__u32 revision;
	/** @hbm_size: device memory (HBM) in bytes. */
	__u64 hbm_size;
	/** @pci_domain: PCI domain (segment) of the device. */
	__u32 pci_domain;
	/** @pci_bus: PCI bus number. */
	__u8 pci_bus;
	/** @pci_dev: PCI device (slot) number. */
	__u8 pci_dev;
	/** @pci_func: PCI function number. */
	__u8 pci_func;
	/** @hbm_stacks: number of HBM stacks. */
	__u8 hbm_stacks;
	/** @num_dma: number of DMA (copy) engines. */
	__u8 num_dma;
	/** @num_tpc: number of tensor processor cores. */
	__u8 num_tpc;
	/** @num_mme: number of matrix math engines. */
	__u8 num_mme;
	/** @num_nic: number of NIC ports. */
	__u8 num_nic;
	/** @spec_version: version of the hardware register map. */
	__u32 spec_version;
	/** @serial: board serial number, NUL terminated. */
	char serial[24];
	/** @uuid: device UUID (RFC 4122 byte order). */
	__u8 uuid[16];
	/** @driver_major: driver version, major part. */
	__u16 driver_major;
	/** @driver_minor: driver version, minor part. */
	__u16 driver_minor;
	/** @driver_patch: driver version, patch level. */
	__u16 driver_patch;
	/** @pad: zero. */
	__u16 pad;
	/** @msix_vectors: MSI-X vectors the device offers. */
	__u32 msix_vectors;
	/** @reset_count: soft resets the device has completed. */
	__u32 reset_count;
	/**
	 * @class_engines: engines of each class, indexed by DRM_HPU_ENGINE_*,
	 * that DRM_IOCTL_HPU_QUEUE_CREATE accepts: engine 0 to
	 * class_engines[c] - 1 of class c. 0 for a class the device or the
	 * driver does not have (a device before spec version 6 has no TPC
	 * and MME engines to queue to, whatever @num_tpc and @num_mme say).
	 * The TPC class has one engine, the cluster of all @num_tpc cores.
	 * Drivers before this field answer with a shorter size.
	 */
	__u8 class_engines[DRM_HPU_MAX_ENGINE_CLASSES];
	/**
	 * @caps: DRM_HPU_CAP_* bits, what this device and driver offer
	 * beyond the base ABI. Drivers before this field answer with a
	 * shorter size (read it as 0).
	 */
	__u64 caps;
};

/**
 * DRM_HPU_CAP_HBM_MMAP: &drm_hpu_info_device.caps bit: HBM buffers can be
 * mapped into the process (DRM_IOCTL_HPU_BO_MMAP_OFFSET, then mmap(2) of
 * the device file), through the device's HBM BAR (hardware spec version 8,
 * where the BAR covers all of HBM).
 */
#define DRM_HPU_CAP_HBM_MMAP		(1ULL << 0)

/**
 * DRM_HPU_CAP_USER_QUEUES: &drm_hpu_info_device.caps bit: the device has
 * user streams (hardware spec version 10) and the driver creates user
 * queues on them (DRM_IOCTL_HPU_UQ_CREATE, driver 1.2).
 */
#define DRM_HPU_CAP_USER_QUEUES		(1ULL << 1)

/**
 * struct drm_hpu_info_memory - answer to %DRM_HPU_INFO_MEMORY
 *
 * All fields are Out.
 */
struct drm_hpu_info_memory {
	/**
	 * @hbm_total: HBM bytes the driver can hand out to contexts; shrinks
	 * by 2 MiB for every page retired after an uncorrectable ECC error.
	 */
	__u64 hbm_total;
	/** @hbm_used: HBM bytes allocated by all contexts. */
	__u64 hbm_used;
	/** @hbm_ctx_used: HBM bytes allocated by the calling context. */
	__u64 hbm_ctx_used;
	/** @host_ctx_used: host buffer bytes (shmem and userptr) of the context. */
	__u64 host_ctx_used;
	/** @va_start: first device virtual address the context may use. */
	__u64 va_start;
	/** @va_end: end (exclusive) of the context's device virtual range. */
	__u64 va_end;
	/** @asid: address-space id of the calling context. */
	__u32 asid;
	/** @num_sobs: sync objects the context's command buffers may use. */
	__u32 num_sobs;
};

/** DRM_HPU_MAX_ENGINES_UTIL: entries of &drm_hpu_info_telemetry.engine_util. */
#define DRM_HPU_MAX_ENGINES_UTIL	16

/* Bits of &drm_hpu_info_telemetry.throttle */
/** DRM_HPU_THROTTLE_THERMAL: the clock is lowered for temperature. */
#define DRM_HPU_THROTTLE_THERMAL	(1u << 0)
/** DRM_HPU_THROTTLE_POWER: the clock is lowered for the power cap. */
#define DRM_HPU_THROTTLE_POWER		(1u << 1)

/* Bits of &drm_hpu_info_telemetry.alarms */
/** DRM_HPU_ALARM_TEMP_MAX: die temperature at or above its maximum. */
#define DRM_HPU_ALARM_TEMP_MAX		(1u << 0)
/** DRM_HPU_ALARM_TEMP_CRIT: die temperature at or above its critical limit. */
#define DRM_HPU_ALARM_TEMP_CRIT		(1u << 1)
/** DRM_HPU_ALARM_POWER_CAP: board power above its cap. */
#define DRM_HPU_ALARM_POWER_CAP		(1u << 2)
/** DRM_HPU_ALARM_HBM_TEMP_MAX: HBM temperature at or above its maximum. */
#define DRM_HPU_ALARM_HBM_TEMP_MAX	(1u << 3)

/**
 * struct drm_hpu_info_telemetry - answer to %DRM_HPU_INFO_TELEMETRY
 *
 * A snapshot of the device's sensors (as last updated by its firmware),
 * clocks, limits, engine utilisation and HBM use. Sensor fields are zero
 * while the firmware is not running (see &drm_hpu_info_firmware.state).
 * All fields are Out.
 */
struct drm_hpu_info_telemetry {
	/** @timestamp_ns: CLOCK_MONOTONIC time of the snapshot. */
	__u64 timestamp_ns;
	/** @energy_uj: energy used by the board since power-on, microjoules. */
	__u64 energy_uj;
	/** @hbm_total: HBM bytes contexts can allocate (as in INFO_MEMORY). */
	__u64 hbm_total;
	/** @hbm_used: HBM bytes allocated by all contexts. */
	__u64 hbm_used;
	/** @temp_die_mc: die temperature, millidegrees Celsius. */
	__s32 temp_die_mc;
	/** @temp_hbm_mc: HBM temperature, millidegrees Celsius. */
	__s32 temp_hbm_mc;
	/** @temp_board_mc: board temperature, millidegrees Celsius. */
	__s32 temp_board_mc;
	/** @temp_max_mc: die temperature at which the clock throttles. */
	__s32 temp_max_mc;
	/** @temp_crit_mc: critical die temperature. */
	__s32 temp_crit_mc;
	/** @hbm_temp_max_mc: maximum HBM temperature. */
	__s32 hbm_temp_max_mc;
	/** @power_mw: board power, milliwatts. */
	__u32 power_mw;
	/** @power_cap_mw: board power cap, milliwatts. */
	__u32 power_cap_mw;
	/** @power_cap_max_mw: highest power cap the firmware accepts. */
	__u32 power_cap_max_mw;
	/** @volt_core_mv: core voltage, millivolts. */
	__u32 volt_core_mv;
	/** @volt_hbm_mv: HBM voltage, millivolts. */
	__u32 volt_hbm_mv;
	/** @clk_core_mhz: current core clock, MHz. */
	__u32 clk_core_mhz;
	/** @clk_core_max_mhz: top core clock, MHz. */
	__u32 clk_core_max_mhz;
	/** @clk_hbm_mhz: HBM clock, MHz. */
	__u32 clk_hbm_mhz;
	/** @throttle: why the clock is below its top, DRM_HPU_THROTTLE_*. */
	__u32 throttle;
	/** @alarms: limits currently exceeded, DRM_HPU_ALARM_*. */
	__u32 alarms;
	/**
	 * @num_engines: valid entries of @engine_util and @engine_busy_ns.
	 * Entry e is engine index e (DRM_HPU_ENGINE_INDEX_*): the DMA
	 * engines from 0, then, from spec version 6, the TPC engine at 8 and
	 * the MMEs at 9 and 10. An entry below @num_engines of an engine the
	 * device lacks reads 0.
	 */
	__u32 num_engines;
	/**
	 * @util_window_ms: length of the window @engine_util is measured
	 * over, milliseconds.
	 */
	__u32 util_window_ms;
	/**
	 * @engine_util: busy share of each engine over the last window, in
	 * hundredths of a percent (0..10000).
	 */
	__u32 engine_util[DRM_HPU_MAX_ENGINES_UTIL];
	/**
	 * @engine_busy_ns: busy time of each engine since power-on,
	 * nanoseconds of device time.
	 */
	__u64 engine_busy_ns[DRM_HPU_MAX_ENGINES_UTIL];
};

/* Values of &drm_hpu_info_firmware.state */
/** DRM_HPU_FW_STATE_RUNNING: the firmware runs and answers heartbeats. */
#define DRM_HPU_FW_STATE_RUNNING	0
/** DRM_HPU_FW_STATE_BOOTING: the driver is booting the firmware. */
#define DRM_HPU_FW_STATE_BOOTING	1
/** DRM_HPU_FW_STATE_FAILED: the device refused the image or did not boot. */
#define DRM_HPU_FW_STATE_FAILED		2
/** DRM_HPU_FW_STATE_HALTED: the firmware stopped after a fatal error. */
#define DRM_HPU_FW_STATE_HALTED		3

/* Values of &drm_hpu_info_firmware.boot_source */
/** DRM_HPU_FW_SOURCE_NONE: no image booted. */
#define DRM_HPU_FW_SOURCE_NONE		0
/** DRM_HPU_FW_SOURCE_HOST: the image file, loaded by the driver. */
#define DRM_HPU_FW_SOURCE_HOST		1
/** DRM_HPU_FW_SOURCE_FLASH: the image stored in the device's flash. */
#define DRM_HPU_FW_SOURCE_FLASH		2

/**
 * struct drm_hpu_info_firmware - answer to %DRM_HPU_INFO_FIRMWARE
 *
 * Versions use the image format: [23:16] major, [15:8] minor, [7:0]
 * patch; zero means none. All fields are Out.
 */
struct drm_hpu_info_firmware {
	/** @running_version: version of the running firmware. */
	__u32 running_version;
	/** @stored_version: version of the image in the device's flash. */
	__u32 stored_version;
	/** @min_version: lowest version the device accepts (anti-rollback). */
	__u32 min_version;
	/** @state: DRM_HPU_FW_STATE_*. */
	__u32 state;
	/** @boot_source: where the running image came from, DRM_HPU_FW_SOURCE_*. */
	__u32 boot_source;
	/**
	 * @boot_error: refusal code of the last failed boot (the device's
	 * BOOT_ERROR, see Documentation/hw/firmware-and-telemetry.md), or 0.
	 */
	__u32 boot_error;
	/** @running_build: build string of the running firmware, NUL terminated. */
	char running_build[32];
	/** @boots: firmware boots since the driver bound the device. */
	__u32 boots;
	/** @pad: zero. */
	__u32 pad;
};

/* Flags of &drm_hpu_bo_create.flags */
/** DRM_HPU_BO_HBM: device memory (HBM); mutually exclusive with HOST. */
#define DRM_HPU_BO_HBM			(1u << 0)
/** DRM_HPU_BO_HOST: host memory (shmem), mappable with mmap(2). */
#define DRM_HPU_BO_HOST			(1u << 1)
/** DRM_HPU_BO_CONTIGUOUS: HBM only: one physically contiguous block. */
#define DRM_HPU_BO_CONTIGUOUS		(1u << 2)

/**
 * struct drm_hpu_bo_create - create a buffer object
 *
 * HBM buffers are allocated in 2 MiB pages (or @page_size), host buffers in
 * 4 KiB pages; @size is rounded up to the page size. A buffer is freed when
 * its last handle, mapping and dma-buf reference is gone; HBM is scrubbed
 * before any other context can get it.
 */
struct drm_hpu_bo_create {
	/** @size: In: bytes, non-zero. Out: the rounded size. */
	__u64 size;
	/**
	 * @page_size: In: HBM: 0 for 2 MiB, or a power of two from 2 MiB to
	 * 1 GiB (the allocation's page size and alignment). Host: must be 0.
	 */
	__u64 page_size;
	/** @flags: In: exactly one of DRM_HPU_BO_HBM and DRM_HPU_BO_HOST, plus CONTIGUOUS. */
	__u32 flags;
	/** @handle: Out: GEM handle of the new buffer. */
	__u32 handle;
};

/** DRM_HPU_USERPTR_READONLY: the device may only read the pages. */
#define DRM_HPU_USERPTR_READONLY	(1u << 0)

/**
 * struct drm_hpu_bo_userptr - wrap user memory in a buffer object
 *
 * The pages are pinned (long term) until the buffer object is freed.
 */
struct drm_hpu_bo_userptr {
	/** @addr: In: user address, 4 KiB aligned. */
	__u64 addr;
	/** @size: In: bytes, non-zero, a multiple of 4 KiB. */
	__u64 size;
	/** @flags: In: DRM_HPU_USERPTR_*. */
	__u32 flags;
	/** @handle: Out: GEM handle. */
	__u32 handle;
};

/**
 * struct drm_hpu_bo_mmap_offset - where to mmap(2) a buffer object
 *
 * Host buffers map cached. HBM buffers map write-combining through the
 * device's HBM BAR when &drm_hpu_info_device.caps has
 * %DRM_HPU_CAP_HBM_MMAP, shared only (a private mapping is refused with
 * EINVAL); CPU accesses then go over PCIe, so bulk data is still best
 * moved with the DMA engines. User-pointer buffers are not mapped here.
 */
struct drm_hpu_bo_mmap_offset {
	/**
	 * @handle: In: GEM handle of a DRM_HPU_BO_HOST buffer, or of a
	 * DRM_HPU_BO_HBM buffer on a device with %DRM_HPU_CAP_HBM_MMAP.
	 */
	__u32 handle;
	/** @pad: In: must be zero. */
	__u32 pad;
	/** @offset: Out: the offset to pass to mmap(2) on the device file. */
	__u64 offset;
};

/* &drm_hpu_vm_bind.op */
/** DRM_HPU_VM_MAP: map a range of a buffer object into the context. */
#define DRM_HPU_VM_MAP			0
/** DRM_HPU_VM_UNMAP: remove the mapping that starts at @va. */
#define DRM_HPU_VM_UNMAP		1

/* &drm_hpu_vm_bind.flags */
/** DRM_HPU_VM_READONLY: MAP: the device may only read. */
#define DRM_HPU_VM_READONLY		(1u << 0)
/** DRM_HPU_VM_FIXED: MAP: map at @va as given instead of choosing an address. */
#define DRM_HPU_VM_FIXED		(1u << 1)

/**
 * struct drm_hpu_vm_bind - map or unmap a buffer object in the device MMU
 *
 * Each open file is a context with its own address space (ASID). A mapping
 * keeps its buffer object alive until it is unmapped or the file closes.
 * Offsets, sizes and addresses are multiples of the buffer's page size
 * (4 KiB for host and userptr buffers, the page size for HBM). A context's
 * addresses are [&drm_hpu_info_memory.va_start, va_end): a FIXED or UNMAP
 * address outside gets -ERANGE, a FIXED range that overlaps a mapping
 * -EBUSY. A read-only userptr buffer needs DRM_HPU_VM_READONLY. UNMAP
 * removes the whole mapping, after waiting for the context's jobs. MAP
 * fails with -ENOSPC when no free range is large enough or the context has
 * its limit of mappings or of page tables, -ENOMEM when the device's
 * page-table area (less what other contexts are guaranteed) is full
 * (Documentation/driver/limits.md).
 */
struct drm_hpu_vm_bind {
	/** @op: In: DRM_HPU_VM_MAP or DRM_HPU_VM_UNMAP. */
	__u32 op;
	/** @flags: In: DRM_HPU_VM_* (MAP only; zero for UNMAP). */
	__u32 flags;
	/** @handle: In: MAP: the buffer object. UNMAP: must be zero. */
	__u32 handle;
	/** @pad: In: must be zero. */
	__u32 pad;
	/** @bo_offset: In: MAP: first byte of the buffer to map. UNMAP: zero. */
	__u64 bo_offset;
	/** @size: In: MAP: bytes to map, non-zero. UNMAP: zero. */
	__u64 size;
	/**
	 * @va: In: FIXED MAP and UNMAP: the device address; MAP without
	 * FIXED: must be zero. Out: MAP: the address.
	 */
	__u64 va;
};

/* &drm_hpu_queue_create.engine_class */
/** DRM_HPU_ENGINE_DMA: a DMA (copy) engine. */
#define DRM_HPU_ENGINE_DMA		0
/** DRM_HPU_ENGINE_TPC: the TPC engine, the cluster of tensor processor cores. */
#define DRM_HPU_ENGINE_TPC		1
/** DRM_HPU_ENGINE_MME: a matrix math engine. */
#define DRM_HPU_ENGINE_MME		2

/*
 * Engine indexes: &drm_hpu_event_error.engine, the entries of
 * &drm_hpu_info_telemetry.engine_util and engine_busy_ns. DMA engine n of
 * the DMA class is index n (0..7).
 */
/** DRM_HPU_ENGINE_INDEX_TPC: engine index of the TPC engine. */
#define DRM_HPU_ENGINE_INDEX_TPC	8
/** DRM_HPU_ENGINE_INDEX_MME: engine index of MME @n (0 or 1). */
#define DRM_HPU_ENGINE_INDEX_MME(n)	(9 + (n))

/**
 * struct drm_hpu_queue_create - create a queue on an engine
 *
 * Jobs on one queue run in submission order; queues run concurrently.
 * Each engine has 4 hardware streams; a new queue goes to the stream of
 * its engine with the fewest queues, and queues sharing a stream share
 * its order (a job blocked in a WAIT packet delays the others' jobs).
 * The engines of each class are numbered from 0 within the class
 * (&drm_hpu_info_device.class_engines). A TPC or MME queue runs the
 * packets of a DMA queue except LIN_DMA (a job with one fails -EINVAL),
 * plus TPC_LAUNCH (TPC) or MME_GEMM (MME). A file has at most 64 queues,
 * or fewer as root sets the device's limits/ctx_queues. Errors: -EINVAL
 * (non-zero @flags, unknown @engine_class, @engine out of range for the
 * class, including any engine of a class the device lacks), -ENOSPC (the
 * file has its limit of queues already).
 */
struct drm_hpu_queue_create {
	/** @engine_class: In: DRM_HPU_ENGINE_*. */
	__u32 engine_class;
	/** @engine: In: engine index within the class. */
	__u32 engine;
	/** @flags: In: must be zero. */
	__u32 flags;
	/** @queue_id: Out: the queue's id within this file. */
	__u32 queue_id;
};

/**
 * struct drm_hpu_queue_destroy - destroy a queue
 *
 * The id is invalid at once. Jobs already submitted still run to
 * completion first: the call returns when they have finished. A signal
 * during that wait cancels the jobs that have not finished instead (their
 * fences signal -ECANCELED) and the call still succeeds. Closing the file
 * destroys every queue the same way; a process that exits cancels its
 * jobs rather than waiting for them. Errors: -EINVAL (non-zero @pad),
 * -ENOENT (no such queue in this file).
 */
struct drm_hpu_queue_destroy {
	/** @queue_id: In: a queue of this file. */
	__u32 queue_id;
	/** @pad: In: must be zero. */
	__u32 pad;
};

/**
 * struct drm_hpu_sync - a drm_syncobj and, for a timeline, a point on it
 */
struct drm_hpu_sync {
	/** @handle: In: drm_syncobj handle. */
	__u32 handle;
	/** @flags: In: must be zero. */
	__u32 flags;
	/** @point: In: timeline point, 0 for a binary syncobj. */
	__u64 point;
};

/** DRM_HPU_MAX_SYNCS: most in- or out-syncs one submission may carry. */
#define DRM_HPU_MAX_SYNCS		64

/**
 * struct drm_hpu_submit - run a command buffer on a queue
 *
 * The command buffer is a sequence of packets (Documentation/hw/) in the
 * context's address space. The job starts when every in-sync has
 * signalled; when it ends, every out-sync signals (binary: replaced fence,
 * timeline: the point is added). A job that the device fails signals its
 * fence with an error: -EFAULT (MMU fault), -EINVAL (bad packet, or a
 * packet the queue's engine does not run), -EPERM (privileged packet),
 * -EIO (bus error or malformed descriptor), -EBADMSG (it read an HBM page
 * with an uncorrectable ECC error: the page is retired once its buffer is
 * freed, Documentation/driver/errors.md), -ENOEXEC (a TPC launch or GEMM
 * descriptor, kernel binary or tensor descriptor breaks a rule of the
 * spec: nothing of it ran), -EILSEQ (a TPC core fetched an illegal
 * instruction or ran off its code), -EDOM (a TPC kernel's ASSERT
 * failed),
 * -ETIMEDOUT (ran longer than @timeout_ms or the driver's default, module
 * parameter job_timeout_ms, 10 s: the job is stopped and later jobs on its
 * stream go on; or its engine hung), -ECANCELED (aborted, cancelled when
 * its queue was destroyed, or lost in a hard reset), -ESRCH (killed before
 * it ran), -ENODEV (device removed or unusable). Jobs that were stopped
 * only because another job on their stream failed are run again from the
 * start: a command buffer should be safe to re-run.
 * The error is visible through the fence (export it as a sync_file:
 * SYNC_IOC_FILE_INFO's status). The driver does not parse command
 * buffers: the device refuses privileged packets and its MMU confines the
 * job to the file's address space.
 *
 * Errors of the call itself: -EINVAL (non-zero @flags, @timeout_ms above
 * 3600000, or above the device's limits/user_timeout_ms (60000 by
 * default) for a caller without CAP_SYS_ADMIN, bad @cb_va or @cb_size,
 * command buffer outside the context's virtual range,
 * more than DRM_HPU_MAX_SYNCS syncs, non-zero &drm_hpu_sync.flags, an
 * in-sync with no fence to wait for), -EBUSY (the context has its limit
 * of jobs, limits/ctx_jobs, 1024 by default, submitted and not yet
 * finished: wait for some), -ENOENT (unknown queue or syncobj
 * handle), -EFAULT (@in_syncs or @out_syncs cannot be read), -ENOMEM,
 * -ENODEV (device removed). Wait with DRM_IOCTL_SYNCOBJ_WAIT or
 * DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT.
 */
struct drm_hpu_submit {
	/** @queue_id: In: a queue of this file. */
	__u32 queue_id;
	/** @flags: In: must be zero. */
	__u32 flags;
	/**
	 * @cb_va: In: device address of the command buffer in the file's
	 * address space, 8-byte aligned, the whole buffer inside the range
	 * &drm_hpu_info_memory.va_start to va_end.
	 */
	__u64 cb_va;
	/** @cb_size: In: bytes, a multiple of 8, 8 to 1 MiB. */
	__u32 cb_size;
	/** @num_in_syncs: In: entries at @in_syncs, at most DRM_HPU_MAX_SYNCS. */
	__u32 num_in_syncs;
	/** @in_syncs: In: pointer to an array of &struct drm_hpu_sync to wait for. */
	__u64 in_syncs;
	/** @num_out_syncs: In: entries at @out_syncs, at most DRM_HPU_MAX_SYNCS. */
	__u32 num_out_syncs;
	/**
	 * @timeout_ms: In: the job's timeout in ms (at most 3600000; without
	 * CAP_SYS_ADMIN at most limits/user_timeout_ms), 0 for the driver's
	 * default (module parameter job_timeout_ms). A job that runs longer
	 * is stopped and its fence fails with -ETIMEDOUT.
	 */
	__u32 timeout_ms;
	/** @out_syncs: In: pointer to an array of &struct drm_hpu_sync to signal. */
	__u64 out_syncs;
	/** @seq: Out: sequence number of the job on its queue (from 1). */
	__u64 seq;
};

/** DRM_HPU_MAX_SUBMITS: most entries one DRM_IOCTL_HPU_SUBMIT_ARRAY may carry. */
#define DRM_HPU_MAX_SUBMITS		64

/**
 * DRM_HPU_SUBMIT_SIZE_V1: bytes of the first &struct drm_hpu_submit, the
 * least &drm_hpu_submit_array.entry_size.
 */
#define DRM_HPU_SUBMIT_SIZE_V1		56

/** DRM_HPU_SUBMIT_ENTRY_MAX: the largest &drm_hpu_submit_array.entry_size. */
#define DRM_HPU_SUBMIT_ENTRY_MAX	4096

/**
 * struct drm_hpu_submit_array - run several command buffers in one call
 *
 * DRM_IOCTL_HPU_SUBMIT_ARRAY, from driver version 1.1
 * (&drm_hpu_info_device.driver_minor >= 1 with driver_major 1; an older
 * driver answers -EINVAL, the DRM core's answer to an unknown ioctl).
 * Each entry of @submits is a &struct drm_hpu_submit, taken as
 * DRM_IOCTL_HPU_SUBMIT takes it, with the same rules and errors; the
 * entries are queued in array order (so entries on one queue keep that
 * order), on any queues of this file, and each entry's @seq is written
 * back. All or nothing: every entry is checked and its job made before
 * any is queued, and if any entry is refused or the call fails, no job
 * of the call is queued (the debug log, drm.debug=0x2, names the entry
 * and what was wrong). So the in-syncs of every entry are looked up
 * before any entry is queued: an entry may not wait for a syncobj that an
 * earlier entry of the same call signals (-EINVAL); submit such a job in
 * a later call. The jobs that have nothing to wait for go to the
 * hardware with one doorbell per stream for all of them.
 *
 * Errors: -EINVAL (non-zero @flags or @pad, @count 0 or above
 * DRM_HPU_MAX_SUBMITS, @entry_size below DRM_HPU_SUBMIT_SIZE_V1 or above
 * DRM_HPU_SUBMIT_ENTRY_MAX, non-zero bytes in an entry beyond the
 * driver's &struct drm_hpu_submit, an in-sync signalled by an earlier
 * entry), -EFAULT (an entry cannot be read, or its @seq cannot be
 * written: checked before anything is queued), any error of
 * DRM_IOCTL_HPU_SUBMIT for an entry (-EBUSY also when the entries would
 * take the context beyond limits/ctx_jobs). Once the jobs are queued the
 * call succeeds: if an entry's @seq can no longer be written then (the
 * caller unmapped the array meanwhile), the @seq values are not reported.
 */
struct drm_hpu_submit_array {
	/** @count: In: entries at @submits, 1 to DRM_HPU_MAX_SUBMITS. */
	__u32 count;
	/** @flags: In: must be zero. */
	__u32 flags;
	/**
	 * @submits: In: pointer to @count entries, each a &struct
	 * drm_hpu_submit at the start of @entry_size bytes, readable and
	 * writable (Out: each entry's @seq).
	 */
	__u64 submits;
	/**
	 * @entry_size: In: bytes from one entry to the next, at least
	 * DRM_HPU_SUBMIT_SIZE_V1 and at most DRM_HPU_SUBMIT_ENTRY_MAX: set it
	 * to sizeof(struct drm_hpu_submit). The driver reads the part of an
	 * entry it knows; bytes beyond that must be zero (so a newer
	 * structure's fields are used only where the driver understands
	 * them).
	 */
	__u32 entry_size;
	/** @pad: In: must be zero. */
	__u32 pad;
};

/**
 * struct drm_hpu_info_uq - answer to %DRM_HPU_INFO_USER_QUEUES
 *
 * All fields are Out.
 */
struct drm_hpu_info_uq {
	/** @per_engine: user streams of each engine (shared by all files). */
	__u32 per_engine;
	/**
	 * @ctx_max: user queues this file may have at once (limits/
	 * ctx_user_queues; 0: user queues are off for this caller).
	 */
	__u32 ctx_max;
	/** @ring_max: most descriptors (and completion records) of a ring. */
	__u32 ring_max;
	/** @cqe_size: bytes of a user queue's completion record (32). */
	__u32 cqe_size;
	/**
	 * @time_offset_ns: CLOCK_MONOTONIC minus device time, in ns: add it
	 * to &drm_hpu_uq_cqe.time for the completion's CLOCK_MONOTONIC time
	 * (measured when the driver answers; within a few microseconds).
	 */
	__s64 time_offset_ns;
};

/**
 * struct drm_hpu_uq_desc - a descriptor in a user queue's ring (32 bytes)
 *
 * Descriptor number n (counted from 0 since the queue was created) is at
 * byte 32 * (n % ring_size) of the ring.
 */
struct drm_hpu_uq_desc {
	/** @cb_va: device address of the command buffer, 8-byte aligned. */
	__u64 cb_va;
	/** @cb_size: command buffer bytes, a multiple of 8, 8 to 1 MiB. */
	__u32 cb_size;
	/** @asid: &drm_hpu_uq_create.asid (anything else fails the job). */
	__u16 asid;
	/** @flags: zero. */
	__u16 flags;
	/** @seq: copied to the completion record; the caller's choice. */
	__u64 seq;
	/** @reserved: zero. */
	__u64 reserved;
};

/**
 * struct drm_hpu_uq_cqe - a user queue's completion record (32 bytes)
 *
 * The device writes the record of descriptor n at byte 32 * (n % cq_size)
 * of the completion ring, in the order the descriptors complete (the
 * order of the ring).
 */
struct drm_hpu_uq_cqe {
	/** @seq: the descriptor's @seq. */
	__u64 seq;
	/** @status: 0 OK, else the device's completion status (hw spec). */
	__u32 status;
	/** @where: [23:0] offset of the failed packet in the command buffer. */
	__u32 where;
	/**
	 * @index: the descriptor's number n, written last: the device writes
	 * the record with @index all ones, then @index, so a reader that sees
	 * n here (then reads the rest) reads record n whole.
	 */
	__u64 index;
	/** @time: device time of the completion, ns (see @time_offset_ns). */
	__u64 time;
};

/**
 * DRM_HPU_UQ_SIGNAL: &drm_hpu_uq_create.flags bit: every completed
 * descriptor (failed ones too) adds 1 to the context's sync object
 * &drm_hpu_uq_create.signal_sob, so command buffers on other queues of the
 * context can WAIT for the queue's progress.
 */
#define DRM_HPU_UQ_SIGNAL		(1u << 0)

/** DRM_HPU_UQ_DB_SIZE: bytes of a user queue's doorbell mapping. */
#define DRM_HPU_UQ_DB_SIZE		4096

/**
 * struct drm_hpu_uq_create - create a user queue
 *
 * DRM_IOCTL_HPU_UQ_CREATE, from driver version 1.2, on a device with
 * %DRM_HPU_CAP_USER_QUEUES. A user queue is a hardware user stream given
 * to this file: the process writes descriptors (&struct drm_hpu_uq_desc)
 * to its ring, in the file's address space, and rings the queue's
 * doorbell with no system call; the device reads the ring and the command
 * buffers, and writes completion records (&struct drm_hpu_uq_cqe), through
 * the file's MMU context. mmap(2) @db_mmap_offset of the device file,
 * exactly DRM_HPU_UQ_DB_SIZE bytes, shared and not executable: an aligned
 * 32-bit store of n at byte 0 tells the device that descriptors up to
 * number n - 1 are written (n: descriptors written since creation, modulo
 * 2^32; at most ring_size ahead of the completed ones, else it is
 * ignored). The doorbell page is only the queue's: nothing else of the
 * device is reachable through it, and only the file that created the
 * queue can map it.
 *
 * Completion: poll the records, or wait in the kernel with
 * DRM_IOCTL_HPU_UQ_WAIT, or put the fence of a point into a syncobj with
 * DRM_IOCTL_HPU_UQ_FENCE. A failed descriptor fails only itself (its
 * record's @status, the point's fence error, an error event); the queue
 * goes on with the next. A queue whose ring or completion ring the device
 * cannot reach dies (-EFAULT for every wait). The queue shares the file's
 * queue ids: DRM_IOCTL_HPU_QUEUE_DESTROY destroys it, dropping the
 * descriptors not yet run, and closing the file destroys it.
 *
 * Errors: -EINVAL (unknown @flags, @signal_sob without DRM_HPU_UQ_SIGNAL
 * or above 31, non-zero @pad or @reserved, engine as for
 * DRM_IOCTL_HPU_QUEUE_CREATE, @ring_size or @cq_size not a power of two
 * from 2 to &drm_hpu_info_uq.ring_max, @cq_size below @ring_size, @ring_va
 * not 64-byte or @cq_va not 32-byte aligned, @timeout_ms above the limit
 * of DRM_IOCTL_HPU_SUBMIT), -EFAULT (the ring is not mapped readable, or
 * the completion ring writable, in the file's address space), -ENOSPC (the
 * file has limits/ctx_user_queues user queues; they do not count against
 * limits/ctx_queues, and their ids are above 64), -EBUSY (every user
 * stream of the engine is taken: use the kernel path), -EOPNOTSUPP (no
 * %DRM_HPU_CAP_USER_QUEUES), -ENODEV.
 */
struct drm_hpu_uq_create {
	/** @engine_class: In: DRM_HPU_ENGINE_*. */
	__u32 engine_class;
	/** @engine: In: engine index within the class. */
	__u32 engine;
	/** @flags: In: DRM_HPU_UQ_*. */
	__u32 flags;
	/** @ring_size: In: descriptors of the ring, a power of two. */
	__u32 ring_size;
	/** @ring_va: In: device address of the ring, 64-byte aligned. */
	__u64 ring_va;
	/** @cq_va: In: device address of the completion ring, 32-byte aligned. */
	__u64 cq_va;
	/** @cq_size: In: records of the completion ring, at least @ring_size. */
	__u32 cq_size;
	/** @signal_sob: In: with DRM_HPU_UQ_SIGNAL the sync object, 0-31. */
	__u32 signal_sob;
	/**
	 * @timeout_ms: In: a descriptor running (or waiting) longer fails
	 * -ETIMEDOUT and the queue goes on; 0 for the driver's default
	 * (job_timeout_ms). Limits as &drm_hpu_submit.timeout_ms.
	 */
	__u32 timeout_ms;
	/** @queue_id: Out: the queue's id within this file. */
	__u32 queue_id;
	/** @db_mmap_offset: Out: mmap(2) offset of the doorbell page. */
	__u64 db_mmap_offset;
	/** @asid: Out: the value for &drm_hpu_uq_desc.asid. */
	__u32 asid;
	/** @pad: In: must be zero. */
	__u32 pad;
	/** @reserved: In: must be zero. */
	__u64 reserved[2];
};

/**
 * struct drm_hpu_uq_wait - wait for a user queue's point
 *
 * Point p of a user queue is reached when its first p descriptors have
 * completed (successfully or not). Waits until @point is reached, the
 * queue dies or the absolute CLOCK_MONOTONIC time @timeout_nsec passes
 * (0: do not sleep, only report). Returns 0 with @status 0 when the
 * descriptor @point - 1 completed OK, its error (negative errno, the
 * values of &drm_hpu_submit's fence errors) when it failed, -ECANCELED
 * when the queue was destroyed or a hard reset ended it first, -EFAULT
 * when the queue died of a fault in its rings, or -ENODATA when the
 * outcome is older than what the driver keeps (the last 256 failures of
 * the queue); @done is the queue's completed descriptors when the call
 * returns. -ETIME when the time passed first (never before it),
 * -EINTR/-ERESTARTSYS on a signal. Errors: -EINVAL (non-zero @flags or
 * @pad, @point 0 or beyond the descriptors the doorbell announced),
 * -ENOENT (no such user queue in this file), -ENODEV.
 */
struct drm_hpu_uq_wait {
	/** @queue_id: In: a user queue of this file. */
	__u32 queue_id;
	/** @flags: In: must be zero. */
	__u32 flags;
	/** @point: In: number of descriptors to have completed. */
	__u64 point;
	/** @timeout_nsec: In: absolute CLOCK_MONOTONIC deadline, ns. */
	__s64 timeout_nsec;
	/** @status: Out: 0 or the failed descriptor's negative errno. */
	__s32 status;
	/** @pad: In: must be zero. */
	__u32 pad;
	/** @done: Out: descriptors of the queue completed when returning. */
	__u64 done;
};

/**
 * struct drm_hpu_uq_fence - put a user queue's point into a syncobj
 *
 * Makes a dma_fence that signals when @point (as for
 * DRM_IOCTL_HPU_UQ_WAIT) is reached, with the point's error, and puts it
 * into the syncobj @handle: replacing its fence (@syncobj_point 0) or as
 * timeline point @syncobj_point. So DRM_IOCTL_HPU_SUBMIT can wait for it,
 * and DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD export it as a sync_file. Errors:
 * -EINVAL (non-zero @flags or @pad, @point 0 or beyond the descriptors the
 * doorbell announced), -ENOENT (no such user queue or syncobj), -ENOMEM,
 * -ENODEV.
 */
struct drm_hpu_uq_fence {
	/** @queue_id: In: a user queue of this file. */
	__u32 queue_id;
	/** @flags: In: must be zero. */
	__u32 flags;
	/** @point: In: number of descriptors to have completed. */
	__u64 point;
	/** @handle: In: the syncobj. */
	__u32 handle;
	/** @pad: In: must be zero. */
	__u32 pad;
	/** @syncobj_point: In: timeline point, 0 for a binary syncobj. */
	__u64 syncobj_point;
};

/**
 * struct drm_hpu_info_errors - answer to %DRM_HPU_INFO_ERRORS
 *
 * Counters since the driver bound the device. All fields are Out.
 */
struct drm_hpu_info_errors {
	/** @mmu_faults: MMU faults (any context). */
	__u64 mmu_faults;
	/** @bad_packets: command buffers failed for a malformed packet. */
	__u64 bad_packets;
	/** @priv_violations: privileged packets refused in user command buffers. */
	__u64 priv_violations;
	/** @engine_hangs: engine hangs found by the device watchdog. */
	__u64 engine_hangs;
	/** @dma_bus_errors: host bus errors of the DMA engines. */
	__u64 dma_bus_errors;
	/** @ecc_correctable: corrected HBM ECC errors. */
	__u64 ecc_correctable;
	/** @ecc_uncorrectable: uncorrectable HBM ECC errors. */
	__u64 ecc_uncorrectable;
	/** @retired_pages: 2 MiB HBM pages retired after uncorrectable errors. */
	__u64 retired_pages;
	/** @job_timeouts: jobs stopped for running longer than their timeout. */
	__u64 job_timeouts;
	/** @heartbeat_losses: firmware heartbeats missed (each leads to a hard reset). */
	__u64 heartbeat_losses;
	/** @fw_fatal: fatal firmware errors. */
	__u64 fw_fatal;
	/** @thermal_events: thermal threshold events. */
	__u64 thermal_events;
	/** @power_events: power threshold events. */
	__u64 power_events;
	/** @soft_resets: soft resets (engines only) done by the driver. */
	__u64 soft_resets;
	/** @hard_resets: hard resets (whole device) done by the driver. */
	__u64 hard_resets;
	/** @reset_generation: increments at every hard reset; see &drm_hpu_events. */
	__u64 reset_generation;
};

/** DRM_HPU_EVENTS_ENABLE: queue error and reset events on this file. */
#define DRM_HPU_EVENTS_ENABLE		(1u << 0)
/**
 * DRM_HPU_EVENTS_ERROR_INFO: with DRM_HPU_EVENTS_ENABLE, error events are
 * the whole &struct drm_hpu_event_error (its @info, @job_queue_id and
 * @job_seq included); without it, its first 48 bytes, up to @timestamp_ns.
 */
#define DRM_HPU_EVENTS_ERROR_INFO	(1u << 1)

/**
 * struct drm_hpu_events - ask for error notifications on this file
 *
 * With DRM_HPU_EVENTS_ENABLE, the driver queues a DRM event (read(2) on the
 * device file, poll(2) for POLLIN) for every error that concerns this file's
 * context: &struct drm_hpu_event_error for a failed job or device error,
 * and &struct drm_hpu_event_reset when the device was reset. Without it,
 * events stop and queued ones are dropped. After a hard reset every ioctl
 * on a file opened before it fails with -ENODEV: reopen the device.
 * Unknown flags, DRM_HPU_EVENTS_ERROR_INFO without DRM_HPU_EVENTS_ENABLE
 * and a non-zero @pad fail with -EINVAL. Each call sets the error event
 * size of the events queued after it.
 */
struct drm_hpu_events {
	/** @flags: In: DRM_HPU_EVENTS_* . */
	__u32 flags;
	/** @pad: In: must be zero. */
	__u32 pad;
};

/** DRM_HPU_EVENT_ERROR: &drm_event.type of &struct drm_hpu_event_error. */
#define DRM_HPU_EVENT_ERROR		0x80000001
/** DRM_HPU_EVENT_RESET: &drm_event.type of &struct drm_hpu_event_reset. */
#define DRM_HPU_EVENT_RESET		0x80000002

/* &drm_hpu_event_error.kind */
#define DRM_HPU_ERROR_MMU_FAULT		1
#define DRM_HPU_ERROR_BAD_PACKET	2
#define DRM_HPU_ERROR_PRIV		3
#define DRM_HPU_ERROR_ENGINE_HANG	4
#define DRM_HPU_ERROR_DMA_BUS		5
#define DRM_HPU_ERROR_ECC		6
#define DRM_HPU_ERROR_TIMEOUT		7
#define DRM_HPU_ERROR_DEVICE_LOST	8
#define DRM_HPU_ERROR_BAD_LAUNCH	9
#define DRM_HPU_ERROR_TPC_ILLEGAL	10
#define DRM_HPU_ERROR_TPC_ASSERT	11

/**
 * struct drm_hpu_event_error - a job of this file failed, or a device error
 *	touched its memory
 *
 * &drm_event.length is the size the driver sent: 48 bytes (up to
 * @timestamp_ns), or the whole structure for a file that asked for
 * DRM_HPU_EVENTS_ERROR_INFO. A reader steps over events by their length
 * (the structure may grow at the end, under a new flag).
 */
struct drm_hpu_event_error {
	/** @base: type DRM_HPU_EVENT_ERROR, length sizeof(*this). */
	struct drm_event base;
	/** @kind: DRM_HPU_ERROR_*. */
	__u32 kind;
	/** @engine: engine index, 0xffffffff when none. */
	__u32 engine;
	/** @queue_id: the file's queue whose job failed, 0 when none. */
	__u32 queue_id;
	/** @errno_value: the error the job's fence carries (positive errno). */
	__u32 errno_value;
	/** @seq: sequence number of the failed job on its queue, 0 when none. */
	__u64 seq;
	/**
	 * @address: faulting device address (MMU fault), HBM offset (ECC),
	 * descriptor address or program counter (compute errors, @info) or 0.
	 */
	__u64 address;
	/** @timestamp_ns: CLOCK_MONOTONIC time the driver saw the error. */
	__u64 timestamp_ns;
	/**
	 * @info: what the device said about the error, in the device event
	 * (@queue_id 0) of a compute error, 0 elsewhere: BAD_LAUNCH the rule
	 * broken (@address: the descriptor), TPC_ILLEGAL [7:0] the core and
	 * [15:8] the reason (@address: the program counter), TPC_ASSERT the
	 * assert's 32-bit value (@address: the program counter).
	 */
	__u32 info;
	/**
	 * @job_queue_id: in the device event (@queue_id 0) of an MMU fault or
	 * a compute error, the queue of the job the error failed, when the
	 * driver could tell which job it was; 0 otherwise and in job events.
	 */
	__u32 job_queue_id;
	/** @job_seq: with @job_queue_id, that job's sequence number; else 0. */
	__u64 job_seq;
};

/**
 * struct drm_hpu_event_reset - the device was reset
 */
struct drm_hpu_event_reset {
	/** @base: type DRM_HPU_EVENT_RESET, length sizeof(*this). */
	struct drm_event base;
	/** @hard: 1 for a hard reset (device state lost, reopen), 0 for soft. */
	__u32 hard;
	/** @pad: zero. */
	__u32 pad;
	/** @generation: reset generation after the reset. */
	__u64 generation;
	/** @timestamp_ns: CLOCK_MONOTONIC time of the reset. */
	__u64 timestamp_ns;
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_DRM_HPU_ACCEL_H_ */
