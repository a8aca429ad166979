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

#include <linux/capability.h>
#include <linux/dma-fence.h>
#include <linux/dma-fence-chain.h>
#include <linux/dma-resv.h>
#include <linux/slab.h>
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

	switch (job->status) {
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
EXPORT_SYMBOL_IF_KUNIT(hpu_job_error_kind);

/* Whether the device reports errors of @kind with an event of its own. */
static bool hpu_job_kind_has_detail(u32 kind)
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
 * (hpu_notify_job_detail()). A job may be freed as soon as its fence is signalled.
 */
void hpu_jobs_signal(struct list_head *done)
{
	struct hpu_job *job, *tmp;

	list_for_each_entry_safe(job, tmp, done, link) {
		struct hpu_stream *stream = job->stream;
		u32 kind;

		struct dma_fence *fence = dma_fence_get(job->hw_fence);

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
	}
}

static struct dma_fence *hpu_sched_run_job(struct drm_sched_job *sched_job)
{
	struct hpu_job *job = to_hpu_job(sched_job);
	struct hpu_stream *stream = to_hpu_stream(sched_job->sched);
	int idx, ret;

	/* A job of a context that a hard reset destroyed never runs. */
	if (job->generation != hpu_reset_generation(stream->hdev))
		return ERR_PTR(-ECANCELED);

	if (!drm_dev_enter(&stream->hdev->drm, &idx))
		return ERR_PTR(-ENODEV);

	job->stream = stream;
	ret = hpu_stream_submit(stream, job);
	drm_dev_exit(idx);
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

	/* Made for the submitter: charged to its memory cgroup. */
	job = kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT);
	if (!job)
		return -ENOMEM;

	/* Allocated here: run_job is in the fence signalling path. */
	job->hw_fence = kzalloc(sizeof(*job->hw_fence), GFP_KERNEL_ACCOUNT);
	if (!job->hw_fence) {
		kfree(job);
		return -ENOMEM;
	}

	ret = drm_sched_job_init(&job->base, entity, 1, owner);
	if (ret) {
		kfree(job->hw_fence);
		kfree(job);
		return ret;
	}

	job->qm = qm;
	job->generation = hpu_reset_generation(qm->hdev);
	job->timeout = msecs_to_jiffies(qm->timeout_ms);
	job->asid = asid;
	job->cb_addr = cb_addr;
	job->cb_size = cb_size;
	INIT_LIST_HEAD(&job->link);
	atomic_inc(&qm->jobs);

	*out = job;
	return 0;
}

/**
 * hpu_job_abort() - free a job that was never armed
 * @job: the job
 */
static void hpu_job_abort(struct hpu_job *job)
{
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

static int hpu_copy_syncs(struct drm_device *drm, const char *what,
			  u64 uptr, u32 count, struct drm_hpu_sync **out)
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
		drm_dbg_driver(drm, "SUBMIT: cannot read %s at 0x%llx\n",
			       what, uptr);
		kfree(syncs);
		return -EFAULT;
	}

	for (i = 0; i < count; i++) {
		if (syncs[i].flags) {
			drm_dbg_driver(drm, "SUBMIT: %s[%u].flags 0x%x must be zero\n",
				       what, i, syncs[i].flags);
			kfree(syncs);
			return -EINVAL;
		}
	}

	*out = syncs;
	return 0;
}

VISIBLE_IF_KUNIT int hpu_submit_check(struct drm_device *drm,
				      const struct drm_hpu_submit *args)
{
	u32 user_max = READ_ONCE(to_hpu_device(drm)->limits->user_timeout_ms);

	if (args->flags) {
		drm_dbg_driver(drm, "SUBMIT: flags 0x%x must be zero\n",
			       args->flags);
		return -EINVAL;
	}
	if (args->timeout_ms > HPU_JOB_TIMEOUT_MAX_MS) {
		drm_dbg_driver(drm, "SUBMIT: timeout_ms %u is more than %u\n",
			       args->timeout_ms, HPU_JOB_TIMEOUT_MAX_MS);
		return -EINVAL;
	}
	/* capable() last: it marks the task as having used the capability. */
	if (args->timeout_ms > user_max && !capable(CAP_SYS_ADMIN)) {
		drm_dbg_driver(drm, "SUBMIT: timeout_ms %u is more than %u without CAP_SYS_ADMIN\n",
			       args->timeout_ms, user_max);
		return -EINVAL;
	}
	if (!args->cb_size || !IS_ALIGNED(args->cb_size, 8) ||
	    args->cb_size > HPU_CB_MAX_SIZE) {
		drm_dbg_driver(drm, "SUBMIT: cb_size %u is not a multiple of 8 from 8 to %u\n",
			       args->cb_size, HPU_CB_MAX_SIZE);
		return -EINVAL;
	}
	if (!IS_ALIGNED(args->cb_va, 8)) {
		drm_dbg_driver(drm, "SUBMIT: cb_va 0x%llx is not 8-byte aligned\n",
			       args->cb_va);
		return -EINVAL;
	}
	if (args->cb_va < HPU_VA_START || args->cb_va >= HPU_VA_END ||
	    args->cb_size > HPU_VA_END - args->cb_va) {
		drm_dbg_driver(drm, "SUBMIT: command buffer 0x%llx+0x%x outside [0x%llx, 0x%llx)\n",
			       args->cb_va, args->cb_size, HPU_VA_START,
			       HPU_VA_END);
		return -EINVAL;
	}
	if (args->num_in_syncs > DRM_HPU_MAX_SYNCS ||
	    args->num_out_syncs > DRM_HPU_MAX_SYNCS) {
		drm_dbg_driver(drm, "SUBMIT: %u in-syncs and %u out-syncs, at most %u each\n",
			       args->num_in_syncs, args->num_out_syncs,
			       DRM_HPU_MAX_SYNCS);
		return -EINVAL;
	}

	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_submit_check);

