// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: hardware streams of the queue managers: rings, doorbells, job
 * timeouts, restarts, the compute engines' hang recovery, halting at reset
 * and removal, the probe self-test.
 *
 * Every stream of every engine (the DMA engines and, from spec version 6,
 * the TPC engine and the MMEs) has a descriptor ring and a completion ring
 * in coherent host memory and one drm_gpu_scheduler; a job is one
 * descriptor. The per-file queues that feed the streams are in
 * hpu_queue.c. Documentation/driver/submission.md has the whole picture.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/bitfield.h>
#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "hpu_accel.h"
#include "hpu_drv.h"
#include "hpu_irq.h"
#include "hpu_job.h"
#include "hpu_kunit.h"
#include "hpu_stream.h"
#include "hpu_uq.h"
#include "hpu_reg.h"
#include "hpu_reset.h"

static unsigned int hpu_job_timeout_ms = 10000;
module_param_named(job_timeout_ms, hpu_job_timeout_ms, uint, 0444);
MODULE_PARM_DESC(job_timeout_ms,
		 "Default time a job may run before it is stopped and failed with -ETIMEDOUT, in ms (1 to 3600000), read at probe (default 10000); a submission may ask for another");

static unsigned int hpu_irq_coalesce_count = 16;
module_param_named(irq_coalesce_count, hpu_irq_coalesce_count, uint, 0444);
MODULE_PARM_DESC(irq_coalesce_count,
		 "Completion records a busy stream gathers before it interrupts (spec version 9 devices; 0 or 1: one interrupt per record; at most 255), read at probe (default 16)");

static unsigned int hpu_irq_coalesce_us = 20;
module_param_named(irq_coalesce_us, hpu_irq_coalesce_us, uint, 0444);
MODULE_PARM_DESC(irq_coalesce_us,
		 "Longest a completion record of a busy stream waits for its interrupt, in us (spec version 9 devices; at most 65535; 0: one interrupt per record), read at probe (default 20)");

/* How long a stopped stream may take to finish its packet. */
#define HPU_STREAM_STOP_TIMEOUT_US	(1000 * USEC_PER_MSEC)
/* How long the probe self-test waits for its jobs. */
#define HPU_SELF_TEST_TIMEOUT_MS	5000
/* How long device release waits for the last jobs to be freed. */
#define HPU_JOBS_DRAIN_TIMEOUT_MS	10000

static inline u32 hpu_stream_rd(struct hpu_stream *stream, u32 reg)
{
	return hpu_rd32(stream->hdev, stream->base + reg);
}

static inline void hpu_stream_wr(struct hpu_stream *stream, u32 reg, u32 val)
{
	hpu_wr32(stream->hdev, stream->base + reg, val);
}

/* Write @job's descriptor at the producer index. Caller holds the lock. */
VISIBLE_IF_KUNIT void hpu_stream_put_desc(struct hpu_stream *stream,
					  struct hpu_job *job)
{
	struct hpu_desc *desc;

	lockdep_assert_held(&stream->lock);

	job->slot = stream->pi % HPU_STREAM_ENTRIES;
	desc = &stream->ring[job->slot];

	desc->cb_addr = cpu_to_le64(job->cb_addr);
	desc->cb_size = cpu_to_le32(job->cb_size);
	desc->asid = cpu_to_le16(job->asid);
	desc->flags = 0;
	desc->seq = cpu_to_le64(job->seq);
	desc->reserved = 0;
	stream->pi++;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_stream_put_desc);

/**
 * hpu_stream_irq_mod() - IRQ_MOD for the interrupt moderation parameters
 * @count: completion records per interrupt (irq_coalesce_count)
 * @us: longest wait of a record for its interrupt, in us (irq_coalesce_us)
 *
 * Values beyond the register's fields are clamped (255 records, 65535
 * us). No moderation when @count is 0 or 1, or when @us is 0: a record
 * held back without a time bound could wait for ever behind a descriptor
 * of its stream blocked in WAIT for work that waits for that record.
 *
 * Return: the IRQ_MOD value, 0 for one interrupt per record.
 */
VISIBLE_IF_KUNIT u32 hpu_stream_irq_mod(unsigned int count, unsigned int us)
{
	count = min_t(unsigned int, count,
		      FIELD_MAX(HPU_QS_IRQ_MOD_COUNT_MASK));
	us = min_t(unsigned int, us, FIELD_MAX(HPU_QS_IRQ_MOD_DELAY_MASK));
	if (count <= 1 || !us)
		return 0;
	return FIELD_PREP(HPU_QS_IRQ_MOD_COUNT_MASK, count) |
	       FIELD_PREP(HPU_QS_IRQ_MOD_DELAY_MASK, us);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_stream_irq_mod);

/*
 * Program the rings and enable the stream, with the completion interrupt;
 * from spec version 9 also the write-back record and the moderation. The
 * device resets PI, CI and CQ_PI to 0 on enable. The stream is disabled
 * and idle. Caller holds the lock, or is the only user (probe).
 */
VISIBLE_IF_KUNIT int hpu_stream_hw_enable(struct hpu_stream *stream)
{
	hpu_stream_wr(stream, HPU_QS_CTRL, 0);
	hpu_stream_wr(stream, HPU_QS_RING_LO, lower_32_bits(stream->ring_dma));
	hpu_stream_wr(stream, HPU_QS_RING_HI, upper_32_bits(stream->ring_dma));
	hpu_stream_wr(stream, HPU_QS_RING_SIZE, HPU_STREAM_ENTRIES);
	hpu_stream_wr(stream, HPU_QS_CQ_LO, lower_32_bits(stream->cq_dma));
	hpu_stream_wr(stream, HPU_QS_CQ_HI, upper_32_bits(stream->cq_dma));
	hpu_stream_wr(stream, HPU_QS_CQ_SIZE, HPU_STREAM_ENTRIES);
	if (stream->wb) {
		/*
		 * The record holds the counts of before the enable, and the
		 * device writes it again only at its first notification:
		 * zero it so that cq_pi matches CQ_PI from 0. Idle means no
		 * write of it is due or under way; writel() orders the
		 * zeroes before the enable.
		 */
		memset(stream->wb, 0, sizeof(*stream->wb));
		hpu_stream_wr(stream, HPU_QS_WB_LO, lower_32_bits(stream->wb_dma));
		hpu_stream_wr(stream, HPU_QS_WB_HI, upper_32_bits(stream->wb_dma));
		/* Soft and hard resets clear it: set at every enable. */
		hpu_stream_wr(stream, HPU_QS_IRQ_MOD, stream->hdev->qm->irq_mod);
	}
	hpu_stream_wr(stream, HPU_QS_CTRL, HPU_QS_CTRL_ENABLE | HPU_QS_CTRL_IRQ_EN);
	stream->pi = 0;
	stream->cq_ci = 0;

	if (hpu_stream_rd(stream, HPU_QS_STATUS) & HPU_QS_STATUS_HALTED)
		return -EIO;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_stream_hw_enable);

/*
 * Arm the timeout work for the job at the head of the inflight list: the
 * one the stream executes, since a stream completes its descriptors in
 * order. Its deadline starts when it becomes the head. Caller holds the
 * lock; callable from interrupt context.
 */
static void hpu_stream_arm_tdr(struct hpu_stream *stream)
{
	struct hpu_job *head;
	unsigned long now = jiffies;

	lockdep_assert_held(&stream->lock);

	head = list_first_entry_or_null(&stream->inflight, struct hpu_job, link);
	if (!head || !stream->enabled || stream->stopped) {
		stream->tdr_seq = 0;
		return;
	}
	if (head->seq == stream->tdr_seq)
		return;

	if (!head->deadline_set) {
		head->deadline = now + head->timeout;
		head->deadline_set = true;
		/* The job starts executing: its file's engine time runs. */
		head->start_ns = ktime_get_ns();
	}
	stream->tdr_seq = head->seq;
	mod_delayed_work(stream->hdev->qm->tdr_wq, &stream->tdr,
			 time_after(head->deadline, now) ? head->deadline - now : 0);
}

/**
 * hpu_stream_cq_new() - completion records there are to consume
 * @cq_pi: completion records the device has written: CQ_PI, or the cq_pi
 *	of the write-back record
 * @cq_ci: completion records the driver has consumed
 * @from_wb: @cq_pi is the write-back record's
 *
 * The write-back record may be behind @cq_ci: a recovery that read CQ_PI
 * consumed records the device had not announced yet (moderation holds
 * them back) or whose record it was still writing. CQ_PI itself is never
 * behind, and reads all ones when the device is gone.
 *
 * Return: the number of records from @cq_ci to @cq_pi, 0 to
 * HPU_STREAM_ENTRIES (0 for a record behind @cq_ci); -ENODEV if CQ_PI
 * reads all ones; -ERANGE if @cq_pi is more than a ring away.
 */
VISIBLE_IF_KUNIT int hpu_stream_cq_new(u32 cq_pi, u32 cq_ci, bool from_wb)
{
	if (!from_wb && cq_pi == U32_MAX)
		return -ENODEV;
	if (cq_pi - cq_ci <= HPU_STREAM_ENTRIES)
		return cq_pi - cq_ci;
	if (from_wb && cq_ci - cq_pi <= HPU_STREAM_ENTRIES)
		return 0;
	return -ERANGE;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_stream_cq_new);

/*
 * Consume the completion records up to @cq_pi (hpu_stream_cq_new()): move
 * the jobs they name from the inflight list to @done with their error
 * set. A job the driver stopped (status ABORTED) without a cancel error
 * is innocent: it stays on the inflight list, marked aborted with the
 * offset it was stopped at, for hpu_stream_resume_locked() to put back or
 * fail. Caller holds the lock.
 */
