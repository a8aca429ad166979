// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: user queues. From spec version 10 every engine has 12 user streams
 * (streams 4 to 15) whose rings, completion records and command buffers
 * are device addresses of one ASID, and whose doorbell is a BAR0 page of
 * its own. UQ_CREATE gives one to the calling file: it programs the
 * stream with the file's ASID and the ring and completion ring the caller
 * mapped, and the file mmaps the stream's doorbell page, nothing else.
 * The process then submits with no system call. The driver sees the
 * stream only through its write-back record and interrupt: it arms the
 * stream (ARM) for the lowest point anyone waits for, records failures,
 * restarts the stream after an error, a timeout or a soft reset, and
 * stops it before the file's memory goes. Documentation/driver/
 * submission.md, "User queues", has the whole picture.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/dma-fence.h>
#include <linux/dma-fence-chain.h>
#include <linux/dma-mapping.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/pci.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <drm/drm_utils.h>

#include "hpu_accel.h"
#include "hpu_drv.h"
#include "hpu_job.h"
#include "hpu_limits.h"
#include "hpu_notify.h"
#include "hpu_queue.h"
#include "hpu_reg.h"
#include "hpu_reset.h"
#include "hpu_stream.h"
#include "hpu_uq.h"
#include "hpu_vm.h"

/* How long a stopping user stream may take to be idle. */
#define HPU_UQ_STOP_TIMEOUT_US	(1000 * USEC_PER_MSEC)
/* How often a queue with waiters checks that its points were not un-rung. */
#define HPU_UQ_WATCH_MS		1000
/* Failures the error work reports per pass. */
#define HPU_UQ_NOTIFY_BATCH	16
/* Reads again of a write-back record that changed while read, at most. */
#define HPU_UQ_WB_TRIES		4

/**
 * struct hpu_uq_fence - the fence of one point of a user queue
 * @base: the fence; context &hpu_uq.fence_ctx, seqno the point.
 * @lock: its lock (a fence's own: the queue may go before its fences).
 * @link: on &hpu_uq.fences while not signalled.
 * @uq: the queue, while the fence is on its list (under &hpu_uq.lock).
 */
struct hpu_uq_fence {
	struct dma_fence base;
	/* the fence's lock */
	spinlock_t lock;
	struct list_head link;
	struct hpu_uq *uq;
};

static const char *hpu_uq_fence_driver_name(struct dma_fence *fence)
{
	return "hpu";
}

static const char *hpu_uq_fence_timeline_name(struct dma_fence *fence)
{
	return "user-queue";
}

static void hpu_uq_arm_locked(struct hpu_uq *uq);

/*
 * Called with the fence's lock held, for a fence not yet signalled: it is
 * still on its queue's list, or on its way to being signalled by code
 * that must take this lock first, so @uq is alive here.
 */
static bool hpu_uq_fence_enable_signaling(struct dma_fence *fence)
{
	struct hpu_uq_fence *f = container_of(fence, struct hpu_uq_fence, base);
	struct hpu_uq *uq = READ_ONCE(f->uq);
	unsigned long flags;

	if (!uq)
		return true;
	spin_lock_irqsave(&uq->lock, flags);
	hpu_uq_arm_locked(uq);
	spin_unlock_irqrestore(&uq->lock, flags);
	return true;
}

static const struct dma_fence_ops hpu_uq_fence_ops = {
	.use_64bit_seqno = true,
	.get_driver_name = hpu_uq_fence_driver_name,
	.get_timeline_name = hpu_uq_fence_timeline_name,
	.enable_signaling = hpu_uq_fence_enable_signaling,
};

static inline u32 hpu_uq_rd(struct hpu_uq *uq, u32 reg)
{
	return hpu_rd32(uq->hdev, uq->base + reg);
}

static inline void hpu_uq_wr(struct hpu_uq *uq, u32 reg, u32 val)
{
	hpu_wr32(uq->hdev, uq->base + reg, val);
}

/*
 * The descriptors the doorbell announced, as a 64-bit count rebuilt from
 * DONE (DONE_LO latches DONE_HI) and the 32-bit PI, in *@rung. Return:
 * false if the device did not answer (all ones).
 */
static bool hpu_uq_rung(struct hpu_uq *uq, u64 *rung)
{
	u32 lo = hpu_uq_rd(uq, HPU_QS_DONE_LO);
	u32 hi = hpu_uq_rd(uq, HPU_QS_DONE_HI);
	u32 pi = hpu_uq_rd(uq, HPU_QS_PI);

	*rung = ((u64)hi << 32 | lo) + (u32)(pi - lo);
	return lo != U32_MAX || hi != U32_MAX;
}

/**
 * hpu_uqs_supported() - whether the device offers user queues
 * @hdev: the device
 *
 * Return: true on spec version 10 and later with 4 KiB pages (a larger
 * page would map neighbouring doorbells into the process).
 */
bool hpu_uqs_supported(const struct hpu_device *hdev)
{
	return hdev->uqs && hdev->uqs->supported;
}

/*
 * Write ARM for the lowest point waited for, if it is not armed yet.
 * Called with @uq->lock held. ARM fires once: the interrupt handler
 * clears @armed and calls this again for what is left. Nothing is written
 * while the driver reprograms the stream (@armable clear): the enable
 * clears ARM, and whoever sets @armable again arms.
 */
static void hpu_uq_arm_locked(struct hpu_uq *uq)
{
	struct hpu_uq_fence *f;
	u64 point;

	lockdep_assert_held(&uq->lock);
	if (!uq->armable)
		return;
	f = list_first_entry_or_null(&uq->fences, struct hpu_uq_fence, link);
	if (!f)
		return;
	point = f->base.seqno;
	if (uq->armed && uq->armed <= point)
		return;
	uq->armed = point;
	/* HI first: the LO write arms (and fires at once if reached). */
	hpu_uq_wr(uq, HPU_QS_ARM_HI, upper_32_bits(point));
	hpu_uq_wr(uq, HPU_QS_ARM_LO, lower_32_bits(point));
}

/* The outcome of @point (<= @uq->done); @uq->lock held. */
static int hpu_uq_outcome_locked(struct hpu_uq *uq, u64 point)
{
	u64 i, first;

	lockdep_assert_held(&uq->lock);
	first = uq->log_next > HPU_UQ_LOG ? uq->log_next - HPU_UQ_LOG : 0;
	for (i = uq->log_next; i > first; i--) {
		const struct hpu_uq_failure *e = &uq->log[(i - 1) % HPU_UQ_LOG];

		if (e->point == point)
			return e->err;
		if (e->point < point)
			break;
	}
	return point <= uq->log_floor ? -ENODATA : 0;
}

/*
 * Record the failure of @point (the latest so far): @err for its fence,
 * @kind (DRM_HPU_ERROR_*, 0: the owner is not told) for its event.
 */
static void hpu_uq_log_locked(struct hpu_uq *uq, u64 point, int err, u32 kind)
{
	struct hpu_uq_failure *e;

	lockdep_assert_held(&uq->lock);
	if (point <= uq->err_seen)
		return;
	uq->err_seen = point;
	if (uq->log_next >= HPU_UQ_LOG) {
		e = &uq->log[uq->log_next % HPU_UQ_LOG];
		uq->log_floor = max(uq->log_floor, e->point);
	}
	e = &uq->log[uq->log_next++ % HPU_UQ_LOG];
	e->point = point;
	e->err = err;
	e->kind = kind;
	if (uq->log_next - uq->notified > HPU_UQ_LOG)
		uq->notified = uq->log_next - HPU_UQ_LOG;
}

/*
 * Take the fences that are due off the list: those at or below @uq->done,
 * with their outcome, and all of them once the queue is dead. Called with
 * @uq->lock held; the caller signals them once it is dropped.
 */
static void hpu_uq_collect_locked(struct hpu_uq *uq, struct list_head *due)
{
	struct hpu_uq_fence *f, *n;

	lockdep_assert_held(&uq->lock);
	list_for_each_entry_safe(f, n, &uq->fences, link) {
		u64 point = f->base.seqno;
		int err;

		if (point <= uq->done)
			err = hpu_uq_outcome_locked(uq, point);
		else if (uq->dead)
			err = uq->dead;
		else
			break;
		if (err)
			dma_fence_set_error(&f->base, err);
		WRITE_ONCE(f->uq, NULL);
		list_move_tail(&f->link, due);
	}
	if (list_empty(&uq->fences))
		uq->armed = 0;
}

static void hpu_uq_signal(struct list_head *due)
{
	struct hpu_uq_fence *f, *n;

	list_for_each_entry_safe(f, n, due, link) {
		list_del_init(&f->link);
		dma_fence_signal(&f->base);
		dma_fence_put(&f->base);
	}
}

