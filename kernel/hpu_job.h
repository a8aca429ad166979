/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: jobs: one command buffer run on a stream, through drm_sched or
 * submitted directly.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_JOB_H__
#define __HPU_JOB_H__

#include <linux/dma-fence.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include <drm/gpu_scheduler.h>

#include "hpu_accel.h"

struct dma_fence;
struct drm_device;
struct drm_file;
struct hpu_file_priv;
struct hpu_out_sync;
struct hpu_qm;
struct drm_syncobj;
struct hpu_queue;
struct hpu_stream;
struct hpu_vm;
struct work_struct;

/**
 * struct hpu_queue_fence - the fence a direct job shows outside the driver
 * @base: the fence: context &hpu_queue.fence_ctx, seqno the job's
 *	&drm_hpu_submit.seq. A stream completes jobs out of order when it
 *	fails some (cancelled, stale, timed out) and puts others back;
 *	these fences signal in queue order all the same, as dma_resv,
 *	syncobjs and dependency lists expect of one context.
 * @lock: @base's lock.
 * @link: entry in &hpu_queue.direct until signalled (holds a reference).
 * @error: the job's error, set with @done.
 * @done: the job's hardware fence has signalled; @base signals once
 *	every earlier queue fence of the queue has, and @prev.
 * @queue: the job's queue, alive until @base has signalled.
 * @prev: the finished fence of the scheduled job queued just before, if
 *	it had not signalled then (referenced), or NULL.
 * @prev_cb: callback on @prev.
 * @prev_done: @prev has signalled (set under &hpu_qm.done_lock).
 */
struct hpu_queue_fence {
	struct dma_fence base;
	spinlock_t lock;	/* @base's lock */
	struct list_head link;
	int error;
	bool done;
	struct hpu_queue *queue;
	struct dma_fence *prev;
	struct dma_fence_cb prev_cb;
	bool prev_done;
};

/**
 * struct hpu_job - a command buffer on its way through a stream
 * @base: the scheduler job; unused by a direct job.
 * @direct: the SUBMIT ioctl put the job on its stream itself, without the
 *	scheduler (nothing to wait for, Documentation/driver/submission.md):
 *	@base was never initialised, @qfence is the fence the out-syncs
 *	and the VM's reservation hold, and the job is freed by
 *	&hpu_qm.free_work once its hardware fence has signalled.
 * @sched_init: @base was initialised (drm_sched_job_init()).
 * @free_node: entry in &hpu_qm.free_list (direct jobs).
 * @qm: the device's queue managers (for the job count).
 * @queue: the queue of a user job, NULL for a kernel job. Only compared,
 *	except by a direct job until its queue fence is signalled (the
 *	queue waits for its last queue fence before it goes).
 * @fpriv: the file of a user job, NULL for a kernel job, for error
 *	notifications. Valid until the hardware fence is signalled: the
 *	file's queues wait for their jobs before the file goes.
 * @vm: the address space of a user job, referenced, NULL for a kernel
 *	job: the job counts in its &hpu_vm.jobs until it is freed.
 * @queue_id: the queue's id in its file (user jobs), for notifications.
 * @user_seq: the job's sequence number on its queue (&drm_hpu_submit.seq).
 * @generation: reset generation the job belongs to (its file's); a job
 *	of an older generation is failed with -ECANCELED instead of run.
 * @timeout: how long the job may run, in jiffies, counted from the time
 *	it reaches the head of its stream (the stream executes it).
 * @deadline: jiffies at which it times out, once @deadline_set.
 * @deadline_set: @deadline is valid (the job became the stream's head);
 *	cleared when the job is put back on a restarted stream.
 * @start_ns: ktime_get_ns() when the stream started executing the job
 *	(set with @deadline, under &hpu_stream.lock), 0 before; for the
 *	file's engine time (&hpu_file_priv.engine_ns).
 * @hung: its stream was hung (watchdog) when a reset stopped it.
 * @lost: failed by a hard reset.
 * @stream: the stream the job runs on (its entity's only scheduler).
 * @hw_fence: the hardware fence: allocated with the job, initialised by
 *	run_job (@hw_fence_init) and signalled when the completion record
 *	is consumed. The job holds one reference once it is initialised.
 * @hw_fence_init: @hw_fence was initialised (the job reached the ring).
 * @qfence: the queue fence of a user job, allocated with it; initialised
 *	(@qfence_init) only if the job goes directly. NULL for a kernel job.
 * @qfence_init: @qfence was initialised; the job holds a reference.
 * @cb_addr: command buffer address in @asid's address space.
 * @cb_size: command buffer bytes.
 * @asid: address space the command buffer runs in (0: the kernel's).
 * @seq: stream sequence number of the descriptor, set by run_job.
 * @link: entry in &hpu_stream.inflight while the descriptor is in the
 *	ring, then in a private list until the fence is signalled. Protected
 *	by &hpu_stream.lock while on the inflight list.
 * @on_hw: @link is on &hpu_stream.inflight (under &hpu_stream.lock).
 * @cancel_error: when non-zero, the job is being failed (-ETIMEDOUT: it
 *	timed out or hung; -ECANCELED: its queue is going away): a failed or
 *	missing completion reports this error (under &hpu_stream.lock). A job
 *	stopped with status ABORTED without it is innocent: it stays on the
 *	inflight list (@aborted) until the stream resumes.
 * @aborted: the device completed the job ABORTED at @fail_offset because
 *	the driver stopped its stream, and it has no cancel error: it stays on
 *	the inflight list, and when the stream resumes it is put back on the
 *	ring if nothing of it ran (@fail_offset 0) or after a soft reset, else
 *	failed with -ECANCELED (under &hpu_stream.lock).
 * @stop_kind: DRM_HPU_ERROR_* of the recovery that failed the job with
 *	-ECANCELED because it had partly run when its stream was stopped
 *	without a reset (the job was not the culprit), 0 otherwise; its
 *	file's event carries this kind.
 * @slot: ring index of the descriptor while @on_hw.
 * @error: errno the hardware fence signals with (0 for success); set
 *	when the job leaves the inflight list.
 * @status: completion status of the record (HPU_CQ_*), for the log.
 * @fail_offset: byte offset of the failing packet (of the packet it was
 *	stopped at, when @aborted), for the log.
 */
