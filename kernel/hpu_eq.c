// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: the event queue, and the engine watchdog that reports hangs to it.
 *
 * The device writes a 32-byte entry per event to a ring in host memory
 * and raises MSI-X vector 1. The handler counts every event, logs it
 * (rate limited) and starts what recovery the event needs: a soft reset
 * for a hung DMA engine, disabling the hung streams of a compute engine
 * (hpu_stream_engine_hung()), a hard reset for a fatal firmware error,
 * the retirement of an HBM page for an uncorrectable ECC error.
 *
 * The job that caused an error is failed separately, through its
 * completion status, and the completion path tells the job's file
 * (hpu_job.c: one DRM_HPU_EVENT_ERROR per failed job, with its queue and
 * sequence number). Only what the completion record lacks is sent from
 * here: the faulting address of an MMU fault and what the device says
 * about a failed TPC launch or GEMM (descriptor and rule, program counter
 * and reason, assert value), to the file of the ASID, paired with the
 * failed job when its completion comes in time (hpu_notify_device_error());
 * and an uncorrectable ECC error (to every file holding the page).
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/moduleparam.h>

#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_managed.h>

#include "hpu_accel.h"
#include "hpu_devlink.h"
#include "hpu_drv.h"
#include "hpu_eq.h"
#include "hpu_notify.h"
#include "hpu_gem.h"
#include "hpu_hbm.h"
#include "hpu_irq.h"
#include "hpu_mmu.h"
#include "hpu_reg.h"
#include "hpu_reset.h"
#include "hpu_stream.h"
#include "hpu_uq.h"

/**
 * struct hpu_eq_ue_match - what hpu_eq_bo_holds() looks for
 * @hdev: the device.
 * @addr: HBM offset of the poisoned page.
 */
struct hpu_eq_ue_match {
	struct hpu_device *hdev;
	u64 addr;
};

/* idr_for_each() callback: does this GEM object hold the page? */
static int hpu_eq_bo_holds(int id, void *ptr, void *data)
{
	struct hpu_eq_ue_match *match = data;
	struct drm_gem_object *obj = ptr;
	struct hpu_bo *bo;

	/* A handle being created has no object yet. */
	if (!obj || obj->dev != &match->hdev->drm)
		return 0;
	bo = to_hpu_bo(obj);
	return bo->kind == HPU_BO_HBM &&
	       hpu_hbm_blocks_contain(match->hdev, &bo->blocks, match->addr);
}

/*
 * Tell every file that has a handle to a buffer in the poisoned page.
 * The file list lock keeps each listed file (and its driver_priv) alive:
 * the DRM core unlists a file before it frees it.
 */
static void hpu_eq_ue_notify(struct hpu_device *hdev, u64 addr)
{
	struct hpu_eq_ue_match match = { .hdev = hdev, .addr = addr };
	struct drm_device *drm = &hdev->drm;
	struct drm_file *file;
	int holds;

	mutex_lock(&drm->filelist_mutex);
	list_for_each_entry(file, &drm->filelist, lhead) {
		if (!file->driver_priv)
			continue;
		spin_lock(&file->table_lock);
		holds = idr_for_each(&file->object_idr, hpu_eq_bo_holds, &match);
		spin_unlock(&file->table_lock);
		if (holds)
			hpu_notify_job_error(file->driver_priv,
					     DRM_HPU_ERROR_ECC, U32_MAX, 0,
					     -EBADMSG, 0, addr);
	}
	mutex_unlock(&drm->filelist_mutex);
}

static void hpu_eq_ue_work(struct work_struct *work)
{
	struct hpu_eq *eq = container_of(work, struct hpu_eq, ue_work);
	struct hpu_device *hdev = eq->hdev;
	struct device *dev = hdev->drm.dev;
	unsigned long flags;
	bool in_use;
	u64 addr;
	int ret;

	for (;;) {
		spin_lock_irqsave(&eq->lock, flags);
		if (eq->ue_head == eq->ue_tail) {
			spin_unlock_irqrestore(&eq->lock, flags);
			break;
		}
		addr = eq->ue_addr[eq->ue_head++ % HPU_EQ_UE_BACKLOG];
		spin_unlock_irqrestore(&eq->lock, flags);

		addr = ALIGN_DOWN(addr, HPU_HBM_PAGE_SIZE);
		ret = hpu_hbm_retire(hdev, addr, &in_use);
		if (!ret)
			dev_warn(dev, "HBM page 0x%llx retired after an uncorrectable ECC error%s\n",
				 addr, in_use ? " (taken out when its buffer is freed)" : "");
		else if (ret == -ERANGE)
			dev_err(dev, "uncorrectable ECC error at HBM 0x%llx, outside the buffer area: not retired\n",
				addr);
		else if (ret == -ENOMEM)
			dev_err(dev, "HBM page 0x%llx with an uncorrectable ECC error not taken out of use: out of memory (a buffer may still get it)\n",
				addr);
		else if (ret != -EALREADY)
			dev_err(dev, "cannot retire HBM page 0x%llx: %d\n",
				addr, ret);
		if (!ret)
			hpu_devlink_ecc_report(hdev, addr);

		hpu_eq_ue_notify(hdev, addr);
	}
}

