// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: error and reset notifications to user space as DRM events
 * (DRM_IOCTL_HPU_EVENTS), queued from any context, interrupt handlers
 * included.
 *
 * Locking: &drm_device.event_lock (irq-safe spinlock) protects
 * &hpu_notify.files and the event fields of every &struct hpu_file_priv;
 * nothing else is taken under it. hpu_notify_release() wraps drm_release()
 * so that a file's events stop before the DRM core drops them.
 * Documentation/driver/errors.md has the whole picture.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_managed.h>

#include "hpu_accel.h"
#include "hpu_drv.h"
#include "hpu_notify.h"
#include "hpu_mmu.h"
#include "hpu_vm.h"

/**
 * struct hpu_pending_error - a queued &struct drm_hpu_event_error
 * @base: the DRM core's part.
 * @ev: the event user space reads.
 */
struct hpu_pending_error {
	struct drm_pending_event base;
	struct drm_hpu_event_error ev;
};

/**
 * struct hpu_pending_reset - a queued &struct drm_hpu_event_reset
 * @base: the DRM core's part.
 * @ev: the event user space reads.
 */
struct hpu_pending_reset {
	struct drm_pending_event base;
	struct drm_hpu_event_reset ev;
};

/**
 * hpu_notify_init() - set up event delivery of a device
 * @hdev: the device, before any file can be opened
 *
 * Return: 0 or -ENOMEM.
 */
int hpu_notify_init(struct hpu_device *hdev)
{
	hdev->notify = drmm_kzalloc(&hdev->drm, sizeof(*hdev->notify),
				    GFP_KERNEL);
	return hdev->notify ? 0 : -ENOMEM;
}

/**
 * hpu_notify_file_open() - make a new file reachable for notifications
 * @fpriv: the file's state, with its VM (and so its ASID) created
 * @file: the DRM file
 *
 * Called last in the driver's open callback: nothing may fail after it.
 * Events stay disabled until the file asks for them.
 */
void hpu_notify_file_open(struct hpu_file_priv *fpriv, struct drm_file *file)
{
	struct hpu_device *hdev = fpriv->hdev;
	u32 asid = fpriv->vm->asid;
	unsigned long flags;

	spin_lock_irqsave(&hdev->drm.event_lock, flags);
	fpriv->file = file;
	fpriv->events_enabled = false;
	if (!WARN_ON(asid >= HPU_MMU_NUM_ASIDS))
		hdev->notify->files[asid] = fpriv;
	spin_unlock_irqrestore(&hdev->drm.event_lock, flags);
}

/**
 * hpu_notify_file_close() - stop notifications to a file
 * @fpriv: the file's state
 *
 * Disables the file's events and takes it out of the ASID table. Called
 * by hpu_notify_release() and again, as a safety net, by postclose;
 * idempotent.
 */
void hpu_notify_file_close(struct hpu_file_priv *fpriv)
{
	struct hpu_device *hdev = fpriv->hdev;
	u32 asid = fpriv->vm->asid;
	unsigned long flags;

	spin_lock_irqsave(&hdev->drm.event_lock, flags);
	fpriv->events_enabled = false;
	if (asid < HPU_MMU_NUM_ASIDS && hdev->notify->files[asid] == fpriv)
		hdev->notify->files[asid] = NULL;
	spin_unlock_irqrestore(&hdev->drm.event_lock, flags);
}

/**
 * hpu_notify_release() - &file_operations.release of the accel node
 * @inode: the device node
 * @filp: the file being released
 *
 * Stops notifications to the file, then hands over to drm_release().
 *
 * Return: what drm_release() returns.
 */
int hpu_notify_release(struct inode *inode, struct file *filp)
{
	struct drm_file *file = filp->private_data;

	if (file && file->driver_priv)
		hpu_notify_file_close(file->driver_priv);
	return drm_release(inode, filp);
}

/* Queue @p on @fpriv's file, or drop it; drm.event_lock held. */
static void hpu_notify_queue_locked(struct hpu_file_priv *fpriv,
				    struct drm_pending_event *p,
				    struct drm_event *e)
{
	struct drm_device *drm = &fpriv->hdev->drm;