static void hpu_stream_consume(struct hpu_stream *stream, u32 cq_pi,
			       bool from_wb, struct list_head *done)
{
	struct hpu_device *hdev = stream->hdev;
	struct hpu_job *job, *it;
	u32 status, where;
	int n;
	u64 seq;

	lockdep_assert_held(&stream->lock);

	n = hpu_stream_cq_new(cq_pi, stream->cq_ci, from_wb);
	if (n == -ENODEV)
		return;		/* the device is gone */
	if (n < 0) {
		dev_err_ratelimited(hdev->drm.dev,
				    "%s: %s %u is more than a ring ahead of %u\n",
				    stream->name,
				    from_wb ? "write-back cq_pi" : "CQ_PI",
				    cq_pi, stream->cq_ci);
		return;
	}

	/* Read the records only after cq_pi says they are there. */
	dma_rmb();

	while (n--) {
		struct hpu_cqe *cqe = &stream->cq[stream->cq_ci % HPU_STREAM_ENTRIES];

		seq = le64_to_cpu(READ_ONCE(cqe->seq));
		status = le32_to_cpu(READ_ONCE(cqe->status));
		where = le32_to_cpu(READ_ONCE(cqe->where));
		stream->cq_ci++;

		/* The device completes a stream's descriptors in order. */
		job = list_first_entry_or_null(&stream->inflight,
					       struct hpu_job, link);
		if (job && job->seq != seq) {
			job = NULL;
			list_for_each_entry(it, &stream->inflight, link) {
				if (it->seq == seq) {
					job = it;
					break;
				}
			}
		}
		if (!job) {
			dev_err_ratelimited(hdev->drm.dev,
					    "%s: completion record for unknown seq %llu (status %u)\n",
					    stream->name, seq, status);
			continue;
		}

		job->status = status;
		job->fail_offset = where & HPU_CQE_OFFSET_MASK;
		if (status == HPU_CQ_ABORTED && !job->cancel_error) {
			job->aborted = true;	/* stopped by the driver */
			continue;
		}
		job->error = hpu_job_cq_status_to_errno(status);
		if (job->error && job->cancel_error)
			job->error = job->cancel_error;
		job->on_hw = false;
		list_move_tail(&job->link, done);
	}
}

/**
 * hpu_stream_reap() - consume what the device has completed, by CQ_PI
 * @stream: the stream
 * @done: where the completed jobs go
 *
 * Reads CQ_PI: the device's truth at this moment, with the records that
 * the write-back record does not announce yet (held back by moderation,
 * or written while the record is). Recovery, resets and shutdown use it
 * outside the interrupt: they need the head of the inflight list to be
 * the job the stream runs now, and a stream they halted that does not
 * stop writes no final record. Caller holds the lock.
 */
VISIBLE_IF_KUNIT void hpu_stream_reap(struct hpu_stream *stream,
				      struct list_head *done)
{
	hpu_stream_consume(stream, hpu_stream_rd(stream, HPU_QS_CQ_PI), false,
			   done);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_stream_reap);

/**
 * hpu_stream_reap_notified() - consume what the device has announced
 * @stream: the stream
 * @done: where the completed jobs go
 *
 * For the interrupt handler. From spec version 9 reads the cq_pi of the
 * stream's write-back record, which the device writes after the completion
 * records it covers and before it raises the vector: no MMIO. A device
 * that is gone no longer writes it, so nothing more is consumed. Before
 * version 9 reads CQ_PI (hpu_stream_reap()). Caller holds the lock.
 */
VISIBLE_IF_KUNIT void hpu_stream_reap_notified(struct hpu_stream *stream,
					       struct list_head *done)
{
	lockdep_assert_held(&stream->lock);

	if (!stream->wb) {
		hpu_stream_reap(stream, done);
		return;
	}
	/* One aligned 32-bit word of a record written whole: never torn. */
	hpu_stream_consume(stream, le32_to_cpu(READ_ONCE(stream->wb->cq_pi)),
			   true, done);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_stream_reap_notified);

/*
 * Give @job the stream's next sequence number, initialise its hardware
 * fence with it and put it on the inflight list; unless a restart or reset
 * owns the stream, write its descriptor (the caller rings the doorbell).
 * Caller holds the lock; the stream is enabled.
 */
static void hpu_stream_place_locked(struct hpu_stream *stream,
				    struct hpu_job *job)
{
	lockdep_assert_held(&stream->lock);

	job->seq = ++stream->seq;
	dma_fence_init(job->hw_fence, &hpu_hw_fence_ops, &stream->fence_lock,
		       stream->fence_ctx, job->seq);
	job->hw_fence_init = true;
	job->on_hw = true;
	list_add_tail(&job->link, &stream->inflight);

	if (!stream->stopped) {
		hpu_stream_put_desc(stream, job);
		hpu_stream_arm_tdr(stream);
	}
}

/**
 * hpu_stream_submit() - put a scheduled job on the hardware
 * @stream: the job's stream
 * @job: the job, with its hardware fence allocated but not initialised
 *
 * Assigns the job the stream's next sequence number, initialises its
 * hardware fence with it, writes the descriptor and rings the doorbell.
 * While a restart or reset owns the stream, the job only joins the
 * inflight list; its descriptor is written when the stream resumes.
 * Called by run_job only, inside drm_dev_enter(); the scheduler never has
 * more than HPU_STREAM_SCHED_CREDITS jobs on the stream, so with the
 * direct jobs (at most HPU_STREAM_DIRECT_MAX) they fit in the ring.
 *
 * Return: 0, or -ENODEV if the stream has been shut down (the fence is
 * then left uninitialised).
 */
int hpu_stream_submit(struct hpu_stream *stream, struct hpu_job *job)
{
	unsigned long flags;

	spin_lock_irqsave(&stream->lock, flags);
	if (!stream->enabled) {
		spin_unlock_irqrestore(&stream->lock, flags);
		return -ENODEV;
	}

	hpu_stream_place_locked(stream, job);
	/* writel() orders the descriptor before the doorbell. */
	if (!stream->stopped)
		hpu_stream_wr(stream, HPU_QS_PI, stream->pi);
	spin_unlock_irqrestore(&stream->lock, flags);

	return 0;
}

/**
 * hpu_stream_direct_get() - reserve a ring slot for a direct job
 * @stream: the stream
 *
 * Direct jobs (submitted by the SUBMIT ioctls without the scheduler) may
 * hold HPU_STREAM_DIRECT_MAX slots of the ring between them; the rest is
 * the scheduler's. The slot is given back when the job's fence is
 * signalled (hpu_jobs_signal()), or with hpu_stream_direct_put() if the
 * job is not submitted after all.
 *
 * Return: true if a slot was reserved, false if the stream has its
 * direct jobs' share of the ring in use (the job takes the scheduler).
 */
bool hpu_stream_direct_get(struct hpu_stream *stream)
{
	return atomic_add_unless(&stream->direct_jobs, 1, HPU_STREAM_DIRECT_MAX);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_stream_direct_get);

/**
 * hpu_stream_direct_put() - give back a slot of hpu_stream_direct_get()
 * @stream: the stream
 */
void hpu_stream_direct_put(struct hpu_stream *stream)
{
	atomic_dec(&stream->direct_jobs);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_stream_direct_put);

/**
 * hpu_stream_submit_direct() - put a direct job on the hardware
 * @stream: the job's stream, with a slot reserved (hpu_stream_direct_get())
 * @job: the job (&hpu_job.direct), its hardware fence allocated but not
 *	initialised
 * @failed: where the job goes if the stream has been shut down
 *
 * As hpu_stream_submit(), without the doorbell: the caller writes the
 * descriptors of all its direct jobs, then rings each stream it used once
 * with hpu_stream_kick(). Never fails: on a stream that has been shut down
 * (device removed or unusable), or for a job of a reset generation before
 * the device's (a hard reset destroyed its context since SUBMIT checked),
 * the job's fence is initialised all the same and the job goes to @failed
 * with -ENODEV or -ECANCELED, for the caller to signal with
 * hpu_jobs_signal() once it holds no lock. Called with the job's queue
 * locked, inside drm_dev_enter().
 *
 * Once the lock is dropped the job may complete and be freed at any time
 * (another doorbell, run_job or a restart writes PI): the caller must not
 * touch @job after this returns.
 *
 * Return: a reference to the job's hardware fence, taken under the lock.
 */
struct dma_fence *hpu_stream_submit_direct(struct hpu_stream *stream,
					   struct hpu_job *job,
					   struct list_head *failed)
{
	struct dma_fence *fence;
	unsigned long flags;

	atomic64_inc(&stream->direct_submitted);
	spin_lock_irqsave(&stream->lock, flags);
	/*
	 * A hard reset bumps the generation while it owns the streams, before
	 * it resumes them: under the lock, a job of an older generation is
	 * one whose context the reset destroyed, and never runs (as in
	 * run_job). One of the current generation that finds the stream
	 * stopped by a hard reset is failed with the others at its end.
	 */
	if (stream->enabled &&
	    job->generation == hpu_reset_generation(stream->hdev)) {
		hpu_stream_place_locked(stream, job);
	} else {
		job->seq = ++stream->seq;
		dma_fence_init(job->hw_fence, &hpu_hw_fence_ops,
			       &stream->fence_lock, stream->fence_ctx,
			       job->seq);
		job->hw_fence_init = true;
		job->status = HPU_CQ_ABORTED;
		job->error = stream->enabled ? -ECANCELED : -ENODEV;
		list_add_tail(&job->link, failed);
	}
	fence = dma_fence_get(job->hw_fence);
	spin_unlock_irqrestore(&stream->lock, flags);
	return fence;
}

