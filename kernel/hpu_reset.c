// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: soft and hard reset, the reset generation and the firmware
 * heartbeat.
 *
 * A reset runs in process context: from the reset work, for resets that
 * interrupt handlers and the heartbeat schedule (hpu_reset_schedule()),
 * or directly in the caller for the operator's reset (hpu_reset_now()).
 * &hpu_reset.lock lets one run at a time; &hpu_reset.sem, taken for
 * writing while the device is reset and re-initialised, keeps out context
 * creation, HBM scrubbing and stream restarts. A hard reset increments the
 * reset generation: files opened before it are stale, their ioctls fail
 * with -ENODEV (hpu_reset_ioctl()) and their jobs never run again.
 * Documentation/driver/reset.md has the whole picture.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/capability.h>
#include <linux/compat.h>
#include <linux/device.h>
#include <linux/dma-fence.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/pci.h>
#include <linux/seq_file.h>
#include <linux/sysfs.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>

#include "hpu_devlink.h"
#include "hpu_drv.h"
#include "hpu_gem.h"
#include "hpu_eq.h"
#include "hpu_notify.h"
#include "hpu_fw.h"
#include "hpu_hbm.h"
#include "hpu_hw.h"
#include "hpu_mmu.h"
#include "hpu_nic.h"
#include "hpu_stream.h"
#include "hpu_reg.h"
#include "hpu_reset.h"
#include "hpu_telemetry.h"

static unsigned int hpu_hb_period_ms = 1000;
module_param_named(hb_period_ms, hpu_hb_period_ms, uint, 0444);
MODULE_PARM_DESC(hb_period_ms,
		 "Firmware heartbeat period in ms: a request not acknowledged by the next period is a heartbeat loss and leads to a hard reset; 0 disables the heartbeat (default 1000)");

/*
 * Hard reset: 10 ms of device time plus the HBM clear, which the device
 * runs in the background in chunks (like a scrub: scaled with the HBM
 * size); the firmware boot has its own timeouts.
 */
#define HPU_HARD_RESET_TIMEOUT_US	(1000 * USEC_PER_MSEC)
#define HPU_HARD_RESET_US_PER_GIB	(1000 * USEC_PER_MSEC)
/* Shortest heartbeat period: the firmware answers within 1 ms. */
#define HPU_HB_PERIOD_MIN_MS		10

static const char *hpu_reset_kind_name(enum hpu_reset_kind kind)
{
	return kind == HPU_RESET_HARD ? "hard" : "soft";
}

/**
 * hpu_reset_generation() - the device's reset generation
 * @hdev: the device
 *
 * Return: the number of hard resets since probe. Callable from any context.
 */
u64 hpu_reset_generation(struct hpu_device *hdev)
{
	return atomic64_read(&hdev->reset->generation);
}

/**
 * hpu_reset_file_stale() - whether a file was opened before a hard reset
 * @fpriv: the file
 *
 * Return: true if the device was hard reset since the file was opened:
 * its context (address space, buffers, queues) no longer exists on the
 * device.
 */
static bool hpu_reset_file_stale(struct hpu_file_priv *fpriv)
{
	return fpriv->generation != hpu_reset_generation(fpriv->hdev);
}

/**
 * hpu_reset_read_lock() - keep resets out
 * @hdev: the device
 *
 * Waits for a reset in progress, also for a function level reset the PCI
 * core is doing (hpu_reset_flr_prepare()). The holder must not wait for a job (a
 * reset may be what completes it), allocate memory with GFP_KERNEL
 * (reclaim may wait for a job), nor take the lock again: resets hold the
 * lock for writing inside their fence-signalling critical section
 * (dma_fence_begin_signalling()), and lockdep checks it. May sleep.
 */
void hpu_reset_read_lock(struct hpu_device *hdev)
{
	struct hpu_reset *r = hdev->reset;

	for (;;) {
		down_read(&r->sem);
		if (!READ_ONCE(r->flr_active))
			return;
		/*
		 * A function level reset halted the device and let go of
		 * the lock while the PCI core resets it: wait, unlocked,
		 * until its reset_done takes the lock again.
		 */
		up_read(&r->sem);
		wait_event(r->flr_wq, !READ_ONCE(r->flr_active));
	}
}

/**
 * hpu_reset_read_unlock() - let resets in again
 * @hdev: the device
 */
void hpu_reset_read_unlock(struct hpu_device *hdev)
{
	up_read(&hdev->reset->sem);
}

/* Driver-private ioctl numbers, the ones a stale file may not use. */
static bool hpu_reset_ioctl_checked(unsigned int cmd)
{
	unsigned int nr = DRM_IOCTL_NR(cmd);

	return nr >= DRM_COMMAND_BASE && nr < DRM_COMMAND_END;
}

static int hpu_reset_ioctl_check(struct file *filp, unsigned int cmd)
{
	struct drm_file *file = filp->private_data;
	struct hpu_file_priv *fpriv = file->driver_priv;

	if (!hpu_reset_ioctl_checked(cmd) || !fpriv)
		return 0;
	if (hpu_reset_file_stale(fpriv)) {
		drm_dbg_driver(file->minor->dev,
			       "ioctl 0x%x on a file opened before hard reset %llu: -ENODEV\n",
			       cmd, hpu_reset_generation(fpriv->hdev));
		return -ENODEV;
	}
	return 0;
}

/**
 * hpu_reset_ioctl() - &file_operations.unlocked_ioctl of the accel node
 * @filp: the file
 * @cmd: the ioctl
 * @arg: its argument
 *
 * Refuses the driver's ioctls with -ENODEV on a file opened before the
 * last hard reset, then hands over to drm_ioctl(). The DRM core's own
 * ioctls (syncobj waits, GEM close, PRIME) keep working on such a file, so
 * that user space can read its failed fences and clean up.
 *
 * Return: the ioctl's result.
 */
