// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: the per-file queues: a queue is a drm_sched_entity bound to one
 * hardware stream (hpu_stream.c) of the engine it was created on, chosen
 * at creation as the stream with the fewest queues; the QUEUE_CREATE and
 * QUEUE_DESTROY ioctls. Documentation/driver/submission.md has the whole
 * picture.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/dma-fence.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "hpu_accel.h"
#include "hpu_drv.h"
#include "hpu_limits.h"
#include "hpu_queue.h"
#include "hpu_stream.h"
#include "hpu_uq.h"
#include "hpu_vm.h"
/*
 * Wait for the last job queued and the last direct job (which a later
 * scheduled job killed with its entity does not wait for).
 */
static int hpu_queue_wait(struct hpu_queue *queue, bool intr)
{
	long ret;

	if (queue->last_fence) {
		ret = dma_fence_wait(queue->last_fence, intr);
		if (ret)
			return ret;
	}
	if (queue->last_direct)
		return dma_fence_wait(queue->last_direct, intr);
	return 0;
}

static void hpu_queue_release(struct kref *ref)
{
	struct hpu_queue *queue = container_of(ref, struct hpu_queue, ref);

	/*
	 * Hand the queued jobs to the hardware (drm_sched kills those still
	 * waiting if the process is killed), then wait until the last one has
	 * finished: the file's address space must not go away under a running
	 * job. An exiting process, or a wait interrupted by a signal, cancels
	 * the queue's jobs still on the ring instead of waiting for them.
	 */
	drm_sched_entity_destroy(&queue->entity);
	if ((current->flags & PF_EXITING) ||
	    hpu_queue_wait(queue, true)) {
		hpu_stream_cancel_queue(queue->stream, queue);
		hpu_queue_wait(queue, false);
	}
	dma_fence_put(queue->last_fence);
	dma_fence_put(queue->last_direct);
	/* Every queue fence has signalled: none is left on the list. */
	WARN_ON(!list_empty(&queue->direct));

	atomic_dec(&queue->stream->num_queues);
	mutex_destroy(&queue->lock);
	kfree(queue);
}

/**
 * hpu_queue_put() - drop a reference to a queue
 * @queue: the queue
 *
 * The last reference destroys the queue, waiting for its jobs. May sleep.
 */
void hpu_queue_put(struct hpu_queue *queue)
{
	kref_put(&queue->ref, hpu_queue_release);
}

/**
 * hpu_queue_get() - look a queue of a file up by id
 * @fpriv: the file
 * @id: the queue id
 *
 * Return: the queue with a reference the caller drops with
 * hpu_queue_put(), or NULL if the file has no such queue.
 */
struct hpu_queue *hpu_queue_get(struct hpu_file_priv *fpriv, u32 id)
{
	struct hpu_queue *queue;

	xa_lock(&fpriv->queues);
	queue = xa_load(&fpriv->queues, id);
	if (queue)
		kref_get(&queue->ref);
	xa_unlock(&fpriv->queues);

	return queue;
}

/* Remove @queue from its file's table (done by the caller) and kill it. */
static void hpu_queue_kill(struct hpu_queue *queue)
{
	mutex_lock(&queue->lock);
	queue->dead = true;
	mutex_unlock(&queue->lock);
	hpu_queue_put(queue);
}

/**
 * hpu_queues_init() - initialise the queue table of a new file
 * @fpriv: the file
 */
void hpu_queues_init(struct hpu_file_priv *fpriv)
{
	xa_init_flags(&fpriv->queues, XA_FLAGS_ALLOC1);
}

/**
 * hpu_queues_fini() - destroy every queue of a closing file
 * @fpriv: the file
 *
 * Runs first in postclose: when it returns, every job of the file has
 * finished (completed, failed, timed out, cancelled or killed), so the
 * file's address space can be torn down. A close from a process that is
 * exiting cancels the jobs still on the ring rather than waiting for
 * them; a plain close(2) waits for them (interruptibly: a signal cancels
 * them). May sleep.
 */
void hpu_queues_fini(struct hpu_file_priv *fpriv)
{
	struct hpu_queue *queue;
	unsigned long id;

	xa_for_each(&fpriv->queues, id, queue) {
		xa_erase(&fpriv->queues, id);
		atomic_dec(&fpriv->vm->queues);
		hpu_queue_kill(queue);
	}
	xa_destroy(&fpriv->queues);
}

/**
 * hpu_queue_create_ioctl() - DRM_IOCTL_HPU_QUEUE_CREATE
 * @drm: the DRM device
 * @data: the &struct drm_hpu_queue_create
 * @file: the DRM file
 *
 * Creates a queue on a stream of the given engine (DMA, TPC or MME, by
 * class and index within the class, hpu_stream_engine()): the stream that
 * has the fewest queues at the time.
 *
 * Return: 0; -EINVAL for non-zero flags, an unknown engine class or an
 * engine index out of range for its class (a class the device lacks has
 * no engines); -ENOSPC if the file has its limit of queues
 * (&hpu_ctx_limits.ctx_queues, at most HPU_MAX_QUEUES) already; -ENOMEM;
 * -ENODEV once the device is unplugged.
 */