/**
 * hpu_stream_kick() - ring a stream's doorbell
 * @stream: the stream
 *
 * Writes PI for the descriptors hpu_stream_submit_direct() wrote (and any
 * written since): one doorbell for all of them. Nothing while a restart
 * or reset owns the stream (it writes PI when it resumes) or once it is
 * shut down.
 */
void hpu_stream_kick(struct hpu_stream *stream)
{
	unsigned long flags;

	spin_lock_irqsave(&stream->lock, flags);
	/* writel() orders the descriptors before the doorbell. */
	if (stream->enabled && !stream->stopped)
		hpu_stream_wr(stream, HPU_QS_PI, stream->pi);
	spin_unlock_irqrestore(&stream->lock, flags);
}

/**
 * hpu_stream_process() - signal the jobs the device has completed
 * @stream: the stream
 *
 * Called from the engine's interrupt handler (hard interrupt context).
 */
static void hpu_stream_process(struct hpu_stream *stream)
{
	unsigned long flags;
	LIST_HEAD(done);

	spin_lock_irqsave(&stream->lock, flags);
	/*
	 * The engine's vector serves its four streams: one with no job on
	 * the hardware has no record to wait for, and skipping it saves a
	 * CQ_PI read before spec version 9 (an MMIO read is the costly part
	 * of this handler; from version 9 it reads host memory only).
	 */
	if (stream->enabled && !stream->stopped &&
	    !list_empty(&stream->inflight)) {
		hpu_stream_reap_notified(stream, &done);
		hpu_stream_arm_tdr(stream);
	}
	spin_unlock_irqrestore(&stream->lock, flags);

	hpu_jobs_signal(&done);
}

/*
 * Disable the stream and take its rings over: the interrupt handler
 * consumes nothing until hpu_stream_resume_locked(). The device stops the
 * stream at the next packet boundary; the descriptor in flight completes
 * ABORTED. Caller holds the lock.
 */
static void hpu_stream_halt_locked(struct hpu_stream *stream)
{
	lockdep_assert_held(&stream->lock);

	stream->stopped = true;
	stream->tdr_seq = 0;
	hpu_stream_wr(stream, HPU_QS_CTRL, 0);
}

/*
 * Wait up to HPU_STREAM_STOP_TIMEOUT_US for a halted stream to be idle,
 * without a word. A hung DMA stream never stops without a reset; a compute
 * engine lets go of a disabled stream, so for its streams only IDLE
 * counts. *@status gets the last STATUS read. May sleep.
 *
 * Return: 0 idle (or the device is gone); -EBUSY otherwise.
 */
static int hpu_stream_poll_idle(struct hpu_stream *stream, u32 *status)
{
	u32 stopped = HPU_QS_STATUS_IDLE;
	u32 st;
	int ret;

	if (!stream->compute)
		stopped |= HPU_QS_STATUS_HUNG;
	ret = hpu_poll32(stream->hdev, stream->base + HPU_QS_STATUS, st,
			 st == U32_MAX || (st & stopped),
			 HPU_STREAM_STOP_TIMEOUT_US);
	*status = st;
	/* All ones is idle only if the device is gone, not in reset. */
	if (!ret && st == U32_MAX)
		return pci_device_is_present(stream->hdev->pdev) ? -EBUSY : 0;
	if (!ret && (st & HPU_QS_STATUS_IDLE))
		return 0;
	return -EBUSY;
}

/*
 * Wait until a halted stream is idle, as hpu_stream_poll_idle(), and say
 * so when it is not. May sleep.
 *
 * Return: 0; -EBUSY if the stream is hung (watchdog) or does not stop,
 * which only a soft or hard reset cures.
 */
static int hpu_stream_wait_idle(struct hpu_stream *stream)
{
	u32 status;

	if (!hpu_stream_poll_idle(stream, &status))
		return 0;
	drm_warn(&stream->hdev->drm, "%s: stream %s (STATUS 0x%08x)\n",
		 stream->name, status == U32_MAX ? "reads all ones (in reset)" :
		 !stream->compute && (status & HPU_QS_STATUS_HUNG) ?
		 "is hung" : "did not stop",
		 status);
	return -EBUSY;
}

/*
 * Resume a halted stream: re-enable it and write the descriptors of its
 * inflight jobs to the fresh ring, in their order, so they are not lost.
 * Jobs that carry a cancel error fail with it (all of them with @fail_all
 * if non-zero). A job the driver stopped part way (ABORTED at a non-zero
 * offset) fails with -ECANCELED and @stop_kind unless @rerun (a soft reset
 * cleared the sync objects it may have updated): run again from the start,
 * its updates would count twice. Caller holds the lock.
 */
static void hpu_stream_resume_locked(struct hpu_stream *stream, int fail_all,
				     bool rerun, u32 stop_kind,
				     struct list_head *done)
{
	struct hpu_device *hdev = stream->hdev;
	struct hpu_job *job, *tmp;
	int ret, err;

	lockdep_assert_held(&stream->lock);

	ret = hpu_stream_hw_enable(stream);
	if (ret)
		drm_err(&hdev->drm, "%s: stream halted when re-enabled, failing its jobs\n",
			stream->name);

	list_for_each_entry_safe(job, tmp, &stream->inflight, link) {
		err = fail_all ? fail_all : ret ? -EIO : job->cancel_error;
		if (!err && job->aborted && job->fail_offset && !rerun) {
			err = -ECANCELED;
			job->stop_kind = stop_kind;
		}
		if (err) {
			job->on_hw = false;
			job->status = HPU_CQ_ABORTED;
			job->error = err;
			list_move_tail(&job->link, done);
			continue;
		}
		job->aborted = false;
		job->status = HPU_CQ_OK;
		job->fail_offset = 0;
		hpu_stream_put_desc(stream, job);
		job->deadline_set = false;
		job->start_ns = 0;
		atomic64_inc(&hdev->reset->stats.resubmitted);
	}
	if (!ret && stream->pi)
		hpu_stream_wr(stream, HPU_QS_PI, stream->pi);
	stream->stopped = false;
	stream->tdr_seq = 0;
	hpu_stream_arm_tdr(stream);
}

/*
 * Stop the stream, consume the completions that arrived meanwhile, fail
 * the jobs marked with a cancel error and restart the stream with the
 * others (a job stopped part way fails with -ECANCELED and @stop_kind: no
 * reset clears what it did). If the stream does not stop (hung), it stays
 * halted with its jobs until a soft reset, which the caller schedules.
 * Caller holds the reset lock (read), the recover lock and is inside
 * drm_dev_enter(). May sleep.
 *
 * Return: 0, or -EBUSY if the stream did not stop.
 */
static int hpu_stream_restart(struct hpu_stream *stream, u32 stop_kind)
{
	unsigned long flags;
	LIST_HEAD(done);
	int ret;

	lockdep_assert_held(&stream->recover_lock);
	lockdep_assert_held_read(&stream->hdev->reset->sem);

	spin_lock_irqsave(&stream->lock, flags);
	if (!stream->enabled || stream->stopped) {
		/* Gone, or halted waiting for a reset that will see to it. */
		spin_unlock_irqrestore(&stream->lock, flags);
		return stream->enabled ? -EBUSY : 0;
	}
	hpu_stream_halt_locked(stream);
	spin_unlock_irqrestore(&stream->lock, flags);

	ret = hpu_stream_wait_idle(stream);

	spin_lock_irqsave(&stream->lock, flags);
	/* By CQ_PI: a stream that did not stop writes no final record. */
	hpu_stream_reap(stream, &done);
	if (!ret)
		hpu_stream_resume_locked(stream, 0, false, stop_kind, &done);
	spin_unlock_irqrestore(&stream->lock, flags);

	hpu_jobs_signal(&done);
	return ret;
}

/*
 * Per-job timeout: the job at the head of the stream has run past its
 * deadline. Mark it -ETIMEDOUT and restart the stream without it; the
 * jobs queued behind it (of any queue) are put back and go on. A stream
 * that does not stop is left to a soft reset.
 */
static void hpu_stream_tdr_work(struct work_struct *work)
{
	struct hpu_stream *stream = container_of(to_delayed_work(work),
						 struct hpu_stream, tdr);
	struct hpu_device *hdev = stream->hdev;
	struct hpu_job *head;
	unsigned long flags;
	bool expired = false;
	u64 seq = 0, cb = 0;
	u32 ms = 0, asid = 0;
	bool fence_cookie;
	int idx;

	/* A timed-out job's fence signals only through this work. */
	fence_cookie = dma_fence_begin_signalling();
	hpu_reset_read_lock(hdev);
	if (!drm_dev_enter(&hdev->drm, &idx))
		goto out_unlock;

	mutex_lock(&stream->recover_lock);
	spin_lock_irqsave(&stream->lock, flags);
	head = list_first_entry_or_null(&stream->inflight, struct hpu_job, link);
	if (head && stream->enabled && !stream->stopped && head->deadline_set) {
		if (time_after_eq(jiffies, head->deadline)) {
			expired = true;
			head->cancel_error = -ETIMEDOUT;
			seq = head->seq;
			cb = head->cb_addr;
			asid = head->asid;
			ms = jiffies_to_msecs(head->timeout);
		} else {
			stream->tdr_seq = 0;
			hpu_stream_arm_tdr(stream);
		}
	}
	spin_unlock_irqrestore(&stream->lock, flags);

	if (expired) {
		atomic64_inc(&stream->timeouts);
		atomic64_inc(&hdev->reset->stats.job_timeouts);
		dev_warn_ratelimited(hdev->drm.dev,
				     "%s: job %llu (asid %u, cb 0x%llx) timed out after %u ms, stopping it\n",
				     stream->name, seq, asid, cb, ms);
		if (hpu_stream_restart(stream, DRM_HPU_ERROR_TIMEOUT))
			hpu_reset_schedule(hdev, HPU_RESET_SOFT,
					   "a timed-out job's stream did not stop");
	}
	mutex_unlock(&stream->recover_lock);
	drm_dev_exit(idx);
out_unlock:
	hpu_reset_read_unlock(hdev);
	dma_fence_end_signalling(fence_cookie);
}

