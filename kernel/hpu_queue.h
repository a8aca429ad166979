/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: the per-file queues that feed the hardware streams.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_QUEUE_H__
#define __HPU_QUEUE_H__

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/types.h>

#include <drm/gpu_scheduler.h>

struct dma_fence;
struct drm_device;
struct drm_file;
struct hpu_file_priv;
struct hpu_stream;

/* Queues one file may have at once. */
#define HPU_MAX_QUEUES		64

/**
 * struct hpu_queue - a queue of one file: a scheduler entity on one stream
 * @ref: references: the file's xarray holds one, an ioctl using the queue
 *	holds one for its duration. The last put destroys the entity.
 * @id: the queue's id in its file.
 * @stream: the stream the queue's jobs run on, fixed at creation.
 * @entity: the scheduler entity; jobs of one queue run in order.
 * @lock: serialises job arm and push on @entity (drm_sched requires it) and
 *	protects @seq, @last_fence and @dead.
 * @seq: jobs pushed so far (the uapi sequence number of the last one).
 * @last_fence: the fence of the last job queued (a scheduler finished
 *	fence or a queue fence), or NULL.
 * @last_direct: the queue fence of the last direct job, or NULL. Direct
 *	jobs may still be on the ring when @last_fence (a later scheduled
 *	job's, killed with its entity) has signalled: the queue waits for
 *	both before it goes, so no completion touches a freed file.
 * @fence_ctx: dma_fence context of the queue fences of its direct jobs
 *	(&struct hpu_queue_fence), numbered with the queue's @seq.
 * @direct: the queue fences not yet signalled, in queue order; protected
 *	by &hpu_qm.done_lock.
 * @dead: the queue was destroyed; no more jobs may be pushed.
 * @sched_pending: jobs of the queue pushed to @entity that run_job has not
 *	taken yet (incremented under @lock). While it is non-zero no job of
 *	the queue may go to the stream directly: it would overtake them.
 */
struct hpu_queue {
	struct kref ref;
	u32 id;
	struct hpu_stream *stream;
	struct drm_sched_entity entity;
	/* serialises arm + push; protects seq, last_fence, last_direct, dead */
	struct mutex lock;
	u64 seq;
	struct dma_fence *last_fence;
	struct dma_fence *last_direct;
	u64 fence_ctx;
	struct list_head direct;
	bool dead;
	atomic_t sched_pending;
};

void hpu_queues_init(struct hpu_file_priv *fpriv);
void hpu_queues_fini(struct hpu_file_priv *fpriv);
struct hpu_queue *hpu_queue_get(struct hpu_file_priv *fpriv, u32 id);
void hpu_queue_put(struct hpu_queue *queue);

int hpu_queue_create_ioctl(struct drm_device *drm, void *data,
			   struct drm_file *file);
int hpu_queue_destroy_ioctl(struct drm_device *drm, void *data,
			    struct drm_file *file);

#endif /* __HPU_QUEUE_H__ */