/*
 * Take in what the write-back record says: the completed count, and an
 * error stop's failure (descriptor @done - 1, point @done). A record is
 * rewritten only at the stream's next notification, so the same error
 * stop may be read many times: it is logged once (hpu_uq_log_locked()).
 * @uq->lock held. Return: the record's STATUS bits.
 */
static u32 hpu_uq_update_locked(struct hpu_uq *uq)
{
	u32 status, err_status, err_where, cq_pi;
	unsigned int tries;
	u64 done;

	lockdep_assert_held(&uq->lock);
	/*
	 * Gone with the device (hpu_uqs_fini()); or being stopped: the
	 * record may count a descriptor the stop aborted, which only the
	 * stopper can tell (hpu_uq_stop_failure_locked()).
	 */
	if (!uq->wb || uq->stopping)
		return 0;
	/*
	 * The next record may land while the fields are read, and nothing
	 * orders its bytes as they land. A user stream's @done and @cq_pi
	 * agree in every record (both start at START and count every
	 * completion) and lie in different halves of it, so @done read
	 * again after the rest, and @cq_pi equal to it, tell that @done
	 * comes with the @status and @err_* of its own record: never an
	 * older @done with a newer failure (the wrong point blamed) nor a
	 * newer @done with an older status (a failure taken as success).
	 * Records come one per notification, so a retry finds a settled
	 * one; if they keep coming, the interrupt of the latest reads it.
	 */
	for (tries = 0;; tries++) {
		done = le64_to_cpu(READ_ONCE(uq->wb->done));
		dma_rmb();
		cq_pi = le32_to_cpu(READ_ONCE(uq->wb->cq_pi));
		status = le32_to_cpu(READ_ONCE(uq->wb->status));
		err_status = le32_to_cpu(READ_ONCE(uq->wb->err_status));
		err_where = le32_to_cpu(READ_ONCE(uq->wb->err_where));
		dma_rmb();
		if (cq_pi == lower_32_bits(done) &&
		    le64_to_cpu(READ_ONCE(uq->wb->done)) == done)
			break;
		if (tries == HPU_UQ_WB_TRIES)
			return 0;
	}
	if (done > uq->done)
		uq->done = done;
	/*
	 * A queue fault sets err_* to the fault's status without failing a
	 * descriptor: remembered as seen, so that the stop record, which
	 * repeats it, blames no point (hpu_uq_stop_failure_locked()).
	 */
	if (status & HPU_QS_STATUS_FAULT)
		uq->err_last = (u64)err_status << 32 | err_where;
	if ((status & HPU_QS_STATUS_ERROR) && done > uq->err_seen) {
		int err = hpu_job_cq_status_to_errno(err_status);

		hpu_uq_log_locked(uq, done, err ? err : -EIO,
				  hpu_job_cq_status_kind(err_status));
		uq->err_last = (u64)err_status << 32 | err_where;
	}
	return status;
}

/*
 * After a stop (a disable, a soft reset's pause): the stop record's last
 * failure, if it is a new one, belongs to the last completed descriptor.
 * An ABORTED one is the descriptor the stop aborted: it fails @abort_err
 * (with event kind @abort_kind). A failure that completed while the
 * stream was stopping did not error-stop it, so only this finds it. The
 * record's err_* are those of the last failure since the enable: a value
 * already seen (@err_last) is old. @uq->lock held. Return: true if the
 * stop aborted a descriptor.
 */
static bool hpu_uq_stop_failure_locked(struct hpu_uq *uq, int abort_err,
				       u32 abort_kind)
{
	u32 err_status, err_where;
	u64 last;
	int err;

	lockdep_assert_held(&uq->lock);
	uq->stopping = false;
	hpu_uq_update_locked(uq);
	if (!uq->wb)
		return false;
	err_status = le32_to_cpu(READ_ONCE(uq->wb->err_status));
	err_where = le32_to_cpu(READ_ONCE(uq->wb->err_where));
	last = (u64)err_status << 32 | err_where;
	if (!err_status || last == uq->err_last || uq->done <= uq->err_seen)
		return false;
	uq->err_last = last;
	if (err_status == HPU_CQ_ABORTED) {
		hpu_uq_log_locked(uq, uq->done, abort_err, abort_kind);
		return true;
	}
	err = hpu_job_cq_status_to_errno(err_status);
	hpu_uq_log_locked(uq, uq->done, err ? err : -EIO,
			  hpu_job_cq_status_kind(err_status));
	return false;
}

/* Whether the error work has something to do; @uq->lock held. */
static bool hpu_uq_work_due_locked(struct hpu_uq *uq, u32 status)
{
	lockdep_assert_held(&uq->lock);
	if (uq->log_next > uq->notified)
		return true;
	if (uq->dead)
		return false;
	if (uq->hung || (status & (HPU_QS_STATUS_FAULT | HPU_QS_STATUS_TIMEOUT)))
		return true;
	return (status & HPU_QS_STATUS_ERROR) && uq->resumed != uq->done;
}

/**
 * hpu_uq_engine_irq() - the user-stream part of an engine's interrupt
 * @hdev: the device
 * @engine: engine index
 *
 * Reads the write-back record of every live user queue of the engine
 * (memory only), signals the fences of the points reached, re-arms, and
 * hands stops and failures to the error work.
 */
void hpu_uq_engine_irq(struct hpu_device *hdev, unsigned int engine)
{
	struct hpu_uqs *uqs = hdev->uqs;
	unsigned int i;

	if (!uqs || !uqs->supported || !READ_ONCE(uqs->count))
		return;

	rcu_read_lock();
	for (i = 0; i < HPU_UQ_PER_ENGINE; i++) {
		struct hpu_uq *uq;
		LIST_HEAD(due);
		bool work;
		u32 status;

		uq = rcu_dereference(uqs->slot[engine * HPU_UQ_PER_ENGINE + i]);
		if (!uq)
			continue;
		spin_lock(&uq->lock);
		status = hpu_uq_update_locked(uq);
		/* ARM fired (or will not matter): arm for what is left. */
		uq->armed = 0;
		hpu_uq_collect_locked(uq, &due);
		hpu_uq_arm_locked(uq);
		work = hpu_uq_work_due_locked(uq, status);
		spin_unlock(&uq->lock);
		hpu_uq_signal(&due);
		if (work)
			queue_work(hdev->qm->wq, &uq->err_work);
	}
	rcu_read_unlock();
}

/**
 * hpu_uq_engine_hang() - the watchdog found a user stream hung
 * @hdev: the device
 * @engine: engine index
 * @stream: stream index (a user stream)
 *
 * Called from the event handler (atomic). The descriptor in flight is
 * guilty: the error work aborts it (-ETIMEDOUT), or, if the stream does
 * not stop, the soft reset it asks for skips it.
 */
void hpu_uq_engine_hang(struct hpu_device *hdev, unsigned int engine,
			unsigned int stream)
{
	struct hpu_uqs *uqs = hdev->uqs;
	struct hpu_uq *uq;

	if (!uqs || !uqs->supported || engine >= HPU_NUM_ENGINES ||
	    stream < HPU_QM_KSTREAMS || stream >= HPU_QM_ALL_STREAMS)
		return;
	rcu_read_lock();
	uq = rcu_dereference(uqs->slot[engine * HPU_UQ_PER_ENGINE +
				       stream - HPU_QM_KSTREAMS]);
	if (uq) {
		spin_lock(&uq->lock);
		uq->hung = true;
		spin_unlock(&uq->lock);
		queue_work(hdev->qm->wq, &uq->err_work);
	}
	rcu_read_unlock();
}

/* Program a stopped, idle stream from @uq and enable it at @start. */
static void hpu_uq_program(struct hpu_uq *uq, u64 start)
{
	lockdep_assert_held(&uq->hw_lock);
	hpu_uq_wr(uq, HPU_QS_RING_LO, lower_32_bits(uq->ring_va));
	hpu_uq_wr(uq, HPU_QS_RING_HI, upper_32_bits(uq->ring_va));
	hpu_uq_wr(uq, HPU_QS_RING_SIZE, uq->ring_size);
	hpu_uq_wr(uq, HPU_QS_CQ_LO, lower_32_bits(uq->cq_va));
	hpu_uq_wr(uq, HPU_QS_CQ_HI, upper_32_bits(uq->cq_va));
	hpu_uq_wr(uq, HPU_QS_CQ_SIZE, uq->cq_size);
	hpu_uq_wr(uq, HPU_QS_ASID, uq->asid);
	hpu_uq_wr(uq, HPU_QS_WB_LO, lower_32_bits(uq->wb_dma));
	hpu_uq_wr(uq, HPU_QS_WB_HI, upper_32_bits(uq->wb_dma));
	hpu_uq_wr(uq, HPU_QS_SIGNAL, uq->signal);
	hpu_uq_wr(uq, HPU_QS_TMO_MS, uq->timeout_ms);
	hpu_uq_wr(uq, HPU_QS_START_LO, lower_32_bits(start));
	hpu_uq_wr(uq, HPU_QS_START_HI, upper_32_bits(start));
	hpu_uq_wr(uq, HPU_QS_CTRL, HPU_QS_CTRL_ENABLE);
}