/* Whether a stream of @eng other than @except reports STATUS.HUNG. */
static bool hpu_stream_engine_still_hung(struct hpu_engine *eng,
					 unsigned int except)
{
	unsigned int s;
	u32 status;

	for (s = 0; s < HPU_QM_STREAMS; s++) {
		if (s == except)
			continue;
		status = hpu_stream_rd(&eng->streams[s], HPU_QS_STATUS);
		if (status != U32_MAX && (status & HPU_QS_STATUS_HUNG))
			return true;
	}
	return false;
}

/* The job of sequence number @seq on @stream's inflight list. Lock held. */
static struct hpu_job *hpu_stream_find_job(struct hpu_stream *stream, u64 seq)
{
	struct hpu_job *job;

	lockdep_assert_held(&stream->lock);

	list_for_each_entry(job, &stream->inflight, link)
		if (job->seq == seq)
			return job;
	return NULL;
}

/* Fail @job as the one that hung its stream's engine. Lock held. */
static void hpu_stream_blame_locked(struct hpu_stream *stream,
				    struct hpu_job *job, const char *what)
{
	struct hpu_device *hdev = stream->hdev;

	lockdep_assert_held(&stream->lock);

	if (!job->cancel_error)
		job->cancel_error = -ETIMEDOUT;
	job->hung = true;
	atomic64_inc(&hdev->reset->stats.hung_jobs);
	drm_warn(&hdev->drm, "%s: job %llu (asid %u, cb 0x%llx) hung the %s\n",
		 stream->name, job->seq, job->asid, job->cb_addr, what);
}

/**
 * struct hpu_engine_probe - the hung streams of a compute engine
 * @seq: per stream, the job the stream executed when it was found hung
 *	(its head once the completions were consumed), 0 for none.
 * @hung: per stream, STATUS.HUNG when the probe started.
 * @left: per stream, halted but not idle within the stop timeout: it
 *	waits for the engine, it does not hold it.
 * @done: per stream, the probe is through with it (consumed, blamed,
 *	resumed).
 * @reset: a soft reset follows: the streams stay halted for it, and
 *	streams halted before (waiting for this reset) are probed too.
 *
 * Lives on the stack of hpu_engine_probe().
 */
struct hpu_engine_probe {
	u64 seq[HPU_QM_STREAMS];
	bool hung[HPU_QM_STREAMS];
	bool left[HPU_QM_STREAMS];
	bool done[HPU_QM_STREAMS];
	bool reset;
};

/*
 * Consume @stream's completions and note whether it is hung, and on which
 * job. Without a reset, a stream halted by someone else (waiting for a
 * reset) is not touched.
 */
static void hpu_engine_probe_snapshot(struct hpu_engine_probe *p,
				      struct hpu_stream *stream)
{
	unsigned int s = stream->index;
	unsigned long flags;
	struct hpu_job *head;
	LIST_HEAD(done);
	u32 status;

	spin_lock_irqsave(&stream->lock, flags);
	if (stream->enabled && (p->reset || !stream->stopped)) {
		/*
		 * Once its completions are consumed, the head is the job
		 * running: by CQ_PI, since moderation may hold records back.
		 */
		hpu_stream_reap(stream, &done);
		if (!stream->stopped)
			hpu_stream_arm_tdr(stream);
		status = hpu_stream_rd(stream, HPU_QS_STATUS);
		head = list_first_entry_or_null(&stream->inflight,
						struct hpu_job, link);
		if (status != U32_MAX && (status & HPU_QS_STATUS_HUNG)) {
			p->hung[s] = true;
			p->seq[s] = head ? head->seq : 0;
		}
	}
	spin_unlock_irqrestore(&stream->lock, flags);
	hpu_jobs_signal(&done);
}

/*
 * Whether the job that a hung stream of @eng ran when the probe started
 * has completed on its own (a completion record other than ABORTED): then
 * that, not a disable, may have let the engine go. Streams the probe has
 * finished with are not looked at.
 */
static bool hpu_engine_probe_done_alone(struct hpu_engine_probe *p,
					struct hpu_engine *eng)
{
	struct hpu_job *job, *tmp;
	bool alone = false;
	unsigned long flags;
	unsigned int t;

	for (t = 0; t < HPU_QM_STREAMS; t++) {
		struct hpu_stream *stream = &eng->streams[t];
		LIST_HEAD(done);

		if (!p->hung[t] || p->done[t] || !p->seq[t])
			continue;
		spin_lock_irqsave(&stream->lock, flags);
		if (stream->enabled) {
			hpu_stream_reap(stream, &done);
			if (!stream->stopped)
				hpu_stream_arm_tdr(stream);
			/* Gone before: consumed by the interrupt, not ABORTED. */
			if (!hpu_stream_find_job(stream, p->seq[t]))
				alone = true;
			list_for_each_entry_safe(job, tmp, &done, link)
				if (job->seq == p->seq[t] &&
				    job->status == HPU_CQ_ABORTED)
					alone = false;
		}
		spin_unlock_irqrestore(&stream->lock, flags);
		hpu_jobs_signal(&done);
	}
	return alone;
}

/*
 * Consume the completions of @stream, idle after its halt; blame its hung
 * job if @guilty and the job was stopped (ABORTED) rather than completed;
 * without a reset, resume the stream.
 */
static void hpu_engine_probe_finish(struct hpu_engine_probe *p,
				    struct hpu_stream *stream, bool guilty)
{
	unsigned long flags;
	struct hpu_job *job;
	LIST_HEAD(done);

	p->done[stream->index] = true;
	spin_lock_irqsave(&stream->lock, flags);
	hpu_stream_reap(stream, &done);
	job = p->seq[stream->index] ?
	      hpu_stream_find_job(stream, p->seq[stream->index]) : NULL;
	if (guilty && job && job->aborted)
		hpu_stream_blame_locked(stream, job,
					"engine, disabling the stream");
	if (!p->reset)
		hpu_stream_resume_locked(stream, 0, false,
					 DRM_HPU_ERROR_ENGINE_HANG, &done);
	spin_unlock_irqrestore(&stream->lock, flags);
	hpu_jobs_signal(&done);
}

/*
 * Nothing let the engine go: the soft reset that follows releases it, and
 * the driver cannot tell which of the hung streams that did not stop held
 * it, so their jobs all fail. Only a device that does not let go of a
 * disabled stream (as compute.md says it does) gets here.
 */
static void hpu_engine_probe_blame_all(struct hpu_engine_probe *p,
				       struct hpu_engine *eng)
{
	unsigned long flags;
	struct hpu_job *job;
	unsigned int s;

	for (s = 0; s < HPU_QM_STREAMS; s++) {
		struct hpu_stream *stream = &eng->streams[s];
		LIST_HEAD(done);

		if (!p->left[s] || !p->seq[s])
			continue;
		spin_lock_irqsave(&stream->lock, flags);
		hpu_stream_reap(stream, &done);
		job = hpu_stream_find_job(stream, p->seq[s]);
		if (job)
			hpu_stream_blame_locked(stream, job,
						"stream, failing it");
		spin_unlock_irqrestore(&stream->lock, flags);
		hpu_jobs_signal(&done);
	}
}

/**
 * hpu_engine_probe() - find the stream that holds a hung compute engine
 * @eng: a compute engine (TPC or MME)
 * @reset: a soft reset follows (the caller holds &hpu_reset.sem for
 *	writing); else the caller holds it for reading and every recover
 *	lock of @eng.
 *
 * The watchdog marks HUNG every stream of the engine with a descriptor in
 * flight, but only one holds the engine: disabling it makes the engine
 * let go (its descriptor completes ABORTED and the other streams' HUNG
 * clears), disabling another completes its descriptor only once the
 * engine lets go (Documentation/hw/compute.md). So the hung streams are
 * disabled one at a time, in order: one that does not go idle within the
 * stop timeout waits for the engine and is left halted while the next is
 * tried; the one whose disabling leaves no stream hung is the guilty one
 * and its job fails -ETIMEDOUT, unless that job was not stopped but
 * completed (then it, or another hung job that completed on its own
 * meanwhile, let the engine go, and nobody is blamed). Then the streams
 * left halted finish their descriptors. Without @reset every stream
 * disabled is resumed: its innocent jobs are put back if nothing of them
 * ran, else fail with -ECANCELED (hpu_stream_resume_locked()). May sleep.
 *
 * Return: true if the engine let go (or nothing was hung); false if it
 * still hangs, its hung streams halted: only a soft reset releases it (if
 * @reset, their jobs are then blamed, all of them).
 */