/* Remember an uncorrectable error for hpu_eq_ue_work(); eq->lock held. */
static void hpu_eq_ue_queue(struct hpu_eq *eq, u64 addr)
{
	lockdep_assert_held(&eq->lock);

	if (eq->ue_tail - eq->ue_head >= HPU_EQ_UE_BACKLOG) {
		eq->ue_lost++;
		dev_err_ratelimited(eq->hdev->drm.dev,
				    "uncorrectable ECC error at HBM 0x%llx not retired: backlog full\n",
				    addr);
		return;
	}
	eq->ue_addr[eq->ue_tail++ % HPU_EQ_UE_BACKLOG] = addr;
	schedule_work(&eq->ue_work);
}

/* Resets the events of one interrupt ask for, in hpu_eq_handle(). */
#define HPU_EQ_WANT_SOFT_RESET	BIT(0)
#define HPU_EQ_WANT_HARD_RESET	BIT(1)

/*
 * Handle one event; eq->lock held. Resets are only collected in @want and
 * scheduled once the lock is dropped.
 */
static void hpu_eq_handle(struct hpu_eq *eq, const struct hpu_eqe *eqe,
			  unsigned int *want)
{
	struct hpu_device *hdev = eq->hdev;
	struct device *dev = hdev->drm.dev;
	u16 id = le16_to_cpu(eqe->id);
	u16 asid = le16_to_cpu(eqe->asid);
	u64 addr = le64_to_cpu(eqe->addr);
	u32 info = le32_to_cpu(eqe->info);
	struct hpu_mmu_fault latched;

	lockdep_assert_held(&eq->lock);

	switch (id) {
	case HPU_EVENT_MMU_FAULT:
		atomic64_inc(&eq->mmu_faults);
		/* Release the latch so that it shows the next fault too. */
		hpu_mmu_fault_ack(hdev, &latched);
		dev_warn_ratelimited(dev,
				     "MMU fault: asid %u, %s at 0x%llx by engine %s: %s\n",
				     asid, info & HPU_FAULT_WRITE ? "write" : "read",
				     addr, hpu_stream_engine_name(eqe->engine),
				     hpu_mmu_fault_cause_name(FIELD_GET(HPU_FAULT_CAUSE_MASK,
									info)));
		hpu_notify_device_error(hdev, asid, DRM_HPU_ERROR_MMU_FAULT,
					eqe->engine, -EFAULT, addr, 0);
		break;
	case HPU_EVENT_BAD_PACKET:
		atomic64_inc(&eq->bad_packets);
		dev_warn_ratelimited(dev,
				     "bad packet: asid %u, command buffer 0x%llx offset %u on engine %s\n",
				     asid, addr, info,
				     hpu_stream_engine_name(eqe->engine));
		break;
	case HPU_EVENT_PRIV:
		atomic64_inc(&eq->priv_packets);
		dev_warn_ratelimited(dev,
				     "privileged packet refused: asid %u, command buffer 0x%llx offset %u on engine %s\n",
				     asid, addr, info,
				     hpu_stream_engine_name(eqe->engine));
		break;
	case HPU_EVENT_ENGINE_HANG:
		atomic64_inc(&eq->engine_hangs);
		/* A user stream: its queue restarts past the descriptor. */
		if ((info & 0xff) >= HPU_QM_KSTREAMS) {
			dev_err_ratelimited(dev,
					    "engine %s user stream %u hung: asid %u, command buffer 0x%llx; restarting the user queue\n",
					    hpu_stream_engine_name(eqe->engine),
					    info & 0xff, asid, addr);
			hpu_uq_engine_hang(hdev, eqe->engine, info & 0xff);
			break;
		}
		/* A compute engine lets go of a disabled stream: no reset. */
		if (hpu_stream_engine_hung(hdev, eqe->engine)) {
			dev_err_ratelimited(dev,
					    "engine %s stream %u hung: asid %u, command buffer 0x%llx; disabling the stream\n",
					    hpu_stream_engine_name(eqe->engine),
					    info & 0xff, asid, addr);
			break;
		}
		dev_err_ratelimited(dev,
				    "engine %s stream %u hung: asid %u, command buffer 0x%llx; soft reset\n",
				    hpu_stream_engine_name(eqe->engine),
				    info & 0xff, asid, addr);
		*want |= HPU_EQ_WANT_SOFT_RESET;
		break;
	case HPU_EVENT_BAD_LAUNCH:
		atomic64_inc(&eq->bad_launches);
		dev_warn_ratelimited(dev,
				     "bad launch: asid %u, descriptor 0x%llx on engine %s breaks rule %u\n",
				     asid, addr,
				     hpu_stream_engine_name(eqe->engine), info);
		hpu_notify_device_error(hdev, asid, DRM_HPU_ERROR_BAD_LAUNCH,
					eqe->engine, -ENOEXEC, addr, info);
		break;
	case HPU_EVENT_TPC_ILLEGAL:
		atomic64_inc(&eq->tpc_illegal);
		dev_warn_ratelimited(dev,
				     "TPC illegal instruction: asid %u, core %u, pc 0x%llx, reason %u\n",
				     asid, info & 0xff, addr, (info >> 8) & 0xff);
		hpu_notify_device_error(hdev, asid, DRM_HPU_ERROR_TPC_ILLEGAL,
					eqe->engine, -EILSEQ, addr, info);
		break;
	case HPU_EVENT_TPC_ASSERT:
		atomic64_inc(&eq->tpc_asserts);
		dev_warn_ratelimited(dev,
				     "TPC assert: asid %u, pc 0x%llx, value 0x%x\n",
				     asid, addr, info);
		hpu_notify_device_error(hdev, asid, DRM_HPU_ERROR_TPC_ASSERT,
					eqe->engine, -EDOM, addr, info);
		break;
	case HPU_EVENT_DMA_BUS_ERROR:
		atomic64_inc(&eq->dma_bus_errors);
		dev_warn_ratelimited(dev,
				     "DMA bus error: asid %u, engine %u stream %u, bus address 0x%llx\n",
				     asid, eqe->engine, info & 0xff, addr);
		break;
	case HPU_EVENT_ECC_CE:
		atomic64_inc(&eq->ecc_ce);
		dev_warn_ratelimited(dev,
				     "correctable ECC error at HBM 0x%llx (syndrome 0x%x)\n",
				     addr, info);
		break;
	case HPU_EVENT_ECC_UE:
		atomic64_inc(&eq->ecc_ue);
		dev_err_ratelimited(dev,
				    "uncorrectable ECC error in HBM page 0x%llx (syndrome 0x%x)\n",
				    addr, info);
		hpu_eq_ue_queue(eq, addr);
		break;
	case HPU_EVENT_THERMAL:
		atomic64_inc(&eq->thermal);
		dev_warn_ratelimited(dev, "thermal event: %d millidegrees C\n",
				     (int)info);
		break;
	case HPU_EVENT_POWER:
		atomic64_inc(&eq->power);
		dev_warn_ratelimited(dev, "power event: board power %u mW\n",
				     info);
		break;
	case HPU_EVENT_FW_FATAL:
		atomic64_inc(&eq->fw_fatal);
		dev_err_ratelimited(dev,
				    "firmware fatal error 0x%x; hard reset\n",
				    info);
		*want |= HPU_EQ_WANT_HARD_RESET;
		break;
	case HPU_EVENT_HEARTBEAT:
		atomic64_inc(&eq->heartbeats);
		drm_dbg_driver(&hdev->drm, "firmware heartbeat event %u\n",
			       info);
		break;
	case HPU_EVENT_STREAM_TIMEOUT:
		/* The user queue's write-back and interrupt say it too. */
		drm_dbg_driver(&hdev->drm,
			       "user stream %u of engine %s timed out: asid %u, command buffer 0x%llx\n",
			       info & 0xff, hpu_stream_engine_name(eqe->engine),
			       asid, addr);
		break;
	case HPU_EVENT_RESET_DONE:
		atomic64_inc(&eq->resets_done);
		drm_dbg_driver(&hdev->drm, "%s reset done\n",
			       info == 2 ? "hard" : "soft");
		break;
	default:
		atomic64_inc(&eq->unknown);
		dev_warn_ratelimited(dev,
				     "unknown event %u (severity %u, asid %u, engine %u, address 0x%llx, info 0x%x)\n",
				     id, eqe->severity, asid, eqe->engine, addr,
				     info);
		break;
	}
}

