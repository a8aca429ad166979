/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: hardware streams of the queue managers (DMA and compute engines).
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_STREAM_H__
#define __HPU_STREAM_H__

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/stddef.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <drm/gpu_scheduler.h>

#include "hpu_regs.h"

struct dma_fence;
struct hpu_device;
struct hpu_job;
struct hpu_queue;

/* DMA engines the driver drives: engine indexes 0..7, vectors 2..9. */
#define HPU_MAX_DMA_ENGINES	8
/* MMEs the driver drives: engine indexes 9 and 10 (spec version 6). */
#define HPU_MAX_MME_ENGINES	2
/* Engine indexes the driver knows: 0..10 (Documentation/hw/compute.md). */
#define HPU_MAX_ENGINES		HPU_NUM_ENGINES
/* First spec version with the compute engines' queue managers. */
#define HPU_SPEC_VERSION_COMPUTE	6
/* First spec version with write-back records and interrupt moderation. */
#define HPU_SPEC_VERSION_WB	9
/* Engine classes of &drm_hpu_queue_create.engine_class. */
#define HPU_ENGINE_CLASSES	3

static_assert(HPU_ENGINE_MME0 + HPU_MAX_MME_ENGINES == HPU_MAX_ENGINES);

/*
 * Descriptors per stream, and completion records per stream (the same
 * number, so the completion ring can never overflow: a stream never has
 * more than this many jobs on the hardware). The scheduler may have
 * HPU_STREAM_SCHED_CREDITS of them there, jobs submitted directly by the
 * SUBMIT ioctls (no scheduler hop) the rest, HPU_STREAM_DIRECT_MAX: so
 * run_job always finds room.
 */
#define HPU_STREAM_ENTRIES		1024
#define HPU_STREAM_SCHED_CREDITS	256
#define HPU_STREAM_DIRECT_MAX	(HPU_STREAM_ENTRIES - HPU_STREAM_SCHED_CREDITS)

/**
 * struct hpu_desc - a descriptor in a stream's ring (32 bytes)
 * @cb_addr: command buffer address in @asid's address space.
 * @cb_size: command buffer bytes, a multiple of 8, 8 to 1 MiB.
 * @asid: address space of the command buffer and its packets.
 * @flags: zero.
 * @seq: copied to the completion record.
 * @reserved: zero.
 */
struct hpu_desc {
	__le64 cb_addr;
	__le32 cb_size;
	__le16 asid;
	__le16 flags;
	__le64 seq;
	__le64 reserved;
} __packed;

/**
 * struct hpu_cqe - a record in a stream's completion ring (16 bytes)
 * @seq: from the descriptor.
 * @status: HPU_CQ_*.
 * @where: [23:0] byte offset in the command buffer of the failed packet
 *	(HPU_CQE_OFFSET_MASK), [27:24] engine, [31:28] stream (spec version 5).
 */
struct hpu_cqe {
	__le64 seq;
	__le32 status;
	__le32 where;
} __packed;

/**
 * struct hpu_wb - a stream's write-back record (spec version 9, 32 bytes)
 * @done: descriptors the stream completed since it was last enabled.
 * @busy_ns: device ns the engine executed the stream's packets since then.
 * @cq_pi: CQ_PI when the record was written: completion records written.
 * @status: the stream's STATUS then.
 * @err_status: status of the last completion record other than OK since
 *	the stream was enabled, 0 if none.
 * @err_where: that record's @where, 0 if none.
 *
 * The device writes all 32 bytes in one DMA write at each notification,
 * after the completion records it covers and before it raises the vector,
 * and when the stream stops (Documentation/hw/memory-and-queues.md).
 * Naturally aligned without padding, so not __packed: each field is read
 * in one load.
 */
struct hpu_wb {
	__le64 done;
	__le64 busy_ns;
	__le32 cq_pi;
	__le32 status;
	__le32 err_status;
	__le32 err_where;
};

static_assert(sizeof(struct hpu_desc) == HPU_DESC_SIZE);
static_assert(sizeof(struct hpu_cqe) == HPU_CQE_SIZE);
static_assert(sizeof(struct hpu_wb) == HPU_WB_SIZE);
static_assert(offsetof(struct hpu_wb, done) == HPU_WB_DONE);
static_assert(offsetof(struct hpu_wb, busy_ns) == HPU_WB_BUSY_NS);
static_assert(offsetof(struct hpu_wb, cq_pi) == HPU_WB_CQ_PI);
static_assert(offsetof(struct hpu_wb, status) == HPU_WB_STATUS);
static_assert(offsetof(struct hpu_wb, err_status) == HPU_WB_ERR_STATUS);
static_assert(offsetof(struct hpu_wb, err_where) == HPU_WB_ERR_WHERE);