/*
 * Enable the stream again at @start after the driver stopped it (or a
 * soft reset paused it): the write-back record's engine time is kept,
 * the record cleared, and ARM written again for the pending points.
 * @uq->hw_lock held, @armable clear since the stop.
 */
static void hpu_uq_reenable(struct hpu_uq *uq, u64 start)
{
	unsigned long flags;

	lockdep_assert_held(&uq->hw_lock);
	uq->busy_base += le64_to_cpu(READ_ONCE(uq->wb->busy_ns));
	memset(uq->wb, 0, sizeof(*uq->wb));
	hpu_uq_program(uq, start);
	spin_lock_irqsave(&uq->lock, flags);
	uq->resumed = 0;
	uq->err_last = 0;
	uq->armed = 0;
	uq->armable = true;
	hpu_uq_arm_locked(uq);
	spin_unlock_irqrestore(&uq->lock, flags);
}

/*
 * Disable the stream (with ABORT: the descriptor in flight completes
 * ABORTED) and wait until it is idle, ARM writes held off meanwhile.
 * Return: 0, or -ETIMEDOUT if it did not stop (the device may still use
 * the queue's memory).
 */
static int hpu_uq_hw_stop(struct hpu_uq *uq, bool abort)
{
	unsigned long flags;
	u32 status;

	lockdep_assert_held(&uq->hw_lock);
	spin_lock_irqsave(&uq->lock, flags);
	uq->armable = false;
	uq->stopping = true;
	spin_unlock_irqrestore(&uq->lock, flags);
	hpu_uq_wr(uq, HPU_QS_CTRL, abort ? HPU_QS_CTRL_ABORT : 0);
	return hpu_poll32(uq->hdev, uq->base + HPU_QS_STATUS, status,
			  status == U32_MAX || (status & HPU_QS_STATUS_IDLE),
			  HPU_UQ_STOP_TIMEOUT_US);
}

/*
 * Remove the doorbell page from every process that mapped it. @live goes
 * first, then the write side of &hpu_uqs.db_sem waits for the faults that
 * saw it set to have inserted their page, which the unmap then removes:
 * a later fault maps the dummy page, never the doorbell. May sleep.
 */
static void hpu_uq_zap(struct hpu_uq *uq)
{
	struct hpu_uqs *uqs = uq->hdev->uqs;
	struct drm_device *drm = &uq->hdev->drm;
	unsigned long flags;

	spin_lock_irqsave(&uq->lock, flags);
	WRITE_ONCE(uq->live, false);
	spin_unlock_irqrestore(&uq->lock, flags);
	down_write(&uqs->db_sem);
	up_write(&uqs->db_sem);
	unmap_mapping_range(drm->anon_inode->i_mapping,
			    HPU_UQ_MMAP_BASE + (u64)uq->slot * PAGE_SIZE,
			    PAGE_SIZE, 1);
}

/*
 * Make the queue dead with @err: fail what it will not reach. The fences
 * go on @due, for the caller to signal (hpu_uq_signal()) once it holds
 * neither the reset lock nor @uq->hw_lock: resets take both inside their
 * fence-signalling critical section, so no fence is signalled under them
 * outside a reset.
 */
static void hpu_uq_kill(struct hpu_uq *uq, int err, struct list_head *due)
{
	unsigned long flags;

	spin_lock_irqsave(&uq->lock, flags);
	hpu_uq_update_locked(uq);
	WRITE_ONCE(uq->live, false);
	uq->armable = false;
	if (!uq->dead)
		uq->dead = err;
	hpu_uq_collect_locked(uq, due);
	spin_unlock_irqrestore(&uq->lock, flags);
}

/*
 * The queue dies with @err (a fault in its rings, a doorbell un-rung):
 * stream stopped (the descriptor it aborts fails @err too), every later
 * point failed (its fence on @due, hpu_uq_kill()). The caller zaps the
 * doorbell (hpu_uq_zap()) once it holds neither @uq->hw_lock nor the
 * reset lock: unmapping may wait for an MMU notifier, which may wait for
 * fences, which a reset may have to signal. Until then the process may
 * ring a stopped stream, which runs nothing. @uq->hw_lock held, device
 * present.
 */
static void hpu_uq_die(struct hpu_uq *uq, int err, const char *why,
		       struct list_head *due)
{
	struct hpu_device *hdev = uq->hdev;
	unsigned long flags;

	drm_dbg_driver(&hdev->drm, "user queue %u (asid %u): %s, the queue is dead\n",
		       uq->id, uq->asid, why);
	spin_lock_irqsave(&uq->lock, flags);
	WRITE_ONCE(uq->live, false);
	spin_unlock_irqrestore(&uq->lock, flags);
	if (hpu_uq_hw_stop(uq, true)) {
		/* Out of use until a reset: the device may still reach it. */
		uq->fpriv->vm_reachable = true;
		hpu_reset_schedule(hdev, HPU_RESET_SOFT, "user queue did not stop");
	} else {
		spin_lock_irqsave(&uq->lock, flags);
		hpu_uq_stop_failure_locked(uq, err, 0);
		spin_unlock_irqrestore(&uq->lock, flags);
	}
	uq->stopped = true;
	hpu_uq_kill(uq, err, due);
}

/*
 * Restart after a timeout or a hang: stop with ABORT (the descriptor in
 * flight completes ABORTED, counted: it fails -ETIMEDOUT) and enable again
 * where the stream stopped. A stream that does not stop (a hung DMA
 * engine) stays blamed (@hung) for the soft reset asked for here, which
 * skips the descriptor. The fences due go on @due (hpu_uq_kill()).
 * @uq->hw_lock held, device present.
 */
static void hpu_uq_restart(struct hpu_uq *uq, bool hung, struct list_head *due)
{
	struct hpu_device *hdev = uq->hdev;
	unsigned long flags;
	bool aborted;
	u64 done;

	if (hpu_uq_hw_stop(uq, true)) {
		drm_warn(&hdev->drm, "user queue %u (asid %u, %s.%u) did not stop after %s; soft reset\n",
			 uq->id, uq->asid, hpu_stream_engine_name(uq->engine),
			 uq->stream, hung ? "a hang" : "a timeout");
		spin_lock_irqsave(&uq->lock, flags);
		uq->hung = true;
		spin_unlock_irqrestore(&uq->lock, flags);
		hpu_reset_schedule(hdev, HPU_RESET_SOFT, "user queue did not stop");
		return;
	}
	spin_lock_irqsave(&uq->lock, flags);
	aborted = hpu_uq_stop_failure_locked(uq, -ETIMEDOUT, hung ?
					     DRM_HPU_ERROR_ENGINE_HANG :
					     DRM_HPU_ERROR_TIMEOUT);
	uq->hung = false;
	done = uq->done;
	hpu_uq_collect_locked(uq, due);
	spin_unlock_irqrestore(&uq->lock, flags);
	if (aborted)
		atomic64_inc(&hdev->reset->stats.job_timeouts);

	hpu_uq_reenable(uq, done);
	drm_dbg_driver(&hdev->drm, "user queue %u: %s, %s, restarted at %llu\n",
		       uq->id, hung ? "engine hang" : "timeout",
		       aborted ? "descriptor aborted" : "nothing in flight", done);
}

/* Tell the file about the failures logged since the last report. */
static void hpu_uq_notify(struct hpu_uq *uq)
{
	struct hpu_uq_failure batch[HPU_UQ_NOTIFY_BATCH];
	unsigned int i, n;
	unsigned long flags;

	do {
		spin_lock_irqsave(&uq->lock, flags);
		for (n = 0; n < HPU_UQ_NOTIFY_BATCH && uq->notified < uq->log_next;
		     uq->notified++)
			batch[n++] = uq->log[uq->notified % HPU_UQ_LOG];
		spin_unlock_irqrestore(&uq->lock, flags);
		for (i = 0; i < n; i++) {
			u32 kind = batch[i].kind;

			if (!kind)
				continue;
			/* The device's own event of the error names the job. */
			if (hpu_job_kind_has_detail(kind))
				hpu_notify_job_detail(uq->hdev, uq->asid, kind,
						      uq->engine, uq->id,
						      batch[i].point);
			hpu_notify_job_error(uq->fpriv, kind, uq->engine,
					     uq->id, batch[i].err,
					     batch[i].point, 0);
		}
	} while (n == HPU_UQ_NOTIFY_BATCH);
}

