/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: soft and hard reset, the reset generation, and the firmware
 * heartbeat. Documentation/driver/reset.md has the whole picture.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_RESET_H__
#define __HPU_RESET_H__

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct attribute_group;
struct file;
struct hpu_device;
struct seq_file;
struct hpu_file_priv;

/**
 * enum hpu_reset_kind - how much of the device a reset covers
 * @HPU_RESET_SOFT: engines, streams, sync objects, event queue and TLB;
 *	HBM, page tables and contexts survive, innocent jobs are resubmitted.
 * @HPU_RESET_HARD: the whole device and its firmware; HBM content and
 *	every context are lost, the reset generation increments.
 */
enum hpu_reset_kind {
	HPU_RESET_SOFT = 0,
	HPU_RESET_HARD = 1,
};

/**
 * struct hpu_reset_stats - reset and recovery counters since probe
 * @soft_resets: soft resets completed by the driver.
 * @hard_resets: hard resets completed by the driver.
 * @failed_resets: resets that failed (a failed soft reset escalates to a
 *	hard one; a failed hard reset leaves the device unusable).
 * @heartbeat_losses: firmware heartbeats missed (each schedules a hard
 *	reset).
 * @job_timeouts: jobs stopped for running longer than their timeout.
 * @hung_jobs: jobs failed because their stream was hung (ENGINE_HANG).
 * @resubmitted: innocent jobs put back on their stream after a stream
 *	restart or a soft reset.
 */
struct hpu_reset_stats {
	atomic64_t soft_resets;
	atomic64_t hard_resets;
	atomic64_t failed_resets;
	atomic64_t heartbeat_losses;
	atomic64_t job_timeouts;
	atomic64_t hung_jobs;
	atomic64_t resubmitted;
};

/**
 * struct hpu_quar_entry - memory the device may still reach, kept out of use
 * @link: on &hpu_reset.quar_list.
 * @release: gives it back (frees the page tables, drops the buffer
 *	references, frees the ASID); called once the device is proven
 *	quiet, in process context without any driver lock held. May sleep.
 * @gen: reset generation when it was quarantined: only a hard reset that
 *	started later proves the device no longer reaches it.
 * @hbm_bytes: HBM bytes it keeps allocated (buffers and page tables).
 * @host_bytes: host memory bytes it keeps pinned.
 *
 * Embedded in what is quarantined (a mapping, an address space), so that
 * quarantining never allocates. See Documentation/driver/reset.md.
 */
struct hpu_quar_entry {
	struct list_head link;
	void (*release)(struct hpu_quar_entry *e);
	u64 gen;
	u64 hbm_bytes;
	u64 host_bytes;
};

/**
 * struct hpu_reset - reset state of one device
 * @hdev: the device.
 * @wq: ordered workqueue of @work (in the fence signalling path).
 * @work: runs resets scheduled with hpu_reset_schedule().
 * @lock: held for the whole of a reset: one reset at a time.
 * @sem: device-state lock. Writers: a soft or hard reset, while the
 *	device is being reset and re-initialised. Readers: code that must
 *	not run meanwhile and never waits for a job while holding it:
 *	open (context creation), HBM scrubbing when buffers are freed,
 *	stream restarts (job timeout, queue cancel). Taken before
 *	&hpu_stream.recover_lock and before drm_dev_enter().
 * @pending_lock: protects @pending, @pending_kind and @pending_reason;
 *	irq-safe.
 * @pending: a reset is scheduled and @work has not taken it yet.
 * @pending_kind: the kind scheduled (a hard request upgrades a soft one).
 * @pending_reason: what asked for it, a string constant.
 * @pending_fw_check: the pending hard reset is only for a firmware failure
 *	(heartbeat loss, fatal error): it is dropped if the firmware is
 *	healthy when it would start, because a reset in between (asked for
 *	by the other symptom of the same failure) already cured it.
 * @shutdown: the device is being removed: nothing is scheduled any more.
 * @hard_prepare: a hard reset (or FLR) is deleting the auxiliary devices
 *	before it resets the device: memory quarantined meanwhile is released
 *	by that reset, which needs no other. Written under @lock, read with
 *	READ_ONCE().
 * @unusable: a hard reset or the firmware boot at probe failed; the
 *	device is unplugged from user space and stays unusable until it is
 *	unbound.
 * @generation: increments at every hard reset (from 0 at probe).
 * @hb_work: the heartbeat, every hb_period_ms.
 * @hb_seq: last sequence number written to HB_REQ (0: none outstanding).
 *	Written by the heartbeat work and hpu_hb_start() (heartbeat stopped)
 *	with WRITE_ONCE(); others read it with READ_ONCE().
 * @hb_on: the heartbeat is enabled (spec version 3 or later and
 *	hb_period_ms > 0); it runs only while the firmware does.
 * @stats: counters.
 * @quar_lock: protects @quar_list, @quar_count, @quar_hbm, @quar_host and
 *	@quar_released. Taken inside &hpu_vm.lock; nothing is taken inside.
 * @quar_list: memory the device may still reach (&hpu_quar_entry.link):
 *	after a TLB invalidation that did not complete, or a context
 *	torn down while its jobs still ran. Kept out of use until a hard
 *	reset that started after it was added succeeds, or the device is
 *	removed with bus mastering off.
 * @quar_count: entries on @quar_list.
 * @quar_hbm: HBM bytes the entries keep.
 * @quar_host: host memory bytes the entries keep pinned.
 * @quar_released: entries released since probe.
 * @quar_before: entries quarantined in a generation before this one may
 *	be released: set once a hard reset that started after them
 *	succeeded. Protected by @quar_lock.
 * @quar_work: releases what @quar_before allows, on the system unbound
 *	workqueue: releasing takes &hpu_vm.lock and
 *	&hpu_ctx_limits.users_lock and frees HBM and host memory, which the
 *	reset work (in the fence-signalling path) must not.
 * @unquiet: the device could not be quiesced (streams that did not stop
 *	at shutdown, a failed hard reset, quarantined memory at removal): the
 *	removal resets the function (hpu_reset_quarantine_fini()). Set with
 *	WRITE_ONCE(), read with READ_ONCE().
 * @flr_prepared: a function level reset started by the PCI core
 *	(&pci_error_handlers.reset_prepare) halted the streams and holds
 *	@lock until its reset_done. Protected by @lock.
 * @flr_active: that FLR is under way: the streams are halted and
 *	hpu_reset_read_lock() waits on @flr_wq, without @sem, until the
 *	reset_done clears it. Written with @sem held for writing and
 *	WRITE_ONCE(), read with READ_ONCE().
 * @flr_wq: where hpu_reset_read_lock() waits for @flr_active to clear.
 * @flr_in_reset: the function did not leave "in reset" after that FLR
 *	(hpu_hw_wait_out_of_reset() failed): the hard reset that follows
 *	fails without touching the device. Protected by @lock.
 */