/*
 * Handle every entry the device has written; eq->lock held. Resets the
 * entries ask for are collected in @want.
 */
static void hpu_eq_drain_locked(struct hpu_eq *eq, unsigned int *want)
{
	struct hpu_device *hdev = eq->hdev;
	u32 pi, dropped;

	lockdep_assert_held(&eq->lock);

	if (!eq->enabled)
		return;

	pi = hpu_rd32(hdev, HPU_REG_EQ_PI);
	if (pi == U32_MAX)
		return;	/* the device is gone */
	if (pi - eq->ci > HPU_EQ_ENTRIES) {
		/*
		 * The device never writes more than a ring ahead (it drops
		 * and counts instead): EQ_PI went back, as a hard reset
		 * sets it (hpu_eq_sync() may run in that window, before
		 * hpu_eq_hw_restart()). The ring holds old entries: take
		 * none of them again.
		 */
		dev_dbg(hdev->drm.dev,
			"event queue: EQ_PI %u is behind %u (reset): nothing to handle\n",
			pi, eq->ci);
		eq->ci = pi;
		hpu_wr32(hdev, HPU_REG_EQ_CI, eq->ci);
		return;
	}

	/* Read the entries only after EQ_PI says they are there. */
	dma_rmb();
	while (eq->ci != pi) {
		hpu_eq_handle(eq, &eq->ring[eq->ci % HPU_EQ_ENTRIES], want);
		eq->ci++;
	}
	hpu_wr32(hdev, HPU_REG_EQ_CI, eq->ci);

	dropped = hpu_rd32(hdev, HPU_REG_EQ_DROPPED);
	if (dropped != eq->dropped) {
		dev_warn_ratelimited(hdev->drm.dev,
				     "event queue: %u events dropped\n",
				     dropped - eq->dropped);
		eq->dropped = dropped;
	}
}