long hpu_reset_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	int ret = hpu_reset_ioctl_check(filp, cmd);

	return ret ? ret : drm_ioctl(filp, cmd, arg);
}

/**
 * hpu_reset_compat_ioctl() - &file_operations.compat_ioctl of the accel node
 * @filp: the file
 * @cmd: the ioctl
 * @arg: its argument
 *
 * As hpu_reset_ioctl(), for 32-bit callers.
 *
 * Return: the ioctl's result.
 */
long hpu_reset_compat_ioctl(struct file *filp, unsigned int cmd,
			    unsigned long arg)
{
	int ret = hpu_reset_ioctl_check(filp, cmd);

	return ret ? ret : drm_compat_ioctl(filp, cmd, arg);
}

/* Heartbeat */

static void hpu_hb_arm(struct hpu_reset *r)
{
	queue_delayed_work(r->wq, &r->hb_work,
			   msecs_to_jiffies(max(hpu_hb_period_ms,
						HPU_HB_PERIOD_MIN_MS)));
}

/*
 * Check that the firmware answered the last request, then send the next.
 * A missing answer, or a firmware that is not RUNNING, is a heartbeat
 * loss: count it and schedule a hard reset, which restarts the heartbeat.
 */
static void hpu_hb_work(struct work_struct *work)
{
	struct hpu_reset *r = container_of(to_delayed_work(work),
					   struct hpu_reset, hb_work);
	struct hpu_device *hdev = r->hdev;
	u32 cpu, ack;
	int idx;

	if (!drm_dev_enter(&hdev->drm, &idx))
		return;

	cpu = hpu_rd32(hdev, HPU_REG_CPU_STATUS);
	ack = hpu_rd32(hdev, HPU_REG_HB_ACK);
	if (cpu == U32_MAX) {
		drm_dev_exit(idx);
		return;		/* surprise removal: remove() cleans up */
	}

	/* Only this work and hpu_hb_start() write hb_seq: plain reads here. */
	if (cpu != HPU_CPU_BOOTING &&
	    (cpu != HPU_CPU_RUNNING || (r->hb_seq && ack != r->hb_seq))) {
		atomic64_inc(&r->stats.heartbeat_losses);
		drm_err(&hdev->drm, "firmware heartbeat lost: CPU_STATUS %u, HB_ACK %u for request %u, FW_ERROR 0x%08x; hard reset\n",
			cpu, ack, r->hb_seq, hpu_rd32(hdev, HPU_REG_FW_ERROR));
		drm_dev_exit(idx);
		/* Not re-armed: the hard reset restarts the heartbeat. */
		hpu_reset_schedule_fw(hdev, "firmware heartbeat lost");
		return;
	}

	/* WRITE_ONCE(): devlink diagnose reads it concurrently. */
	if (cpu == HPU_CPU_BOOTING) {
		WRITE_ONCE(r->hb_seq, 0);	/* nothing can be answered yet */
	} else {
		/* Skip 0: it means "no request outstanding". */
		WRITE_ONCE(r->hb_seq, r->hb_seq + 1 ? r->hb_seq + 1 : 1);
		hpu_wr32(hdev, HPU_REG_HB_REQ, r->hb_seq);
	}
	drm_dev_exit(idx);

	hpu_hb_arm(r);
}

static void hpu_hb_start(struct hpu_reset *r)
{
	/*
	 * Only a booted firmware answers heartbeats: an unusable device is
	 * one whose firmware did not boot (at probe or after a hard reset).
	 */
	if (!r->hb_on || READ_ONCE(r->unusable))
		return;
	WRITE_ONCE(r->hb_seq, 0);
	hpu_hb_arm(r);
}

static void hpu_hb_stop(struct hpu_reset *r)
{
	cancel_delayed_work_sync(&r->hb_work);
}

/* Resets */

/* Program what the device loses at a reset and the driver set up. */
static void hpu_reset_restore(struct hpu_device *hdev)
{
	hpu_wr32(hdev, HPU_REG_IRQ_STATUS, HPU_IRQ_SELF_TEST | HPU_IRQ_RESET_DONE);
	hpu_wr32(hdev, HPU_REG_ERROR, HPU_ERROR_BAD_ACCESS |
		 HPU_ERROR_BAD_IRQ_VECTOR | HPU_ERROR_BAD_RESET_KEY |
		 HPU_ERROR_RESET_BUSY);
	hpu_hw_irq_enable(hdev);
	hpu_eq_hw_restart(hdev);
	hpu_eq_wdt_program(hdev);
}

/*
 * Soft reset: engines, streams, sync objects, event queue and TLB. HBM,
 * page tables and contexts survive. The job at the head of a hung stream
 * fails; the others are put back. Caller holds the reset lock and is
 * inside drm_dev_enter(). On failure the streams stay halted and
 * &hpu_reset.sem stays held for writing: the caller escalates to a hard
 * reset.
 */