struct hpu_reset {
	struct hpu_device *hdev;
	struct workqueue_struct *wq;
	struct work_struct work;
	/* one reset at a time */
	struct mutex lock;
	/* device state vs reset, see above */
	struct rw_semaphore sem;
	/* protects pending* */
	spinlock_t pending_lock;
	bool pending;
	enum hpu_reset_kind pending_kind;
	const char *pending_reason;
	bool pending_fw_check;
	bool shutdown;
	bool unusable;
	bool hard_prepare;
	atomic64_t generation;
	struct delayed_work hb_work;
	u32 hb_seq;
	bool hb_on;
	struct hpu_reset_stats stats;
	/* protects quar_* */
	struct mutex quar_lock;
	struct list_head quar_list;
	unsigned int quar_count;
	u64 quar_hbm;
	u64 quar_host;
	u64 quar_released;
	u64 quar_before;
	struct work_struct quar_work;
	bool unquiet;
	bool flr_prepared;
	bool flr_active;
	wait_queue_head_t flr_wq;
	bool flr_in_reset;
};

int hpu_reset_init(struct hpu_device *hdev);
void hpu_reset_start(struct hpu_device *hdev);
void hpu_reset_fini(struct hpu_device *hdev);
void hpu_reset_set_unusable(struct hpu_device *hdev);
bool hpu_reset_unusable(struct hpu_device *hdev);
bool hpu_reset_flr_active(struct hpu_device *hdev);

int hpu_reset_schedule_fw(struct hpu_device *hdev, const char *reason);
int hpu_reset_schedule(struct hpu_device *hdev, enum hpu_reset_kind kind,
		       const char *reason);
u64 hpu_reset_generation(struct hpu_device *hdev);

void hpu_reset_quarantine(struct hpu_device *hdev, struct hpu_quar_entry *e,
			  const char *what, u32 asid);
void hpu_reset_quarantine_fini(struct hpu_device *hdev);
void hpu_reset_set_unquiet(struct hpu_device *hdev);
void hpu_reset_flr_prepare(struct hpu_device *hdev);
void hpu_reset_flr_done(struct hpu_device *hdev);
void hpu_reset_quarantine_show(struct hpu_device *hdev, struct seq_file *m);

void hpu_reset_read_lock(struct hpu_device *hdev);
void hpu_reset_read_unlock(struct hpu_device *hdev);

long hpu_reset_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);
long hpu_reset_compat_ioctl(struct file *filp, unsigned int cmd,
			    unsigned long arg);

/* sysfs hpu_reset and status of the PCI device (hpu_sysfs.c lists the group). */
extern const struct attribute_group hpu_reset_group;

#endif /* __HPU_RESET_H__ */