/* Schedule the resets hpu_eq_drain_locked() collected; no lock held. */
static void hpu_eq_want(struct hpu_device *hdev, unsigned int want)
{
	/* A hard reset includes everything a soft one does. */
	if (want & HPU_EQ_WANT_HARD_RESET)
		hpu_reset_schedule_fw(hdev, "firmware fatal error");
	else if (want & HPU_EQ_WANT_SOFT_RESET)
		hpu_reset_schedule(hdev, HPU_RESET_SOFT, "engine hang");
}

static irqreturn_t hpu_eq_irq(int irq, void *arg)
{
	struct hpu_eq *eq = arg;
	unsigned int want = 0;

	spin_lock(&eq->lock);
	/* Held for a test (debugfs inject_eq_hold): a late interrupt. */
	if (!eq->held)
		hpu_eq_drain_locked(eq, &want);
	spin_unlock(&eq->lock);
	hpu_eq_want(eq->hdev, want);
	return IRQ_HANDLED;
}

/**
 * hpu_eq_sync() - handle every event the device has written so far
 * @hdev: the device
 *
 * Does in the caller's context what the event queue's interrupt handler
 * does, without waiting for the interrupt. Before an ASID is given to the
 * next context, the events its last context's jobs raised (the device
 * writes a job's event before its completion) must have been handled,
 * or a late interrupt would tell the next owner about them (see
 * hpu_notify_asid_gone()). Nothing happens once the queue is disabled
 * (hpu_eq_fini()). Callable from any context.
 */
void hpu_eq_sync(struct hpu_device *hdev)
{
	struct hpu_eq *eq = hdev->eq;
	unsigned int want = 0;
	unsigned long flags;

	if (!eq)
		return;
	spin_lock_irqsave(&eq->lock, flags);
	hpu_eq_drain_locked(eq, &want);
	spin_unlock_irqrestore(&eq->lock, flags);
	hpu_eq_want(hdev, want);
}

/**
 * hpu_eq_hold() - hold back or release the event queue's interrupt handler
 * @hdev: the device
 * @hold: true: the handler leaves the entries in the ring (as if the
 *	interrupt came late); false: handle what is there and go on
 *
 * For tests (debugfs inject_eq_hold). hpu_eq_sync() handles entries even
 * while held. Callable from any context.
 */
void hpu_eq_hold(struct hpu_device *hdev, bool hold)
{
	struct hpu_eq *eq = hdev->eq;
	unsigned long flags;

	if (!eq)
		return;
	spin_lock_irqsave(&eq->lock, flags);
	eq->held = hold;
	spin_unlock_irqrestore(&eq->lock, flags);
	if (!hold)
		hpu_eq_sync(hdev);
}