static void hpu_uq_err_work(struct work_struct *work)
{
	struct hpu_uq *uq = container_of(work, struct hpu_uq, err_work);
	struct hpu_device *hdev = uq->hdev;
	unsigned long flags;
	LIST_HEAD(due);
	bool hung, died = false;
	u32 status;
	int idx;

	if (!drm_dev_enter(&hdev->drm, &idx))
		return;
	hpu_reset_read_lock(hdev);
	mutex_lock(&uq->hw_lock);
	if (uq->stopped)
		goto out;

	spin_lock_irqsave(&uq->lock, flags);
	status = hpu_uq_update_locked(uq);
	hpu_uq_collect_locked(uq, &due);
	hung = uq->hung;
	spin_unlock_irqrestore(&uq->lock, flags);

	if (status & HPU_QS_STATUS_FAULT) {
		/* The device cannot reach the rings. */
		hpu_uq_die(uq, -EFAULT, "ring fault", &due);
		died = true;
	} else if ((status & HPU_QS_STATUS_TIMEOUT) || hung) {
		hpu_uq_restart(uq, hung, &due);
	} else if (status & HPU_QS_STATUS_ERROR) {
		/* The failure is logged: go on with the next descriptor. */
		spin_lock_irqsave(&uq->lock, flags);
		if (uq->resumed != uq->done) {
			uq->resumed = uq->done;
			hpu_uq_wr(uq, HPU_QS_CTRL, HPU_QS_CTRL_ENABLE |
				  HPU_QS_CTRL_RESUME);
		}
		spin_unlock_irqrestore(&uq->lock, flags);
	}
out:
	mutex_unlock(&uq->hw_lock);
	hpu_reset_read_unlock(hdev);
	drm_dev_exit(idx);
	hpu_uq_signal(&due);
	if (died)
		hpu_uq_zap(uq);
	hpu_uq_notify(uq);
}

/*
 * While points are waited for, check now and then that the doorbell was
 * not moved back below them: un-rung descriptors would never complete, nor
 * time out, and their fences must signal. A queue that does it dies.
 */
static void hpu_uq_watch_work(struct work_struct *work)
{
	struct hpu_uq *uq = container_of(to_delayed_work(work), struct hpu_uq,
					 watch);
	struct hpu_device *hdev = uq->hdev;
	struct hpu_uq_fence *last;
	unsigned long flags;
	bool again = false, retracted = false;
	LIST_HEAD(due);
	u64 submitted;
	int idx;

	if (!drm_dev_enter(&hdev->drm, &idx))
		return;
	hpu_reset_read_lock(hdev);
	mutex_lock(&uq->hw_lock);
	if (uq->stopped)
		goto out;
	spin_lock_irqsave(&uq->lock, flags);
	last = list_empty(&uq->fences) ? NULL :
	       list_last_entry(&uq->fences, struct hpu_uq_fence, link);
	if (last && !uq->dead) {
		retracted = hpu_uq_rung(uq, &submitted) &&
			    last->base.seqno > submitted;
		again = !retracted;
	}
	spin_unlock_irqrestore(&uq->lock, flags);
	if (retracted)
		hpu_uq_die(uq, -ECANCELED, "doorbell moved back below a waited point",
			   &due);
out:
	mutex_unlock(&uq->hw_lock);
	hpu_reset_read_unlock(hdev);
	drm_dev_exit(idx);
	hpu_uq_signal(&due);
	if (retracted)
		hpu_uq_zap(uq);
	if (again)
		queue_delayed_work(hdev->qm->wq, &uq->watch,
				   msecs_to_jiffies(HPU_UQ_WATCH_MS));
}

static void hpu_uq_release(struct kref *ref)
{
	struct hpu_uq *uq = container_of(ref, struct hpu_uq, ref);

	WARN_ON(!list_empty(&uq->fences));
	mutex_destroy(&uq->hw_lock);
	kfree(uq);
}

static void hpu_uq_put(struct hpu_uq *uq)
{
	kref_put(&uq->ref, hpu_uq_release);
}

static struct hpu_uq *hpu_uq_get(struct hpu_file_priv *fpriv, u32 id)
{
	struct hpu_uq *uq;

	xa_lock(&fpriv->uqs);
	uq = xa_load(&fpriv->uqs, id);
	if (uq)
		kref_get(&uq->ref);
	xa_unlock(&fpriv->uqs);
	return uq;
}

/*
 * Stop the queue for good and give its stream back: zap the doorbell,
 * disable with ABORT, take it off its slot, fail what it will not reach.
 * Called once the queue left its file's table. May sleep.
 */
static void hpu_uq_teardown(struct hpu_uq *uq)
{
	struct hpu_device *hdev = uq->hdev;
	struct hpu_uqs *uqs = hdev->uqs;
	unsigned long flags;
	bool stuck = false;
	LIST_HEAD(due);
	int idx;

	hpu_uq_zap(uq);
	if (drm_dev_enter(&hdev->drm, &idx)) {
		hpu_reset_read_lock(hdev);
		mutex_lock(&uq->hw_lock);
		if (!uq->stopped) {
			stuck = hpu_uq_hw_stop(uq, true) != 0;
			if (!stuck) {
				/* The descriptor aborted: the owner's doing. */
				spin_lock_irqsave(&uq->lock, flags);
				hpu_uq_stop_failure_locked(uq, -ECANCELED, 0);
				spin_unlock_irqrestore(&uq->lock, flags);
				hpu_uq_wr(uq, HPU_QS_WB_LO, 0);
				hpu_uq_wr(uq, HPU_QS_WB_HI, 0);
				uq->busy_base +=
					le64_to_cpu(READ_ONCE(uq->wb->busy_ns));
			}
			uq->stopped = true;
		}
		/* The file's engine time keeps what the queue used (fdinfo). */
		atomic64_add(uq->busy_base, &uq->fpriv->engine_ns[uq->engine]);
		uq->busy_base = 0;
		mutex_unlock(&uq->hw_lock);
		hpu_reset_read_unlock(hdev);
		drm_dev_exit(idx);
	} else {
		mutex_lock(&uq->hw_lock);
		/* Removal has not stopped it yet: it may still run. */
		if (!uq->stopped)
			stuck = true;
		uq->stopped = true;
		mutex_unlock(&uq->hw_lock);
	}
	hpu_uq_kill(uq, -ECANCELED, &due);
	hpu_uq_signal(&due);

	if (stuck) {
		/*
		 * The stream may still read the rings and write records: the
		 * file's address space stays out of use (quarantined), and
		 * UQ_CREATE takes no stream that is not idle, until a reset
		 * (Documentation/driver/reset.md).
		 */
		drm_err(&hdev->drm, "user queue %u (asid %u, %s.%u) did not stop\n",
			uq->id, uq->asid, hpu_stream_engine_name(uq->engine),
			uq->stream);
		uq->fpriv->vm_reachable = true;
		hpu_reset_schedule(hdev, HPU_RESET_SOFT, "user queue did not stop");
	}
	mutex_lock(&uqs->lock);
	RCU_INIT_POINTER(uqs->slot[uq->slot], NULL);
	uqs->count--;
	mutex_unlock(&uqs->lock);
	/* No interrupt handler or event sees the queue after this. */
	synchronize_rcu();
	cancel_work_sync(&uq->err_work);
	cancel_delayed_work_sync(&uq->watch);
	/* The failures the error work had not reported yet. */
	hpu_uq_notify(uq);
	hpu_uq_put(uq);
}

/**
 * hpu_uq_destroy() - QUEUE_DESTROY of a user queue
 * @fpriv: the file
 * @id: the queue id
 *
 * Return: 0; -ENOENT if @id is no user queue of the file (an id that a
 * UQ_CREATE still holds reserved is none yet).
 */
int hpu_uq_destroy(struct hpu_file_priv *fpriv, u32 id)
{
	struct hpu_uq *uq;

	xa_lock(&fpriv->uqs);
	uq = xa_load(&fpriv->uqs, id);
	if (uq)
		__xa_erase(&fpriv->uqs, id);
	xa_unlock(&fpriv->uqs);
	if (!uq)
		return -ENOENT;
	xa_erase(&fpriv->queues, id);
	atomic_dec(&fpriv->vm->user_queues);
	hpu_uq_teardown(uq);
	return 0;
}

/**
 * hpu_uqs_file_busy_ns() - engine time of a file's live user queues
 * @fpriv: the file
 * @engine: engine index
 *
 * For fdinfo, inside drm_dev_enter(). May sleep.
 *
 * Return: device ns the engine ran the descriptors of the file's user
 * queues on it (destroyed ones are in &hpu_file_priv.engine_ns).
 */