static int hpu_reset_soft(struct hpu_device *hdev, const char *reason)
{
	struct hpu_reset *r = hdev->reset;
	ktime_t start = ktime_get();
	int ret;

	lockdep_assert_held(&r->lock);

	drm_warn(&hdev->drm, "soft reset: %s\n", reason);
	hpu_hb_stop(r);

	down_write(&r->sem);
	hpu_streams_reset_prepare(hdev, false);
	ret = hpu_hw_soft_reset(hdev);
	if (ret)
		return ret;	/* still halted and locked, for the hard reset */

	hpu_reset_restore(hdev);
	/*
	 * The reset dropped the TLB; make sure nothing stale survives. An
	 * invalidation that does not complete leaves the TLB in doubt: only
	 * a hard reset clears it.
	 */
	ret = hpu_mmu_invalidate_all(hdev);
	if (ret)
		return ret;	/* still halted and locked, for the hard reset */
	hpu_streams_reset_finish(hdev, false, false);
	up_write(&r->sem);

	atomic64_inc(&r->stats.soft_resets);
	hpu_hb_start(r);
	hpu_notify_reset(hdev, false, hpu_reset_generation(hdev));
	drm_info(&hdev->drm, "soft reset done in %lld us\n",
		 ktime_us_delta(ktime_get(), start));
	return 0;
}

/*
 * Hard reset the device and boot its firmware again (the flash image, or
 * the image file kept since probe). Return 0, -ETIMEDOUT, or the boot's
 * failure (logged with what to do).
 */
static int hpu_reset_hard_boot(struct hpu_device *hdev)
{
	u64 timeout_us = HPU_HARD_RESET_TIMEOUT_US + HPU_HARD_RESET_US_PER_GIB *
			 DIV_ROUND_UP_ULL(hdev->id.hbm_size, SZ_1G);
	u32 status;
	int ret;

	/* No flash write or other boot between the reset and the boot. */
	hpu_fw_lock(hdev);
	hpu_wr32(hdev, HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);

	ret = hpu_poll32(hdev, HPU_REG_STATUS, status,
			 (status & (HPU_STATUS_READY | HPU_STATUS_RESET_BUSY |
				    HPU_STATUS_HARD_RESET_BUSY)) ==
			 HPU_STATUS_READY, timeout_us);
	if (ret) {
		drm_err(&hdev->drm, "hard reset did not complete within %llu ms (STATUS 0x%08x)\n",
			timeout_us / USEC_PER_MSEC, status);
	} else {
		ret = hpu_fw_boot_locked(hdev);
	}
	hpu_fw_unlock(hdev);
	return ret;
}

/*
 * Re-initialise the device state a hard reset lost: MMU (window, roots,
 * TLB, fault latch) and HBM (scrubbed: the page-table area and every
 * buffer read as zero). Contexts of the old generation keep their ASIDs,
 * page tables and HBM blocks allocated in the driver until their files
 * close, so nothing of the new generation can get them meanwhile.
 */
static int hpu_reset_reinit(struct hpu_device *hdev)
{
	int ret;

	hpu_reset_restore(hdev);

	ret = hpu_mmu_hw_init(hdev);
	if (ret)
		return ret;

	/* The hard reset abandoned a scrub that had timed out. */
	hpu_hbm_scrub_reset(hdev);
	return hpu_hbm_scrub(hdev, 0, hdev->id.hbm_size);
}

/*
 * Hard reset: the whole device. Every job on a stream fails -ECANCELED,
 * every context is lost (generation + 1). Caller holds the reset lock and
 * is inside drm_dev_enter(); @prepared: a failed soft reset already
 * halted the streams and holds &hpu_reset.sem for writing. Return: 0, or
 * -EIO with the device unusable.
 */
static int hpu_reset_hard(struct hpu_device *hdev, const char *reason,
			  bool prepared)
{
	struct hpu_reset *r = hdev->reset;
	ktime_t start = ktime_get();
	u64 gen;
	int ret;

	lockdep_assert_held(&r->lock);

	drm_warn(&hdev->drm, "hard reset: %s; every context is lost\n", reason);
	hpu_hb_stop(r);

	if (!prepared) {
		down_write(&r->sem);
		hpu_streams_reset_prepare(hdev, true);
	}

	/* From here on, files opened before get -ENODEV. */
	gen = atomic64_inc_return(&r->generation);

	if (r->flr_in_reset) {
		/* Its registers drop writes: no hard reset can start. */
		r->flr_in_reset = false;
		ret = -ETIMEDOUT;
	} else {
		ret = hpu_reset_hard_boot(hdev);
	}
	if (!ret)
		ret = hpu_reset_reinit(hdev);
	if (ret) {
		WRITE_ONCE(r->unusable, true);
		/* Removal resets the function before anything is handed on. */
		WRITE_ONCE(r->unquiet, true);
		/*
		 * Nothing proves the engines stopped: cut the device off host
		 * memory before its jobs' fences signal and their pages can
		 * go back to the kernel (Documentation/driver/reset.md).
		 */
		pci_clear_master(hdev->pdev);
		hpu_streams_reset_finish(hdev, true, true);
		up_write(&r->sem);
		atomic64_inc(&r->stats.failed_resets);
		drm_err(&hdev->drm, "hard reset failed (%d): the device is unusable; every open and ioctl fails with -ENODEV until it is unbound\n",
			ret);
		drm_err(&hdev->drm, "bus mastering turned off: the device may still run; its memory stays out of use until it is unbound\n");
		hpu_notify_reset(hdev, true, gen);
		return -EIO;
	}

	hpu_streams_reset_finish(hdev, true, false);
	up_write(&r->sem);

	atomic64_inc(&r->stats.hard_resets);
	hpu_hb_start(r);
	hpu_notify_reset(hdev, true, gen);
	drm_info(&hdev->drm, "hard reset done in %lld us; reset generation %llu\n",
		 ktime_us_delta(ktime_get(), start), gen);
	return 0;
}

/*
 * A hard reset that succeeded stopped every engine and emptied the TLB:
 * what was quarantined before generation @gen is unreachable now. The
 * release runs on its own work item, off the fence-signalling path.
 */
