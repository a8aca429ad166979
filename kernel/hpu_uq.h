/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: user queues, the user streams of spec version 10 given to processes.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_UQ_H__
#define __HPU_UQ_H__

#include <linux/bits.h>
#include <linux/dma-fence.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "hpu_regs.h"

struct drm_device;
struct drm_file;
struct drm_hpu_info_uq;
struct file;
struct hpu_device;
struct hpu_file_priv;
struct hpu_wb;
struct vm_area_struct;

/* First spec version with user streams. */
#define HPU_SPEC_VERSION_UQ	10
/* User streams of each engine: streams 4 to 15. */
#define HPU_UQ_PER_ENGINE	(HPU_QM_ALL_STREAMS - HPU_QM_KSTREAMS)
/* User stream slots of a device, one per (engine, user stream). */
#define HPU_UQ_SLOTS		(HPU_NUM_ENGINES * HPU_UQ_PER_ENGINE)
/*
 * mmap(2) offsets of the doorbell pages: slot n at HPU_UQ_MMAP_BASE + n
 * pages, below DRM_FILE_PAGE_OFFSET_START (4 GiB), so never a GEM offset.
 */
#define HPU_UQ_MMAP_BASE	BIT_ULL(30)
/* Failures each user queue remembers (struct drm_hpu_uq_wait). */
#define HPU_UQ_LOG		256

/**
 * struct hpu_uq_failure - one failed descriptor of a user queue
 * @point: the descriptor's number plus one.
 * @err: its negative errno.
 * @kind: DRM_HPU_ERROR_* of its error event, 0 for none.
 */
struct hpu_uq_failure {
	u64 point;
	int err;
	u32 kind;
};

/**
 * struct hpu_uq - a user queue: one user stream given to one file
 * @ref: references: the file's table holds one, an ioctl using the queue
 *	one for its duration.
 * @hdev: the device.
 * @fpriv: the file that created the queue; it outlives the queue.
 * @id: the queue's id in its file (shared with the kernel queues' ids).
 * @engine: engine index of the spec.
 * @stream: stream index, HPU_QM_KSTREAMS to HPU_QM_ALL_STREAMS - 1.
 * @slot: index in &hpu_uqs.slot, also the doorbell's mmap offset page.
 * @gen: unique among the device's queues (never 0): names the queue in
 *	its doorbell mappings.
 * @base: BAR0 offset of the stream's registers.
 * @asid: the file's ASID, the stream's ASID register.
 * @ring_va: ring address in the file's address space.
 * @cq_va: completion ring address there.
 * @ring_size: descriptors of the ring.
 * @cq_size: records of the completion ring.
 * @signal: the SIGNAL register value (sync object and enable).
 * @timeout_ms: the TMO_MS register value.
 * @wb: the stream's write-back record (its slot of &hpu_uqs.wb).
 * @wb_dma: bus address of @wb.
 * @fence_ctx: dma_fence context of the queue's point fences.
 * @hw_lock: serialises the driver's programming of the stream: creation,
 *	the error work, destruction, resets and fdinfo (taken inside
 *	&hpu_reset.sem). Protects @stopped and @busy_base.
 * @stopped: the stream is stopped for good (destroyed or dead); the
 *	driver no longer touches its registers.
 * @busy_base: device ns the engine ran the queue's descriptors before the
 *	stream's last enable (BUSY_NS counts from the enable).
 * @lock: protects @armable, @done, @fences, @armed, @dead, @hung, the
 *	failure log (@log to @err_last), @resumed and @notified; taken in the
 *	interrupt handler, so elsewhere with interrupts off. Never held while
 *	a fence is signalled.
 * @live: the doorbell may be mapped (hpu_uq_zap() clears it first).
 * @armable: the driver may write ARM (the stream runs as programmed);
 *	clear while it stops or is reprogrammed, and once it is dead.
 * @stopping: the driver (or a reset) is stopping the stream: the record
 *	is read only by the stopper, which alone can tell an aborted
 *	descriptor from a completed one.
 * @done: descriptors completed, as far as the driver has seen.
 * @fences: point fences not yet signalled, by increasing point.
 * @armed: the ARM value last written, 0 for none.
 * @dead: the queue's end: 0 while it runs, else the errno of every point
 *	it will never reach (-EFAULT ring fault, -ECANCELED destroyed or
 *	hard reset, -ENODEV device gone).
 * @hung: the watchdog blamed the stream's descriptor in flight; the next
 *	restart skips it (-ETIMEDOUT).
 * @log: the last HPU_UQ_LOG failures, a ring by @log_next.
 * @log_next: failures recorded so far.
 * @log_floor: points at or below it may have failed without being in
 *	@log any more (it overflowed): their outcome is unknown.
 * @err_seen: the point of the last failure recorded.
 * @err_last: err_status and err_where of the write-back record's last
 *	failure already recorded (the record keeps them until the enable).
 * @resumed: the @done value at which the error work last resumed the
 *	error-stopped stream (the record says ERROR until it is rewritten).
 * @notified: failures of @log the file was told about.
 * @err_work: handles stops (error, fault, timeout, hang) and reports
 *	failures, in process context.
 * @watch: while points are waited for, checks the doorbell was not moved
 *	back below them (hpu_uq_watch_work()).
 */