static bool hpu_engine_probe(struct hpu_engine *eng, bool reset)
{
	struct hpu_engine_probe p = { .reset = reset };
	bool let_go = false, stuck = false, any = false;
	unsigned long flags;
	unsigned int s;
	u32 status;

	lockdep_assert_held(&eng->qm->hdev->reset->sem);

	for (s = 0; s < HPU_QM_STREAMS; s++) {
		hpu_engine_probe_snapshot(&p, &eng->streams[s]);
		any |= p.hung[s];
	}
	if (!any)
		return true;

	for (s = 0; s < HPU_QM_STREAMS && !let_go; s++) {
		struct hpu_stream *stream = &eng->streams[s];
		bool guilty;

		if (!p.hung[s])
			continue;
		spin_lock_irqsave(&stream->lock, flags);
		if (!stream->stopped)
			hpu_stream_halt_locked(stream);
		spin_unlock_irqrestore(&stream->lock, flags);

		if (hpu_stream_poll_idle(stream, &status)) {
			drm_dbg_driver(&eng->qm->hdev->drm,
				       "%s: halted, waits for the engine (STATUS 0x%08x)\n",
				       stream->name, status);
			p.left[s] = true;
			continue;
		}
		let_go = !hpu_stream_engine_still_hung(eng, s);
		p.done[s] = true;
		guilty = let_go && !hpu_engine_probe_done_alone(&p, eng);
		hpu_engine_probe_finish(&p, stream, guilty);
	}

	for (s = 0; s < HPU_QM_STREAMS; s++) {
		struct hpu_stream *stream = &eng->streams[s];

		if (!p.left[s] || !let_go)
			continue;
		if (hpu_stream_wait_idle(stream)) {
			stuck = true;
			continue;
		}
		hpu_engine_probe_finish(&p, stream, false);
	}

	if (!let_go && reset)
		hpu_engine_probe_blame_all(&p, eng);
	return let_go && !stuck;
}

/*
 * The watchdog found a compute engine hung (ENGINE_HANG): a kernel that
 * makes no progress, an endless loop. hpu_engine_probe() finds and fails
 * the job that holds the engine and restarts the other streams; other
 * engines and contexts are not touched. If the engine does not let go, a
 * soft reset is scheduled.
 */
static void hpu_stream_hang_work(struct work_struct *work)
{
	struct hpu_engine *eng = container_of(work, struct hpu_engine,
					      hang_work);
	struct hpu_device *hdev = eng->qm->hdev;
	bool fence_cookie;
	unsigned int s;
	int idx;

	/* The hung jobs' fences signal through this work. */
	fence_cookie = dma_fence_begin_signalling();
	hpu_reset_read_lock(hdev);
	if (!drm_dev_enter(&hdev->drm, &idx))
		goto out_unlock;

	for (s = 0; s < HPU_QM_STREAMS; s++)
		mutex_lock_nested(&eng->streams[s].recover_lock, s);

	if (!hpu_engine_probe(eng, false))
		hpu_reset_schedule(hdev, HPU_RESET_SOFT,
				   "a hung compute stream did not stop");

	for (s = HPU_QM_STREAMS; s-- > 0;)
		mutex_unlock(&eng->streams[s].recover_lock);
	drm_dev_exit(idx);
out_unlock:
	hpu_reset_read_unlock(hdev);
	dma_fence_end_signalling(fence_cookie);
}

/**
 * hpu_stream_engine_hung() - the watchdog reported an engine hung
 * @hdev: the device
 * @index: engine index of the ENGINE_HANG event
 *
 * A compute engine is recovered without a reset: its hung streams are
 * disabled and restarted by &hpu_engine.hang_work. Callable from any
 * context, the event queue's interrupt handler included.
 *
 * Return: true if the engine is a compute engine and its recovery is
 * queued; false for a DMA engine (or an unknown one), which needs a soft
 * reset.
 */
bool hpu_stream_engine_hung(struct hpu_device *hdev, unsigned int index)
{
	struct hpu_qm *qm = hdev->qm;
	unsigned int e;

	if (!qm)
		return false;
	for (e = 0; e < qm->num_engines; e++) {
		struct hpu_engine *eng = &qm->engines[e];

		if (eng->index != index)
			continue;
		if (eng->klass == DRM_HPU_ENGINE_DMA)
			return false;
		queue_work(qm->tdr_wq, &eng->hang_work);
		return true;
	}
	return false;
}

/**
 * hpu_stream_cancel_queue() - cancel a queue's jobs on the hardware
 * @stream: the queue's stream
 * @queue: the queue, being destroyed
 *
 * Cancels the jobs of @queue that are in @stream's ring, with -ECANCELED:
 * a job not started yet gets a descriptor the device refuses (cb_size 0)
 * so it completes at once without running; if the running job is the
 * queue's, the stream is stopped and restarted without the queue's jobs.
 * Jobs of other queues are not touched (a job may still complete normally
 * if the device started it meanwhile). A stream that does not stop is
 * left to a soft reset. May sleep.
 */
void hpu_stream_cancel_queue(struct hpu_stream *stream,
			     struct hpu_queue *queue)
{
	struct hpu_device *hdev = stream->hdev;
	bool head = true, restart = false, fence_cookie;
	unsigned long flags;
	struct hpu_job *job;
	int idx;

	/* The closing queue's fences signal through this. */
	fence_cookie = dma_fence_begin_signalling();
	hpu_reset_read_lock(hdev);
	if (!drm_dev_enter(&hdev->drm, &idx)) {
		hpu_reset_read_unlock(hdev);
		dma_fence_end_signalling(fence_cookie);
		return;		/* hpu_streams_fini() fails everything */
	}

	mutex_lock(&stream->recover_lock);
	spin_lock_irqsave(&stream->lock, flags);
	if (stream->enabled) {
		list_for_each_entry(job, &stream->inflight, link) {
			if (job->queue == queue) {
				job->cancel_error = -ECANCELED;
				if (head)
					restart = true;
				else if (!stream->stopped)
					WRITE_ONCE(stream->ring[job->slot].cb_size, 0);
			}
			head = false;
		}
	}
	spin_unlock_irqrestore(&stream->lock, flags);

	if (restart && hpu_stream_restart(stream, 0))
		hpu_reset_schedule(hdev, HPU_RESET_SOFT,
				   "a cancelled job's stream did not stop");
	mutex_unlock(&stream->recover_lock);
	drm_dev_exit(idx);
	hpu_reset_read_unlock(hdev);
	dma_fence_end_signalling(fence_cookie);
}

/**
 * hpu_streams_sched_stop() - stop the schedulers' submission work
 * @hdev: the device, inside drm_dev_enter(); a reset follows
 *
 * Waits for each stream's submission work (drm_sched_wqueue_stop()) and
 * keeps it from running again until hpu_streams_reset_finish(). Called by
 * a reset before it enters its fence-signalling section and takes
 * &hpu_reset.sem: the submission work signals fences itself (a job that
 * cannot run), and a signalling section must not wait for another; the
 * work never waits for a reset (hpu_sched_run_job() takes no lock a reset
 * holds and does not sleep), so it ends. May sleep.
 */
void hpu_streams_sched_stop(struct hpu_device *hdev)
{
	struct hpu_qm *qm = hdev->qm;
	unsigned int e, s;

	for (e = 0; e < qm->num_engines; e++)
		for (s = 0; s < HPU_QM_STREAMS; s++)
			drm_sched_wqueue_stop(&qm->engines[e].streams[s].sched);
}

/**
 * hpu_streams_reset_prepare() - stop every stream before a reset
 * @hdev: the device; the caller holds &hpu_reset.sem for writing and is
 *	inside drm_dev_enter(), the submission work stopped
 *	(hpu_streams_sched_stop())
 * @hard: a hard reset follows (nothing is waited for: it stops the
 *	streams at once).
 *
 * Halts every stream. For a
 * soft reset, first finds the job that holds each hung compute engine
 * (hpu_engine_probe(): only that job is guilty, not those of the other
 * streams waiting for the engine), then, once their completions are
 * consumed, marks the job at the head of each hung DMA stream (watchdog,
 * STATUS.HUNG) guilty (-ETIMEDOUT), and waits for the other streams to
 * stop. Signals the jobs that completed meanwhile; the others stay on
 * their streams for hpu_streams_reset_finish(). May sleep.
 */
void hpu_streams_reset_prepare(struct hpu_device *hdev, bool hard)
{
	struct hpu_qm *qm = hdev->qm;
	unsigned int e, s;
	unsigned long flags;

	lockdep_assert_held_write(&hdev->reset->sem);
	hpu_uqs_reset_prepare(hdev);

	for (e = 0; e < qm->num_engines && !hard; e++)
		if (qm->engines[e].klass != DRM_HPU_ENGINE_DMA)
			hpu_engine_probe(&qm->engines[e], true);

	for (e = 0; e < qm->num_engines; e++) {
		for (s = 0; s < HPU_QM_STREAMS; s++) {
			struct hpu_stream *stream = &qm->engines[e].streams[s];
			struct hpu_job *head;
			LIST_HEAD(done);
			u32 status;

			spin_lock_irqsave(&stream->lock, flags);
			if (!stream->enabled) {
				spin_unlock_irqrestore(&stream->lock, flags);
				continue;
			}
			if (!hard && !stream->compute) {
				/*
				 * The head is the hung job once completions
				 * are consumed (by CQ_PI: all of them).
				 */
				hpu_stream_reap(stream, &done);
				status = hpu_stream_rd(stream, HPU_QS_STATUS);
				head = list_first_entry_or_null(&stream->inflight,
								struct hpu_job,
								link);
				if (head && status != U32_MAX &&
				    (status & HPU_QS_STATUS_HUNG))
					hpu_stream_blame_locked(stream, head,
								"stream, failing it");
			}
			hpu_stream_halt_locked(stream);
			spin_unlock_irqrestore(&stream->lock, flags);
			hpu_jobs_signal(&done);
		}
	}

	for (e = 0; e < qm->num_engines; e++) {
		for (s = 0; s < HPU_QM_STREAMS; s++) {
			struct hpu_stream *stream = &qm->engines[e].streams[s];
			u32 status;
			LIST_HEAD(done);

			if (!stream->enabled)
				continue;
			/* Hung streams let go only at the reset itself. */
			if (!hard)
				hpu_poll32(hdev, stream->base + HPU_QS_STATUS,
					   status, status == U32_MAX ||
					   (status & (HPU_QS_STATUS_IDLE |
						      HPU_QS_STATUS_HUNG)),
					   HPU_STREAM_STOP_TIMEOUT_US);

			/*
			 * By CQ_PI: before a hard reset nothing waits for
			 * the streams' final records.
			 */
			spin_lock_irqsave(&stream->lock, flags);
			hpu_stream_reap(stream, &done);
			spin_unlock_irqrestore(&stream->lock, flags);
			hpu_jobs_signal(&done);
		}
	}
}