static void hpu_reset_quarantine_schedule(struct hpu_device *hdev, u64 gen)
{
	struct hpu_reset *r = hdev->reset;

	mutex_lock(&r->quar_lock);
	r->quar_before = max(r->quar_before, gen);
	mutex_unlock(&r->quar_lock);
	queue_work(system_unbound_wq, &r->quar_work);
}

/*
 * Run one reset. Caller holds the reset lock. @prepared: a hard reset
 * whose streams a function level reset halted already, holding
 * &hpu_reset.sem for writing (hpu_reset_flr_done()). Return 0, -EIO,
 * -ENODEV.
 *
 * The reset is a fence-signalling critical section: the jobs it stops
 * signal their fences only through it, so nothing in it may allocate
 * with GFP_KERNEL, wait for a fence or take a lock held elsewhere across
 * either (Documentation/driver-api/dma-buf.rst, "Indefinite DMA Fences").
 * The annotation lets lockdep check that.
 */
static int hpu_reset_do(struct hpu_device *hdev, enum hpu_reset_kind kind,
			const char *reason, bool prepared)
{
	struct hpu_reset *r = hdev->reset;
	bool quiet = false, fence_cookie;
	int idx, ret;

	lockdep_assert_held(&r->lock);

	if (!prepared && READ_ONCE(r->unusable))
		return -ENODEV;
	/*
	 * The netdevs go first (hpu_nic.c), before the device is entered and
	 * outside the signalling section: unregistering them takes rtnl and
	 * allocates. hpu_reset_flr_prepare() did it for a prepared reset.
	 */
	if (!prepared) {
		WRITE_ONCE(r->hard_prepare, kind == HPU_RESET_HARD);
		hpu_nic_reset_prepare(hdev);
		WRITE_ONCE(r->hard_prepare, false);
	}
	if (!drm_dev_enter(&hdev->drm, &idx)) {
		/* Unplugged: the netdevs stay away. */
		hpu_nic_reset_done(hdev, false);
		if (prepared) {
			/* Gone meanwhile: the jobs fail, the streams stay off. */
			fence_cookie = dma_fence_begin_signalling();
			hpu_streams_reset_finish(hdev, true, true);
			up_write(&r->sem);
			dma_fence_end_signalling(fence_cookie);
		}
		return -ENODEV;
	}

	/* Outside the signalling section: hpu_streams_sched_stop(). */
	if (!prepared)
		hpu_streams_sched_stop(hdev);
	fence_cookie = dma_fence_begin_signalling();
	if (prepared) {
		ret = hpu_reset_hard(hdev, reason, true);
		quiet = !ret;
	} else if (kind == HPU_RESET_SOFT) {
		ret = hpu_reset_soft(hdev, reason);
		if (ret) {
			atomic64_inc(&r->stats.failed_resets);
			drm_err(&hdev->drm, "soft reset failed (%d); escalating to a hard reset\n",
				ret);
			quiet = !hpu_reset_hard(hdev, "soft reset failed", true);
			ret = -EIO;
		}
	} else {
		ret = hpu_reset_hard(hdev, reason, false);
		quiet = !ret;
	}
	dma_fence_end_signalling(fence_cookie);
	drm_dev_exit(idx);

	/* The fences are signalled: the netdevs may come back. */
	hpu_nic_reset_done(hdev, !READ_ONCE(r->unusable));

	/* Not here: this work is in the signalling path, releasing frees. */
	if (quiet)
		hpu_reset_quarantine_schedule(hdev, hpu_reset_generation(hdev));

	/*
	 * An unusable device leaves user space for good: no open, ioctl or
	 * job gets to it. Outside drm_dev_enter(): this waits for every
	 * section of it to end.
	 */
	if (READ_ONCE(r->unusable) && !drm_dev_is_unplugged(&hdev->drm))
		drm_dev_unplug(&hdev->drm);
	return ret;
}

/*
 * Whether the firmware runs and answers: CPU RUNNING without a fatal error,
 * and the outstanding heartbeat request (if any) answered within 5 ms.
 */
static bool hpu_reset_fw_healthy(struct hpu_device *hdev)
{
	struct hpu_reset *r = hdev->reset;
	u32 ack, seq = READ_ONCE(r->hb_seq);
	bool ok = false;
	int idx;

	if (!drm_dev_enter(&hdev->drm, &idx))
		return false;
	if (hpu_rd32(hdev, HPU_REG_CPU_STATUS) == HPU_CPU_RUNNING &&
	    !hpu_rd32(hdev, HPU_REG_FW_ERROR))
		ok = !seq ||
		     !hpu_poll32(hdev, HPU_REG_HB_ACK, ack, ack == seq,
				 5 * USEC_PER_MSEC);
	drm_dev_exit(idx);
	return ok;
}

static void hpu_reset_work(struct work_struct *work)
{
	struct hpu_reset *r = container_of(work, struct hpu_reset, work);
	struct hpu_devlink_fw_snapshot snap;
	enum hpu_reset_kind kind;
	const char *reason;
	unsigned long flags;
	bool fw_check;

	mutex_lock(&r->lock);
	spin_lock_irqsave(&r->pending_lock, flags);
	if (!r->pending) {
		spin_unlock_irqrestore(&r->pending_lock, flags);
		mutex_unlock(&r->lock);
		return;
	}
	r->pending = false;
	kind = r->pending_kind;
	reason = r->pending_reason;
	fw_check = r->pending_fw_check;
	spin_unlock_irqrestore(&r->pending_lock, flags);

	if (kind == HPU_RESET_HARD && fw_check && hpu_reset_fw_healthy(r->hdev)) {
		drm_info(&r->hdev->drm, "hard reset for \"%s\" dropped: the firmware is healthy again\n",
			 reason);
	} else if (kind == HPU_RESET_HARD && fw_check) {
		/* The state of the failure, before the reset clears it. */
		hpu_devlink_fw_snapshot(r->hdev, reason, &snap);
		hpu_reset_do(r->hdev, kind, reason, false);
		/* After the reset: the reporter's recovery finds it done. */
		hpu_devlink_fw_report(r->hdev, &snap);
	} else {
		hpu_reset_do(r->hdev, kind, reason, false);
	}
	mutex_unlock(&r->lock);
}