u64 hpu_uqs_file_busy_ns(struct hpu_file_priv *fpriv, unsigned int engine)
{
	struct hpu_device *hdev = fpriv->hdev;
	unsigned long id = 0;
	struct hpu_uq *uq;
	u64 ns = 0;

	for (;; id++) {
		u32 lo, hi;

		/* A reference under the xarray's lock: a destroy may race. */
		xa_lock(&fpriv->uqs);
		uq = xa_find(&fpriv->uqs, &id, ULONG_MAX, XA_PRESENT);
		if (uq)
			kref_get(&uq->ref);
		xa_unlock(&fpriv->uqs);
		if (!uq)
			break;
		if (uq->engine != engine) {
			hpu_uq_put(uq);
			continue;
		}
		hpu_reset_read_lock(hdev);
		mutex_lock(&uq->hw_lock);
		ns += uq->busy_base;
		if (!uq->stopped) {
			/* BUSY_NS_LO latches BUSY_NS_HI. */
			lo = hpu_uq_rd(uq, HPU_QS_BUSY_NS_LO);
			hi = hpu_uq_rd(uq, HPU_QS_BUSY_NS_HI);
			if (lo != U32_MAX || hi != U32_MAX)
				ns += (u64)hi << 32 | lo;
		}
		mutex_unlock(&uq->hw_lock);
		hpu_reset_read_unlock(hdev);
		hpu_uq_put(uq);
	}
	return ns;
}

/**
 * hpu_uqs_file_fini() - stop every user queue of a closing file
 * @fpriv: the file
 *
 * Runs in postclose before the kernel queues and the address space go.
 */
void hpu_uqs_file_fini(struct hpu_file_priv *fpriv)
{
	struct hpu_uq *uq;
	unsigned long id;

	xa_for_each(&fpriv->uqs, id, uq)
		hpu_uq_destroy(fpriv, id);
	xa_destroy(&fpriv->uqs);
}

/**
 * hpu_uqs_reset_prepare() - user queues before a reset
 * @hdev: the device; the caller holds &hpu_reset.sem for writing
 *
 * The reset pauses (soft) or clears (hard) every user stream: until
 * hpu_uqs_reset_finish() the interrupt handler leaves the records alone
 * (a failure completing during the pause is found by the finish) and
 * nothing writes ARM.
 */
void hpu_uqs_reset_prepare(struct hpu_device *hdev)
{
	struct hpu_uqs *uqs = hdev->uqs;
	unsigned int i;

	if (!uqs || !uqs->supported)
		return;
	lockdep_assert_held_write(&hdev->reset->sem);
	rcu_read_lock();
	for (i = 0; i < HPU_UQ_SLOTS; i++) {
		struct hpu_uq *uq = rcu_dereference(uqs->slot[i]);
		unsigned long flags;

		if (!uq)
			continue;
		spin_lock_irqsave(&uq->lock, flags);
		uq->armable = false;
		uq->stopping = true;
		spin_unlock_irqrestore(&uq->lock, flags);
	}
	rcu_read_unlock();
}

/**
 * hpu_uqs_reset_finish() - user queues after a reset
 * @hdev: the device; the caller holds &hpu_reset.sem for writing
 * @hard: a hard reset (or FLR): every user queue dies -ECANCELED
 * @dead: the device is unusable: every user queue dies -ENODEV
 *
 * After a soft reset, which paused every user stream (its write-back
 * record holds where), each live queue is programmed again and enabled
 * where it stopped, its sync object set back to its count (the reset
 * cleared it); a queue the watchdog blamed skips its descriptor in flight
 * (-ETIMEDOUT; it gets no completion record). No allocation: this is on
 * the fence-signalling path.
 */
void hpu_uqs_reset_finish(struct hpu_device *hdev, bool hard, bool dead)
{
	struct hpu_uqs *uqs = hdev->uqs;
	unsigned int i;

	if (!uqs || !uqs->supported)
		return;
	lockdep_assert_held_write(&hdev->reset->sem);

	rcu_read_lock();
	for (i = 0; i < HPU_UQ_SLOTS; i++) {
		struct hpu_uq *uq = rcu_dereference(uqs->slot[i]);
		unsigned long flags;
		LIST_HEAD(due);
		bool skipped = false, work;
		u64 start;

		if (!uq || !kref_get_unless_zero(&uq->ref))
			continue;
		rcu_read_unlock();

		mutex_lock(&uq->hw_lock);
		if (uq->stopped) {
			mutex_unlock(&uq->hw_lock);
			goto next;
		}
		if (hard || dead) {
			/*
			 * The stream is reset (or gone). Its doorbell stays
			 * mapped, harmless: the slot is the queue's until it
			 * is destroyed, which zaps it.
			 */
			uq->stopped = true;
			mutex_unlock(&uq->hw_lock);
			/* In the reset's fence-signalling section. */
			hpu_uq_kill(uq, dead ? -ENODEV : -ECANCELED, &due);
			hpu_uq_signal(&due);
			goto next;
		}

		spin_lock_irqsave(&uq->lock, flags);
		uq->armable = false;
		/* A failure that completed while the reset paused it. */
		hpu_uq_stop_failure_locked(uq, -ETIMEDOUT, DRM_HPU_ERROR_TIMEOUT);
		start = uq->done;
		if (uq->hung) {
			/* The guilty descriptor: skipped, as if it timed out. */
			start++;
			uq->done = start;
			hpu_uq_log_locked(uq, start, -ETIMEDOUT,
					  DRM_HPU_ERROR_ENGINE_HANG);
			uq->hung = false;
			skipped = true;
		}
		hpu_uq_collect_locked(uq, &due);
		work = uq->log_next > uq->notified;
		spin_unlock_irqrestore(&uq->lock, flags);
		hpu_uq_signal(&due);
		if (skipped)
			atomic64_inc(&hdev->reset->stats.job_timeouts);

		if (uq->signal & HPU_QS_SIGNAL_EN)
			hpu_wr32(hdev, HPU_REG_SOB(HPU_SOBS_PER_ASID * uq->asid +
						   (uq->signal & HPU_QS_SIGNAL_SOB_MASK)),
				 lower_32_bits(start));
		hpu_uq_reenable(uq, start);
		mutex_unlock(&uq->hw_lock);
		/* The error work tells the file (it may allocate). */
		if (work)
			queue_work(hdev->qm->wq, &uq->err_work);
next:
		hpu_uq_put(uq);
		rcu_read_lock();
	}
	rcu_read_unlock();
}

/* mmap of the doorbell pages */

/* Bus address of the doorbell page of @slot. */
static phys_addr_t hpu_uq_db_addr(const struct hpu_uqs *uqs, unsigned long slot)
{
	return uqs->db_phys +
	       HPU_UQDB_PAGE(slot / HPU_UQ_PER_ENGINE,
			     HPU_QM_KSTREAMS + slot % HPU_UQ_PER_ENGINE) -
	       HPU_UQDB_BASE;
}

/*
 * The mapping names its queue by generation (&hpu_uq.gen, in
 * vm_private_data): a fault maps the doorbell only while that very queue
 * holds the slot and is live, under &hpu_uqs.db_sem (read) so that a zap
 * cannot pass between the check and the insert; else the dummy page.
 */
static vm_fault_t hpu_uq_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct drm_file *file = vma->vm_file->private_data;
	struct hpu_device *hdev = to_hpu_device(file->minor->dev);
	struct hpu_uqs *uqs = hdev->uqs;
	unsigned long slot = vma->vm_pgoff - (HPU_UQ_MMAP_BASE >> PAGE_SHIFT);
	u64 gen = (uintptr_t)vma->vm_private_data;
	unsigned long pfn = page_to_pfn(uqs->dummy);
	struct hpu_uq *uq;
	vm_fault_t ret;
	int idx;

	down_read(&uqs->db_sem);
	if (drm_dev_enter(&hdev->drm, &idx)) {
		rcu_read_lock();
		uq = rcu_dereference(uqs->slot[slot]);
		if (uq && uq->gen == gen && READ_ONCE(uq->live))
			pfn = PHYS_PFN(hpu_uq_db_addr(uqs, slot));
		rcu_read_unlock();
		drm_dev_exit(idx);
	}
	ret = vmf_insert_pfn(vma, vmf->address, pfn);
	up_read(&uqs->db_sem);
	return ret;
}

static const struct vm_operations_struct hpu_uq_vm_ops = {
	.fault = hpu_uq_vm_fault,
};

/**
 * hpu_mmap() - &file_operations.mmap of the accel node
 * @filp: the file
 * @vma: the new mapping
 *
 * Offsets from HPU_UQ_MMAP_BASE name user queues' doorbell pages; every
 * other offset is a GEM object's (drm_gem_mmap()). A doorbell page is
 * mapped only by the file that owns the queue, exactly one page, shared,
 * never executable, not inherited over fork, not expandable.
 *
 * Return: 0; -EACCES for a doorbell of no live queue of this file;
 * -EINVAL for a wrong size or flags; -ENODEV once the device is gone.
 */