/* Resolve the out-syncs before the job is armed: nothing may fail after. */
static int hpu_out_syncs_get(struct drm_device *drm, struct drm_file *file,
			     const struct drm_hpu_sync *syncs, u32 count,
			     struct hpu_out_sync *out)
{
	u32 i;

	for (i = 0; i < count; i++) {
		out[i].syncobj = drm_syncobj_find(file, syncs[i].handle);
		if (!out[i].syncobj) {
			drm_dbg_driver(drm, "SUBMIT: out_syncs[%u]: no syncobj %u\n",
				       i, syncs[i].handle);
			return -ENOENT;
		}
		out[i].point = syncs[i].point;
		if (out[i].point) {
			out[i].chain = dma_fence_chain_alloc();
			if (!out[i].chain)
				return -ENOMEM;
		}
	}

	return 0;
}

static void hpu_out_syncs_put(struct hpu_out_sync *out, u32 count)
{
	u32 i;

	for (i = 0; i < count; i++) {
		dma_fence_chain_free(out[i].chain);
		if (out[i].syncobj)
			drm_syncobj_put(out[i].syncobj);
	}
}

static int hpu_in_syncs_add(struct drm_device *drm, struct drm_file *file,
			    struct hpu_job *job,
			    const struct drm_hpu_sync *syncs, u32 count)
{
	struct dma_fence *fence;
	u32 i;
	int ret;

	for (i = 0; i < count; i++) {
		ret = drm_syncobj_find_fence(file, syncs[i].handle,
					     syncs[i].point, 0, &fence);
		if (ret) {
			drm_dbg_driver(drm, "SUBMIT: in_syncs[%u]: syncobj %u point %llu: %s %d\n",
				       i, syncs[i].handle, syncs[i].point,
				       ret == -ENOENT ? "no such syncobj" :
				       "no fence to wait for", ret);
			return ret;
		}

		/* Consumes the fence reference, also on error. */
		ret = drm_sched_job_add_dependency(&job->base, fence);
		if (ret)
			return ret;
	}

	return 0;
}

/**
 * struct hpu_submit_syncs - the sync arrays of one SUBMIT, copied in
 * @in: the in-syncs, or NULL.
 * @out: the out-syncs, or NULL.
 * @out_syncs: @out resolved to syncobjs (and chain nodes), or NULL.
 * @num_in: entries in @in.
 * @num_out: entries in @out_syncs.
 */
struct hpu_submit_syncs {
	struct drm_hpu_sync *in;
	struct drm_hpu_sync *out;
	struct hpu_out_sync *out_syncs;
	u32 num_in;
	u32 num_out;
};

static int hpu_submit_syncs_get(struct drm_device *drm, struct drm_file *file,
				const struct drm_hpu_submit *args,
				struct hpu_submit_syncs *s)
{
	int ret;

	ret = hpu_copy_syncs(drm, "in_syncs", args->in_syncs,
			     args->num_in_syncs, &s->in);
	if (ret)
		return ret;
	s->num_in = args->num_in_syncs;
	ret = hpu_copy_syncs(drm, "out_syncs", args->out_syncs,
			     args->num_out_syncs, &s->out);
	if (ret || !args->num_out_syncs)
		return ret;

	s->out_syncs = kcalloc(args->num_out_syncs, sizeof(*s->out_syncs),
			       GFP_KERNEL);
	if (!s->out_syncs)
		return -ENOMEM;
	s->num_out = args->num_out_syncs;
	return hpu_out_syncs_get(drm, file, s->out, s->num_out, s->out_syncs);
}

static void hpu_submit_syncs_put(struct hpu_submit_syncs *s)
{
	if (s->out_syncs)
		hpu_out_syncs_put(s->out_syncs, s->num_out);
	kfree(s->out_syncs);
	kfree(s->out);
	kfree(s->in);
}

/* A job for @queue, counted in the context's jobs in flight until released. */
static int hpu_submit_job_new(struct drm_device *drm, struct drm_file *file,
			      struct hpu_queue *queue,
			      const struct drm_hpu_submit *args,
			      struct hpu_job **jobp)
{
	struct hpu_device *hdev = to_hpu_device(drm);
	struct hpu_file_priv *fpriv = file->driver_priv;
	struct hpu_vm *vm = fpriv->vm;
	struct hpu_job *job;
	u32 max_jobs;
	int ret;

