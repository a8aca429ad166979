/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: core device and per-file state of the HPU DRM accel driver.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_DRV_H__
#define __HPU_DRV_H__

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/pci.h>
#include <linux/types.h>
#include <linux/uuid.h>
#include <linux/xarray.h>

#include <drm/drm_device.h>
#include <drm/drm_print.h>

#include "hpu_regs.h"

#define HPU_DRIVER_NAME		"hpu"
#define HPU_DRIVER_DESC		"HPU deep-learning accelerator"

/*
 * The version INFO DEVICE reports (&drm_hpu_info_device.driver_minor) and
 * DRM_IOCTL_VERSION: the minor moves when the uapi gains something user
 * space may probe for. 1.1: DRM_IOCTL_HPU_SUBMIT_ARRAY.
 */
#define HPU_DRIVER_MAJOR	1
#define HPU_DRIVER_MINOR	2
#define HPU_DRIVER_PATCH	0
#define HPU_DRIVER_VERSION	__stringify(HPU_DRIVER_MAJOR) "." \
				__stringify(HPU_DRIVER_MINOR) "." \
				__stringify(HPU_DRIVER_PATCH)

struct hpu_asic;
struct drm_file;
struct hpu_devlink;
struct hpu_eq;
struct hpu_notify;
struct hpu_fw;
struct hpu_mbox;
struct hpu_hbm;
struct hpu_hwmon;
struct hpu_telemetry;
struct hpu_ctx_limits;
struct hpu_mmu;
struct hpu_nic;
struct hpu_qm;
struct hpu_uqs;
struct hpu_reset;
struct hpu_vm;
struct vfsmount;

/**
 * struct hpu_identity - what the device says about itself
 * @chip_id: CHIP_ID register, one of HPU_CHIP_ID_*.
 * @revision: REVISION register, [15:8] major and [7:0] minor.
 * @spec_version: SPEC_VERSION register, version of the register map.
 * @hbm_size: HBM size in bytes.
 * @hbm_stacks: number of HBM stacks.
 * @num_dma: number of DMA engines.
 * @num_tpc: number of tensor processor cores.
 * @num_mme: number of matrix math engines.
 * @num_nic: number of NIC ports.
 * @msix_vectors: MSI-X vectors the device offers.
 * @serial: board serial number, NUL terminated, printable ASCII only.
 * @uuid: device UUID.
 *
 * Read once at probe, before the device is registered, and constant
 * afterwards: readers need no lock.
 */
struct hpu_identity {
	u32 chip_id;
	u32 revision;
	u32 spec_version;
	u64 hbm_size;
	u8 hbm_stacks;
	u8 num_dma;
	u8 num_tpc;
	u8 num_mme;
	u8 num_nic;
	u32 msix_vectors;
	char serial[HPU_SERIAL_LEN + 1];
	uuid_t uuid;
};

/**
 * struct hpu_device - one HPU PCI function
 * @drm: the DRM (accel) device; its lifetime is that of this structure.
 * @pdev: the PCI function.
 * @regs: BAR0 register mapping. Valid from probe until the device is
 *	unbound; code reachable from user space (ioctls) may touch it only
 *	inside drm_dev_enter()/drm_dev_exit().
 * @asic: per-chip functions and data, chosen by CHIP_ID at probe.
 * @id: identity read at probe, constant afterwards.
 * @irq_vectors: MSI-X vectors allocated to the function.
 * @irq_test_done: completed by the MISC interrupt handler when it sees the
 *	SELF_TEST cause. Only the probe path waits on it and re-arms it, so
 *	the completion's own lock is all the locking it needs.
 * @mmu: device MMU state (hpu_mmu.c): HBM window, page-table area,
 *	ASIDs. Set at probe, freed with the DRM device.
 * @hbm: HBM allocator (hpu_hbm.c). Set at probe, freed with the DRM
 *	device (after the last buffer object).
 * @eq: event queue (hpu_eq.c). Set at probe, freed with the DRM device.
 * @qm: queue managers, streams and their schedulers (hpu_stream.c).
 *	Set at probe, freed with the DRM device (after the last file).
 * @notify: error and reset notifications to files (hpu_notify.c). Set at
 *	probe (by hpu_eq_init()), freed with the DRM device.
 * @reset: soft and hard reset, reset generation, heartbeat (hpu_reset.c).
 *	Set at probe before the queue managers, freed with the DRM device.
 * @fw: firmware image, boot state and flash (hpu_fw.c). Set at probe
 *	before the firmware boots, freed with the DRM device.
 * @mbox: the mailbox to the running firmware (hpu_mbox.c). Set with @fw,
 *	freed with the DRM device.
 * @devlink: devlink instance, info, flash and health reporters
 *	(hpu_devlink.c). Set at the end of probe, unregistered at remove;
 *	its state is freed with the DRM device.
 * @telemetry: sensors, firmware limits and engine utilisation
 *	(hpu_telemetry.c). Set at probe, freed with the DRM device.
 * @hwmon: the hwmon device (hpu_hwmon.c). Set at probe, unregistered at
 *	remove; its state is freed with the DRM device.
 * @limits: per-context and per-user limits (hpu_limits.c). Set at probe
 *	right after @mmu, freed with the DRM device.
 * @uqs: the user streams and their queues (hpu_uq.c). Set at probe right
 *	after @qm, freed with the DRM device.
 * @nic: the NIC ports' auxiliary device (hpu_nic.c). Set at probe right
 *	after @reset, freed with the DRM device; the auxiliary device itself
 *	is deleted at remove.
 * @gemfs: the device's own tmpfs mount for host buffers, with transparent
 *	huge pages (hpu_gem_init()), or NULL: host buffers then come from
 *	the kernel's shmem mount. Set at probe, unmounted with the DRM
 *	device (files made on it keep it alive as long as they need it).
 * @dma_bos_lock: protects @dma_bos and &hpu_bo.dma_link.
 * @dma_bos: the buffers whose pages are mapped for this device's DMA
 *	(host buffers once mapped, user pointers, imports), so that removal
 *	can unmap those that outlive it (hpu_gem_dma_release_all()).
 *
 * All per-device state lives here; nothing is global, so any number of
 * devices can be bound at once.
 */