static int __hpu_reset_schedule(struct hpu_device *hdev,
				enum hpu_reset_kind kind, const char *reason,
				bool fw_check)
{
	struct hpu_reset *r = hdev->reset;
	unsigned long flags;
	int ret = 0;

	if (!r)
		return -ENODEV;

	spin_lock_irqsave(&r->pending_lock, flags);
	if (r->shutdown || READ_ONCE(r->unusable)) {
		ret = -ENODEV;
	} else if (r->pending && r->pending_kind >= kind) {
		/* An unconditional request makes the pending one unconditional. */
		if (kind == r->pending_kind && !fw_check)
			r->pending_fw_check = false;
		ret = -EBUSY;
	} else {
		if (!r->pending)
			queue_work(r->wq, &r->work);
		r->pending = true;
		r->pending_kind = kind;
		r->pending_reason = reason;
		r->pending_fw_check = fw_check;
	}
	spin_unlock_irqrestore(&r->pending_lock, flags);

	if (!ret)
		dev_dbg(hdev->drm.dev, "%s reset scheduled: %s\n",
			hpu_reset_kind_name(kind), reason);
	return ret;
}

/**
 * hpu_reset_schedule() - ask for a reset, from any context
 * @hdev: the device
 * @kind: %HPU_RESET_SOFT or %HPU_RESET_HARD
 * @reason: what needs it, for the log; a string constant
 *
 * Queues the reset work. A request while one is pending merges with it
 * (a hard request upgrades a soft one). Callable from interrupt context.
 *
 * Return: 0 if queued; -EBUSY if a reset of this kind or a harder one is
 * already pending; -ENODEV if the device is unusable or going away.
 */
int hpu_reset_schedule(struct hpu_device *hdev, enum hpu_reset_kind kind,
		       const char *reason)
{
	return __hpu_reset_schedule(hdev, kind, reason, false);
}

/**
 * hpu_reset_schedule_fw() - ask for a hard reset for a firmware failure
 * @hdev: the device
 * @reason: what needs it, for the log; a string constant
 *
 * Like hpu_reset_schedule() with %HPU_RESET_HARD, but the reset is dropped
 * if the firmware is healthy by the time it would start: one firmware
 * failure shows two symptoms (a lost heartbeat and a FW_FATAL event), and
 * the reset asked for by the first cures the second. Callable from
 * interrupt context.
 *
 * Return: as hpu_reset_schedule().
 */
int hpu_reset_schedule_fw(struct hpu_device *hdev, const char *reason)
{
	return __hpu_reset_schedule(hdev, HPU_RESET_HARD, reason, true);
}

/**
 * hpu_reset_now() - reset the device and wait for the outcome
 * @hdev: the device
 * @kind: %HPU_RESET_SOFT or %HPU_RESET_HARD
 * @reason: for the log
 *
 * Runs the reset in the caller's context. Refuses rather than waits when
 * another reset is running. May sleep; the caller must not hold anything
 * a reset waits for (&hpu_reset.sem, a stream's recover lock).
 *
 * Return: 0; -EBUSY if a reset is already running; -EIO if the reset
 * failed (a failed soft reset escalates to a hard one, which the log
 * tells; a failed hard reset leaves the device unusable); -ENODEV if the
 * device is unusable or going away.
 */
static int hpu_reset_now(struct hpu_device *hdev, enum hpu_reset_kind kind,
			 const char *reason)
{
	struct hpu_reset *r = hdev->reset;
	int ret;

	if (READ_ONCE(r->shutdown) || READ_ONCE(r->unusable))
		return -ENODEV;
	if (!mutex_trylock(&r->lock))
		return -EBUSY;
	ret = hpu_reset_do(hdev, kind, reason, false);
	mutex_unlock(&r->lock);
	return ret;
}

/**
 * hpu_reset_flr_prepare() - quiesce the driver before a function level reset
 * @hdev: the device
 *
 * &pci_error_handlers.reset_prepare: the PCI core is about to reset the
 * function (sysfs reset, reset_method flr, or anything else that calls
 * pci_reset_function()), which is a power-on reset of the device. Takes
 * the reset lock (no reset of the driver's own runs meanwhile), stops the
 * heartbeat and halts every stream with &hpu_reset.sem held for writing,
 * then marks the FLR active (&hpu_reset.flr_active), so that no open,
 * submission or stream restart touches the device while it is reset, and
 * lets go of &hpu_reset.sem: the PCI core allocates and takes the MSI
 * lock while it resets the function, and resets take &hpu_reset.sem in
 * their fence-signalling section, so it may not be held across that.
 * hpu_reset_flr_done() recovers and lets go of the reset lock. Does
 * nothing but take the lock while the device is unusable or being
 * removed (its own removal may reset the function). May sleep.
 */