int hpu_mmap(struct file *filp, struct vm_area_struct *vma)
{
	unsigned long first = HPU_UQ_MMAP_BASE >> PAGE_SHIFT;
	struct drm_file *file = filp->private_data;
	struct hpu_file_priv *fpriv = file->driver_priv;
	struct hpu_device *hdev = fpriv->hdev;
	struct hpu_uqs *uqs = hdev->uqs;
	unsigned long slot;
	struct hpu_uq *uq;
	u64 gen = 0;
	int idx;

	if (vma->vm_pgoff < first || vma->vm_pgoff >= first + HPU_UQ_SLOTS)
		return drm_gem_mmap(filp, vma);
	if (!hpu_uqs_supported(hdev))
		return -EINVAL;
	if (vma_pages(vma) != 1 || !(vma->vm_flags & VM_SHARED) ||
	    (vma->vm_flags & VM_EXEC)) {
		drm_dbg_driver(&hdev->drm, "mmap: a doorbell is one shared, non-executable page\n");
		return -EINVAL;
	}
	slot = vma->vm_pgoff - first;

	if (!drm_dev_enter(&hdev->drm, &idx))
		return -ENODEV;
	rcu_read_lock();
	uq = rcu_dereference(uqs->slot[slot]);
	if (uq && uq->fpriv == fpriv && READ_ONCE(uq->live))
		gen = uq->gen;
	rcu_read_unlock();
	drm_dev_exit(idx);
	if (!gen) {
		drm_dbg_driver(&hdev->drm, "mmap: doorbell %lu is no user queue of this file\n",
			       slot);
		return -EACCES;
	}

	vm_flags_mod(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTCOPY |
		     VM_DONTDUMP, VM_MAYEXEC);
	vma->vm_page_prot = pgprot_noncached(vm_get_page_prot(vma->vm_flags));
	vma->vm_private_data = (void *)(uintptr_t)gen;
	vma->vm_ops = &hpu_uq_vm_ops;
	return 0;
}

/* Point fences */

static struct hpu_uq_fence *hpu_uq_fence_alloc(struct hpu_uq *uq, u64 point)
{
	struct hpu_uq_fence *f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);

	if (!f)
		return NULL;
	spin_lock_init(&f->lock);
	INIT_LIST_HEAD(&f->link);
	dma_fence_init(&f->base, &hpu_uq_fence_ops, &f->lock, uq->fence_ctx,
		       point);
	return f;
}

/*
 * The fence of @point: signalled already (with its outcome) when the
 * queue reached it or is dead, else the queue's pending fence of that
 * point, made if there is none. Checks @point against what the doorbell
 * announced (the counters are read only for that: the outcome of a point
 * is known once the write-back record reports it). Inside drm_dev_enter()
 * and the reset lock (read), so it allocates nothing: @nf, from
 * hpu_uq_fence_alloc() before the lock (a reset is a fence signalling
 * path, which must not wait for reclaim), is used or put; nor does it
 * signal (resets take that lock inside their fence-signalling section):
 * a fence settled here, @nf included, goes on @due, for the caller to
 * signal once the lock is dropped (hpu_uq_signal()).
 */
static struct dma_fence *hpu_uq_point_fence(struct hpu_uq *uq, u64 point,
					    struct hpu_uq_fence *nf,
					    const char *op,
					    struct list_head *due)
{
	struct hpu_device *hdev = uq->hdev;
	struct hpu_uq_fence *f, *pos;
	unsigned long flags;
	u64 submitted;
	int err;

	spin_lock_irqsave(&uq->lock, flags);
	if (point > uq->done && !uq->dead && uq->wb) {
		if (hpu_uq_rung(uq, &submitted) && point > submitted) {
			spin_unlock_irqrestore(&uq->lock, flags);
			dma_fence_put(&nf->base);
			drm_dbg_driver(&hdev->drm, "%s: point %llu beyond the %llu rung\n",
				       op, point, submitted);
			return ERR_PTR(-EINVAL);
		}
	}
	if (point <= uq->done || uq->dead) {
		err = point <= uq->done ? hpu_uq_outcome_locked(uq, point) :
					  uq->dead;
		hpu_uq_collect_locked(uq, due);
		spin_unlock_irqrestore(&uq->lock, flags);
		if (err)
			dma_fence_set_error(&nf->base, err);
		/* @due's reference: the caller's stays. */
		dma_fence_get(&nf->base);
		list_add_tail(&nf->link, due);
		return &nf->base;
	}

	/* Pending: one fence per point, the list sorted by point. */
	list_for_each_entry(pos, &uq->fences, link) {
		if (pos->base.seqno == point) {
			f = pos;
			dma_fence_get(&f->base);
			spin_unlock_irqrestore(&uq->lock, flags);
			dma_fence_put(&nf->base);
			return &f->base;
		}
		if (pos->base.seqno > point)
			break;
	}
	nf->uq = uq;
	/* The list's reference, dropped when it is signalled. */
	dma_fence_get(&nf->base);
	list_add_tail(&nf->link, &pos->link);
	/*
	 * Under the lock: a teardown kills the queue under it before it
	 * cancels the work, so the work is never queued after the cancel
	 * (the queue would be freed under it).
	 */
	queue_delayed_work(hdev->qm->wq, &uq->watch,
			   msecs_to_jiffies(HPU_UQ_WATCH_MS));
	spin_unlock_irqrestore(&uq->lock, flags);
	return &nf->base;
}

/**
 * hpu_uq_create_ioctl() - DRM_IOCTL_HPU_UQ_CREATE
 * @drm: the DRM device
 * @data: the &struct drm_hpu_uq_create
 * @file: the DRM file
 *
 * Return: 0, or the errors documented on &struct drm_hpu_uq_create.
 */
