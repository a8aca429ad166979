// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: jobs: the SUBMIT ioctl, the scheduler back end (run, time out,
 * free) and the hardware fences the completion interrupt signals.
 *
 * The driver does not parse command buffers: the device refuses
 * privileged packets outside ASID 0 and its MMU confines every access to
 * the job's own address space, and a user job can only run in the ASID of
 * the file that submitted it.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/bsearch.h>
#include <linux/capability.h>
#include <linux/dma-fence.h>
#include <linux/dma-fence-chain.h>
#include <linux/dma-resv.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_syncobj.h>

#include "hpu_accel.h"
#include "hpu_drv.h"
#include "hpu_job.h"
#include "hpu_kunit.h"
#include "hpu_notify.h"
#include "hpu_limits.h"
#include "hpu_queue.h"
#include "hpu_stream.h"
#include "hpu_reset.h"
#include "hpu_vm.h"

/* Every engine a job can run on has a slot in &hpu_file_priv.engine_ns. */
static_assert(HPU_MAX_DMA_ENGINES <= HPU_FILE_MAX_ENGINES);
static_assert(sizeof(struct drm_hpu_submit) >= DRM_HPU_SUBMIT_SIZE_V1);
static_assert(offsetof(struct drm_hpu_submit, seq) + sizeof(__u64) <=
	      DRM_HPU_SUBMIT_SIZE_V1);

static inline struct hpu_job *to_hpu_job(struct drm_sched_job *sched_job)
{
	return container_of(sched_job, struct hpu_job, base);
}

static inline struct hpu_stream *to_hpu_stream(struct drm_gpu_scheduler *sched)
{
	return container_of(sched, struct hpu_stream, sched);
}

static const char *hpu_hw_fence_driver_name(struct dma_fence *fence)
{
	return HPU_DRIVER_NAME;
}

static const char *hpu_hw_fence_timeline_name(struct dma_fence *fence)
{
	struct hpu_stream *stream = container_of(fence->lock, struct hpu_stream,
						 fence_lock);

	return stream->name;
}

/* Hardware fences: one per job that reached a ring; freed with kfree_rcu. */
const struct dma_fence_ops hpu_hw_fence_ops = {
	.get_driver_name = hpu_hw_fence_driver_name,
	.get_timeline_name = hpu_hw_fence_timeline_name,
};

static const char *hpu_queue_fence_timeline_name(struct dma_fence *fence)
{
	return "queue";
}

/* Queue fences: one per direct job; freed with kfree_rcu. */
static const struct dma_fence_ops hpu_queue_fence_ops = {
	.get_driver_name = hpu_hw_fence_driver_name,
	.get_timeline_name = hpu_queue_fence_timeline_name,
};

/*
 * Signal the queue fences at the head of @queue's list whose job is done
 * (and whose scheduled predecessor has finished), in queue order, with
 * their errors: a fence never signals before an earlier one of its
 * queue. Under the lock, so that two CPUs completing jobs of one queue
 * cannot signal out of order; the queue is not touched once its last
 * fence may have signalled (hpu_queue_release() waits for it). Caller
 * holds &hpu_qm.done_lock.
 */
static void hpu_queue_fences_signal(struct hpu_queue *queue)
{
	struct hpu_queue_fence *qf, *tmp;
	LIST_HEAD(ready);

	while ((qf = list_first_entry_or_null(&queue->direct,
					      struct hpu_queue_fence, link)) &&
	       qf->done && qf->prev_done)
		list_move_tail(&qf->link, &ready);
	list_for_each_entry_safe(qf, tmp, &ready, link) {
		list_del_init(&qf->link);
		if (qf->error)
			dma_fence_set_error(&qf->base, qf->error);
		dma_fence_signal(&qf->base);
		/* Its signaller holds a reference: never the last here. */
		dma_fence_put(qf->prev);
		qf->prev = NULL;
		dma_fence_put(&qf->base);
	}
}

/* The scheduled job before a direct one has finished. */
static void hpu_queue_fence_prev_cb(struct dma_fence *prev,
				    struct dma_fence_cb *cb)
{
	struct hpu_queue_fence *qf = container_of(cb, struct hpu_queue_fence,
						  prev_cb);
	struct hpu_qm *qm = qf->queue->stream->hdev->qm;
	unsigned long flags;

	spin_lock_irqsave(&qm->done_lock, flags);
	qf->prev_done = true;
	hpu_queue_fences_signal(qf->queue);
	spin_unlock_irqrestore(&qm->done_lock, flags);
}

/*
 * Make @job's queue fence the next of its queue's (@seq its uapi
 * sequence number) and return a reference to it. A scheduled job queued
 * before it that has not finished yet (&hpu_queue.last_fence, of another
 * context) is waited for too: a job that fails is never overtaken by a
 * later one of its queue. Caller holds the queue's lock; the job is not
 * on its stream yet.
 */
static struct dma_fence *hpu_queue_fence_init(struct hpu_queue *queue,
					      struct hpu_job *job, u64 seq)
{
	struct hpu_queue_fence *qf = job->qfence;
	struct dma_fence *prev = queue->last_fence;
	unsigned long flags;

	spin_lock_init(&qf->lock);
	dma_fence_init(&qf->base, &hpu_queue_fence_ops, &qf->lock,
		       queue->fence_ctx, seq);
	job->qfence_init = true;
	qf->queue = queue;
	qf->prev_done = true;
	if (prev && prev->context != queue->fence_ctx) {
		qf->prev = dma_fence_get(prev);
		qf->prev_done = false;
	}
	/* The list's reference, dropped once signalled. */
	dma_fence_get(&qf->base);
	spin_lock_irqsave(&job->qm->done_lock, flags);
	list_add_tail(&qf->link, &queue->direct);
	spin_unlock_irqrestore(&job->qm->done_lock, flags);

	/* Outside the lock: signalling @prev may run the callback. */
	if (qf->prev &&
	    dma_fence_add_callback(qf->prev, &qf->prev_cb,
				   hpu_queue_fence_prev_cb))
		hpu_queue_fence_prev_cb(qf->prev, &qf->prev_cb);
	return dma_fence_get(&qf->base);
}