	lockdep_assert_held(&drm->event_lock);

	if (!fpriv->events_enabled ||
	    drm_event_reserve_init_locked(drm, fpriv->file, p, e)) {
		/* Disabled meanwhile, or the file's event space is full. */
		if (fpriv->events_enabled)
			fpriv->events_dropped++;
		kfree(p);
		return;
	}
	drm_send_event_locked(drm, p);
}

static struct hpu_pending_error *
hpu_notify_error_alloc(u32 kind, u32 engine, u32 queue_id, int err, u64 seq,
		       u64 address, u32 info)
{
	struct hpu_pending_error *p;

	p = kzalloc(sizeof(*p), GFP_ATOMIC);
	if (!p)
		return NULL;

	p->ev.base.type = DRM_HPU_EVENT_ERROR;
	p->ev.base.length = sizeof(p->ev);
	p->ev.kind = kind;
	p->ev.engine = engine;
	p->ev.queue_id = queue_id;
	p->ev.errno_value = err < 0 ? -err : err;
	p->ev.seq = seq;
	p->ev.address = address;
	p->ev.timestamp_ns = ktime_get_ns();
	p->ev.info = info;
	return p;
}

/**
 * hpu_notify_job_error() - tell a file that one of its jobs failed
 * @fpriv: the file; the caller keeps it alive (its postclose has not run)
 * @kind: DRM_HPU_ERROR_*
 * @engine: engine index, or U32_MAX for none
 * @queue_id: the file's queue, 0 for none
 * @err: the error the job's fence carries (negative or positive errno)
 * @seq: the job's sequence number on its queue, 0 for none
 * @address: faulting device address, HBM offset or 0
 *
 * Queues a &struct drm_hpu_event_error if the file enabled events; does
 * nothing otherwise. Callable from any context, interrupts included. If
 * memory is short or the file's unread events fill its event space, the
 * event is dropped.
 */
void hpu_notify_job_error(struct hpu_file_priv *fpriv, u32 kind, u32 engine,
			  u32 queue_id, int err, u64 seq, u64 address)
{
	struct drm_device *drm = &fpriv->hdev->drm;
	struct hpu_pending_error *p;
	unsigned long flags;

	/* Unlocked hint; checked again under the lock. */
	if (!READ_ONCE(fpriv->events_enabled))
		return;

	p = hpu_notify_error_alloc(kind, engine, queue_id, err, seq, address, 0);

	spin_lock_irqsave(&drm->event_lock, flags);
	if (p)
		hpu_notify_queue_locked(fpriv, &p->base, &p->ev.base);
	else if (fpriv->events_enabled)
		fpriv->events_dropped++;
	spin_unlock_irqrestore(&drm->event_lock, flags);
}

/**
 * hpu_notify_asid_error() - tell the file of an ASID about an error
 * @hdev: the device
 * @asid: the address space the error concerns; 0 (the kernel's) and
 *	free ASIDs are ignored
 * @kind: DRM_HPU_ERROR_*
 * @engine: engine index, or U32_MAX for none
 * @queue_id: the file's queue, 0 for none
 * @err: the error the job's fence carries (negative or positive errno)
 * @seq: the job's sequence number on its queue, 0 for none
 * @address: faulting device address, HBM offset, descriptor address,
 *	program counter or 0
 * @info: &drm_hpu_event_error.info: what the device event said (compute
 *	errors), else 0
 *
 * Like hpu_notify_job_error(), for callers that know the ASID but not
 * the file (the event queue, the completion path). Callable from any
 * context.
 */
void hpu_notify_asid_error(struct hpu_device *hdev, u32 asid, u32 kind,
			   u32 engine, u32 queue_id, int err, u64 seq,
			   u64 address, u32 info)
{
	struct drm_device *drm = &hdev->drm;
	struct hpu_pending_error *p;
	struct hpu_file_priv *fpriv;
	unsigned long flags;

	if (!hdev->notify || !asid || asid >= HPU_MMU_NUM_ASIDS)
		return;
	if (!READ_ONCE(hdev->notify->files[asid]))
		return;

	p = hpu_notify_error_alloc(kind, engine, queue_id, err, seq, address,
				   info);

	spin_lock_irqsave(&drm->event_lock, flags);
	fpriv = hdev->notify->files[asid];
	if (fpriv && p)
		hpu_notify_queue_locked(fpriv, &p->base, &p->ev.base);
	else if (fpriv && fpriv->events_enabled)
		fpriv->events_dropped++;
	else
		kfree(p);
	spin_unlock_irqrestore(&drm->event_lock, flags);
}