void hpu_reset_flr_prepare(struct hpu_device *hdev)
{
	struct hpu_reset *r = hdev->reset;
	bool fence_cookie;
	int idx;

	mutex_lock(&r->lock);
	r->flr_prepared = false;
	if (READ_ONCE(r->shutdown) || READ_ONCE(r->unusable))
		return;
	/* Outside drm_dev_enter(): unregistering netdevs may wait long. */
	WRITE_ONCE(r->hard_prepare, true);
	hpu_nic_reset_prepare(hdev);
	WRITE_ONCE(r->hard_prepare, false);
	if (!drm_dev_enter(&hdev->drm, &idx)) {
		hpu_nic_reset_done(hdev, false);
		return;
	}

	hpu_hb_stop(r);
	/* The function decodes no memory while it is reset. */
	hpu_gem_user_map_off(hdev);
	hpu_streams_sched_stop(hdev);
	fence_cookie = dma_fence_begin_signalling();
	down_write(&r->sem);
	hpu_streams_reset_prepare(hdev, true);
	/* The engines are halted: the busy time up to the FLR is final. */
	hpu_telemetry_reset_prepare(hdev);
	WRITE_ONCE(r->flr_active, true);
	up_write(&r->sem);
	dma_fence_end_signalling(fence_cookie);
	drm_dev_exit(idx);
	r->flr_prepared = true;
}

/**
 * hpu_reset_flr_done() - recover after a function level reset
 * @hdev: the device, hpu_reset_flr_prepare() called before the reset
 *
 * &pci_error_handlers.reset_done: the FLR lost the firmware, the streams,
 * the event queue, the MMU and IRQ_MASK; the PCI core restored only the
 * configuration space. Recovers as a hard reset does, before returning:
 * every context is lost, the firmware boots again, jobs the FLR cut short
 * fail. Then releases the reset lock. May sleep.
 */
void hpu_reset_flr_done(struct hpu_device *hdev)
{
	struct hpu_reset *r = hdev->reset;

	if (r->flr_prepared) {
		r->flr_prepared = false;
		/* A failure makes the hard reset below fail (unusable). */
		r->flr_in_reset = hpu_hw_wait_out_of_reset(hdev) != 0;
		/* BUSY_NS started again from 0 (a power-on reset). */
		hpu_telemetry_power_on_reset(hdev, !r->flr_in_reset);
		/*
		 * The hard reset below runs with the lock held for writing,
		 * as hpu_reset_flr_prepare() left it before it let go: who
		 * waits for the FLR waits for the lock from now on.
		 */
		down_write(&r->sem);
		WRITE_ONCE(r->flr_active, false);
		wake_up_all(&r->flr_wq);
		hpu_reset_do(hdev, HPU_RESET_HARD, "function level reset", true);
		r->flr_in_reset = false;
		hpu_gem_user_map_on(hdev);
	}
	mutex_unlock(&r->lock);
}

/* Quarantine */

/**
 * hpu_reset_quarantine() - keep memory the device may still reach out of use
 * @hdev: the device
 * @e: the entry, embedded in what is kept, with @e->release,
 *	@e->hbm_bytes and @e->host_bytes set
 * @what: what is kept, for the log
 * @asid: the address space it belonged to, for the log
 *
 * For a TLB invalidation that did not complete, or a context torn down
 * while its jobs still ran: the device may still read or write the
 * memory, so it must neither go back to the HBM allocator (another
 * context would get it) nor to the kernel (pinned pages stay pinned).
 * Logs one line, schedules a hard reset and keeps @e until a hard reset
 * that resets the device after this call succeeds (then &hpu_reset.quar_work
 * releases it), or until the device is removed (hpu_reset_quarantine_fini()).
 * Called while a hard reset deletes the auxiliary devices, it schedules
 * none: that reset is the one.
 * Never allocates. May sleep.
 */
void hpu_reset_quarantine(struct hpu_device *hdev, struct hpu_quar_entry *e,
			  const char *what, u32 asid)
{
	struct hpu_reset *r = hdev->reset;

	e->gen = hpu_reset_generation(hdev);
	mutex_lock(&r->quar_lock);
	list_add_tail(&e->link, &r->quar_list);
	r->quar_count++;
	r->quar_hbm += e->hbm_bytes;
	r->quar_host += e->host_bytes;
	mutex_unlock(&r->quar_lock);

	drm_err(&hdev->drm, "ASID %u: quarantined %s (%llu bytes of HBM, %llu bytes of host memory): the device may still reach it; kept out of use until a hard reset\n",
		asid, what, e->hbm_bytes, e->host_bytes);
	/*
	 * Quarantined while a hard reset deletes the auxiliary devices (an
	 * RDMA context torn down by it): that reset, whose generation is
	 * still @e's, releases it.
	 */
	if (!READ_ONCE(r->hard_prepare))
		hpu_reset_schedule(hdev, HPU_RESET_HARD, "quarantined memory");
}

/*
 * Release the quarantined entries: all of them, or those quarantined in a
 * generation before @before. No driver lock may be held; not from the
 * reset work (releasing takes locks held across allocations).
 */
static void hpu_reset_quarantine_release(struct hpu_device *hdev, bool all,
					 u64 before, const char *why)
{
	struct hpu_reset *r = hdev->reset;
	struct hpu_quar_entry *e, *tmp;
	u64 hbm = 0, host = 0;
	unsigned int n = 0;
	LIST_HEAD(list);

	mutex_lock(&r->quar_lock);
	list_for_each_entry_safe(e, tmp, &r->quar_list, link) {
		if (!all && e->gen >= before)
			continue;
		list_move_tail(&e->link, &list);
		hbm += e->hbm_bytes;
		host += e->host_bytes;
		n++;
	}
	r->quar_count -= n;
	r->quar_hbm -= hbm;
	r->quar_host -= host;
	r->quar_released += n;
	mutex_unlock(&r->quar_lock);

	if (!n)
		return;
	drm_info(&hdev->drm, "released %u quarantined entries (%llu bytes of HBM, %llu bytes of host memory): %s\n",
		 n, hbm, host, why);
	list_for_each_entry_safe(e, tmp, &list, link) {
		list_del_init(&e->link);
		e->release(e);
	}
}