/**
 * hpu_streams_reset_finish() - restart every stream after a reset
 * @hdev: the device, reset; the caller holds &hpu_reset.sem for writing
 * @hard: the reset was a hard one: every job still on a stream is failed
 *	with -ECANCELED (the device lost its state). After a soft reset only
 *	the jobs marked guilty or cancelled fail; the others are put back
 *	on their streams in their order.
 * @dead: the reset failed and the device is unusable: fail every job
 *	with -ENODEV and shut the streams down without touching the device.
 *
 * Then restarts the schedulers' submission work. May sleep.
 */
void hpu_streams_reset_finish(struct hpu_device *hdev, bool hard, bool dead)
{
	struct hpu_qm *qm = hdev->qm;
	unsigned int e, s;
	unsigned long flags;

	lockdep_assert_held_write(&hdev->reset->sem);

	for (e = 0; e < qm->num_engines; e++) {
		for (s = 0; s < HPU_QM_STREAMS; s++) {
			struct hpu_stream *stream = &qm->engines[e].streams[s];
			struct hpu_job *job;
			LIST_HEAD(done);

			spin_lock_irqsave(&stream->lock, flags);
			if (!stream->enabled) {
				spin_unlock_irqrestore(&stream->lock, flags);
				continue;
			}
			if (hard || dead)
				list_for_each_entry(job, &stream->inflight, link)
					job->lost = true;
			if (dead) {
				while ((job = list_first_entry_or_null(&stream->inflight,
								       struct hpu_job, link))) {
					job->on_hw = false;
					job->error = -ENODEV;
					list_move_tail(&job->link, &done);
				}
				stream->enabled = false;
				stream->stopped = false;
			} else {
				/* The reset cleared the sync objects: run again. */
				hpu_stream_resume_locked(stream,
							 hard ? -ECANCELED : 0,
							 true, 0, &done);
			}
			spin_unlock_irqrestore(&stream->lock, flags);
			hpu_jobs_signal(&done);
		}
	}
	hpu_uqs_reset_finish(hdev, hard, dead);

	for (e = 0; e < qm->num_engines; e++)
		for (s = 0; s < HPU_QM_STREAMS; s++)
			drm_sched_wqueue_start(&qm->engines[e].streams[s].sched);
}

/*
 * Shut the stream down for good (device removal or failed probe), once
 * hpu_streams_fini() has halted it and waited for it: signal what completed
 * and fail everything else with -ENODEV. Later run_job calls fail the job
 * without touching the device. May sleep.
 */
static void hpu_stream_shutdown(struct hpu_stream *stream, bool present)
{
	unsigned long flags;
	struct hpu_job *job;
	LIST_HEAD(done);

	if (stream->enabled) {
		spin_lock_irqsave(&stream->lock, flags);
		if (present)
			hpu_stream_reap(stream, &done);
		while ((job = list_first_entry_or_null(&stream->inflight,
						       struct hpu_job, link))) {
			job->on_hw = false;
			job->error = -ENODEV;
			list_move_tail(&job->link, &done);
		}
		stream->enabled = false;
		stream->stopped = false;
		spin_unlock_irqrestore(&stream->lock, flags);

		hpu_jobs_signal(&done);
	}

	/* Not re-armed once the stream is disabled. */
	if (stream->hdev)
		cancel_delayed_work_sync(&stream->tdr);
}

static irqreturn_t hpu_stream_irq(int irq, void *arg)
{
	struct hpu_engine *engine = arg;
	unsigned int s;

	for (s = 0; s < HPU_QM_STREAMS; s++)
		hpu_stream_process(&engine->streams[s]);
	hpu_uq_engine_irq(engine->qm->hdev, engine->index);

	return IRQ_HANDLED;
}

/* drmm action: runs when the DRM device is released (no file is open). */
static void hpu_streams_release(struct drm_device *drm, void *arg)
{
	struct hpu_qm *qm = arg;
	unsigned int e, s;

	/* The scheduler's workers and free_work free the last jobs. */
	if (!wait_event_timeout(qm->jobs_wq, !atomic_read(&qm->jobs),
				msecs_to_jiffies(HPU_JOBS_DRAIN_TIMEOUT_MS)))
		drm_err(drm, "%d jobs still allocated at release\n",
			atomic_read(&qm->jobs));

	for (e = 0; e < qm->num_engines; e++) {
		cancel_work_sync(&qm->engines[e].hang_work);
		for (s = 0; s < HPU_QM_STREAMS; s++) {
			struct hpu_stream *stream = &qm->engines[e].streams[s];

			if (stream->sched_ready)
				drm_sched_fini(&stream->sched);
		}
	}

	destroy_workqueue(qm->tdr_wq);
	destroy_workqueue(qm->wq);
}

static int hpu_stream_init(struct hpu_qm *qm, struct hpu_engine *eng,
			   unsigned int s)
{
	struct hpu_device *hdev = qm->hdev;
	struct hpu_stream *stream = &eng->streams[s];
	struct device *dev = hdev->drm.dev;
	int ret;

	/*
	 * On failure the mutex is destroyed at once: the stream stays
	 * uninitialised (no hdev), so hpu_streams_fini() never takes it.
	 */
	ret = drmm_mutex_init(&hdev->drm, &stream->recover_lock);
	if (ret)
		return ret;
	stream->hdev = hdev;
	stream->base = HPU_REG_QM_STREAM(eng->index, s);
	stream->engine = eng->index;
	stream->index = s;
	stream->compute = eng->klass != DRM_HPU_ENGINE_DMA;
	snprintf(stream->name, sizeof(stream->name), "%s.%u",
		 hpu_stream_engine_name(eng->index), s);
	spin_lock_init(&stream->lock);
	spin_lock_init(&stream->fence_lock);
	INIT_LIST_HEAD(&stream->inflight);
	INIT_DELAYED_WORK(&stream->tdr, hpu_stream_tdr_work);
	stream->fence_ctx = dma_fence_context_alloc(1);

	stream->ring = dmam_alloc_coherent(dev, HPU_STREAM_ENTRIES * HPU_DESC_SIZE,
					   &stream->ring_dma, GFP_KERNEL);
	stream->cq = dmam_alloc_coherent(dev, HPU_STREAM_ENTRIES * HPU_CQE_SIZE,
					 &stream->cq_dma, GFP_KERNEL);
	if (!stream->ring || !stream->cq)
		return -ENOMEM;

	/*
	 * No scheduler timeout: every job has its own, enforced by the
	 * stream's timeout work (hpu_stream_tdr_work()). The credit limit
	 * leaves the direct jobs their share of the ring.
	 */
	ret = drm_sched_init(&stream->sched, &hpu_sched_ops, qm->wq,
			     DRM_SCHED_PRIORITY_COUNT, HPU_STREAM_SCHED_CREDITS, 0,
			     MAX_SCHEDULE_TIMEOUT, NULL, NULL, stream->name,
			     dev);
	if (ret) {
		drm_err(&hdev->drm, "%s: cannot initialise the scheduler: %d\n",
			stream->name, ret);
		return ret;
	}
	stream->sched_ready = true;

	return 0;
}

/* Class of engine index @index. */
static u8 hpu_stream_engine_class(unsigned int index)
{
	if (index < HPU_ENGINE_TPC)
		return DRM_HPU_ENGINE_DMA;
	return index == HPU_ENGINE_TPC ? DRM_HPU_ENGINE_TPC : DRM_HPU_ENGINE_MME;
}

/**
 * hpu_stream_engine_present() - whether the driver drives an engine
 * @hdev: the device, with its identity read
 * @index: engine index of the spec
 *
 * The DMA engines ENGINES reports (at most HPU_MAX_DMA_ENGINES); from spec
 * version 6 also the TPC engine (if ENGINES reports TPC cores) and the
 * MMEs it reports (at most HPU_MAX_MME_ENGINES). Earlier devices have no
 * queue managers for their compute engines.
 *
 * Return: true if engine @index has queue managers the driver uses.
 */
bool hpu_stream_engine_present(const struct hpu_device *hdev,
			       unsigned int index)
{
	const struct hpu_identity *id = &hdev->id;

	if (index < HPU_ENGINE_TPC)
		return index < id->num_dma;
	if (id->spec_version < HPU_SPEC_VERSION_COMPUTE)
		return false;
	if (index == HPU_ENGINE_TPC)
		return id->num_tpc > 0;
	return index < HPU_MAX_ENGINES && index - HPU_ENGINE_MME0 < id->num_mme;
}