	max_jobs = READ_ONCE(hdev->limits->ctx_jobs);
	if (atomic_inc_return(&vm->jobs) > max_jobs) {
		atomic_dec(&vm->jobs);
		drm_dbg_driver(drm, "SUBMIT: the context has its limit of %u jobs in flight\n",
			       max_jobs);
		return -EBUSY;
	}
	ret = hpu_job_create(hdev->qm, &queue->entity, file, vm->asid,
			     args->cb_va, args->cb_size, &job);
	if (ret) {
		atomic_dec(&vm->jobs);
		return ret;
	}

	/* Counted in vm->jobs until hpu_job_release(). */
	job->vm = hpu_vm_get(vm);
	job->queue = queue;
	job->queue_id = queue->id;
	job->fpriv = fpriv;
	/* The file's generation: a hard reset since its open cancels the job. */
	job->generation = fpriv->generation;
	if (args->timeout_ms)
		job->timeout = msecs_to_jiffies(args->timeout_ms);
	*jobp = job;
	return 0;
}

/*
 * Arms @job and pushes it to its queue's entity, with its finished fence in
 * the address space's reservation object and in every out-sync. Fails only
 * before the job is armed; the caller then aborts it.
 */
static int hpu_submit_push(struct drm_device *drm, struct hpu_queue *queue,
			   struct hpu_job *job, struct hpu_submit_syncs *s,
			   u64 *seq)
{
	struct hpu_vm *vm = job->vm;
	struct dma_fence *fence;
	u32 i;
	int ret;

	ret = dma_resv_lock_interruptible(&vm->resv, NULL);
	if (ret)
		return ret;
	ret = dma_resv_reserve_fences(&vm->resv, 1);
	if (ret)
		goto out_unlock_resv;

	mutex_lock(&queue->lock);
	if (queue->dead) {
		mutex_unlock(&queue->lock);
		drm_dbg_driver(drm, "SUBMIT: queue %u is being destroyed\n",
			       queue->id);
		ret = -ENOENT;
		goto out_unlock_resv;
	}

	/* From here on nothing fails: the job is armed and pushed. */
	drm_sched_job_arm(&job->base);
	fence = dma_fence_get(&job->base.s_fence->finished);
	dma_resv_add_fence(&vm->resv, fence, DMA_RESV_USAGE_BOOKKEEP);
	*seq = ++queue->seq;
	job->user_seq = *seq;
	dma_fence_put(queue->last_fence);
	queue->last_fence = dma_fence_get(fence);
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&queue->lock);
	dma_resv_unlock(&vm->resv);

	for (i = 0; i < s->num_out; i++) {
		struct hpu_out_sync *o = &s->out_syncs[i];

		if (o->chain) {
			drm_syncobj_add_point(o->syncobj, o->chain, fence,
					      o->point);
			o->chain = NULL;
		} else {
			drm_syncobj_replace_fence(o->syncobj, fence);
		}
	}
	dma_fence_put(fence);
	return 0;

out_unlock_resv:
	dma_resv_unlock(&vm->resv);
	return ret;
}

/**
 * hpu_submit_ioctl() - DRM_IOCTL_HPU_SUBMIT
 * @drm: the DRM device
 * @data: the &struct drm_hpu_submit
 * @file: the DRM file
 *
 * Validates the submission, creates a job that runs the command buffer in
 * the file's address space once every in-sync has signalled, records its
 * finished fence in the address space's reservation object (so memory is
 * not unmapped under it) and in every out-sync, and pushes it to the
 * queue's entity.
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
	struct hpu_file_priv *fpriv = file->driver_priv;
	struct drm_hpu_submit *args = data;
	struct hpu_submit_syncs syncs = {};
	struct hpu_queue *queue;
	struct hpu_job *job;
	int idx, ret;

	ret = hpu_submit_check(drm, args);
	if (ret)
		return ret;

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	queue = hpu_queue_get(fpriv, args->queue_id);
	if (!queue) {
		drm_dbg_driver(drm, "SUBMIT: no queue %u\n", args->queue_id);
		drm_dev_exit(idx);
		return -ENOENT;
	}

	ret = hpu_submit_syncs_get(drm, file, args, &syncs);
	if (ret)
		goto out;
	ret = hpu_submit_job_new(drm, file, queue, args, &job);
	if (ret)
		goto out;
	ret = hpu_in_syncs_add(drm, file, job, syncs.in, syncs.num_in);
	if (!ret)
		ret = hpu_submit_push(drm, queue, job, &syncs, &args->seq);
	if (ret)
		hpu_job_abort(job);
out:
	hpu_submit_syncs_put(&syncs);
	/*
	 * Outside drm_dev_enter(): if the queue was destroyed meanwhile, this
	 * last reference waits for its jobs, which device removal may have to
	 * fail first.
	 */
	drm_dev_exit(idx);
	hpu_queue_put(queue);
	return ret;
}