/**
 * struct hpu_stream - one hardware stream of a queue manager
 * @hdev: the device.
 * @base: BAR0 offset of the stream's register block.
 * @engine: engine index of the spec (0-7 DMA, 8 TPC, 9-10 MME).
 * @index: stream index within the engine.
 * @compute: the engine is a compute engine (TPC or MME): disabling the
 *	stream makes a hung engine let go (Documentation/hw/compute.md), so
 *	STATUS.HUNG does not mean the stream cannot stop.
 * @name: "<engine name>.<index>" ("dma3.1", "tpc.0", "mme1.2"), the
 *	scheduler and fence timeline name.
 * @sched: the scheduler feeding this stream; one job is one descriptor.
 *	Initialised at probe, torn down when the DRM device is released
 *	(after the last file is closed), so entities never outlive it.
 * @sched_ready: @sched was initialised.
 * @ring: descriptor ring (@HPU_STREAM_ENTRIES entries, coherent DMA).
 * @ring_dma: bus address of @ring.
 * @cq: completion ring (@HPU_STREAM_ENTRIES entries, coherent DMA).
 * @cq_dma: bus address of @cq.
 * @wb: the stream's write-back record (spec version 9; NULL before):
 *	its slot of one coherent array of all streams' records, set at
 *	probe. The device writes it; the driver reads it under @lock and
 *	zeroes it under @lock while the stream is disabled and idle, before
 *	enabling it.
 * @wb_dma: bus address of @wb, programmed into WB_LO/HI at every enable.
 * @fence_ctx: dma_fence context of the stream's hardware fences.
 * @fence_lock: lock of the hardware fences (dma_fence internal use only).
 * @recover_lock: serialises stream restarts (timeout recovery, cancelling
 *	a closing queue's jobs); held while sleeping for the stream to stop.
 *	Taken inside &hpu_reset.sem (read), never by a reset.
 * @lock: protects @enabled, @stopped, @pi, @cq_ci, @seq, @inflight,
 *	@tdr_seq and the driver's accesses to @wb, and orders ring writes
 *	with the doorbell. Taken in hard
 *	interrupt context, so elsewhere with interrupts off. Never held while
 *	a fence is signalled.
 * @enabled: the stream is programmed and enabled; cleared (under @lock)
 *	when the device goes away, after which nothing touches the rings.
 * @stopped: a restart or a reset has disabled the stream and owns its
 *	rings: the interrupt handler consumes nothing, new jobs only join
 *	@inflight (their descriptors are written when the stream resumes).
 * @tdr: per-job timeout: runs at the deadline of the job at the head of
 *	@inflight (the one the stream is executing).
 * @tdr_seq: sequence number of the job @tdr is armed for, 0 for none.
 * @pi: descriptors written since the stream was last enabled.
 * @cq_ci: completion records consumed since the stream was last enabled.
 * @seq: last sequence number handed to a descriptor (from 1).
 * @inflight: jobs whose descriptor is in the ring and whose completion
 *	has not been consumed, oldest first (&hpu_job.link); scheduled and
 *	direct jobs alike, in the order they were given a sequence number.
 * @direct_jobs: direct jobs of the stream (&hpu_job.direct) from the
 *	SUBMIT that reserved their slot until their fence is signalled, at
 *	most HPU_STREAM_DIRECT_MAX (hpu_stream_direct_get()).
 * @num_queues: queues (entities) placed on this stream, for balancing.
 * @direct_submitted: jobs submitted to this stream directly since probe
 *	(debugfs "streams").
 * @completed: jobs completed on this stream since probe.
 * @failed: of those, jobs that completed with an error.
 * @timeouts: jobs that timed out on this stream.
 */
struct hpu_stream {
	struct hpu_device *hdev;
	u32 base;
	u8 engine;
	u8 index;
	bool compute;
	char name[16];
	struct drm_gpu_scheduler sched;
	bool sched_ready;
	struct hpu_desc *ring;
	dma_addr_t ring_dma;
	struct hpu_cqe *cq;
	dma_addr_t cq_dma;
	struct hpu_wb *wb;
	dma_addr_t wb_dma;
	u64 fence_ctx;
	/* lock of the hardware fences */
	spinlock_t fence_lock;
	/* serialises restarts of the stream */
	struct mutex recover_lock;
	/* protects enabled, stopped, pi, cq_ci, seq, inflight, tdr_seq, *wb; irq-safe */
	spinlock_t lock;
	bool enabled;
	bool stopped;
	struct delayed_work tdr;
	u64 tdr_seq;
	u32 pi;
	u32 cq_ci;
	u64 seq;
	struct list_head inflight;
	atomic_t direct_jobs;
	atomic_t num_queues;
	atomic64_t direct_submitted;
	atomic64_t completed;
	atomic64_t failed;
	atomic64_t timeouts;
};

/**
 * struct hpu_engine - one engine: its queue manager's streams
 * @qm: the queue managers.
 * @index: engine index of the spec.
 * @klass: engine class, DRM_HPU_ENGINE_*.
 * @class_index: index of the engine within its class (QUEUE_CREATE's
 *	&drm_hpu_queue_create.engine).
 * @hang_work: recovers the streams of a compute engine that the watchdog
 *	found hung by disabling them (hpu_stream_engine_hung()).
 * @streams: the streams.
 */