struct hpu_device {
	struct drm_device drm;
	struct pci_dev *pdev;
	void __iomem *regs;
	const struct hpu_asic *asic;
	struct hpu_identity id;
	int irq_vectors;
	struct completion irq_test_done;
	struct hpu_mmu *mmu;
	struct hpu_hbm *hbm;
	struct hpu_eq *eq;
	struct hpu_qm *qm;
	struct hpu_uqs *uqs;
	struct hpu_notify *notify;
	struct hpu_reset *reset;
	struct hpu_fw *fw;
	struct hpu_mbox *mbox;
	struct hpu_devlink *devlink;
	struct hpu_telemetry *telemetry;
	struct hpu_hwmon *hwmon;
	struct hpu_ctx_limits *limits;
	struct hpu_nic *nic;
	struct vfsmount *gemfs;
	/* protects dma_bos and every hpu_bo.dma_link */
	spinlock_t dma_bos_lock;
	struct list_head dma_bos;
};

/*
 * Engine indexes whose time fdinfo reports per file (&hpu_file_priv.engine_ns):
 * the DMA engines 0..7, TPC 8, MME 9 and 10.
 */
#define HPU_FILE_MAX_ENGINES	HPU_NUM_ENGINES

/**
 * struct hpu_file_priv - per-open-file state
 * @hdev: the device this file was opened on.
 * @vm: the context's address space (hpu_vm.c), created in open and
 *	destroyed in postclose after the file's queues; has its own lock.
 * @queues: the file's queues (&struct hpu_queue) by id, from 1; the
 *	xarray's own lock protects it (hpu_queue.c).
 * @uqs: the file's user queues (&struct hpu_uq) by id; their ids are
 *	reserved (NULL) entries of @queues. The xarray's own lock protects it.
 * @vm_reachable: a user queue of the file did not stop: the device may
 *	still reach the address space, which is torn down as such.
 * @file: the DRM file, for event delivery (hpu_notify.c); constant.
 * @events_enabled: the file asked for error and reset events
 *	(DRM_IOCTL_HPU_EVENTS). Protected by &drm_device.event_lock.
 * @events_info: error events carry &drm_hpu_event_error.info and the
 *	fields after it (DRM_HPU_EVENTS_ERROR_INFO): the whole structure,
 *	else its first 48 bytes. Protected by &drm_device.event_lock.
 * @events_dropped: events not queued because the file's event space was
 *	full or memory short. Protected by &drm_device.event_lock.
 * @generation: the device's reset generation when the file was opened
 *	(hpu_reset.c); constant. After a hard reset the file is stale: its
 *	driver ioctls fail with -ENODEV and its jobs never run.
 * @engine_ns: per engine index, nanoseconds (CLOCK_MONOTONIC) the file's
 *	jobs spent executing, for fdinfo ("drm-engine-dma<e>", "-tpc",
 *	"-mme<n>"). A job's time
 *	runs from when it becomes the head of its stream (the stream
 *	executes it: on submission to an idle stream, else when the job
 *	before it completes; again from zero if a restart puts it back) to
 *	when the driver consumes its completion; it is added in
 *	hpu_jobs_signal() before the job's fence signals, which the file
 *	outlives. Atomic: completions of several streams add concurrently.
 *
 * Allocated in the driver's open callback and freed in postclose, which
 * the DRM core runs only after the last ioctl on the file has returned.
 * @hdev is constant in between, so the structure has no lock yet. Later
 * milestones turn it into a context (address space, queues).
 */
struct hpu_file_priv {
	struct hpu_device *hdev;
	struct hpu_vm *vm;
	struct xarray queues;
	struct xarray uqs;
	bool vm_reachable;
	struct drm_file *file;
	bool events_enabled;
	bool events_info;
	u64 events_dropped;
	u64 generation;
	atomic64_t engine_ns[HPU_FILE_MAX_ENGINES];
};

static inline struct hpu_device *to_hpu_device(struct drm_device *drm)
{
	return container_of(drm, struct hpu_device, drm);
}

#endif /* __HPU_DRV_H__ */
