// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: error and reset notifications to user space as DRM events
 * (DRM_IOCTL_HPU_EVENTS), queued from any context, interrupt handlers
 * included.
 *
 * Locking: &drm_device.event_lock (irq-safe spinlock) protects
 * &hpu_notify.files and the event fields of every &struct hpu_file_priv;
 * nothing else is taken under it. &hpu_notify.half_lock protects the
 * halves of device error reports; events are sent only after it is
 * dropped. hpu_notify_release() wraps drm_release() so that a file's
 * events stop before the DRM core drops them.
 * Documentation/driver/errors.md has the whole picture.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
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

/* How long a device event waits for its failed job before it goes alone. */
#define HPU_NOTIFY_EVENT_WAIT_MS	100
/* How long a failed job waits for the device's event of its error. */
#define HPU_NOTIFY_JOB_WAIT_MS		1000

static void hpu_notify_half_work(struct work_struct *work);

/**
 * hpu_notify_init() - set up event delivery of a device
 * @hdev: the device, before any file can be opened
 *
 * Return: 0 or -ENOMEM.
 */
int hpu_notify_init(struct hpu_device *hdev)
{
	struct hpu_notify *notify;

	notify = drmm_kzalloc(&hdev->drm, sizeof(*notify), GFP_KERNEL);
	if (!notify)
		return -ENOMEM;
	notify->hdev = hdev;
	spin_lock_init(&notify->half_lock);
	INIT_DELAYED_WORK(&notify->half_work, hpu_notify_half_work);
	hdev->notify = notify;
	return 0;
}

/**
 * hpu_notify_fini() - stop the delivery of waiting device events
 * @hdev: the device, its event queue disabled (no new device event)
 *
 * Device events still waiting for their job are dropped. May sleep.
 */
void hpu_notify_fini(struct hpu_device *hdev)
{
	if (hdev->notify)
		cancel_delayed_work_sync(&hdev->notify->half_work);
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

	/* The file chose how much of an error event it reads. */
	if (e->type == DRM_HPU_EVENT_ERROR && !fpriv->events_info)
		e->length = offsetof(struct drm_hpu_event_error, info);
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
		       u64 address, u32 info, u32 job_queue_id, u64 job_seq)
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
	p->ev.job_queue_id = job_queue_id;
	p->ev.job_seq = job_seq;
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

	p = hpu_notify_error_alloc(kind, engine, queue_id, err, seq, address, 0,
				   0, 0);

	spin_lock_irqsave(&drm->event_lock, flags);
	if (p)
		hpu_notify_queue_locked(fpriv, &p->base, &p->ev.base);
	else if (fpriv->events_enabled)
		fpriv->events_dropped++;
	spin_unlock_irqrestore(&drm->event_lock, flags);
}

/*
 * Tell the file of an ASID about a device error (queue 0): @address and
 * @info as the device reported them, and the job the error failed
 * (@job_queue_id, @job_seq) when known. ASID 0 (the kernel's) and free
 * ASIDs are ignored. Callable from any context; no notify lock held.
 */