static void hpu_reset_quar_work(struct work_struct *work)
{
	struct hpu_reset *r = container_of(work, struct hpu_reset, quar_work);
	u64 before;

	mutex_lock(&r->quar_lock);
	before = r->quar_before;
	mutex_unlock(&r->quar_lock);
	hpu_reset_quarantine_release(r->hdev, false, before,
				     "a hard reset proved the device quiet");
}

/**
 * hpu_reset_set_unquiet() - note that the device could not be quiesced
 * @hdev: the device
 *
 * Its engines may still run (a stream did not stop at shutdown): the
 * removal resets the function before the device is let go of
 * (hpu_reset_quarantine_fini()), so that no later owner finds it running.
 */
void hpu_reset_set_unquiet(struct hpu_device *hdev)
{
	if (hdev->reset)
		WRITE_ONCE(hdev->reset->unquiet, true);
}

/*
 * At removal of a device that could not be quiesced: bus mastering off,
 * then a function level reset (the device's power-on reset), so that
 * nothing runs when the next driver instance turns bus mastering on.
 * Called with the device lock held (the driver core's remove).
 */
static void hpu_reset_remove_flr(struct hpu_device *hdev)
{
	struct pci_dev *pdev = hdev->pdev;
	int ret;

	pci_clear_master(pdev);
	if (!pci_device_is_present(pdev))
		return;		/* surprise removal: it reaches nothing */
	ret = pci_reset_function_locked(pdev);
	if (!ret)
		ret = hpu_hw_wait_out_of_reset(hdev);
	if (ret)
		drm_err(&hdev->drm, "device not quiesced and its function reset failed (%d): bus mastering stays off\n",
			ret);
	else
		drm_warn(&hdev->drm, "device not quiesced: function reset at removal, bus mastering off\n");
}

/**
 * hpu_reset_quarantine_fini() - release the quarantine at device removal
 * @hdev: the device, unplugged, its streams shut down; the device lock
 *	held (the driver core's remove)
 *
 * If the device could not be quiesced (hpu_reset_set_unquiet(), a failed
 * hard reset) or anything is quarantined, turns bus mastering off and
 * resets the function (FLR): the device can then no longer reach host
 * memory, its engines are stopped for whoever binds it next, and no one
 * allocates its HBM again. Then releases the quarantine. May sleep.
 */
void hpu_reset_quarantine_fini(struct hpu_device *hdev)
{
	struct hpu_reset *r = hdev->reset;
	bool any;

	if (!r)
		return;
	/* No reset runs any more (hpu_reset_fini()): none queues it again. */
	cancel_work_sync(&r->quar_work);
	mutex_lock(&r->quar_lock);
	any = !list_empty(&r->quar_list);
	mutex_unlock(&r->quar_lock);
	if (any || READ_ONCE(r->unquiet))
		hpu_reset_remove_flr(hdev);
	if (!any)
		return;
	hpu_reset_quarantine_release(hdev, true, 0,
				     "the device is removed, bus mastering off");
}

/**
 * hpu_reset_quarantine_show() - the quarantine, for debugfs
 * @hdev: the device
 * @m: the seq_file
 */
void hpu_reset_quarantine_show(struct hpu_device *hdev, struct seq_file *m)
{
	struct hpu_reset *r = hdev->reset;

	mutex_lock(&r->quar_lock);
	seq_printf(m, "entries %u\n", r->quar_count);
	seq_printf(m, "hbm_bytes %llu\n", r->quar_hbm);
	seq_printf(m, "host_bytes %llu\n", r->quar_host);
	seq_printf(m, "released %llu\n", r->quar_released);
	mutex_unlock(&r->quar_lock);
}

static void hpu_reset_release(struct drm_device *drm, void *arg)
{
	struct hpu_reset *r = arg;

	/* hpu_reset_quarantine_fini() ran at remove. */
	drm_WARN(drm, !list_empty(&r->quar_list),
		 "%u quarantined entries at release\n", r->quar_count);
	cancel_work_sync(&r->quar_work);
	destroy_workqueue(r->wq);
	mutex_destroy(&r->quar_lock);
	mutex_destroy(&r->lock);
}

/**
 * hpu_reset_init() - set up the reset state
 * @hdev: the device, identity read
 *
 * Must come before the queue managers (jobs carry the reset generation).
 * The heartbeat starts with hpu_reset_start(). May sleep.
 *
 * Return: 0 or -ENOMEM.
 */
