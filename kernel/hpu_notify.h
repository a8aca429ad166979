/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: error and reset notifications to user space as DRM events.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_NOTIFY_H__
#define __HPU_NOTIFY_H__

#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "hpu_regs.h"

struct drm_device;
struct drm_file;
struct file;
struct hpu_device;
struct hpu_file_priv;
struct inode;

/* Halves of device error reports waiting for their other half, per engine. */
#define HPU_NOTIFY_HALVES	8

/**
 * struct hpu_notify_half - one half of a device error report
 * @expires: jiffies after which the half goes: a device event is then
 *	sent without its job, a job is forgotten.
 * @address: device event: &drm_hpu_event_error.address.
 * @info: device event: &drm_hpu_event_error.info.
 * @err: device event: the errno of its kind (negative).
 * @seq: failed job: its sequence number on its queue.
 * @queue_id: failed job: its queue.
 * @asid: the context.
 * @kind: DRM_HPU_ERROR_*; 0 for a free slot.
 * @job: the half is a failed job; else the device's event.
 *
 * The device reports an MMU fault or a failed TPC launch or GEMM twice:
 * an event (address, info) and the job's completion record, on different
 * interrupt vectors, in either order. Whichever comes first waits here
 * for the other, so that the device event names its job.
 */
struct hpu_notify_half {
	unsigned long expires;
	u64 address;
	u32 info;
	int err;
	u64 seq;
	u32 queue_id;
	u16 asid;
	u8 kind;
	bool job;
};

/**
 * struct hpu_notify - per-device state of event delivery
 * @hdev: the device.
 * @files: the open file of each ASID, NULL when the ASID is free. A file
 *	is entered at the end of open and removed when its last reference
 *	is released, before the DRM core drops its events and long before
 *	its ASID can be reused. Protected by &drm_device.event_lock.
 * @half_lock: protects @halves; irq-safe, taken inside &hpu_eq.lock and
 *	never with &drm_device.event_lock held.
 * @halves: per engine index, device error reports waiting for their
 *	other half (hpu_notify_device_error(), hpu_notify_job_detail()).
 * @half_work: sends the device events whose job did not come in time.
 *
 * Allocated with drmm_kzalloc(): lives as long as the DRM device.
 */
struct hpu_notify {
	struct hpu_device *hdev;
	struct hpu_file_priv *files[HPU_MMU_NUM_ASIDS];
	/* protects halves; irq-safe */
	spinlock_t half_lock;
	struct hpu_notify_half halves[HPU_NUM_ENGINES][HPU_NOTIFY_HALVES];
	struct delayed_work half_work;
};

int hpu_notify_init(struct hpu_device *hdev);
void hpu_notify_fini(struct hpu_device *hdev);
void hpu_notify_file_open(struct hpu_file_priv *fpriv, struct drm_file *file);
void hpu_notify_file_close(struct hpu_file_priv *fpriv);
int hpu_notify_release(struct inode *inode, struct file *filp);

void hpu_notify_job_error(struct hpu_file_priv *fpriv, u32 kind, u32 engine,
			  u32 queue_id, int err, u64 seq, u64 address);
void hpu_notify_device_error(struct hpu_device *hdev, u32 asid, u32 kind,
			     u32 engine, int err, u64 address, u32 info);
void hpu_notify_job_detail(struct hpu_device *hdev, u32 asid, u32 kind,
			   u32 engine, u32 queue_id, u64 seq);
void hpu_notify_asid_gone(struct hpu_device *hdev, u32 asid);
void hpu_notify_reset(struct hpu_device *hdev, bool hard, u64 gen);

int hpu_notify_ioctl(struct drm_device *drm, void *data,
		     struct drm_file *file);

#endif /* __HPU_NOTIFY_H__ */