/* @job, direct, is done: its queue fence may signal (in queue order). */
static void hpu_queue_fence_done(struct hpu_job *job)
{
	struct hpu_queue_fence *qf = job->qfence;
	unsigned long flags;

	spin_lock_irqsave(&job->qm->done_lock, flags);
	qf->error = job->error;
	qf->done = true;
	hpu_queue_fences_signal(job->queue);
	spin_unlock_irqrestore(&job->qm->done_lock, flags);
}

/**
 * hpu_job_cq_status_to_errno() - the fence error of a completion status
 * @status: HPU_CQ_* from a completion record
 *
 * Return: 0 for OK, else the negative errno documented on
 * &struct drm_hpu_submit.
 */
int hpu_job_cq_status_to_errno(u32 status)
{
	switch (status) {
	case HPU_CQ_OK:
		return 0;
	case HPU_CQ_MMU_FAULT:
		return -EFAULT;
	case HPU_CQ_BAD_PACKET:
		return -EINVAL;
	case HPU_CQ_PRIV:
		return -EPERM;
	case HPU_CQ_ABORTED:
		return -ECANCELED;
	case HPU_CQ_ECC:
		return -EBADMSG;
	case HPU_CQ_BAD_LAUNCH:
		return -ENOEXEC;
	case HPU_CQ_TPC_ILLEGAL:
		return -EILSEQ;
	case HPU_CQ_TPC_ASSERT:
		return -EDOM;
	case HPU_CQ_BAD_DESC:
	case HPU_CQ_BUS_ERROR:
	default:
		return -EIO;
	}
}
EXPORT_SYMBOL_IF_KUNIT(hpu_job_cq_status_to_errno);

static const char * const hpu_cq_status_names[] = {
	[HPU_CQ_OK] = "OK",
	[HPU_CQ_MMU_FAULT] = "MMU_FAULT",
	[HPU_CQ_BAD_PACKET] = "BAD_PACKET",
	[HPU_CQ_PRIV] = "PRIV",
	[HPU_CQ_BAD_DESC] = "BAD_DESC",
	[HPU_CQ_BUS_ERROR] = "BUS_ERROR",
	[HPU_CQ_ABORTED] = "ABORTED",
	[HPU_CQ_ECC] = "ECC",
	[HPU_CQ_BAD_LAUNCH] = "BAD_LAUNCH",
	[HPU_CQ_TPC_ILLEGAL] = "TPC_ILLEGAL",
	[HPU_CQ_TPC_ASSERT] = "TPC_ASSERT",
};

static const char *hpu_cq_status_name(u32 status)
{
	if (status < ARRAY_SIZE(hpu_cq_status_names))
		return hpu_cq_status_names[status];
	return "unknown";
}

/*
 * The DRM_HPU_ERROR_* kind of a failed job, or 0 when its file is not to
 * be told (it cancelled the job itself by destroying its queue).
 */
VISIBLE_IF_KUNIT u32 hpu_job_error_kind(const struct hpu_job *job)
{
	if (job->hung)
		return DRM_HPU_ERROR_ENGINE_HANG;
	if (job->stop_kind)
		return job->stop_kind;
	if (job->error == -ETIMEDOUT)
		return DRM_HPU_ERROR_TIMEOUT;
	if (job->lost || job->error == -ENODEV)
		return DRM_HPU_ERROR_DEVICE_LOST;
	return hpu_job_cq_status_kind(job->status);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_job_error_kind);

/**
 * hpu_job_cq_status_kind() - the error event kind of a completion status
 * @status: HPU_CQ_* from a completion record
 *
 * Return: the DRM_HPU_ERROR_* kind, 0 for OK, ABORTED and unknown values.
 */
u32 hpu_job_cq_status_kind(u32 status)
{
	switch (status) {
	case HPU_CQ_MMU_FAULT:
		return DRM_HPU_ERROR_MMU_FAULT;
	case HPU_CQ_BAD_PACKET:
	case HPU_CQ_BAD_DESC:
		return DRM_HPU_ERROR_BAD_PACKET;
	case HPU_CQ_PRIV:
		return DRM_HPU_ERROR_PRIV;
	case HPU_CQ_BUS_ERROR:
		return DRM_HPU_ERROR_DMA_BUS;
	case HPU_CQ_ECC:
		return DRM_HPU_ERROR_ECC;
	case HPU_CQ_BAD_LAUNCH:
		return DRM_HPU_ERROR_BAD_LAUNCH;
	case HPU_CQ_TPC_ILLEGAL:
		return DRM_HPU_ERROR_TPC_ILLEGAL;
	case HPU_CQ_TPC_ASSERT:
		return DRM_HPU_ERROR_TPC_ASSERT;
	default:
		return 0;
	}
}

/**
 * hpu_job_kind_has_detail() - whether the device reports an error kind
 *	with an event of its own
 * @kind: DRM_HPU_ERROR_*
 *
 * Return: true for MMU faults and the compute errors, whose device event
 * hpu_notify_job_detail() pairs with the failed job.
 */
bool hpu_job_kind_has_detail(u32 kind)
{
	return kind == DRM_HPU_ERROR_MMU_FAULT ||
	       kind == DRM_HPU_ERROR_BAD_LAUNCH ||
	       kind == DRM_HPU_ERROR_TPC_ILLEGAL ||
	       kind == DRM_HPU_ERROR_TPC_ASSERT;
}

/**
 * hpu_jobs_signal() - signal the hardware fences of finished jobs
 * @done: jobs taken off their stream's inflight list, &hpu_job.error set
 *
 * Empties @done. Called without any stream lock held, from interrupt or
 * process context. A failed job of a file is reported to the file
 * (hpu_notify_job_error()) before its fence signals, while the file is
 * certain to exist; for an error the device also reports with an event
 * (MMU fault, compute errors), that event is paired with the job
 * (hpu_notify_job_detail()). A scheduled job may be freed as soon as its
 * fence is signalled; a direct job gives its ring slot back and goes to
 * &hpu_qm.free_work, which frees it in process context.
 */