int hpu_queue_create_ioctl(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct hpu_device *hdev = to_hpu_device(drm);
	struct hpu_file_priv *fpriv = file->driver_priv;
	struct drm_hpu_queue_create *args = data;
	struct drm_gpu_scheduler *sched;
	static const char * const class_names[HPU_ENGINE_CLASSES] = {
		[DRM_HPU_ENGINE_DMA] = "DMA",
		[DRM_HPU_ENGINE_TPC] = "TPC",
		[DRM_HPU_ENGINE_MME] = "MME",
	};
	struct hpu_qm *qm = hdev->qm;
	struct hpu_vm *vm = fpriv->vm;
	struct hpu_engine *engine;
	struct hpu_queue *queue;
	u32 id, max;
	int idx, ret;

	if (args->flags) {
		drm_dbg_driver(drm, "QUEUE_CREATE: flags 0x%x must be zero\n",
			       args->flags);
		return -EINVAL;
	}
	if (args->engine_class >= HPU_ENGINE_CLASSES) {
		drm_dbg_driver(drm, "QUEUE_CREATE: unknown engine class %u\n",
			       args->engine_class);
		return -EINVAL;
	}
	engine = hpu_stream_engine(qm, args->engine_class, args->engine);
	if (!engine) {
		drm_dbg_driver(drm, "QUEUE_CREATE: %s engine %u out of range (%u engines)\n",
			       class_names[args->engine_class], args->engine,
			       qm->class_count[args->engine_class]);
		return -EINVAL;
	}

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	max = READ_ONCE(hdev->limits->ctx_queues);
	if (atomic_inc_return(&vm->queues) > max) {
		drm_dbg_driver(drm, "QUEUE_CREATE: the file has its limit of %u queues\n",
			       max);
		ret = -ENOSPC;
		goto out_count;
	}

	/* Made for the user: charged to its memory cgroup. */
	queue = kzalloc(sizeof(*queue), GFP_KERNEL_ACCOUNT);
	if (!queue) {
		ret = -ENOMEM;
		goto out_count;
	}
	kref_init(&queue->ref);
	mutex_init(&queue->lock);
	INIT_LIST_HEAD(&queue->direct);
	queue->fence_ctx = dma_fence_context_alloc(1);
	queue->stream = hpu_stream_pick(engine);
	atomic_inc(&queue->stream->num_queues);

	sched = &queue->stream->sched;
	ret = drm_sched_entity_init(&queue->entity, DRM_SCHED_PRIORITY_NORMAL,
				    &sched, 1, NULL);
	if (ret) {
		atomic_dec(&queue->stream->num_queues);
		mutex_destroy(&queue->lock);
		kfree(queue);
		goto out_count;
	}

	ret = xa_alloc(&fpriv->queues, &id, queue,
		       XA_LIMIT(1, HPU_MAX_QUEUES), GFP_KERNEL);
	if (ret) {
		if (ret == -EBUSY) {
			drm_dbg_driver(drm, "QUEUE_CREATE: the file has %u queues already\n",
				       HPU_MAX_QUEUES);
			ret = -ENOSPC;
		}
		hpu_queue_put(queue);
		goto out_count;
	}
	queue->id = id;
	args->queue_id = id;
	drm_dbg_driver(drm, "QUEUE_CREATE: queue %u on %s\n", id,
		       queue->stream->name);
	drm_dev_exit(idx);
	return 0;

out_count:
	atomic_dec(&vm->queues);
	drm_dev_exit(idx);
	return ret;
}

/**
 * hpu_queue_destroy_ioctl() - DRM_IOCTL_HPU_QUEUE_DESTROY
 * @drm: the DRM device
 * @data: the &struct drm_hpu_queue_destroy
 * @file: the DRM file
 *
 * Removes the queue from the file at once; its submitted jobs still run,
 * and the call returns once they have finished. If a signal interrupts
 * the wait, the queue's jobs that have not finished are cancelled instead
 * (their fences signal -ECANCELED, or -ESRCH for jobs still waiting for
 * their in-syncs when the process is killed) and the call still succeeds.
 *
 * Return: 0; -EINVAL for non-zero pad; -ENOENT if the file has no such
 * queue.
 */
int hpu_queue_destroy_ioctl(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct hpu_file_priv *fpriv = file->driver_priv;
	struct drm_hpu_queue_destroy *args = data;
	struct hpu_queue *queue;

	if (args->pad) {
		drm_dbg_driver(drm, "QUEUE_DESTROY: pad 0x%x must be zero\n",
			       args->pad);
		return -EINVAL;
	}

	if (!hpu_uq_destroy(fpriv, args->queue_id))
		return 0;
	/* Not a reserved id (a user queue being created): only a queue. */
	xa_lock(&fpriv->queues);
	queue = xa_load(&fpriv->queues, args->queue_id);
	if (queue)
		__xa_erase(&fpriv->queues, args->queue_id);
	xa_unlock(&fpriv->queues);
	if (!queue) {
		drm_dbg_driver(drm, "QUEUE_DESTROY: no queue %u\n",
			       args->queue_id);
		return -ENOENT;
	}

	atomic_dec(&fpriv->vm->queues);
	hpu_queue_kill(queue);
	return 0;
}