/**
 * hpu_stream_engine_limit() - one past the highest engine index in use
 * @hdev: the device, with its identity read
 *
 * Engine indexes below it that are not present (a device with fewer DMA
 * engines than 8) have no streams; their counters read 0.
 *
 * Return: the number of engine indexes to cover (MSI-X vectors, BUSY_NS
 * counters, telemetry entries).
 */
unsigned int hpu_stream_engine_limit(const struct hpu_device *hdev)
{
	unsigned int e;

	for (e = HPU_MAX_ENGINES; e > 0; e--)
		if (hpu_stream_engine_present(hdev, e - 1))
			return e;
	return 0;
}

/**
 * hpu_stream_engine_name() - name of an engine index
 * @index: engine index of the spec
 *
 * Return: "dma0" to "dma7", "tpc", "mme0", "mme1" (fdinfo keys, sysfs,
 * stream names), "?" beyond.
 */
const char *hpu_stream_engine_name(unsigned int index)
{
	static const char * const names[HPU_MAX_ENGINES] = {
		"dma0", "dma1", "dma2", "dma3", "dma4", "dma5", "dma6", "dma7",
		"tpc", "mme0", "mme1",
	};

	return index < HPU_MAX_ENGINES ? names[index] : "?";
}

static struct hpu_stream *hpu_stream_nth(struct hpu_qm *qm, unsigned int i)
{
	return &qm->engines[i / HPU_QM_STREAMS].streams[i % HPU_QM_STREAMS];
}

/*
 * Spec version 9: give every stream its write-back record, in one
 * coherent array (page aligned, so each record is 32-byte aligned), and
 * set the moderation the parameters ask for. Before the streams are
 * enabled; before version 9 they keep no record and no moderation.
 */
static int hpu_streams_wb_init(struct hpu_qm *qm)
{
	struct hpu_device *hdev = qm->hdev;
	unsigned int n = qm->num_engines * HPU_QM_STREAMS;
	struct hpu_stream *stream;
	struct hpu_wb *wb;
	dma_addr_t dma;
	unsigned int i;

	if (hdev->id.spec_version < HPU_SPEC_VERSION_WB || !n)
		return 0;

	wb = dmam_alloc_coherent(hdev->drm.dev, n * sizeof(*wb), &dma,
				 GFP_KERNEL);
	if (!wb)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		stream = hpu_stream_nth(qm, i);
		stream->wb = &wb[i];
		stream->wb_dma = dma + i * sizeof(*wb);
	}
	qm->irq_mod = hpu_stream_irq_mod(hpu_irq_coalesce_count,
					 hpu_irq_coalesce_us);
	drm_dbg_driver(&hdev->drm, "write-back records on; IRQ_MOD 0x%08x\n",
		       qm->irq_mod);
	return 0;
}

/* Fill the engine table: the DMA engines, then TPC, then the MMEs. */
static void hpu_stream_engines_setup(struct hpu_qm *qm)
{
	struct hpu_device *hdev = qm->hdev;
	unsigned int e;
	u8 c;

	for (e = 0; e < HPU_MAX_ENGINES; e++) {
		struct hpu_engine *eng;

		if (!hpu_stream_engine_present(hdev, e))
			continue;
		c = hpu_stream_engine_class(e);
		if (!qm->class_count[c])
			qm->class_first[c] = qm->num_engines;
		eng = &qm->engines[qm->num_engines++];
		eng->qm = qm;
		eng->index = e;
		eng->klass = c;
		eng->class_index = qm->class_count[c]++;
		INIT_WORK(&eng->hang_work, hpu_stream_hang_work);
	}
}

/**
 * hpu_streams_init() - set up the queue managers of every engine
 * @hdev: the device, soft reset, with its MSI-X vectors allocated
 *
 * Allocates the rings and schedulers of every stream of every engine the
 * device has (hpu_stream_engine_present()), installs the engines'
 * completion interrupts and enables the streams. The schedulers
 * live until the DRM device is released; the rings until the device is
 * unbound. May sleep.
 *
 * Return: 0 or a negative error code, with the reason logged.
 */
int hpu_streams_init(struct hpu_device *hdev)
{
	struct drm_device *drm = &hdev->drm;
	unsigned int e, s;
	struct hpu_qm *qm;
	int ret;

	qm = drmm_kzalloc(drm, sizeof(*qm), GFP_KERNEL);
	if (!qm)
		return -ENOMEM;

	qm->hdev = hdev;
	if (hdev->id.num_dma > HPU_MAX_DMA_ENGINES)
		drm_info(drm, "using %u of %u DMA engines\n",
			 HPU_MAX_DMA_ENGINES, hdev->id.num_dma);
	if (hdev->id.spec_version >= HPU_SPEC_VERSION_COMPUTE &&
	    hdev->id.num_mme > HPU_MAX_MME_ENGINES)
		drm_info(drm, "using %u of %u MMEs\n",
			 HPU_MAX_MME_ENGINES, hdev->id.num_mme);
	hpu_stream_engines_setup(qm);
	qm->timeout_ms = clamp(hpu_job_timeout_ms, 1U, HPU_JOB_TIMEOUT_MAX_MS);
	atomic_set(&qm->jobs, 0);
	init_waitqueue_head(&qm->jobs_wq);

	init_llist_head(&qm->free_list);
	INIT_WORK(&qm->free_work, hpu_jobs_free_work);
	spin_lock_init(&qm->done_lock);

	/*
	 * One work item per stream's scheduler, high priority and not
	 * ordered: the streams do not wait for each other.
	 */
	qm->wq = alloc_workqueue("hpu-sched-%s", WQ_HIGHPRI | WQ_MEM_RECLAIM, 0,
				 pci_name(hdev->pdev));
	if (!qm->wq)
		return -ENOMEM;
	qm->tdr_wq = alloc_workqueue("hpu-tdr-%s", WQ_MEM_RECLAIM | WQ_UNBOUND,
				     0, pci_name(hdev->pdev));
	if (!qm->tdr_wq) {
		destroy_workqueue(qm->wq);
		return -ENOMEM;
	}

	ret = drmm_add_action_or_reset(drm, hpu_streams_release, qm);
	if (ret)
		return ret;
	hdev->qm = qm;

	for (e = 0; e < qm->num_engines; e++) {
		struct hpu_engine *eng = &qm->engines[e];

		for (s = 0; s < HPU_QM_STREAMS; s++) {
			ret = hpu_stream_init(qm, eng, s);
			if (ret)
				return ret;
		}

		ret = hpu_irq_request(hdev, HPU_VEC_ENGINE(eng->index),
				      hpu_stream_irq, eng,
				      hpu_stream_engine_name(eng->index));
		if (ret)
			return ret;
	}

	ret = hpu_streams_wb_init(qm);
	if (ret)
		return ret;

	for (e = 0; e < qm->num_engines; e++) {
		for (s = 0; s < HPU_QM_STREAMS; s++) {
			struct hpu_stream *stream = &qm->engines[e].streams[s];
			unsigned long flags;

			spin_lock_irqsave(&stream->lock, flags);
			ret = hpu_stream_hw_enable(stream);
			if (!ret)
				stream->enabled = true;
			spin_unlock_irqrestore(&stream->lock, flags);
			if (ret) {
				drm_err(drm, "%s: stream halted when enabled (STATUS 0x%08x)\n",
					stream->name,
					hpu_stream_rd(stream, HPU_QS_STATUS));
				hpu_streams_fini(hdev);
				return ret;
			}
		}
	}

	ret = hpu_uqs_init(hdev);
	if (ret)
		hpu_streams_fini(hdev);
	return ret;
}

/**
 * hpu_streams_fini() - stop every stream before the device is unbound
 * @hdev: the device, being removed (before drm_dev_unplug(), which then
 *	never waits behind a job) or a failed probe; no reset runs any more
 *	(hpu_reset_fini()). Ioctls may still run: jobs they push later fail
 *	-ENODEV at run_job without touching the device.
 *
 * Disables every stream and waits for them to stop, signals the jobs
 * that completed and fails the others with -ENODEV. A stream that does
 * not stop may still run a job: bus mastering is turned off before any
 * fence signals, so that the job's host pages cannot be reached once
 * they go back to the kernel (nothing allocates the device's HBM after
 * this). The schedulers stay until the DRM device is released, so files
 * still open can tear their queues down. May sleep.
 */