void hpu_jobs_signal(struct list_head *done)
{
	struct hpu_job *job, *tmp;

	list_for_each_entry_safe(job, tmp, done, link) {
		struct hpu_stream *stream = job->stream;
		struct dma_fence *fence = dma_fence_get(job->hw_fence);
		bool direct = job->direct;
		u32 kind;

		list_del_init(&job->link);
		atomic64_inc(&stream->completed);
		/* The file's engine time (fdinfo); the file still exists. */
		if (job->fpriv && job->start_ns)
			atomic64_add(ktime_get_ns() - job->start_ns,
				     &job->fpriv->engine_ns[stream->engine]);
		if (job->error) {
			atomic64_inc(&stream->failed);
			drm_dbg_driver(&stream->hdev->drm,
				       "%s: job %llu (asid %u, cb 0x%llx) failed: %s at offset %u, error %d\n",
				       stream->name, job->seq, job->asid,
				       job->cb_addr, hpu_cq_status_name(job->status),
				       job->fail_offset, job->error);
			dma_fence_set_error(fence, job->error);
			kind = job->fpriv ? hpu_job_error_kind(job) : 0;
			if (hpu_job_kind_has_detail(kind))
				hpu_notify_job_detail(stream->hdev, job->asid,
						      kind, stream->engine,
						      job->queue_id,
						      job->user_seq);
			if (kind)
				hpu_notify_job_error(job->fpriv, kind,
						     stream->engine,
						     job->queue_id, job->error,
						     job->user_seq, 0);
		}
		dma_fence_signal(fence);
		dma_fence_put(fence);
		if (direct) {
			struct hpu_qm *qm = job->qm;

			/* Last: the queue and its file may go once it is. */
			hpu_queue_fence_done(job);
			hpu_stream_direct_put(stream);
			if (llist_add(&job->free_node, &qm->free_list))
				queue_work(qm->wq, &qm->free_work);
		}
	}
}

static struct dma_fence *hpu_sched_run_job(struct drm_sched_job *sched_job)
{
	struct hpu_job *job = to_hpu_job(sched_job);
	struct hpu_stream *stream = to_hpu_stream(sched_job->sched);
	int idx, ret;

	/* A job of a context that a hard reset destroyed never runs. */
	if (job->generation != hpu_reset_generation(stream->hdev)) {
		ret = -ECANCELED;
	} else if (!drm_dev_enter(&stream->hdev->drm, &idx)) {
		ret = -ENODEV;
	} else {
		job->stream = stream;
		ret = hpu_stream_submit(stream, job);
		drm_dev_exit(idx);
	}

	/*
	 * The job has its sequence number on the stream (or never gets one):
	 * later jobs of its queue may go to the stream directly. The queue
	 * is alive: destroying its entity waits for run_job.
	 */
	if (job->queue)
		atomic_dec(&job->queue->sched_pending);
	if (ret)
		return ERR_PTR(ret);

	/* The scheduler takes this reference; the job keeps its own. */
	return dma_fence_get(job->hw_fence);
}

/*
 * The schedulers run without a timeout (MAX_SCHEDULE_TIMEOUT): every job
 * has its own, enforced per stream by hpu_stream_tdr_work(). This is
 * never called.
 */
static enum drm_gpu_sched_stat
hpu_sched_timedout_job(struct drm_sched_job *sched_job)
{
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

static void hpu_job_release(struct hpu_job *job)
{
	struct hpu_qm *qm = job->qm;

	if (job->hw_fence_init)
		dma_fence_put(job->hw_fence);
	else
		kfree(job->hw_fence);
	if (job->qfence_init)
		dma_fence_put(&job->qfence->base);
	else
		kfree(job->qfence);
	if (job->vm) {
		atomic_dec(&job->vm->jobs);
		hpu_vm_put(job->vm);
	}
	kfree(job);

	if (atomic_dec_and_test(&qm->jobs))
		wake_up_all(&qm->jobs_wq);
}

static void hpu_sched_free_job(struct drm_sched_job *sched_job)
{
	struct hpu_job *job = to_hpu_job(sched_job);

	drm_sched_job_cleanup(sched_job);
	hpu_job_release(job);
}

/* Scheduler back end of every stream. */
const struct drm_sched_backend_ops hpu_sched_ops = {
	.run_job = hpu_sched_run_job,
	.timedout_job = hpu_sched_timedout_job,
	.free_job = hpu_sched_free_job,
};

/**
 * hpu_jobs_free_work() - free the direct jobs whose fence has signalled
 * @work: &hpu_qm.free_work
 *
 * Direct jobs have no scheduler to free them: hpu_jobs_signal() hands
 * them over here, off the completion path (the last reference to the
 * address space may be dropped here, which sleeps).
 */
void hpu_jobs_free_work(struct work_struct *work)
{
	struct hpu_qm *qm = container_of(work, struct hpu_qm, free_work);
	struct hpu_job *job, *tmp;
	struct llist_node *list;

	list = llist_del_all(&qm->free_list);
	llist_for_each_entry_safe(job, tmp, list, free_node)
		hpu_job_release(job);
}

/*
 * Allocate a job and its hardware fence, not initialised for a scheduler
 * entity (a direct job never is). The job gets the device's current reset
 * generation and the default timeout, and counts in &hpu_qm.jobs.
 */
static struct hpu_job *hpu_job_alloc(struct hpu_qm *qm, u16 asid,
				     u64 cb_addr, u32 cb_size)
{
	struct hpu_job *job;

	/* Made for the submitter: charged to its memory cgroup. */
	job = kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT);
	if (!job)
		return NULL;

	/* Allocated here: run_job is in the fence signalling path. */
	job->hw_fence = kzalloc(sizeof(*job->hw_fence), GFP_KERNEL_ACCOUNT);
	if (!job->hw_fence) {
		kfree(job);
		return NULL;
	}

	job->qm = qm;
	job->generation = hpu_reset_generation(qm->hdev);
	job->timeout = msecs_to_jiffies(qm->timeout_ms);
	job->asid = asid;
	job->cb_addr = cb_addr;
	job->cb_size = cb_size;
	INIT_LIST_HEAD(&job->link);
	atomic_inc(&qm->jobs);
	return job;
}

/**
 * hpu_job_create() - allocate a job and initialise it for an entity
 * @qm: the device's queue managers
 * @entity: the scheduler entity the job will be pushed to
 * @owner: the drm_file of a user job, NULL for a kernel job
 * @asid: the address space the command buffer runs in
 * @cb_addr: command buffer address in @asid
 * @cb_size: command buffer bytes
 * @out: the new job
 *
 * The job gets the device's current reset generation and the default
 * timeout. The caller adds dependencies, then arms and pushes the job, or
 * gives it up with hpu_job_abort() before it is armed.
 *
 * Return: 0, -ENOMEM, or an error from drm_sched_job_init().
 */