int hpu_reset_init(struct hpu_device *hdev)
{
	struct drm_device *drm = &hdev->drm;
	struct hpu_reset *r;

	r = drmm_kzalloc(drm, sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;

	r->hdev = hdev;
	mutex_init(&r->lock);
	init_rwsem(&r->sem);
	init_waitqueue_head(&r->flr_wq);
	mutex_init(&r->quar_lock);
	INIT_LIST_HEAD(&r->quar_list);
	spin_lock_init(&r->pending_lock);
	INIT_WORK(&r->work, hpu_reset_work);
	INIT_WORK(&r->quar_work, hpu_reset_quar_work);
	INIT_DELAYED_WORK(&r->hb_work, hpu_hb_work);
	atomic64_set(&r->generation, 0);
	r->hb_on = hdev->id.spec_version >= 3 && hpu_hb_period_ms;

	/* Resets signal fences: they must make progress under reclaim. */
	r->wq = alloc_ordered_workqueue("hpu-reset-%s", WQ_MEM_RECLAIM,
					pci_name(hdev->pdev));
	if (!r->wq) {
		mutex_destroy(&r->quar_lock);
		mutex_destroy(&r->lock);
		return -ENOMEM;
	}
	hdev->reset = r;

	/*
	 * Teach lockdep at once that resets take the lock for writing in a
	 * fence-signalling critical section: an allocation or fence wait
	 * under the lock for reading is then reported the first time it
	 * happens, not only when it meets a reset.
	 */
	if (IS_ENABLED(CONFIG_LOCKDEP)) {
		bool cookie = dma_fence_begin_signalling();

		down_write(&r->sem);
		up_write(&r->sem);
		dma_fence_end_signalling(cookie);
	}

	return drmm_add_action_or_reset(drm, hpu_reset_release, r);
}

/**
 * hpu_reset_set_unusable() - mark the device unusable
 * @hdev: the device, being probed (its firmware did not boot)
 *
 * As after a failed hard reset: no reset is done any more and the probe
 * unplugs the DRM device once registered (hpu_reset_unusable()), so every
 * open and ioctl fails with -ENODEV until the device is rebound. sysfs and
 * devlink stay available.
 */
void hpu_reset_set_unusable(struct hpu_device *hdev)
{
	WRITE_ONCE(hdev->reset->unusable, true);
}

/**
 * hpu_reset_unusable() - whether the device is unusable
 * @hdev: the device
 *
 * Return: true after a failed hard reset or a failed firmware boot at
 * probe, until the device is unbound.
 */
bool hpu_reset_unusable(struct hpu_device *hdev)
{
	return READ_ONCE(hdev->reset->unusable);
}

/**
 * hpu_reset_flr_active() - whether a function level reset is under way
 * @hdev: the device
 *
 * Return: true from the PCI core's reset_prepare until its reset_done
 * (&hpu_reset.flr_active): registers may read anything meanwhile.
 */
bool hpu_reset_flr_active(struct hpu_device *hdev)
{
	return READ_ONCE(hdev->reset->flr_active);
}

/**
 * hpu_reset_start() - start the heartbeat
 * @hdev: the device, fully probed
 *
 * Does nothing unless the firmware runs.
 */
void hpu_reset_start(struct hpu_device *hdev)
{
	hpu_hb_start(hdev->reset);
}

/**
 * hpu_reset_fini() - stop resets and the heartbeat before the device goes
 * @hdev: the device, being removed (or a failed probe); its sysfs
 *	attributes are gone, so no operator reset runs
 *
 * Later requests fail with -ENODEV; a reset in progress finishes first.
 * May sleep.
 */
void hpu_reset_fini(struct hpu_device *hdev)
{
	struct hpu_reset *r = hdev->reset;
	unsigned long flags;

	if (!r)
		return;

	spin_lock_irqsave(&r->pending_lock, flags);
	r->shutdown = true;
	r->pending = false;
	spin_unlock_irqrestore(&r->pending_lock, flags);

	cancel_work_sync(&r->work);
	/* The heartbeat no longer re-arms once no reset can be scheduled. */
	hpu_hb_stop(r);
	/* Wait for a reset still running (hpu_reset_now() of a late caller). */
	mutex_lock(&r->lock);
	mutex_unlock(&r->lock);
	hpu_hb_stop(r);
}

/* sysfs */

/*
 * "unusable" after a failed hard reset or firmware boot (until the device
 * is unbound), "in reset" while a reset runs or is scheduled, else
 * "operational". A snapshot: the state may change as soon as it is read.
 */
static ssize_t status_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct hpu_device *hdev = pci_get_drvdata(to_pci_dev(dev));
	struct hpu_reset *r = hdev->reset;
	const char *state = "operational";

	if (hpu_reset_unusable(hdev))
		state = "unusable";
	else if (mutex_is_locked(&r->lock) || READ_ONCE(r->pending))
		state = "in reset";
	return sysfs_emit(buf, "%s\n", state);
}
static DEVICE_ATTR_RO(status);

/*
 * Operator reset: "soft" or "hard" (a trailing newline is fine). Named
 * hpu_reset: the PCI core's own "reset" (function level reset) is in the
 * same directory. Returns
 * once the reset is over: the byte count when it succeeded, -EBUSY while
 * another reset runs, -EIO when it failed, -ENODEV when the device is
 * unusable; each failure is explained in the kernel log.
 */
static ssize_t hpu_reset_store(struct device *dev,
			       struct device_attribute *attr, const char *buf,
			       size_t count)
{
	struct hpu_device *hdev = pci_get_drvdata(to_pci_dev(dev));
	enum hpu_reset_kind kind;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (sysfs_streq(buf, "soft"))
		kind = HPU_RESET_SOFT;
	else if (sysfs_streq(buf, "hard"))
		kind = HPU_RESET_HARD;
	else
		return -EINVAL;

	drm_info(&hdev->drm, "%s reset requested by the operator (pid %d)\n",
		 buf[0] == 's' ? "soft" : "hard", task_pid_nr(current));
	ret = hpu_reset_now(hdev, kind, "requested by the operator");
	switch (ret) {
	case 0:
		return count;
	case -EBUSY:
		drm_warn(&hdev->drm, "operator reset refused: another reset is in progress\n");
		break;
	case -ENODEV:
		drm_err(&hdev->drm, "operator reset refused: the device is unusable or going away\n");
		break;
	default:
		drm_err(&hdev->drm, "operator reset failed: %d\n", ret);
		break;
	}
	return ret;
}
static DEVICE_ATTR_WO(hpu_reset);

static struct attribute *hpu_reset_attrs[] = {
	&dev_attr_hpu_reset.attr,
	&dev_attr_status.attr,
	NULL
};

/* Operator reset and device status, in the PCI device's directory (hpu_sysfs.c). */
const struct attribute_group hpu_reset_group = {
	.attrs = hpu_reset_attrs,
};
