// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: the event queue.
 *
 * The device writes a 32-byte entry per event to a ring in host memory
 * and raises MSI-X vector 1. The handler logs each event (rate limited)
 * and counts it; the job that caused it is failed separately, through its
 * completion status.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>

#include <drm/drm_managed.h>

#include "hpu_drv.h"
#include "hpu_eq.h"
#include "hpu_irq.h"
#include "hpu_mmu.h"
#include "hpu_reg.h"

static void hpu_eq_handle(struct hpu_eq *eq, const struct hpu_eqe *eqe)
{
	struct device *dev = eq->hdev->drm.dev;
	u16 id = le16_to_cpu(eqe->id);
	u16 asid = le16_to_cpu(eqe->asid);
	u64 addr = le64_to_cpu(eqe->addr);
	u32 info = le32_to_cpu(eqe->info);
	struct hpu_mmu_fault latched;

	switch (id) {
	case HPU_EVENT_MMU_FAULT:
		atomic64_inc(&eq->mmu_faults);
		/* Release the latch so that it shows the next fault too. */
		hpu_mmu_fault_ack(eq->hdev, &latched);
		dev_warn_ratelimited(dev,
				     "MMU fault: asid %u, %s at 0x%llx by DMA engine %u: %s\n",
				     asid, info & HPU_FAULT_WRITE ? "write" : "read",
				     addr, eqe->engine,
				     hpu_mmu_fault_cause_name(FIELD_GET(HPU_FAULT_CAUSE_MASK,
									info)));
		break;
	case HPU_EVENT_BAD_PACKET:
		atomic64_inc(&eq->bad_packets);
		dev_warn_ratelimited(dev,
				     "bad packet: asid %u, command buffer 0x%llx offset %u on DMA engine %u\n",
				     asid, addr, info, eqe->engine);
		break;
	case HPU_EVENT_PRIV:
		atomic64_inc(&eq->priv_packets);
		dev_warn_ratelimited(dev,
				     "privileged packet refused: asid %u, command buffer 0x%llx offset %u on DMA engine %u\n",
				     asid, addr, info, eqe->engine);
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

static irqreturn_t hpu_eq_irq(int irq, void *arg)
{
	struct hpu_eq *eq = arg;
	struct hpu_device *hdev = eq->hdev;
	u32 pi, dropped;

	spin_lock(&eq->lock);
	if (!eq->enabled)
		goto out;

	pi = hpu_rd32(hdev, HPU_REG_EQ_PI);
	if (pi == U32_MAX)
		goto out;	/* the device is gone */
	if (pi - eq->ci > HPU_EQ_ENTRIES) {
		dev_err_ratelimited(hdev->drm.dev,
				    "event queue: EQ_PI %u is more than a ring ahead of %u\n",
				    pi, eq->ci);
		eq->ci = pi - HPU_EQ_ENTRIES;
	}

	/* Read the entries only after EQ_PI says they are there. */
	dma_rmb();
	while (eq->ci != pi) {
		hpu_eq_handle(eq, &eq->ring[eq->ci % HPU_EQ_ENTRIES]);
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
out:
	spin_unlock(&eq->lock);
	return IRQ_HANDLED;
}

/**
 * hpu_eq_init() - set up and enable the event queue
 * @hdev: the device, soft reset, with its MSI-X vectors allocated
 *
 * Allocates the ring, installs the handler of vector 1 and enables the
 * queue. May sleep.
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

	eq->ring = dmam_alloc_coherent(drm->dev, HPU_EQ_ENTRIES * HPU_EQE_SIZE,
				       &eq->ring_dma, GFP_KERNEL);
	if (!eq->ring)
		return -ENOMEM;

	ret = hpu_irq_request(hdev, HPU_VEC_EQ, hpu_eq_irq, eq, "eq");
	if (ret)
		return ret;

	spin_lock_irqsave(&eq->lock, flags);
	hpu_wr32(hdev, HPU_REG_EQ_CTRL, 0);
	hpu_wr32(hdev, HPU_REG_EQ_LO, lower_32_bits(eq->ring_dma));
	hpu_wr32(hdev, HPU_REG_EQ_HI, upper_32_bits(eq->ring_dma));
	hpu_wr32(hdev, HPU_REG_EQ_SIZE, HPU_EQ_ENTRIES);
	eq->ci = hpu_rd32(hdev, HPU_REG_EQ_PI);
	hpu_wr32(hdev, HPU_REG_EQ_CI, eq->ci);
	eq->dropped = hpu_rd32(hdev, HPU_REG_EQ_DROPPED);
	hpu_wr32(hdev, HPU_REG_EQ_CTRL, HPU_EQ_ENABLE);
	eq->enabled = true;
	spin_unlock_irqrestore(&eq->lock, flags);

	hdev->eq = eq;
	return 0;
}

/**
 * hpu_eq_fini() - disable the event queue before the device is unbound
 * @hdev: the device
 *
 * The ring itself is freed by devres after the driver's remove callback.
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
}