/* Program and enable the ring; eq->lock held. */
static void hpu_eq_program(struct hpu_eq *eq)
{
	struct hpu_device *hdev = eq->hdev;

	lockdep_assert_held(&eq->lock);

	hpu_wr32(hdev, HPU_REG_EQ_CTRL, 0);
	hpu_wr32(hdev, HPU_REG_EQ_LO, lower_32_bits(eq->ring_dma));
	hpu_wr32(hdev, HPU_REG_EQ_HI, upper_32_bits(eq->ring_dma));
	hpu_wr32(hdev, HPU_REG_EQ_SIZE, HPU_EQ_ENTRIES);
	eq->ci = hpu_rd32(hdev, HPU_REG_EQ_PI);
	hpu_wr32(hdev, HPU_REG_EQ_CI, eq->ci);
	eq->dropped = hpu_rd32(hdev, HPU_REG_EQ_DROPPED);
	hpu_wr32(hdev, HPU_REG_EQ_CTRL, HPU_EQ_ENABLE);
	eq->enabled = true;
}

/**
 * hpu_eq_init() - set up and enable the event queue
 * @hdev: the device, soft reset, with its MSI-X vectors allocated
 *
 * Sets up event delivery to files (hpu_notify.c), allocates the ring,
 * installs the handler of vector 1 and enables the queue. May sleep.
 *
 * Return: 0 or a negative error code.
 */
int hpu_eq_init(struct hpu_device *hdev)
{
	struct drm_device *drm = &hdev->drm;
	unsigned long flags;
	struct hpu_eq *eq;
	int ret;

	eq = drmm_kzalloc(drm, sizeof(*eq), GFP_KERNEL);
	if (!eq)
		return -ENOMEM;
	eq->hdev = hdev;
	spin_lock_init(&eq->lock);
	INIT_WORK(&eq->ue_work, hpu_eq_ue_work);

	ret = hpu_notify_init(hdev);
	if (ret)
		return ret;

	eq->ring = dmam_alloc_coherent(drm->dev, HPU_EQ_ENTRIES * HPU_EQE_SIZE,
				       &eq->ring_dma, GFP_KERNEL);
	if (!eq->ring)
		return -ENOMEM;

	ret = hpu_irq_request(hdev, HPU_VEC_EQ, hpu_eq_irq, eq, "eq");
	if (ret)
		return ret;

	hdev->eq = eq;
	spin_lock_irqsave(&eq->lock, flags);
	hpu_eq_program(eq);
	spin_unlock_irqrestore(&eq->lock, flags);
	return 0;
}

/**
 * hpu_eq_hw_restart() - program the event queue again after a hard reset
 * @hdev: the device, just hard reset (which clears the event queue
 *	registers) and ready
 *
 * Events the device had not written before the reset are lost. Callable
 * from any context.
 */
void hpu_eq_hw_restart(struct hpu_device *hdev)
{
	struct hpu_eq *eq = hdev->eq;
	unsigned long flags;

	if (!eq)
		return;

	spin_lock_irqsave(&eq->lock, flags);
	if (eq->enabled)
		hpu_eq_program(eq);
	spin_unlock_irqrestore(&eq->lock, flags);
}

static unsigned int wdt_ms = 2000;
module_param(wdt_ms, uint, 0444);
MODULE_PARM_DESC(wdt_ms,
		 "Engine watchdog: a stream that completes no packet for this many ms is hung (0 disables; default 2000)");

/**
 * hpu_eq_wdt_program() - program the engine watchdog
 * @hdev: the device, bound; at probe and after every reset
 *
 * Writes the wdt_ms module parameter to WDT_MS: a stream that completes
 * no packet for that long raises an ENGINE_HANG event. Callable from any
 * context.
 */
void hpu_eq_wdt_program(struct hpu_device *hdev)
{
	hpu_wr32(hdev, HPU_REG_WDT_MS, wdt_ms);
}

/**
 * hpu_eq_fini() - disable the event queue before the device is unbound
 * @hdev: the device
 *
 * Waits for the page retirement work. The ring itself is freed by devres
 * after the driver's remove callback. May sleep.
 */
void hpu_eq_fini(struct hpu_device *hdev)
{
	struct hpu_eq *eq = hdev->eq;
	unsigned long flags;

	if (!eq)
		return;

	spin_lock_irqsave(&eq->lock, flags);
	if (eq->enabled)
		hpu_wr32(hdev, HPU_REG_EQ_CTRL, 0);
	eq->enabled = false;
	spin_unlock_irqrestore(&eq->lock, flags);

	/* The handler may still run until devres frees it: it only queues. */
	cancel_work_sync(&eq->ue_work);
	hpu_notify_fini(hdev);
}