int hpu_uq_create_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file)
{
	struct hpu_device *hdev = to_hpu_device(drm);
	struct hpu_file_priv *fpriv = file->driver_priv;
	struct drm_hpu_uq_create *args = data;
	struct hpu_uqs *uqs = hdev->uqs;
	struct hpu_vm *vm = fpriv->vm;
	struct hpu_engine *engine;
	u32 id, tmo, user_max, status;
	struct hpu_uq *uq;
	int idx, i, slot = -1, ret;

	if (!hpu_uqs_supported(hdev))
		return -EOPNOTSUPP;
	if (args->flags & ~DRM_HPU_UQ_SIGNAL) {
		drm_dbg_driver(drm, "UQ_CREATE: unknown flags 0x%x\n", args->flags);
		return -EINVAL;
	}
	if (args->signal_sob >= HPU_SOBS_PER_ASID ||
	    (args->signal_sob && !(args->flags & DRM_HPU_UQ_SIGNAL))) {
		drm_dbg_driver(drm, "UQ_CREATE: signal_sob %u without SIGNAL or above %u\n",
			       args->signal_sob, HPU_SOBS_PER_ASID - 1);
		return -EINVAL;
	}
	if (args->pad || args->reserved[0] || args->reserved[1]) {
		drm_dbg_driver(drm, "UQ_CREATE: pad and reserved must be zero\n");
		return -EINVAL;
	}
	if (args->engine_class >= HPU_ENGINE_CLASSES) {
		drm_dbg_driver(drm, "UQ_CREATE: unknown engine class %u\n",
			       args->engine_class);
		return -EINVAL;
	}
	engine = hpu_stream_engine(hdev->qm, args->engine_class, args->engine);
	if (!engine) {
		drm_dbg_driver(drm, "UQ_CREATE: engine %u of class %u out of range\n",
			       args->engine, args->engine_class);
		return -EINVAL;
	}
	if (!is_power_of_2(args->ring_size) || args->ring_size < HPU_QS_RING_MIN ||
	    args->ring_size > HPU_QS_RING_MAX) {
		drm_dbg_driver(drm, "UQ_CREATE: ring_size %u is no power of two from %u to %u\n",
			       args->ring_size, HPU_QS_RING_MIN, HPU_QS_RING_MAX);
		return -EINVAL;
	}
	if (!is_power_of_2(args->cq_size) || args->cq_size < args->ring_size ||
	    args->cq_size > HPU_QS_RING_MAX) {
		drm_dbg_driver(drm, "UQ_CREATE: cq_size %u not a power of two %u to %u\n",
			       args->cq_size, args->ring_size, HPU_QS_RING_MAX);
		return -EINVAL;
	}
	if (!args->ring_va || (args->ring_va & 63) || !args->cq_va ||
	    (args->cq_va & (HPU_UCQE_SIZE - 1))) {
		drm_dbg_driver(drm, "UQ_CREATE: ring_va 0x%llx or cq_va 0x%llx unaligned\n",
			       args->ring_va, args->cq_va);
		return -EINVAL;
	}
	user_max = READ_ONCE(hdev->limits->user_timeout_ms);
	if (args->timeout_ms > HPU_JOB_TIMEOUT_MAX_MS ||
	    (args->timeout_ms > user_max && !capable(CAP_SYS_ADMIN))) {
		drm_dbg_driver(drm, "UQ_CREATE: timeout_ms %u above the limit\n",
			       args->timeout_ms);
		return -EINVAL;
	}
	tmo = args->timeout_ms ? args->timeout_ms : hdev->qm->timeout_ms;
	if (!hpu_vm_range_mapped(vm, args->ring_va,
				 (u64)args->ring_size * HPU_DESC_SIZE, false)) {
		drm_dbg_driver(drm, "UQ_CREATE: ring 0x%llx is not mapped\n",
			       args->ring_va);
		return -EFAULT;
	}
	if (!hpu_vm_range_mapped(vm, args->cq_va,
				 (u64)args->cq_size * HPU_UCQE_SIZE, true)) {
		drm_dbg_driver(drm, "UQ_CREATE: completion ring 0x%llx is not mapped writable\n",
			       args->cq_va);
		return -EFAULT;
	}

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	ret = -ENOSPC;
	if (atomic_inc_return(&vm->user_queues) >
	    READ_ONCE(hdev->limits->ctx_user_queues)) {
		drm_dbg_driver(drm, "UQ_CREATE: the file has its limit of %u user queues\n",
			       READ_ONCE(hdev->limits->ctx_user_queues));
		goto err_uqs;
	}

	uq = kzalloc(sizeof(*uq), GFP_KERNEL_ACCOUNT);
	if (!uq) {
		ret = -ENOMEM;
		goto err_uqs;
	}
	kref_init(&uq->ref);
	mutex_init(&uq->hw_lock);
	spin_lock_init(&uq->lock);
	INIT_LIST_HEAD(&uq->fences);
	INIT_WORK(&uq->err_work, hpu_uq_err_work);
	INIT_DELAYED_WORK(&uq->watch, hpu_uq_watch_work);
	uq->hdev = hdev;
	uq->fpriv = fpriv;
	uq->engine = engine->index;
	uq->asid = vm->asid;
	uq->ring_va = args->ring_va;
	uq->cq_va = args->cq_va;
	uq->ring_size = args->ring_size;
	uq->cq_size = args->cq_size;
	uq->signal = args->flags & DRM_HPU_UQ_SIGNAL ?
		     HPU_QS_SIGNAL_EN | args->signal_sob : 0;
	uq->timeout_ms = tmo;
	uq->fence_ctx = dma_fence_context_alloc(1);

	/*
	 * The id, from the file's queue ids (a reserved, NULL entry there),
	 * above those of kernel queues: a user queue takes no kernel queue's
	 * place.
	 */
	ret = xa_alloc(&fpriv->queues, &id, NULL,
		       XA_LIMIT(HPU_MAX_QUEUES + 1, 2 * HPU_MAX_QUEUES), GFP_KERNEL);
	if (ret) {
		if (ret == -EBUSY)
			ret = -ENOSPC;
		goto err_free;
	}
	ret = xa_reserve(&fpriv->uqs, id, GFP_KERNEL);
	if (ret)
		goto err_id;
	uq->id = id;

	hpu_reset_read_lock(hdev);
	mutex_lock(&uqs->lock);
	if (uqs->gone) {
		mutex_unlock(&uqs->lock);
		hpu_reset_read_unlock(hdev);
		ret = -ENODEV;
		goto err_reserve;
	}
	for (i = 0; i < HPU_UQ_PER_ENGINE; i++) {
		unsigned int n = engine->index * HPU_UQ_PER_ENGINE + i;

		if (rcu_access_pointer(uqs->slot[n]))
			continue;
		status = hpu_rd32(hdev, HPU_REG_QM_STREAM(engine->index,
							  HPU_QM_KSTREAMS + i) +
				  HPU_QS_STATUS);
		/* A stream that did not stop waits for a reset. */
		if (status == U32_MAX || !(status & HPU_QS_STATUS_IDLE))
			continue;
		slot = n;
		break;
	}
	if (slot < 0) {
		mutex_unlock(&uqs->lock);
		hpu_reset_read_unlock(hdev);
		drm_dbg_driver(drm, "UQ_CREATE: every user stream of engine %s is taken\n",
			       hpu_stream_engine_name(engine->index));
		ret = -EBUSY;
		goto err_reserve;
	}
	uq->slot = slot;
	uq->stream = HPU_QM_KSTREAMS + slot % HPU_UQ_PER_ENGINE;
	uq->base = HPU_REG_QM_STREAM(uq->engine, uq->stream);
	uq->wb = &uqs->wb[slot];
	uq->wb_dma = uqs->wb_dma + slot * sizeof(struct hpu_wb);
	memset(uq->wb, 0, sizeof(*uq->wb));

	uq->gen = atomic64_inc_return(&uqs->gen);

	mutex_lock(&uq->hw_lock);
	/* A doorbell of the slot's last owner must not start this queue. */
	hpu_uq_wr(uq, HPU_QS_PI, 0);
	hpu_uq_program(uq, 0);
	uq->live = true;
	uq->armable = true;
	mutex_unlock(&uq->hw_lock);
	rcu_assign_pointer(uqs->slot[slot], uq);
	uqs->count++;
	mutex_unlock(&uqs->lock);
	hpu_reset_read_unlock(hdev);

	/* Visible to the file last: a reserved entry needs no memory. */
	WARN_ON(xa_is_err(xa_store(&fpriv->uqs, id, uq, GFP_KERNEL)));

	args->queue_id = id;
	args->db_mmap_offset = HPU_UQ_MMAP_BASE + (u64)slot * PAGE_SIZE;
	args->asid = uq->asid;
	drm_dbg_driver(drm, "UQ_CREATE: user queue %u on %s.%u, ring 0x%llx x %u\n",
		       id, hpu_stream_engine_name(uq->engine), uq->stream,
		       uq->ring_va, uq->ring_size);
	drm_dev_exit(idx);
	return 0;

err_reserve:
	xa_release(&fpriv->uqs, id);
err_id:
	xa_erase(&fpriv->queues, id);
err_free:
	mutex_destroy(&uq->hw_lock);
	kfree(uq);
err_uqs:
	atomic_dec(&vm->user_queues);
	drm_dev_exit(idx);
	return ret;
}

/*
 * The fence of @point of the file's user queue @id (hpu_uq_point_fence()),
 * for UQ_WAIT and UQ_FENCE (@op names the call in the debug log), with a
 * reference to the queue in *@out_uq. Return: the fence or an ERR_PTR.
 */
static struct dma_fence *hpu_uq_ioctl_fence(struct drm_device *drm,
					    struct hpu_file_priv *fpriv, u32 id,
					    u64 point, const char *op,
					    struct hpu_uq **out_uq)
{
	struct hpu_uq_fence *nf;
	struct dma_fence *fence;
	struct hpu_uq *uq;
	LIST_HEAD(due);
	int idx;

	uq = hpu_uq_get(fpriv, id);
	if (!uq) {
		drm_dbg_driver(drm, "%s: no user queue %u\n", op, id);
		return ERR_PTR(-ENOENT);
	}
	nf = hpu_uq_fence_alloc(uq, point);
	if (!nf) {
		hpu_uq_put(uq);
		return ERR_PTR(-ENOMEM);
	}
	if (!drm_dev_enter(drm, &idx)) {
		dma_fence_put(&nf->base);
		hpu_uq_put(uq);
		return ERR_PTR(-ENODEV);
	}
	hpu_reset_read_lock(uq->hdev);
	fence = hpu_uq_point_fence(uq, point, nf, op, &due);
	hpu_reset_read_unlock(uq->hdev);
	drm_dev_exit(idx);
	hpu_uq_signal(&due);
	if (IS_ERR(fence))
		hpu_uq_put(uq);
	else
		*out_uq = uq;
	return fence;
}

/*
 * Wait for @fence until the absolute CLOCK_MONOTONIC @deadline_ns (0: do not
 * wait). A deadline becomes a count of jiffies from the current jiffies
 * value, which can lag the clock by a tick or more (a tick handled late):
 * a wait that timed out before the deadline waits again, so that -ETIME
 * always means the deadline has passed.
 *
 * Return: 0 once @fence signalled, -ETIME, or -ERESTARTSYS on a signal.
 */
static int hpu_uq_wait_deadline(struct dma_fence *fence, s64 deadline_ns)
{
	signed long left;

	while (deadline_ns && !dma_fence_is_signaled(fence)) {
		left = drm_timeout_abs_to_jiffies(deadline_ns);
		if (!left)
			break;
		left = dma_fence_wait_timeout(fence, true, left);
		if (left < 0)
			return left;
	}
	return dma_fence_is_signaled(fence) ? 0 : -ETIME;
}