struct hpu_job {
	struct drm_sched_job base;
	bool direct;
	bool sched_init;
	struct llist_node free_node;
	struct hpu_qm *qm;
	struct hpu_queue *queue;
	struct hpu_file_priv *fpriv;
	struct hpu_vm *vm;
	u32 queue_id;
	u64 user_seq;
	u64 generation;
	unsigned long timeout;
	unsigned long deadline;
	bool deadline_set;
	u64 start_ns;
	bool hung;
	bool lost;
	struct hpu_stream *stream;
	struct dma_fence *hw_fence;
	bool hw_fence_init;
	struct hpu_queue_fence *qfence;
	bool qfence_init;
	u64 cb_addr;
	u32 cb_size;
	u16 asid;
	u64 seq;
	struct list_head link;
	bool on_hw;
	int cancel_error;
	bool aborted;
	u32 stop_kind;
	u32 slot;
	int error;
	u32 status;
	u32 fail_offset;
};

/**
 * struct hpu_submit_entry - one job of a SUBMIT or SUBMIT_ARRAY call
 * @args: the entry, copied in; @args.seq is set when the job is queued.
 * @tag: the entry's name in debug messages ("SUBMIT", "SUBMIT_ARRAY[i]").
 * @queue: the queue, referenced.
 * @in: the in-syncs, copied in, or NULL.
 * @out: the out-syncs, copied in, or NULL.
 * @out_syncs: @out resolved to syncobjs (and chain nodes), or NULL.
 * @num_out: entries of @out_syncs.
 * @in_fences: the in-syncs' fences (@args.num_in_syncs of them),
 *	referenced until they become scheduler dependencies or, for a direct
 *	job, are dropped; or NULL.
 * @in_syncobjs: the in-syncs' syncobjs (@args.num_in_syncs of them),
 *	each looked up once, referenced (its fence came from that object);
 *	or NULL.
 * @job: the job, or NULL before it is made.
 * @ready: every in-fence had signalled and the job's reset generation is
 *	the device's: the job has nothing to wait for.
 * @direct: the job goes to its stream directly; a ring slot is reserved
 *	for it (hpu_stream_direct_get()).
 * @lock_queue: the first entry of the call on @queue: it locks the queue.
 * @fence: the fence the out-syncs and the VM's reservation get once the
 *	job is queued, referenced.
 */
struct hpu_submit_entry {
	struct drm_hpu_submit args;
	char tag[32];
	struct hpu_queue *queue;
	struct drm_hpu_sync *in;
	struct drm_hpu_sync *out;
	struct hpu_out_sync *out_syncs;
	u32 num_out;
	struct dma_fence **in_fences;
	struct drm_syncobj **in_syncobjs;
	struct hpu_job *job;
	bool ready;
	bool direct;
	bool lock_queue;
	struct dma_fence *fence;
};

extern const struct drm_sched_backend_ops hpu_sched_ops;
extern const struct dma_fence_ops hpu_hw_fence_ops;

int hpu_job_create(struct hpu_qm *qm, struct drm_sched_entity *entity,
		   void *owner, u16 asid, u64 cb_addr, u32 cb_size,
		   struct hpu_job **out);
int hpu_job_cq_status_to_errno(u32 status);
u32 hpu_job_cq_status_kind(u32 status);
bool hpu_job_kind_has_detail(u32 kind);
void hpu_jobs_signal(struct list_head *done);
void hpu_jobs_free_work(struct work_struct *work);

int hpu_submit_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int hpu_submit_array_ioctl(struct drm_device *drm, void *data,
			   struct drm_file *file);

#if IS_ENABLED(CONFIG_KUNIT)
/* For the KUnit suites (kernel/tests/). */
u32 hpu_job_error_kind(const struct hpu_job *job);
int hpu_submit_check(struct drm_device *drm, const char *tag,
		     const struct drm_hpu_submit *args);
int hpu_submit_array_check(struct drm_device *drm,
			   const struct drm_hpu_submit_array *args);
void hpu_submit_decide(struct hpu_submit_entry *e, u32 count);
#endif

#endif /* __HPU_JOB_H__ */