struct hpu_uq {
	struct kref ref;
	struct hpu_device *hdev;
	struct hpu_file_priv *fpriv;
	u32 id;
	u8 engine;
	u8 stream;
	u16 slot;
	u64 gen;
	u32 base;
	u32 asid;
	u64 ring_va;
	u64 cq_va;
	u32 ring_size;
	u32 cq_size;
	u32 signal;
	u32 timeout_ms;
	struct hpu_wb *wb;
	dma_addr_t wb_dma;
	u64 fence_ctx;
	/* serialises programming of the stream; protects stopped */
	struct mutex hw_lock;
	bool stopped;
	u64 busy_base;
	/* protects done, fences, armed, dead, hung, log*, err_seen; irq-safe */
	spinlock_t lock;
	bool live;
	bool armable;
	bool stopping;
	u64 done;
	struct list_head fences;
	u64 armed;
	int dead;
	bool hung;
	struct hpu_uq_failure log[HPU_UQ_LOG];
	u64 log_next;
	u64 log_floor;
	u64 err_seen;
	u64 err_last;
	u64 resumed;
	u64 notified;
	struct work_struct err_work;
	struct delayed_work watch;
};

/**
 * struct hpu_uqs - the user streams of one device
 * @hdev: the device.
 * @supported: spec version 10 and 4 KiB pages: user queues are offered.
 * @lock: protects @slot (writers), @count and @gone; readers of @slot in the
 *	interrupt handler use RCU.
 * @slot: the live user queues by slot (engine * HPU_UQ_PER_ENGINE +
 *	stream - HPU_QM_KSTREAMS).
 * @count: live user queues.
 * @gone: set by hpu_uqs_fini() (the device is going): UQ_CREATE is
 *	refused -ENODEV from then on.
 * @wb: write-back records of every slot (coherent DMA).
 * @wb_dma: bus address of @wb.
 * @dummy: zeroed page mapped in place of a doorbell whose queue is gone:
 *	stores to it vanish.
 * @db_sem: doorbell faults hold it for reading from their check to their
 *	insert; hpu_uq_zap() takes it for writing between clearing
 *	&hpu_uq.live and unmapping.
 * @gen: the last &hpu_uq.gen handed out.
 * @db_phys: bus address of BAR0's doorbell block.
 */
struct hpu_uqs {
	struct hpu_device *hdev;
	bool supported;
	/* protects slot (writers), count and gone */
	struct mutex lock;
	struct hpu_uq __rcu *slot[HPU_UQ_SLOTS];
	unsigned int count;
	bool gone;
	struct hpu_wb *wb;
	dma_addr_t wb_dma;
	struct page *dummy;
	/* orders doorbell faults with zaps */
	struct rw_semaphore db_sem;
	atomic64_t gen;
	phys_addr_t db_phys;
};

int hpu_uqs_init(struct hpu_device *hdev);
void hpu_uqs_fini(struct hpu_device *hdev);
bool hpu_uqs_supported(const struct hpu_device *hdev);
void hpu_uq_engine_irq(struct hpu_device *hdev, unsigned int engine);
void hpu_uq_engine_hang(struct hpu_device *hdev, unsigned int engine,
			unsigned int stream);
void hpu_uqs_reset_prepare(struct hpu_device *hdev);
void hpu_uqs_reset_finish(struct hpu_device *hdev, bool hard, bool dead);
void hpu_uqs_file_fini(struct hpu_file_priv *fpriv);
u64 hpu_uqs_file_busy_ns(struct hpu_file_priv *fpriv, unsigned int engine);
int hpu_uq_destroy(struct hpu_file_priv *fpriv, u32 id);
void hpu_uq_info(struct hpu_device *hdev, struct hpu_file_priv *fpriv,
		 struct drm_hpu_info_uq *out);
int hpu_mmap(struct file *filp, struct vm_area_struct *vma);

int hpu_uq_create_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file);
int hpu_uq_wait_ioctl(struct drm_device *drm, void *data,
		      struct drm_file *file);
int hpu_uq_fence_ioctl(struct drm_device *drm, void *data,
		       struct drm_file *file);

#endif /* __HPU_UQ_H__ */