/**
 * hpu_uq_wait_ioctl() - DRM_IOCTL_HPU_UQ_WAIT
 * @drm: the DRM device
 * @data: the &struct drm_hpu_uq_wait
 * @file: the DRM file
 *
 * Return: 0, or the errors documented on &struct drm_hpu_uq_wait.
 */
int hpu_uq_wait_ioctl(struct drm_device *drm, void *data,
		      struct drm_file *file)
{
	struct hpu_file_priv *fpriv = file->driver_priv;
	struct drm_hpu_uq_wait *args = data;
	struct hpu_uq *uq = NULL;
	struct dma_fence *fence;
	unsigned long flags;
	int ret;

	if (args->flags || args->pad || !args->point) {
		drm_dbg_driver(drm, "UQ_WAIT: flags and pad must be zero, point not 0\n");
		return -EINVAL;
	}
	fence = hpu_uq_ioctl_fence(drm, fpriv, args->queue_id, args->point,
				   "UQ_WAIT", &uq);
	if (IS_ERR(fence))
		return PTR_ERR(fence);

	ret = hpu_uq_wait_deadline(fence, args->timeout_nsec);
	args->status = dma_fence_is_signaled(fence) ? fence->error : 0;
	spin_lock_irqsave(&uq->lock, flags);
	args->done = uq->done;
	spin_unlock_irqrestore(&uq->lock, flags);
	dma_fence_put(fence);
	hpu_uq_put(uq);
	return ret;
}

/**
 * hpu_uq_fence_ioctl() - DRM_IOCTL_HPU_UQ_FENCE
 * @drm: the DRM device
 * @data: the &struct drm_hpu_uq_fence
 * @file: the DRM file
 *
 * Return: 0, or the errors documented on &struct drm_hpu_uq_fence.
 */
int hpu_uq_fence_ioctl(struct drm_device *drm, void *data,
		       struct drm_file *file)
{
	struct hpu_file_priv *fpriv = file->driver_priv;
	struct drm_hpu_uq_fence *args = data;
	struct dma_fence_chain *chain = NULL;
	struct drm_syncobj *syncobj;
	struct hpu_uq *uq = NULL;
	struct dma_fence *fence;
	int ret = 0;

	if (args->flags || args->pad || !args->point) {
		drm_dbg_driver(drm, "UQ_FENCE: flags and pad must be zero, point not 0\n");
		return -EINVAL;
	}
	syncobj = drm_syncobj_find(file, args->handle);
	if (!syncobj) {
		drm_dbg_driver(drm, "UQ_FENCE: no syncobj %u\n", args->handle);
		return -ENOENT;
	}
	if (args->syncobj_point) {
		chain = dma_fence_chain_alloc();
		if (!chain) {
			ret = -ENOMEM;
			goto out_syncobj;
		}
	}
	fence = hpu_uq_ioctl_fence(drm, fpriv, args->queue_id, args->point,
				   "UQ_FENCE", &uq);
	if (IS_ERR(fence)) {
		ret = PTR_ERR(fence);
		goto out_chain;
	}
	if (chain) {
		drm_syncobj_add_point(syncobj, chain, fence, args->syncobj_point);
		chain = NULL;
	} else {
		drm_syncobj_replace_fence(syncobj, fence);
	}
	dma_fence_put(fence);
	hpu_uq_put(uq);
out_chain:
	dma_fence_chain_free(chain);
out_syncobj:
	drm_syncobj_put(syncobj);
	return ret;
}

/**
 * hpu_uq_info() - the answer to DRM_HPU_INFO_USER_QUEUES
 * @hdev: the device, inside drm_dev_enter()
 * @fpriv: the asking file
 * @out: the &struct drm_hpu_info_uq to fill
 */
void hpu_uq_info(struct hpu_device *hdev, struct hpu_file_priv *fpriv,
		 struct drm_hpu_info_uq *out)
{
	u64 mono, dev;
	u32 lo, hi;

	out->per_engine = HPU_UQ_PER_ENGINE;
	out->ctx_max = READ_ONCE(hdev->limits->ctx_user_queues);
	out->ring_max = HPU_QS_RING_MAX;
	out->cqe_size = HPU_UCQE_SIZE;
	/* DEVICE_TIME_LO latches HI; the clock between the two reads. */
	mono = ktime_get_ns();
	lo = hpu_rd32(hdev, HPU_REG_DEVICE_TIME_LO);
	hi = hpu_rd32(hdev, HPU_REG_DEVICE_TIME_HI);
	mono = (mono + ktime_get_ns()) / 2;
	dev = (u64)hi << 32 | lo;
	out->time_offset_ns = (s64)(mono - dev);
}

static void hpu_uqs_release(struct drm_device *drm, void *arg)
{
	struct hpu_uqs *uqs = arg;

	if (uqs->dummy)
		__free_page(uqs->dummy);
}

/**
 * hpu_uqs_init() - set up the user streams of a device at probe
 * @hdev: the device, its queue managers set up
 *
 * Return: 0 or -ENOMEM.
 */
int hpu_uqs_init(struct hpu_device *hdev)
{
	struct device *dev = hdev->drm.dev;
	struct hpu_uqs *uqs;
	int ret;

	uqs = drmm_kzalloc(&hdev->drm, sizeof(*uqs), GFP_KERNEL);
	if (!uqs)
		return -ENOMEM;
	uqs->hdev = hdev;
	/* On failure the mutex is destroyed at once: uqs stays unpublished. */
	ret = drmm_mutex_init(&hdev->drm, &uqs->lock);
	if (ret)
		return ret;
	init_rwsem(&uqs->db_sem);
	hdev->uqs = uqs;
	if (hdev->id.spec_version < HPU_SPEC_VERSION_UQ || PAGE_SIZE != SZ_4K ||
	    pci_resource_len(hdev->pdev, 0) < HPU_UQDB_BASE + HPU_UQDB_PAGES * HPU_UQDB_PAGE_SIZE)
		return 0;

	uqs->wb = dmam_alloc_coherent(dev, HPU_UQ_SLOTS * sizeof(struct hpu_wb),
				      &uqs->wb_dma, GFP_KERNEL);
	if (!uqs->wb)
		return -ENOMEM;
	uqs->dummy = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!uqs->dummy)
		return -ENOMEM;
	uqs->db_phys = pci_resource_start(hdev->pdev, 0) + HPU_UQDB_BASE;
	ret = drmm_add_action_or_reset(&hdev->drm, hpu_uqs_release, uqs);
	if (ret)
		return ret;	/* the page is freed, the streams unused */
	uqs->supported = true;
	return 0;
}

/**
 * hpu_uqs_fini() - stop every user queue when the device goes away
 * @hdev: the device, being removed (before drm_dev_unplug(): ioctls may
 *	still run, and UQ_CREATE is refused from here on)
 *
 * Stops the streams, fails every wait -ENODEV and zaps every doorbell
 * (the BAR may be handed to another device). Files may stay open; their
 * queues are freed when they close.
 */
void hpu_uqs_fini(struct hpu_device *hdev)
{
	struct hpu_uqs *uqs = hdev->uqs;
	unsigned int i;
	LIST_HEAD(due);

	if (!uqs || !uqs->supported)
		return;
	mutex_lock(&uqs->lock);
	/* Ioctls may still run: no queue is made from now on. */
	uqs->gone = true;
	for (i = 0; i < HPU_UQ_SLOTS; i++) {
		struct hpu_uq *uq = rcu_dereference_protected(uqs->slot[i],
							      lockdep_is_held(&uqs->lock));
		unsigned long flags;

		if (!uq)
			continue;
		mutex_lock(&uq->hw_lock);
		if (!uq->stopped)
			hpu_uq_hw_stop(uq, true);
		uq->stopped = true;
		hpu_uq_kill(uq, -ENODEV, &due);
		/* The records are freed with the device's DMA memory. */
		spin_lock_irqsave(&uq->lock, flags);
		uq->wb = NULL;
		spin_unlock_irqrestore(&uq->lock, flags);
		mutex_unlock(&uq->hw_lock);
	}
	mutex_unlock(&uqs->lock);
	/*
	 * Every doorbell, outside the locks (unmapping may wait for fences,
	 * hpu_uq_die()): every queue's @live is clear (hpu_uq_kill()), so
	 * once the faults that saw it set are done, the unmap removes every
	 * doorbell page and later faults map the dummy page.
	 */
	down_write(&uqs->db_sem);
	up_write(&uqs->db_sem);
	unmap_mapping_range(hdev->drm.anon_inode->i_mapping, HPU_UQ_MMAP_BASE,
			    (u64)HPU_UQ_SLOTS * PAGE_SIZE, 1);
	hpu_uq_signal(&due);
}