int hpu_job_create(struct hpu_qm *qm, struct drm_sched_entity *entity,
		   void *owner, u16 asid, u64 cb_addr, u32 cb_size,
		   struct hpu_job **out)
{
	struct hpu_job *job;
	int ret;

	job = hpu_job_alloc(qm, asid, cb_addr, cb_size);
	if (!job)
		return -ENOMEM;

	ret = drm_sched_job_init(&job->base, entity, 1, owner);
	if (ret) {
		hpu_job_release(job);
		return ret;
	}
	job->sched_init = true;

	*out = job;
	return 0;
}

/**
 * hpu_job_abort() - free a job that was never armed nor submitted
 * @job: the job
 */
static void hpu_job_abort(struct hpu_job *job)
{
	if (job->sched_init)
		drm_sched_job_cleanup(&job->base);
	hpu_job_release(job);
}

/**
 * struct hpu_out_sync - an out-sync resolved at submit
 * @syncobj: the syncobj, referenced.
 * @chain: a preallocated chain node for a timeline point, else NULL.
 * @point: the timeline point, 0 for a binary syncobj.
 */
struct hpu_out_sync {
	struct drm_syncobj *syncobj;
	struct dma_fence_chain *chain;
	u64 point;
};

static int hpu_copy_syncs(struct drm_device *drm, const char *tag,
			  const char *what, u64 uptr, u32 count,
			  struct drm_hpu_sync **out)
{
	struct drm_hpu_sync *syncs;
	u32 i;

	*out = NULL;
	if (!count)
		return 0;

	syncs = kmalloc_array(count, sizeof(*syncs), GFP_KERNEL);
	if (!syncs)
		return -ENOMEM;

	if (copy_from_user(syncs, u64_to_user_ptr(uptr),
			   count * sizeof(*syncs))) {
		drm_dbg_driver(drm, "%s: cannot read %s at 0x%llx\n",
			       tag, what, uptr);
		kfree(syncs);
		return -EFAULT;
	}

	for (i = 0; i < count; i++) {
		if (syncs[i].flags) {
			drm_dbg_driver(drm, "%s: %s[%u].flags 0x%x must be zero\n",
				       tag, what, i, syncs[i].flags);
			kfree(syncs);
			return -EINVAL;
		}
	}

	*out = syncs;
	return 0;
}

VISIBLE_IF_KUNIT int hpu_submit_check(struct drm_device *drm, const char *tag,
				      const struct drm_hpu_submit *args)
{
	u32 user_max = READ_ONCE(to_hpu_device(drm)->limits->user_timeout_ms);

	if (args->flags) {
		drm_dbg_driver(drm, "%s: flags 0x%x must be zero\n",
			       tag, args->flags);
		return -EINVAL;
	}
	if (args->timeout_ms > HPU_JOB_TIMEOUT_MAX_MS) {
		drm_dbg_driver(drm, "%s: timeout_ms %u is more than %u\n",
			       tag, args->timeout_ms, HPU_JOB_TIMEOUT_MAX_MS);
		return -EINVAL;
	}
	/* capable() last: it marks the task as having used the capability. */
	if (args->timeout_ms > user_max && !capable(CAP_SYS_ADMIN)) {
		drm_dbg_driver(drm, "%s: timeout_ms %u is more than %u without CAP_SYS_ADMIN\n",
			       tag, args->timeout_ms, user_max);
		return -EINVAL;
	}
	if (!args->cb_size || !IS_ALIGNED(args->cb_size, 8) ||
	    args->cb_size > HPU_CB_MAX_SIZE) {
		drm_dbg_driver(drm, "%s: cb_size %u is not a multiple of 8 from 8 to %u\n",
			       tag, args->cb_size, HPU_CB_MAX_SIZE);
		return -EINVAL;
	}
	if (!IS_ALIGNED(args->cb_va, 8)) {
		drm_dbg_driver(drm, "%s: cb_va 0x%llx is not 8-byte aligned\n",
			       tag, args->cb_va);
		return -EINVAL;
	}
	if (args->cb_va < HPU_VA_START || args->cb_va >= HPU_VA_END ||
	    args->cb_size > HPU_VA_END - args->cb_va) {
		drm_dbg_driver(drm, "%s: command buffer 0x%llx+0x%x outside [0x%llx, 0x%llx)\n",
			       tag, args->cb_va, args->cb_size, HPU_VA_START,
			       HPU_VA_END);
		return -EINVAL;
	}
	if (args->num_in_syncs > DRM_HPU_MAX_SYNCS ||
	    args->num_out_syncs > DRM_HPU_MAX_SYNCS) {
		drm_dbg_driver(drm, "%s: %u in-syncs and %u out-syncs, at most %u each\n",
			       tag, args->num_in_syncs, args->num_out_syncs,
			       DRM_HPU_MAX_SYNCS);
		return -EINVAL;
	}

	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_submit_check);