static void hpu_notify_asid_error(struct hpu_device *hdev, u32 asid, u32 kind,
				  u32 engine, int err, u64 address, u32 info,
				  u32 job_queue_id, u64 job_seq)
{
	struct drm_device *drm = &hdev->drm;
	struct hpu_pending_error *p;
	struct hpu_file_priv *fpriv;
	unsigned long flags;

	if (!hdev->notify || !asid || asid >= HPU_MMU_NUM_ASIDS)
		return;
	if (!READ_ONCE(hdev->notify->files[asid]))
		return;

	p = hpu_notify_error_alloc(kind, engine, 0, err, 0, address, info,
				   job_queue_id, job_seq);

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

/* Send a device event that no job claimed, without a job. */
static void hpu_notify_half_send(struct hpu_device *hdev, u32 engine,
				 const struct hpu_notify_half *h)
{
	hpu_notify_asid_error(hdev, h->asid, h->kind, engine, h->err,
			      h->address, h->info, 0, 0);
}

/*
 * The waiting halves of @engine that match (@asid, @kind) and are of the
 * other sort than @job, expired ones freed; *@match gets the last one.
 * half_lock held.
 */
static unsigned int hpu_notify_half_find(struct hpu_notify *notify, u32 engine,
					 u32 asid, u32 kind, bool job,
					 struct hpu_notify_half **match)
{
	struct hpu_notify_half *h = notify->halves[engine];
	unsigned int i, n = 0;

	lockdep_assert_held(&notify->half_lock);

	for (i = 0; i < HPU_NOTIFY_HALVES; i++) {
		if (!h[i].kind || h[i].job == job || h[i].asid != asid ||
		    h[i].kind != kind)
			continue;
		/* A job expired is forgotten (an event, the work sends). */
		if (h[i].job && time_after(jiffies, h[i].expires)) {
			h[i].kind = 0;
			continue;
		}
		*match = &h[i];
		n++;
	}
	return n;
}

/*
 * A free slot of @engine for a new half: a free one, an expired job, else
 * the slot expiring first, whose device event (copied to *@evicted, kind
 * 0 if none) the caller sends alone. half_lock held.
 */
static struct hpu_notify_half *
hpu_notify_half_slot(struct hpu_notify *notify, u32 engine,
		     struct hpu_notify_half *evicted)
{
	struct hpu_notify_half *h = notify->halves[engine], *old = &h[0];
	unsigned int i;

	lockdep_assert_held(&notify->half_lock);

	evicted->kind = 0;
	for (i = 0; i < HPU_NOTIFY_HALVES; i++) {
		if (!h[i].kind ||
		    (h[i].job && time_after(jiffies, h[i].expires)))
			return &h[i];
		if (time_before(h[i].expires, old->expires))
			old = &h[i];
	}
	if (!old->job)
		*evicted = *old;
	return old;
}

/**
 * hpu_notify_device_error() - the device reported an error of a job
 * @hdev: the device
 * @asid: the address space the error concerns; 0 (the kernel's) and
 *	free ASIDs are ignored
 * @kind: DRM_HPU_ERROR_MMU_FAULT, _BAD_LAUNCH, _TPC_ILLEGAL or _TPC_ASSERT
 * @engine: engine index
 * @err: the error the job's fence carries (negative errno)
 * @address: faulting device address, descriptor address or program
 *	counter
 * @info: &drm_hpu_event_error.info: what the device event said (compute
 *	errors), else 0
 *
 * Sends the device event (queue 0) to the file of the ASID. The job the
 * error failed completes on another interrupt vector: if its completion
 * was consumed already (hpu_notify_job_detail()), the event names it
 * (&drm_hpu_event_error.job_queue_id, .job_seq); else the event waits up
 * to HPU_NOTIFY_EVENT_WAIT_MS for it and then goes without it. An event
 * that two waiting jobs could claim goes at once without a job. Callable
 * from any context, the event queue's interrupt handler included.
 */
void hpu_notify_device_error(struct hpu_device *hdev, u32 asid, u32 kind,
			     u32 engine, int err, u64 address, u32 info)
{
	struct hpu_notify *notify = hdev->notify;
	struct hpu_notify_half *job = NULL, *h, evicted;
	unsigned long flags;
	u32 queue_id = 0;
	unsigned int n;
	u64 seq = 0;

	if (!notify || engine >= HPU_NUM_ENGINES || !asid ||
	    asid >= HPU_MMU_NUM_ASIDS) {
		hpu_notify_asid_error(hdev, asid, kind, engine, err, address,
				      info, 0, 0);
		return;
	}

	evicted.kind = 0;
	spin_lock_irqsave(&notify->half_lock, flags);
	n = hpu_notify_half_find(notify, engine, asid, kind, false, &job);
	if (n == 1) {
		queue_id = job->queue_id;
		seq = job->seq;
		job->kind = 0;
	} else if (!n) {
		h = hpu_notify_half_slot(notify, engine, &evicted);
		*h = (struct hpu_notify_half) {
			.expires = jiffies +
				   msecs_to_jiffies(HPU_NOTIFY_EVENT_WAIT_MS),
			.address = address, .info = info, .err = err,
			.asid = asid, .kind = kind, .job = false,
		};
		mod_delayed_work(system_wq, &notify->half_work,
				 msecs_to_jiffies(HPU_NOTIFY_EVENT_WAIT_MS) + 1);
	}
	spin_unlock_irqrestore(&notify->half_lock, flags);

	if (evicted.kind)
		hpu_notify_half_send(hdev, engine, &evicted);
	if (n)
		hpu_notify_asid_error(hdev, asid, kind, engine, err, address,
				      info, queue_id, seq);
}

/**
 * hpu_notify_job_detail() - a job failed with an error the device reports
 * @hdev: the device
 * @asid: the job's address space
 * @kind: DRM_HPU_ERROR_MMU_FAULT, _BAD_LAUNCH, _TPC_ILLEGAL or _TPC_ASSERT
 * @engine: engine index of the job's stream
 * @queue_id: the job's queue in its file
 * @seq: the job's sequence number on its queue
 *
 * Called by the completion path (hpu_jobs_signal()) before the job's own
 * event. If the device event of the error is waiting, it goes now, naming
 * the job (two waiting device events: both go, naming none); else the job
 * waits up to HPU_NOTIFY_JOB_WAIT_MS for it (hpu_notify_device_error()).
 * Callable from any context.
 */
void hpu_notify_job_detail(struct hpu_device *hdev, u32 asid, u32 kind,
			   u32 engine, u32 queue_id, u64 seq)
{
	struct hpu_notify *notify = hdev->notify;
	struct hpu_notify_half *ev = NULL, *h, got, evicted;
	unsigned long flags;
	unsigned int n, i;

	if (!notify || engine >= HPU_NUM_ENGINES || !asid ||
	    asid >= HPU_MMU_NUM_ASIDS)
		return;

	evicted.kind = 0;
	got.kind = 0;
	spin_lock_irqsave(&notify->half_lock, flags);
	n = hpu_notify_half_find(notify, engine, asid, kind, true, &ev);
	if (n == 1) {
		got = *ev;
		ev->kind = 0;
	} else if (!n) {
		h = hpu_notify_half_slot(notify, engine, &evicted);
		*h = (struct hpu_notify_half) {
			.expires = jiffies +
				   msecs_to_jiffies(HPU_NOTIFY_JOB_WAIT_MS),
			.seq = seq, .queue_id = queue_id, .asid = asid,
			.kind = kind, .job = true,
		};
	}
	spin_unlock_irqrestore(&notify->half_lock, flags);

	if (evicted.kind)
		hpu_notify_half_send(hdev, engine, &evicted);
	if (got.kind)
		hpu_notify_asid_error(hdev, asid, kind, engine, got.err,
				      got.address, got.info, queue_id, seq);
	if (n <= 1)
		return;
	/* Which event is this job's is unknown: they go without a job. */
	for (i = 0; i < HPU_NOTIFY_HALVES; i++) {
		spin_lock_irqsave(&notify->half_lock, flags);
		h = &notify->halves[engine][i];
		got.kind = 0;
		if (h->kind == kind && !h->job && h->asid == asid) {
			got = *h;
			h->kind = 0;
		}
		spin_unlock_irqrestore(&notify->half_lock, flags);
		if (got.kind)
			hpu_notify_half_send(hdev, engine, &got);
	}
}

/* Send the device events whose job did not come; forget stale jobs. */
static void hpu_notify_half_work(struct work_struct *work)
{
	struct hpu_notify *notify = container_of(to_delayed_work(work),
						 struct hpu_notify, half_work);
	unsigned long flags, next = 0;
	struct hpu_notify_half got;
	unsigned int e, i;

	for (e = 0; e < HPU_NUM_ENGINES; e++) {
		for (i = 0; i < HPU_NOTIFY_HALVES; i++) {
			struct hpu_notify_half *h = &notify->halves[e][i];

			got.kind = 0;
			spin_lock_irqsave(&notify->half_lock, flags);
			if (h->kind && time_after_eq(jiffies, h->expires)) {
				if (!h->job)
					got = *h;
				h->kind = 0;
			} else if (h->kind && !h->job &&
				   (!next || time_before(h->expires, next))) {
				next = h->expires;
			}
			spin_unlock_irqrestore(&notify->half_lock, flags);
			if (!got.kind)
				continue;
			hpu_notify_half_send(notify->hdev, e, &got);
		}
	}
	if (next)
		mod_delayed_work(system_wq, &notify->half_work,
				 time_after(next, jiffies) ? next - jiffies : 1);
}

/**
 * hpu_notify_asid_gone() - forget what waits for a context that ended
 * @hdev: the device
 * @asid: the ASID of the context, about to be given to the next one
 *
 * Drops the halves of @asid's device error reports: device events
 * waiting for their job and jobs waiting for their device event. Sent
 * later, they would reach whichever file has the ASID by then, naming
 * the old context's jobs, addresses and assert values. The caller first
 * handled every event the device wrote for the context (hpu_eq_sync()),
 * so none of them comes after this. Callable from any context.
 */
void hpu_notify_asid_gone(struct hpu_device *hdev, u32 asid)
{
	struct hpu_notify *notify = hdev->notify;
	unsigned long flags;
	unsigned int e, i;

	if (!notify || !asid || asid >= HPU_MMU_NUM_ASIDS)
		return;
	spin_lock_irqsave(&notify->half_lock, flags);
	for (e = 0; e < HPU_NUM_ENGINES; e++)
		for (i = 0; i < HPU_NOTIFY_HALVES; i++)
			if (notify->halves[e][i].kind &&
			    notify->halves[e][i].asid == asid)
				notify->halves[e][i].kind = 0;
	spin_unlock_irqrestore(&notify->half_lock, flags);
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
 * Enables or disables error and reset events on the file, and sets the
 * size of the error events queued from now on (DRM_HPU_EVENTS_ERROR_INFO:
 * the whole &struct drm_hpu_event_error; else its first 48 bytes, which
 * is all user space written before @info knows). Disabling drops the
 * events queued and not read yet.
 *
 * Return: 0; -EINVAL for unknown flags, ERROR_INFO without ENABLE or a
 * non-zero pad; -ENODEV once the device is unplugged.
 */
int hpu_notify_ioctl(struct drm_device *drm, void *data,
		     struct drm_file *file)
{
	struct hpu_file_priv *fpriv = file->driver_priv;
	struct drm_hpu_events *args = data;
	unsigned long flags;
	int idx;

	if (args->flags & ~(DRM_HPU_EVENTS_ENABLE | DRM_HPU_EVENTS_ERROR_INFO)) {
		drm_dbg(drm, "EVENTS: unknown flags 0x%x\n", args->flags);
		return -EINVAL;
	}
	if ((args->flags & DRM_HPU_EVENTS_ERROR_INFO) &&
	    !(args->flags & DRM_HPU_EVENTS_ENABLE)) {
		drm_dbg(drm, "EVENTS: ERROR_INFO without ENABLE\n");
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
	fpriv->events_info = args->flags & DRM_HPU_EVENTS_ERROR_INFO;
	if (!fpriv->events_enabled)
		hpu_notify_flush_locked(file);
	spin_unlock_irqrestore(&drm->event_lock, flags);

	drm_dev_exit(idx);
	return 0;
}