struct hpu_engine {
	struct hpu_qm *qm;
	u8 index;
	u8 klass;
	u8 class_index;
	struct work_struct hang_work;
	struct hpu_stream streams[HPU_QM_STREAMS];
};

/**
 * struct hpu_qm - the queue managers of one device
 * @hdev: the device.
 * @num_engines: entries of @engines in use: the DMA engines, then the TPC
 *	engine and the MMEs when the device has them (spec version 6).
 * @timeout_ms: default job timeout in ms, from the job_timeout_ms
 *	parameter at probe; a submission may ask for another.
 * @irq_mod: IRQ_MOD of every stream (spec version 9), from the
 *	irq_coalesce_count and irq_coalesce_us parameters at probe
 *	(hpu_stream_irq_mod()); 0 before version 9. Constant after probe.
 * @wq: workqueue of every stream's scheduler work (high priority, not
 *	ordered: the streams' work items run in parallel, each one
 *	non-reentrant) and of @free_work.
 * @tdr_wq: workqueue of the per-stream job timeout work (&hpu_stream.tdr).
 * @jobs: jobs allocated and not yet freed; the device waits for it to
 *	drop to zero before it tears the schedulers down.
 * @jobs_wq: woken when @jobs drops to zero.
 * @free_list: direct jobs whose fence has signalled, to be freed.
 * @free_work: frees the jobs on @free_list, off the completion path.
 * @done_lock: protects every queue's &hpu_queue.direct list and orders
 *	the signalling of the queue fences (hpu_queue_fence_done()).
 * @class_first: entry of @engines of the first engine of each class.
 * @class_count: engines of each class in @engines.
 * @engines: the engines, by class: DMA, TPC, MME.
 *
 * Allocated with drmm_kzalloc(): it lives until the DRM device is
 * released, which is after every file (and so every queue) is gone.
 */
struct hpu_qm {
	struct hpu_device *hdev;
	unsigned int num_engines;
	u32 timeout_ms;
	u32 irq_mod;
	struct workqueue_struct *wq;
	struct workqueue_struct *tdr_wq;
	atomic_t jobs;
	wait_queue_head_t jobs_wq;
	struct llist_head free_list;
	struct work_struct free_work;
	spinlock_t done_lock;	/* protects every queue's direct list */
	u8 class_first[HPU_ENGINE_CLASSES];
	u8 class_count[HPU_ENGINE_CLASSES];
	struct hpu_engine engines[HPU_MAX_ENGINES];
};

int hpu_streams_init(struct hpu_device *hdev);
void hpu_streams_fini(struct hpu_device *hdev);
int hpu_streams_self_test(struct hpu_device *hdev);

/* Longest per-submission timeout, &drm_hpu_submit.timeout_ms. */
#define HPU_JOB_TIMEOUT_MAX_MS	3600000U

int hpu_stream_submit(struct hpu_stream *stream, struct hpu_job *job);
bool hpu_stream_direct_get(struct hpu_stream *stream);
void hpu_stream_direct_put(struct hpu_stream *stream);
struct dma_fence *hpu_stream_submit_direct(struct hpu_stream *stream,
					   struct hpu_job *job,
					   struct list_head *failed);
void hpu_stream_kick(struct hpu_stream *stream);
void hpu_stream_cancel_queue(struct hpu_stream *stream,
			     struct hpu_queue *queue);
struct hpu_engine *hpu_stream_engine(struct hpu_qm *qm, u32 klass, u32 index);
struct hpu_stream *hpu_stream_pick(struct hpu_engine *engine);
bool hpu_stream_engine_hung(struct hpu_device *hdev, unsigned int index);

bool hpu_stream_engine_present(const struct hpu_device *hdev,
			       unsigned int index);
unsigned int hpu_stream_engine_limit(const struct hpu_device *hdev);
const char *hpu_stream_engine_name(unsigned int index);

void hpu_streams_sched_stop(struct hpu_device *hdev);
void hpu_streams_reset_prepare(struct hpu_device *hdev, bool hard);
void hpu_streams_reset_finish(struct hpu_device *hdev, bool hard, bool dead);

#if IS_ENABLED(CONFIG_KUNIT)
/* For the KUnit suites (kernel/tests/). */
void hpu_stream_put_desc(struct hpu_stream *stream, struct hpu_job *job);
int hpu_stream_cq_new(u32 cq_pi, u32 cq_ci, bool from_wb);
u32 hpu_stream_irq_mod(unsigned int count, unsigned int us);
int hpu_stream_hw_enable(struct hpu_stream *stream);
void hpu_stream_reap(struct hpu_stream *stream, struct list_head *done);
void hpu_stream_reap_notified(struct hpu_stream *stream,
			      struct list_head *done);
#endif

#endif /* __HPU_STREAM_H__ */