VISIBLE_IF_KUNIT int
hpu_submit_array_check(struct drm_device *drm,
		       const struct drm_hpu_submit_array *args)
{
	if (args->flags) {
		drm_dbg_driver(drm, "SUBMIT_ARRAY: flags 0x%x must be zero\n",
			       args->flags);
		return -EINVAL;
	}
	if (!args->count || args->count > DRM_HPU_MAX_SUBMITS) {
		drm_dbg_driver(drm, "SUBMIT_ARRAY: count %u is not 1 to %u\n",
			       args->count, DRM_HPU_MAX_SUBMITS);
		return -EINVAL;
	}
	if (args->entry_size < DRM_HPU_SUBMIT_SIZE_V1 ||
	    args->entry_size > DRM_HPU_SUBMIT_ENTRY_MAX) {
		drm_dbg_driver(drm, "SUBMIT_ARRAY: entry_size %u is not %u to %u\n",
			       args->entry_size, DRM_HPU_SUBMIT_SIZE_V1,
			       DRM_HPU_SUBMIT_ENTRY_MAX);
		return -EINVAL;
	}
	if (args->pad) {
		drm_dbg_driver(drm, "SUBMIT_ARRAY: pad 0x%x must be zero\n",
			       args->pad);
		return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_submit_array_check);

/* Resolve the out-syncs before the job is queued: nothing may fail after. */
static int hpu_out_syncs_get(struct drm_device *drm, struct drm_file *file,
			     struct hpu_submit_entry *e)
{
	u32 i;

	for (i = 0; i < e->num_out; i++) {
		struct hpu_out_sync *o = &e->out_syncs[i];

		o->syncobj = drm_syncobj_find(file, e->out[i].handle);
		if (!o->syncobj) {
			drm_dbg_driver(drm, "%s: out_syncs[%u]: no syncobj %u\n",
				       e->tag, i, e->out[i].handle);
			return -ENOENT;
		}
		o->point = e->out[i].point;
		if (o->point) {
			o->chain = dma_fence_chain_alloc();
			if (!o->chain)
				return -ENOMEM;
		}
	}

	return 0;
}

/*
 * The fence of @syncobj at @point (0: its fence), referenced, as
 * drm_syncobj_find_fence() finds it without flags: an already signalled
 * timeline point gives a signalled stub fence.
 *
 * Return: 0; -EINVAL if there is no fence (or no such point yet).
 */
static int hpu_syncobj_fence(struct drm_syncobj *syncobj, u64 point,
			     struct dma_fence **out)
{
	struct dma_fence *fence = drm_syncobj_fence_get(syncobj);
	int ret;

	*out = NULL;
	if (!fence)
		return -EINVAL;
	ret = dma_fence_chain_find_seqno(&fence, point);
	if (ret) {
		dma_fence_put(fence);
		return -EINVAL;
	}
	*out = fence ? fence : dma_fence_get_stub();
	return 0;
}

/*
 * Look the in-syncs' fences up, referenced, and note whether the job has
 * anything to wait for (&hpu_submit_entry.ready, with the generation).
 */
static int hpu_in_fences_get(struct drm_device *drm, struct drm_file *file,
			     struct hpu_submit_entry *e)
{
	u32 i, count = e->args.num_in_syncs;
	int ret;

	if (!count)
		return 0;
	e->in_fences = kcalloc(count, sizeof(*e->in_fences), GFP_KERNEL);
	e->in_syncobjs = kcalloc(count, sizeof(*e->in_syncobjs), GFP_KERNEL);
	if (!e->in_fences || !e->in_syncobjs)
		return -ENOMEM;

	for (i = 0; i < count; i++) {
		/*
		 * Looked up once: the fence comes from the object the
		 * SUBMIT_ARRAY order check compares (hpu_submit_no_chain()),
		 * whatever SYNCOBJ_DESTROY and CREATE do to the handle.
		 */
		e->in_syncobjs[i] = drm_syncobj_find(file, e->in[i].handle);
		ret = e->in_syncobjs[i] ?
		      hpu_syncobj_fence(e->in_syncobjs[i], e->in[i].point,
					&e->in_fences[i]) : -ENOENT;
		if (ret) {
			drm_dbg_driver(drm, "%s: in_syncs[%u]: syncobj %u point %llu: %s %d\n",
				       e->tag, i, e->in[i].handle,
				       e->in[i].point,
				       ret == -ENOENT ? "no such syncobj" :
				       "no fence to wait for", ret);
			return ret;
		}
		if (!dma_fence_is_signaled(e->in_fences[i]))
			e->ready = false;
	}

	return 0;
}

static int hpu_submit_syncs_get(struct drm_device *drm, struct drm_file *file,
				struct hpu_submit_entry *e)
{
	const struct drm_hpu_submit *args = &e->args;
	int ret;

	ret = hpu_copy_syncs(drm, e->tag, "in_syncs", args->in_syncs,
			     args->num_in_syncs, &e->in);
	if (ret)
		return ret;
	ret = hpu_copy_syncs(drm, e->tag, "out_syncs", args->out_syncs,
			     args->num_out_syncs, &e->out);
	if (ret)
		return ret;

	if (args->num_out_syncs) {
		e->out_syncs = kcalloc(args->num_out_syncs,
				       sizeof(*e->out_syncs), GFP_KERNEL);
		if (!e->out_syncs)
			return -ENOMEM;
		e->num_out = args->num_out_syncs;
		ret = hpu_out_syncs_get(drm, file, e);
		if (ret)
			return ret;
	}

	return hpu_in_fences_get(drm, file, e);
}

/* Drop what hpu_submit_prepare() took; aborts a job that was not queued. */
static void hpu_submit_entry_put(struct hpu_submit_entry *e)
{
	u32 i;

	if (e->in_fences) {
		for (i = 0; i < e->args.num_in_syncs; i++)
			dma_fence_put(e->in_fences[i]);
		kfree(e->in_fences);
	}
	if (e->in_syncobjs) {
		for (i = 0; i < e->args.num_in_syncs; i++)
			if (e->in_syncobjs[i])
				drm_syncobj_put(e->in_syncobjs[i]);
		kfree(e->in_syncobjs);
	}
	for (i = 0; i < e->num_out; i++) {
		dma_fence_chain_free(e->out_syncs[i].chain);
		if (e->out_syncs[i].syncobj)
			drm_syncobj_put(e->out_syncs[i].syncobj);
	}
	kfree(e->out_syncs);
	kfree(e->out);
	kfree(e->in);
	if (e->job && !e->fence)
		hpu_job_abort(e->job);
	dma_fence_put(e->fence);
}

/* A job for @e, counted in the context's jobs in flight until released. */
static int hpu_submit_job_new(struct drm_device *drm, struct drm_file *file,
			      struct hpu_submit_entry *e)
{
	struct hpu_device *hdev = to_hpu_device(drm);
	struct hpu_file_priv *fpriv = file->driver_priv;
	struct hpu_vm *vm = fpriv->vm;
	struct hpu_queue_fence *qfence;
	struct hpu_job *job;
	u32 max_jobs;

	max_jobs = READ_ONCE(hdev->limits->ctx_jobs);
	if (atomic_inc_return(&vm->jobs) > max_jobs) {
		atomic_dec(&vm->jobs);
		drm_dbg_driver(drm, "%s: the context has its limit of %u jobs in flight\n",
			       e->tag, max_jobs);
		return -EBUSY;
	}
	/* Allocated now: queueing the job cannot fail. */
	qfence = kzalloc(sizeof(*qfence), GFP_KERNEL_ACCOUNT);
	job = qfence ? hpu_job_alloc(hdev->qm, vm->asid, e->args.cb_va,
				     e->args.cb_size) : NULL;
	if (!job) {
		kfree(qfence);
		atomic_dec(&vm->jobs);
		return -ENOMEM;
	}
	job->qfence = qfence;

	/* Counted in vm->jobs until hpu_job_release(). */
	job->vm = hpu_vm_get(vm);
	job->queue = e->queue;
	job->queue_id = e->queue->id;
	job->fpriv = fpriv;
	/* The file's generation: a hard reset since its open cancels the job. */
	job->generation = fpriv->generation;
	if (e->args.timeout_ms)
		job->timeout = msecs_to_jiffies(e->args.timeout_ms);
	e->job = job;
	return 0;
}

/*
 * Everything of one entry that can fail, without a lock: check it, look
 * its queue and syncobjs up, copy its syncs, find its in-fences and make
 * its job (not initialised for the scheduler yet).
 */
static int hpu_submit_prepare(struct drm_device *drm, struct drm_file *file,
			      struct hpu_submit_entry *e)
{
	struct hpu_file_priv *fpriv = file->driver_priv;
	int ret;

	ret = hpu_submit_check(drm, e->tag, &e->args);
	if (ret)
		return ret;

	e->queue = hpu_queue_get(fpriv, e->args.queue_id);
	if (!e->queue) {
		drm_dbg_driver(drm, "%s: no queue %u\n", e->tag,
			       e->args.queue_id);
		return -ENOENT;
	}

	e->ready = fpriv->generation == hpu_reset_generation(to_hpu_device(drm));
	ret = hpu_submit_syncs_get(drm, file, e);
	if (ret)
		return ret;
	return hpu_submit_job_new(drm, file, e);
}

/**
 * hpu_submit_decide() - which entries of a call go to their stream directly
 * @e: the entries, in order, their queues locked
 * @count: entries
 *
 * An entry goes directly when it has nothing to wait for
 * (&hpu_submit_entry.ready), no job of its queue is between the
 * scheduler's push and run_job (&hpu_queue.sched_pending; nor an earlier
 * entry of this call on the same queue that takes the scheduler), and its
 * stream has a direct slot free (reserved here): then it is given its
 * sequence number on the stream after every earlier job of its queue, and
 * the queue's order holds. The others take the scheduler, in order.
 */
VISIBLE_IF_KUNIT void hpu_submit_decide(struct hpu_submit_entry *e, u32 count)
{
	u32 i, j;

	for (i = 0; i < count; i++) {
		bool behind = atomic_read(&e[i].queue->sched_pending);

		for (j = 0; j < i && !behind; j++)
			behind = e[j].queue == e[i].queue && !e[j].direct;
		e[i].direct = e[i].ready && !behind &&
			      hpu_stream_direct_get(e[i].queue->stream);
	}
}
EXPORT_SYMBOL_IF_KUNIT(hpu_submit_decide);

/* Give back the slots hpu_submit_decide() reserved. */
static void hpu_submit_undecide(struct hpu_submit_entry *e, u32 count)
{
	u32 i;

	for (i = 0; i < count; i++) {
		if (e[i].direct)
			hpu_stream_direct_put(e[i].queue->stream);
		e[i].direct = false;
	}
}

/* Make @e's job a scheduler job waiting for its in-fences. */
static int hpu_submit_sched_init(struct drm_file *file,
				 struct hpu_submit_entry *e)
{
	struct hpu_job *job = e->job;
	u32 i;
	int ret;

	ret = drm_sched_job_init(&job->base, &e->queue->entity, 1, file);
	if (ret)
		return ret;
	job->sched_init = true;

	for (i = 0; i < e->args.num_in_syncs; i++) {
		struct dma_fence *fence = e->in_fences[i];

		e->in_fences[i] = NULL;
		/* Consumes the fence reference, also on error. */
		ret = drm_sched_job_add_dependency(&job->base, fence);
		if (ret)
			return ret;
	}
	return 0;
}

static void hpu_submit_unlock_queues(struct hpu_submit_entry *e, u32 count)
{
	u32 i;

	for (i = count; i-- > 0;)
		if (e[i].lock_queue)
			mutex_unlock(&e[i].queue->lock);
}

/*
 * Lock the VM's reservation with room for a fence per entry, then every
 * queue the call names (all under the reservation, which every SUBMIT of
 * the file holds around its queue locks: the order among them does not
 * matter), and check that none is being destroyed.
 */
static int hpu_submit_lock(struct drm_device *drm, struct hpu_vm *vm,
			   struct hpu_submit_entry *e, u32 count)
{
	u32 i, j;
	int ret;

	ret = dma_resv_lock_interruptible(&vm->resv, NULL);
	if (ret)
		return ret;
	ret = dma_resv_reserve_fences(&vm->resv, count);
	if (ret)
		goto out_unlock_resv;

	for (i = 0; i < count; i++) {
		e[i].lock_queue = true;
		for (j = 0; j < i; j++)
			if (e[j].queue == e[i].queue)
				e[i].lock_queue = false;
		if (!e[i].lock_queue)
			continue;
		mutex_lock_nest_lock(&e[i].queue->lock, &vm->resv.lock.base);
		if (e[i].queue->dead) {
			drm_dbg_driver(drm, "%s: queue %u is being destroyed\n",
				       e[i].tag, e[i].queue->id);
			hpu_submit_unlock_queues(e, i + 1);
			ret = -ENOENT;
			goto out_unlock_resv;
		}
	}
	return 0;

out_unlock_resv:
	dma_resv_unlock(&vm->resv);
	return ret;
}

/*
 * Queue entry @e, decided and locked: a direct job goes on its stream
 * (without the doorbell), a scheduled one is armed and pushed. Its fence
 * goes into the VM's reservation. Cannot fail.
 */
static void hpu_submit_commit(struct hpu_vm *vm, struct hpu_submit_entry *e,
			      struct list_head *failed)
{
	struct hpu_queue *queue = e->queue;
	struct hpu_job *job = e->job;

	/* Set before the job can complete: its error event names it. */
	e->args.seq = ++queue->seq;
	job->user_seq = e->args.seq;
	if (e->direct) {
		job->direct = true;
		job->stream = queue->stream;
		/* Outside the driver, the queue fence stands for the job. */
		e->fence = hpu_queue_fence_init(queue, job, e->args.seq);
		dma_fence_put(queue->last_direct);
		queue->last_direct = dma_fence_get(e->fence);
		/* The job may be freed once this returns: not touched after. */
		dma_fence_put(hpu_stream_submit_direct(queue->stream, job,
						       failed));
		e->job = NULL;
	} else {
		drm_sched_job_arm(&job->base);
		e->fence = dma_fence_get(&job->base.s_fence->finished);
		/* Later jobs of the queue wait for run_job to take this one. */
		atomic_inc(&queue->sched_pending);
	}
	dma_resv_add_fence(&vm->resv, e->fence, DMA_RESV_USAGE_BOOKKEEP);
	dma_fence_put(queue->last_fence);
	queue->last_fence = dma_fence_get(e->fence);
	if (!e->direct)
		drm_sched_entity_push_job(&job->base);
}

/* Hand the queued entry's fence to its out-syncs. */
static void hpu_submit_out_syncs_set(struct hpu_submit_entry *e)
{
	u32 i;

	for (i = 0; i < e->num_out; i++) {
		struct hpu_out_sync *o = &e->out_syncs[i];

		if (o->chain) {
			drm_syncobj_add_point(o->syncobj, o->chain, e->fence,
					      o->point);
			o->chain = NULL;
		} else {
			drm_syncobj_replace_fence(o->syncobj, e->fence);
		}
	}
}

/*
 * Queue the @count prepared entries of one call, in order, or none: lock,
 * decide which go directly, make the others scheduler jobs (the last step
 * that can fail), then queue them all and ring each stream that got
 * direct jobs once.
 */
static int hpu_submit_queue(struct drm_device *drm, struct drm_file *file,
			    struct hpu_submit_entry *e, u32 count)
{
	struct hpu_file_priv *fpriv = file->driver_priv;
	struct hpu_vm *vm = fpriv->vm;
	LIST_HEAD(failed);
	u32 i, j;
	int ret;

	ret = hpu_submit_lock(drm, vm, e, count);
	if (ret)
		return ret;

	hpu_submit_decide(e, count);
	for (i = 0; i < count; i++) {
		if (e[i].direct)
			continue;
		ret = hpu_submit_sched_init(file, &e[i]);
		if (ret) {
			hpu_submit_undecide(e, count);
			hpu_submit_unlock_queues(e, count);
			dma_resv_unlock(&vm->resv);
			return ret;
		}
	}

	/* From here on nothing fails. */
	for (i = 0; i < count; i++)
		hpu_submit_commit(vm, &e[i], &failed);
	for (i = 0; i < count; i++) {
		bool rung = false;

		if (!e[i].direct)
			continue;
		for (j = 0; j < i && !rung; j++)
			rung = e[j].direct &&
			       e[j].queue->stream == e[i].queue->stream;
		if (!rung)
			hpu_stream_kick(e[i].queue->stream);
	}
	hpu_submit_unlock_queues(e, count);
	dma_resv_unlock(&vm->resv);

	for (i = 0; i < count; i++)
		hpu_submit_out_syncs_set(&e[i]);
	/* Direct jobs that cannot run (stream shut down, stale context). */
	hpu_jobs_signal(&failed);
	return 0;
}

/* An out-syncobj of a call and the first entry that signals it. */
struct hpu_out_ref {
	const struct drm_syncobj *syncobj;
	u32 entry;
};

static int hpu_out_ref_cmp(const void *a, const void *b)
{
	const struct hpu_out_ref *x = a, *y = b;

	if (x->syncobj != y->syncobj)
		return (uintptr_t)x->syncobj < (uintptr_t)y->syncobj ? -1 : 1;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

static int hpu_out_ref_find(const void *key, const void *elt)
{
	const struct hpu_out_ref *y = elt;

	if (key != y->syncobj)
		return (uintptr_t)key < (uintptr_t)y->syncobj ? -1 : 1;
	return 0;
}

/*
 * An entry's in-syncs are looked up before any entry of its call is
 * queued: one naming a syncobj that an earlier entry of the call signals
 * would wait for that syncobj's fence from before the call, not for the
 * earlier entry. Refused rather than run in a surprising order. The
 * out-syncobjs of the call are sorted once (with the entry that signals
 * each), and every in-syncobj (the object its fence came from) is looked
 * for in them.
 */
static int hpu_submit_no_chain(struct drm_device *drm,
			       struct hpu_submit_entry *e, u32 count)
{
	struct hpu_out_ref *refs, *r;
	u32 i, k, n = 0;
	int ret = 0;

	for (i = 0; i < count; i++)
		n += e[i].num_out;
	if (!n)
		return 0;
	refs = kvmalloc_array(n, sizeof(*refs), GFP_KERNEL);
	if (!refs)
		return -ENOMEM;
	n = 0;
	for (i = 0; i < count; i++)
		for (k = 0; k < e[i].num_out; k++) {
			refs[n].syncobj = e[i].out_syncs[k].syncobj;
			refs[n++].entry = i;
		}
	sort(refs, n, sizeof(*refs), hpu_out_ref_cmp, NULL);

	for (i = 1; i < count && !ret; i++) {
		for (k = 0; k < e[i].args.num_in_syncs; k++) {
			r = bsearch(e[i].in_syncobjs[k], refs, n, sizeof(*refs),
				    hpu_out_ref_find);
			/* Any match will do: go back to the first entry's. */
			while (r && r > refs && r[-1].syncobj == r->syncobj)
				r--;
			if (r && r->entry < i) {
				drm_dbg_driver(drm, "%s: in_syncs[%u]: entry %u signals it\n",
					       e[i].tag, k, r->entry);
				ret = -EINVAL;
				break;
			}
		}
	}
	kvfree(refs);
	return ret;
}

/*
 * Prepare and queue the @count entries of one call; on any error nothing
 * is queued. The caller is inside drm_dev_enter().
 */
static int hpu_submit_entries(struct drm_device *drm, struct drm_file *file,
			      struct hpu_submit_entry *e, u32 count)
{
	int ret = 0;
	u32 i;

	for (i = 0; i < count; i++) {
		ret = hpu_submit_prepare(drm, file, &e[i]);
		if (ret)
			break;
	}
	if (ret && count > 1)
		drm_dbg_driver(drm, "SUBMIT_ARRAY: entry %u refused (%d): nothing queued\n",
			       i, ret);
	if (!ret && count > 1)
		ret = hpu_submit_no_chain(drm, e, count);
	if (ret)
		return ret;
	return hpu_submit_queue(drm, file, e, count);
}

/* Release the entries of a call (queue references last: see below). */
static void hpu_submit_entries_put(struct hpu_submit_entry *e, u32 count)
{
	u32 i;

	for (i = 0; i < count; i++)
		hpu_submit_entry_put(&e[i]);
}

static void hpu_submit_queues_put(struct hpu_submit_entry *e, u32 count)
{
	u32 i;

	for (i = 0; i < count; i++)
		if (e[i].queue)
			hpu_queue_put(e[i].queue);
}

/**
 * hpu_submit_ioctl() - DRM_IOCTL_HPU_SUBMIT
 * @drm: the DRM device
 * @data: the &struct drm_hpu_submit
 * @file: the DRM file
 *
 * Validates the submission, creates a job that runs the command buffer in
 * the file's address space once every in-sync has signalled, records its
 * fence in the address space's reservation object (so memory is not
 * unmapped under it) and in every out-sync, and queues it: directly on
 * the queue's stream when it has nothing to wait for (no unsignalled
 * in-sync, no job of the queue still with the scheduler, a direct slot
 * free on the stream), else through the queue's scheduler entity.
 *
 * The job may run for @timeout_ms (0: the job_timeout_ms default) from the
 * time its stream starts it; then it is stopped and fails -ETIMEDOUT.
 * Without CAP_SYS_ADMIN, @timeout_ms may not exceed
 * &hpu_ctx_limits.user_timeout_ms.
 *
 * Return: 0; -EINVAL for non-zero flags, timeout_ms above 3600000 (or
 * above the unprivileged ceiling), a bad command buffer address or size,
 * too many syncs, non-zero sync flags, or an in-sync without a fence;
 * -EBUSY when the context has its limit of jobs (&hpu_ctx_limits.ctx_jobs)
 * submitted and not yet finished; -ENOENT for an unknown queue or syncobj;
 * -EFAULT if a sync array cannot be read; -ENOMEM; -EINTR or -ERESTARTSYS
 * if interrupted; -ENODEV once the device is unplugged.
 */
int hpu_submit_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_hpu_submit *args = data;
	struct hpu_submit_entry e = { .args = *args, .tag = "SUBMIT" };
	int idx, ret;

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	ret = hpu_submit_entries(drm, file, &e, 1);
	if (!ret)
		args->seq = e.args.seq;
	hpu_submit_entries_put(&e, 1);
	/*
	 * Outside drm_dev_enter(): if the queue was destroyed meanwhile, this
	 * last reference waits for its jobs, which device removal may have to
	 * fail first.
	 */
	drm_dev_exit(idx);
	hpu_submit_queues_put(&e, 1);
	return ret;
}

static u64 __user *hpu_submit_array_seq(const struct drm_hpu_submit_array *args,
					u32 i)
{
	return u64_to_user_ptr(args->submits + (u64)i * args->entry_size +
			       offsetof(struct drm_hpu_submit, seq));
}

/*
 * Read entry @i of the array into @out: the part of it this driver knows,
 * the rest must be zero. Its seq goes back there: check that it can be
 * written (with the value read) before anything is queued.
 */
static int hpu_submit_array_read(struct drm_device *drm,
				 const struct drm_hpu_submit_array *args,
				 u32 i, struct drm_hpu_submit *out)
{
	u64 at = args->submits + (u64)i * args->entry_size;
	u32 known = min_t(u32, args->entry_size, sizeof(*out));
	int ret;

	memset(out, 0, sizeof(*out));
	if (copy_from_user(out, u64_to_user_ptr(at), known) ||
	    put_user(out->seq, hpu_submit_array_seq(args, i))) {
		drm_dbg_driver(drm, "SUBMIT_ARRAY: cannot access entry %u at 0x%llx\n",
			       i, at);
		return -EFAULT;
	}
	if (args->entry_size > known) {
		ret = check_zeroed_user(u64_to_user_ptr(at + known),
					args->entry_size - known);
		if (ret < 0)
			return -EFAULT;
		if (!ret) {
			drm_dbg_driver(drm, "SUBMIT_ARRAY: entry %u: bytes past %u not zero\n",
				       i, known);
			return -EINVAL;
		}
	}
	return 0;
}

/**
 * hpu_submit_array_ioctl() - DRM_IOCTL_HPU_SUBMIT_ARRAY
 * @drm: the DRM device
 * @data: the &struct drm_hpu_submit_array
 * @file: the DRM file
 *
 * Queues &drm_hpu_submit_array.count submissions, each as
 * hpu_submit_ioctl() would, in array order: all of them or, if any entry
 * is refused or the call fails, none. Every entry is validated and its
 * job made before any is queued; the direct jobs' descriptors are written
 * per stream and each stream's doorbell is rung once for all of them. The
 * sequence numbers are written back to the entries' @seq.
 *
 * Return: 0 (also if a seq can no longer be written once the jobs are
 * queued: they run all the same); -EINVAL for non-zero flags or pad, a
 * count not 1 to DRM_HPU_MAX_SUBMITS, an entry_size out of range, non-zero
 * bytes beyond the known part of an entry, or an entry with an in-sync
 * that an earlier entry signals (in-syncs are looked up before anything of
 * the call is queued); -EFAULT if an entry cannot be read or its seq
 * written; any error of hpu_submit_ioctl() for an entry.
 */
int hpu_submit_array_ioctl(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct drm_hpu_submit_array *args = data;
	struct hpu_submit_entry *e;
	u32 i, count = args->count;
	int idx, ret;

	ret = hpu_submit_array_check(drm, args);
	if (ret)
		return ret;

	e = kcalloc(count, sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		ret = hpu_submit_array_read(drm, args, i, &e[i].args);
		if (ret) {
			kfree(e);
			return ret;
		}
		snprintf(e[i].tag, sizeof(e[i].tag), "SUBMIT_ARRAY[%u]", i);
	}

	if (!drm_dev_enter(drm, &idx)) {
		kfree(e);
		return -ENODEV;
	}
	ret = hpu_submit_entries(drm, file, e, count);
	hpu_submit_entries_put(e, count);
	drm_dev_exit(idx);
	hpu_submit_queues_put(e, count);

	/*
	 * Checked writable above; if the caller unmapped the array since,
	 * the jobs are queued all the same and the call succeeds: nothing of
	 * it may fail once anything is queued.
	 */
	for (i = 0; !ret && i < count; i++)
		if (put_user(e[i].args.seq, hpu_submit_array_seq(args, i)))
			break;
	kfree(e);
	return ret;
}