void hpu_streams_fini(struct hpu_device *hdev)
{
	struct hpu_qm *qm = hdev->qm;
	bool present, busy = false, fence_cookie;
	unsigned int e, s, stuck = 0;
	unsigned long flags;

	if (!qm)
		return;

	/* User streams first: their doorbells leave the processes. */
	hpu_uqs_fini(hdev);

	/* The fences of the jobs on the streams signal through this. */
	fence_cookie = dma_fence_begin_signalling();
	present = hpu_rd32(hdev, HPU_REG_MAGIC) != U32_MAX;
	if (present) {
		for (e = 0; e < qm->num_engines; e++) {
			for (s = 0; s < HPU_QM_STREAMS; s++) {
				struct hpu_stream *stream = &qm->engines[e].streams[s];

				if (!stream->hdev)
					continue;	/* never initialised */
				/*
				 * After a restart in progress: once halted, no
				 * restart resumes the stream (it finds it
				 * stopped; resets are over).
				 */
				mutex_lock(&stream->recover_lock);
				spin_lock_irqsave(&stream->lock, flags);
				if (stream->enabled)
					hpu_stream_halt_locked(stream);
				spin_unlock_irqrestore(&stream->lock, flags);
				mutex_unlock(&stream->recover_lock);
			}
		}
		for (e = 0; e < qm->num_engines; e++) {
			for (s = 0; s < HPU_QM_STREAMS; s++) {
				struct hpu_stream *stream = &qm->engines[e].streams[s];

				if (stream->enabled && hpu_stream_wait_idle(stream)) {
					busy = true;
					stuck++;
				}
			}
		}
	}
	if (busy) {
		drm_err(&hdev->drm, "%u streams did not stop at shutdown: bus mastering turned off before their jobs fail\n",
			stuck);
		pci_clear_master(hdev->pdev);
		/* The removal resets the function before letting go of it. */
		hpu_reset_set_unquiet(hdev);
	}

	for (e = 0; e < qm->num_engines; e++)
		for (s = 0; s < HPU_QM_STREAMS; s++)
			hpu_stream_shutdown(&qm->engines[e].streams[s], present);
	dma_fence_end_signalling(fence_cookie);

	/* Finds the streams disabled: does nothing more. */
	for (e = 0; e < qm->num_engines; e++)
		cancel_work_sync(&qm->engines[e].hang_work);
}

/* Command buffer of the self-test: NOP, then WRITE_VALUE to host memory. */
#define HPU_SELF_TEST_CB_SIZE		24
#define HPU_SELF_TEST_CB_STRIDE		32
#define HPU_SELF_TEST_RESULT_OFFSET	2048
#define HPU_SELF_TEST_MAGIC		0x5e1f7e00

/*
 * Pushes the self-test job of stream @i to @entity: a NOP and a WRITE_VALUE
 * of a magic to its result slot in @buf. *@fence becomes the job's finished
 * fence.
 */
static int hpu_stream_self_test_push(struct hpu_qm *qm, unsigned int i,
				     void *buf, dma_addr_t buf_dma,
				     struct drm_sched_entity *entity,
				     struct dma_fence **fence)
{
	u64 result = buf_dma + HPU_SELF_TEST_RESULT_OFFSET + 4 * i;
	u64 cb_dma = buf_dma + HPU_SELF_TEST_CB_STRIDE * i;
	__le32 *cb = buf + HPU_SELF_TEST_CB_STRIDE * i;
	struct hpu_job *job;
	int ret;

	cb[0] = cpu_to_le32(HPU_PKT_NOP);
	cb[1] = 0;
	cb[2] = cpu_to_le32(HPU_PKT_WRITE_VALUE);
	cb[3] = cpu_to_le32(HPU_SELF_TEST_MAGIC | i);
	cb[4] = cpu_to_le32(lower_32_bits(HPU_ADDR_HOST | result));
	cb[5] = cpu_to_le32(upper_32_bits(HPU_ADDR_HOST | result));

	ret = hpu_job_create(qm, entity, NULL, 0, HPU_ADDR_HOST | cb_dma,
			     HPU_SELF_TEST_CB_SIZE, &job);
	if (ret)
		return ret;

	drm_sched_job_arm(&job->base);
	*fence = dma_fence_get(&job->base.s_fence->finished);
	drm_sched_entity_push_job(&job->base);
	return 0;
}

/* Waits for stream @i's self-test job; false (and says why) if it failed. */
static bool hpu_stream_self_test_check(struct hpu_qm *qm, unsigned int i,
				       void *buf, struct dma_fence *fence)
{
	struct hpu_stream *stream = hpu_stream_nth(qm, i);
	struct drm_device *drm = &qm->hdev->drm;
	u32 *result = buf + HPU_SELF_TEST_RESULT_OFFSET + 4 * i;
	unsigned long flags;
	long left;
	u32 wb_pi;

	left = dma_fence_wait_timeout(fence, false,
				      msecs_to_jiffies(HPU_SELF_TEST_TIMEOUT_MS));
	if (left <= 0) {
		/* Spec version 9: the interrupt goes by the record's cq_pi. */
		spin_lock_irqsave(&stream->lock, flags);
		wb_pi = stream->wb ? le32_to_cpu(READ_ONCE(stream->wb->cq_pi)) : 0;
		spin_unlock_irqrestore(&stream->lock, flags);
		drm_err(drm, "self-test: no completion on %s within %u ms (CI %u, CQ_PI %u, STATUS 0x%08x, write-back cq_pi %u)\n",
			stream->name, HPU_SELF_TEST_TIMEOUT_MS,
			hpu_stream_rd(stream, HPU_QS_CI),
			hpu_stream_rd(stream, HPU_QS_CQ_PI),
			hpu_stream_rd(stream, HPU_QS_STATUS), wb_pi);
		return false;
	}
	if (fence->error) {
		drm_err(drm, "self-test: job on %s failed: %d\n",
			stream->name, fence->error);
		return false;
	}
	if (READ_ONCE(*result) != (HPU_SELF_TEST_MAGIC | i)) {
		drm_err(drm, "self-test: job on %s completed but wrote 0x%08x, expected 0x%08x\n",
			stream->name, READ_ONCE(*result),
			HPU_SELF_TEST_MAGIC | i);
		return false;
	}
	return true;
}

/**
 * hpu_streams_self_test() - run a kernel job on every stream
 * @hdev: the device, with its streams enabled
 *
 * Submits, on every stream, an ASID-0 command buffer in host memory made
 * of a NOP and a WRITE_VALUE to host memory, through the same scheduler
 * path as user jobs, and checks that every job completes without error
 * and that every value arrived. May sleep.
 *
 * Return: 0, -EIO if a job failed or a value is wrong, or another
 * negative error code.
 */
int hpu_streams_self_test(struct hpu_device *hdev)
{
	struct hpu_qm *qm = hdev->qm;
	struct drm_device *drm = &hdev->drm;
	unsigned int n = qm->num_engines * HPU_QM_STREAMS;
	struct drm_sched_entity *entities;
	struct dma_fence **fences;
	unsigned int i, started = 0;
	dma_addr_t buf_dma;
	void *buf;
	int ret = 0;

	if (!n)
		return 0;
	BUILD_BUG_ON(HPU_MAX_ENGINES * HPU_QM_STREAMS * HPU_SELF_TEST_CB_STRIDE >
		     HPU_SELF_TEST_RESULT_OFFSET);
	BUILD_BUG_ON(HPU_SELF_TEST_RESULT_OFFSET +
		     4 * HPU_MAX_ENGINES * HPU_QM_STREAMS > SZ_4K);

	buf = dma_alloc_coherent(drm->dev, SZ_4K, &buf_dma, GFP_KERNEL);
	entities = kcalloc(n, sizeof(*entities), GFP_KERNEL);
	fences = kcalloc(n, sizeof(*fences), GFP_KERNEL);
	if (!buf || !entities || !fences) {
		ret = -ENOMEM;
		goto out_free;
	}

	for (i = 0; i < n; i++) {
		struct drm_gpu_scheduler *sched = &hpu_stream_nth(qm, i)->sched;

		ret = drm_sched_entity_init(&entities[i], DRM_SCHED_PRIORITY_KERNEL,
					    &sched, 1, NULL);
		if (ret)
			break;
		started++;
		ret = hpu_stream_self_test_push(qm, i, buf, buf_dma,
						&entities[i], &fences[i]);
		if (ret)
			break;
	}

	for (i = 0; i < started; i++) {
		if (fences[i] && !hpu_stream_self_test_check(qm, i, buf, fences[i]))
			ret = -EIO;
	}

	/*
	 * Destroying an entity waits until its job has been handed to the
	 * stream; a job the device never completes is failed by the timeout
	 * handler or by hpu_streams_fini(), so the fences below always signal.
	 */
	for (i = 0; i < started; i++)
		drm_sched_entity_destroy(&entities[i]);
	if (ret)
		hpu_streams_fini(hdev);
	for (i = 0; i < started; i++) {
		if (fences[i]) {
			dma_fence_wait(fences[i], false);
			dma_fence_put(fences[i]);
		}
	}
	if (!ret)
		drm_dbg_driver(drm, "self-test: %u streams ran a kernel job\n", n);

out_free:
	kfree(fences);
	kfree(entities);
	if (buf)
		dma_free_coherent(drm->dev, SZ_4K, buf, buf_dma);
	return ret;
}

/**
 * hpu_stream_engine() - look an engine up by class and index in the class
 * @qm: the queue managers
 * @klass: DRM_HPU_ENGINE_*
 * @index: engine of the class, from 0
 *
 * Return: the engine, or NULL for an unknown class or an index beyond the
 * engines of the class the device has.
 */
struct hpu_engine *hpu_stream_engine(struct hpu_qm *qm, u32 klass, u32 index)
{
	if (klass >= HPU_ENGINE_CLASSES || index >= qm->class_count[klass])
		return NULL;
	return &qm->engines[qm->class_first[klass] + index];
}

/**
 * hpu_stream_pick() - the stream a new queue goes on
 * @engine: the queue's engine
 *
 * Return: the stream of @engine with the fewest queues; ties go to the
 * lowest.
 */
struct hpu_stream *hpu_stream_pick(struct hpu_engine *engine)
{
	struct hpu_stream *best = NULL;
	unsigned int s;

	for (s = 0; s < HPU_QM_STREAMS; s++) {
		struct hpu_stream *stream = &engine->streams[s];

		if (!best || atomic_read(&stream->num_queues) <
			     atomic_read(&best->num_queues))
			best = stream;
	}

	return best;
}