/**
 * hpu_notify_reset() - tell every file that the device was reset
 * @hdev: the device
 * @hard: a hard reset (device state lost) rather than a soft one
 * @gen: the reset generation after the reset
 *
 * Queues a &struct drm_hpu_event_reset to every open file that enabled
 * events. Callable from any context.
 */
void hpu_notify_reset(struct hpu_device *hdev, bool hard, u64 gen)
{
	struct drm_device *drm = &hdev->drm;
	struct hpu_file_priv *fpriv;
	struct hpu_pending_reset *p;
	unsigned long flags;
	u64 now = ktime_get_ns();
	u32 asid;

	if (!hdev->notify)
		return;

	for (asid = HPU_ASID_FIRST; asid < HPU_MMU_NUM_ASIDS; asid++) {
		if (!READ_ONCE(hdev->notify->files[asid]))
			continue;

		p = kzalloc(sizeof(*p), GFP_ATOMIC);
		if (p) {
			p->ev.base.type = DRM_HPU_EVENT_RESET;
			p->ev.base.length = sizeof(p->ev);
			p->ev.hard = hard;
			p->ev.generation = gen;
			p->ev.timestamp_ns = now;
		}

		spin_lock_irqsave(&drm->event_lock, flags);
		fpriv = hdev->notify->files[asid];
		if (fpriv && p)
			hpu_notify_queue_locked(fpriv, &p->base, &p->ev.base);
		else if (fpriv && fpriv->events_enabled)
			fpriv->events_dropped++;
		else
			kfree(p);
		spin_unlock_irqrestore(&drm->event_lock, flags);
	}
}

/* Drop the file's queued hpu events; drm.event_lock held. */
static void hpu_notify_flush_locked(struct drm_file *file)
{
	struct drm_pending_event *e, *tmp;

	lockdep_assert_held(&file->minor->dev->event_lock);

	list_for_each_entry_safe(e, tmp, &file->event_list, link) {
		if (e->event->type != DRM_HPU_EVENT_ERROR &&
		    e->event->type != DRM_HPU_EVENT_RESET)
			continue;
		list_del(&e->link);
		file->event_space += e->event->length;
		kfree(e);
	}
}

/**
 * hpu_notify_ioctl() - DRM_IOCTL_HPU_EVENTS
 * @drm: the DRM device
 * @data: the &struct drm_hpu_events copied in by the DRM core
 * @file: the DRM file
 *
 * Enables or disables error and reset events on the file. Disabling
 * drops the events queued and not read yet.
 *
 * Return: 0; -EINVAL for unknown flags or a non-zero pad; -ENODEV once
 * the device is unplugged.
 */
int hpu_notify_ioctl(struct drm_device *drm, void *data,
		     struct drm_file *file)
{
	struct hpu_file_priv *fpriv = file->driver_priv;
	struct drm_hpu_events *args = data;
	unsigned long flags;
	int idx;

	if (args->flags & ~DRM_HPU_EVENTS_ENABLE) {
		drm_dbg(drm, "EVENTS: unknown flags 0x%x\n", args->flags);
		return -EINVAL;
	}
	if (args->pad) {
		drm_dbg(drm, "EVENTS: pad is not zero\n");
		return -EINVAL;
	}

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	spin_lock_irqsave(&drm->event_lock, flags);
	fpriv->events_enabled = args->flags & DRM_HPU_EVENTS_ENABLE;
	if (!fpriv->events_enabled)
		hpu_notify_flush_locked(file);
	spin_unlock_irqrestore(&drm->event_lock, flags);

	drm_dev_exit(idx);
	return 0;
}
