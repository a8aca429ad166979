// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: chip-independent hardware bring-up: identity check, soft reset and
 * the interrupt self-test.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/pci.h>

#include "hpu_asic.h"
#include "hpu_drv.h"
#include "hpu_hw.h"
#include "hpu_reg.h"
#include "hpu_stream.h"

/*
 * Oldest register map the driver supports: version 5 has no compute
 * engines (hpu_stream_engine_present()), version 6 adds them.
 */
#define HPU_SPEC_VERSION_MIN	5

/* How long the interrupt self-test waits for its interrupt. */
#define HPU_IRQ_TEST_TIMEOUT_MS		1000
/* How long a function in reset may take to drain the DMA it began before. */
#define HPU_IN_RESET_TIMEOUT_MS		1000

/* Every chip the driver knows, keyed by the CHIP_ID register. */
static const struct hpu_asic * const hpu_asics[] = {
	&hpu_h1_asic,
};

static const struct hpu_asic *hpu_asic_find(u32 chip_id)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(hpu_asics); i++)
		if (hpu_asics[i]->chip_id == chip_id)
			return hpu_asics[i];

	return NULL;
}

/**
 * hpu_hw_wait_out_of_reset() - wait for the function to leave "in reset"
 * @hdev: the device
 *
 * After a power-on reset or FLR the function stays in reset while DMA it
 * began before drains (Documentation/hw/registers.md, "In reset"): PCIe
 * Device Status Transactions Pending is set, BAR0 and BAR4 read all ones
 * and writes are dropped. Polls Transactions Pending, sleeping, for up to
 * %HPU_IN_RESET_TIMEOUT_MS, then requires MAGIC to read other than all
 * ones. Call after every function reset and before the first register
 * access at probe. May sleep.
 *
 * Return: 0, -ETIMEDOUT if Transactions Pending stayed set, -ENODEV if the
 * registers still read all ones (both logged).
 */
int hpu_hw_wait_out_of_reset(struct hpu_device *hdev)
{
	unsigned long deadline = jiffies +
				 msecs_to_jiffies(HPU_IN_RESET_TIMEOUT_MS);
	struct pci_dev *pdev = hdev->pdev;
	bool timed_out;
	u16 devsta;

	for (;;) {
		timed_out = time_after(jiffies, deadline);
		/* A failed read leaves 0: the MAGIC check below decides. */
		pcie_capability_read_word(pdev, PCI_EXP_DEVSTA, &devsta);
		if (!(devsta & PCI_EXP_DEVSTA_TRPND))
			break;
		if (timed_out) {
			drm_err(&hdev->drm, "function still in reset after %u ms (Transactions Pending): the device is unusable\n",
				HPU_IN_RESET_TIMEOUT_MS);
			return -ETIMEDOUT;
		}
		usleep_range(1000, 2000);
	}
	if (hpu_rd32(hdev, HPU_REG_MAGIC) == U32_MAX) {
		drm_err(&hdev->drm, "device does not respond out of reset: MAGIC reads all ones\n");
		return -ENODEV;
	}
	return 0;
}

static int hpu_hw_check_identity(struct hpu_device *hdev)
{
	struct hpu_identity *id = &hdev->id;
	struct drm_device *drm = &hdev->drm;
	u32 magic;

	magic = hpu_rd32(hdev, HPU_REG_MAGIC);
	if (magic == U32_MAX) {
		drm_err(drm, "device does not respond: MAGIC reads all ones\n");
		return -ENODEV;
	}
	if (magic != HPU_MAGIC_VALUE) {
		drm_err(drm, "not an HPU: MAGIC is 0x%08x, expected 0x%08x\n",
			magic, HPU_MAGIC_VALUE);
		return -ENODEV;
	}

	id->spec_version = hpu_rd32(hdev, HPU_REG_SPEC_VERSION);
	if (id->spec_version < HPU_SPEC_VERSION_MIN ||
	    id->spec_version > HPU_SPEC_VERSION_VALUE) {
		drm_err(drm, "unsupported register map: SPEC_VERSION is %u, this driver supports %u to %u\n",
			id->spec_version, HPU_SPEC_VERSION_MIN,
			HPU_SPEC_VERSION_VALUE);
		return -ENODEV;
	}

	id->chip_id = hpu_rd32(hdev, HPU_REG_CHIP_ID);
	hdev->asic = hpu_asic_find(id->chip_id);
	if (!hdev->asic) {
		drm_err(drm, "unknown chip: CHIP_ID is 0x%08x\n", id->chip_id);
		return -ENODEV;
	}

	id->revision = hpu_rd32(hdev, HPU_REG_REVISION);
	hdev->asic->read_identity(hdev, id);

	return 0;
}

static int hpu_hw_wait_ready(struct hpu_device *hdev)
{
	u32 status;

	return hpu_poll32(hdev, HPU_REG_STATUS, status,
			  (status & (HPU_STATUS_READY | HPU_STATUS_RESET_BUSY |
				     HPU_STATUS_HARD_RESET_BUSY)) ==
			  HPU_STATUS_READY,
			  hdev->asic->reset_timeout_us);
}

/**
 * hpu_hw_soft_reset() - soft reset the device and wait for it to finish
 * @hdev: the device
 *
 * Waits for a reset already in progress, starts a new one and polls
 * STATUS until the device is ready again. May sleep.
 *
 * Return: 0, or -ETIMEDOUT if the device does not become ready in time.
 */
int hpu_hw_soft_reset(struct hpu_device *hdev)
{
	u32 count, status;
	int ret;

	ret = hpu_hw_wait_ready(hdev);
	if (ret) {
		status = hpu_rd32(hdev, HPU_REG_STATUS);
		drm_err(&hdev->drm, "device not ready before soft reset (STATUS 0x%08x)\n",
			status);
		return ret;
	}

	count = hpu_rd32(hdev, HPU_REG_RESET_COUNT);
	hpu_wr32(hdev, HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);

	ret = hpu_hw_wait_ready(hdev);
	if (ret) {
		status = hpu_rd32(hdev, HPU_REG_STATUS);
		drm_err(&hdev->drm, "soft reset did not complete within %u us (STATUS 0x%08x)\n",
			hdev->asic->reset_timeout_us, status);
		return ret;
	}

	if (hpu_rd32(hdev, HPU_REG_RESET_COUNT) == count)
		drm_warn(&hdev->drm, "soft reset completed but RESET_COUNT did not move\n");

	return 0;
}

/* Streams of the device that do not report idle. */
static unsigned int hpu_hw_busy_streams(struct hpu_device *hdev)
{
	unsigned int e, s, n = 0;
	u32 status;

	for (e = 0; e < HPU_NUM_ENGINES; e++) {
		if (!hpu_stream_engine_present(hdev, e))
			continue;
		for (s = 0; s < HPU_QM_STREAMS; s++) {
			status = hpu_rd32(hdev, HPU_REG_QM_STREAM(e, s) +
					  HPU_QS_STATUS);
			if (!(status & HPU_QS_STATUS_IDLE))
				n++;
		}
	}
	return n;
}

/*
 * Whether the previous owner of the device left it quiet: no reset in
 * progress and every stream idle.
 */
static bool hpu_hw_quiet(struct hpu_device *hdev, u32 *status,
			 unsigned int *busy)
{
	*status = hpu_rd32(hdev, HPU_REG_STATUS);
	*busy = hpu_hw_busy_streams(hdev);
	return (*status & (HPU_STATUS_READY | HPU_STATUS_RESET_BUSY |
			   HPU_STATUS_HARD_RESET_BUSY)) == HPU_STATUS_READY &&
	       !*busy;
}

/*
 * Bus mastering is still off. A device left running (streams that did
 * not stop when the previous driver instance shut down, a hard reset that
 * never completed) could write host memory this instance does not own the
 * moment it is turned on: reset the function first (FLR, the device's
 * power-on reset). Called from probe, with the device lock held.
 */
static int hpu_hw_reset_unquiet(struct hpu_device *hdev)
{
	unsigned int busy;
	u32 status;
	int ret;

	if (hpu_hw_quiet(hdev, &status, &busy))
		return 0;

	drm_warn(&hdev->drm, "device left running (STATUS 0x%08x, %u streams not idle): function reset before bus mastering\n",
		 status, busy);
	ret = pci_reset_function_locked(hdev->pdev);
	if (ret) {
		drm_err(&hdev->drm, "function reset failed (%d): the device stays off the bus\n",
			ret);
		return ret;
	}
	ret = hpu_hw_wait_out_of_reset(hdev);
	if (ret)
		return ret;
	if (!hpu_hw_quiet(hdev, &status, &busy)) {
		drm_err(&hdev->drm, "still running after a function reset (STATUS 0x%08x, %u streams not idle): the device stays off the bus\n",
			status, busy);
		return -EIO;
	}
	return 0;
}

/**
 * hpu_hw_irq_disable() - mask every MISC interrupt cause
 * @hdev: the device
 */
static void hpu_hw_irq_disable(struct hpu_device *hdev)
{
	hpu_wr32(hdev, HPU_REG_IRQ_MASK, 0);
}

/**
 * hpu_hw_init() - check the device's identity and bring it to a known state
 * @hdev: the device, with its registers mapped
 *
 * Checks MAGIC and SPEC_VERSION, picks the chip description by CHIP_ID,
 * reads the identity into @hdev->id, resets the function if the device
 * was left running (a stream not idle, a reset that did not complete),
 * masks every interrupt cause and soft resets the device. Bus mastering
 * is off: the caller turns it on afterwards. Interrupts are not set up
 * yet. Called from probe with the device lock held. May sleep.
 *
 * Return: 0 or a negative error code, with the reason logged.
 */
int hpu_hw_init(struct hpu_device *hdev)
{
	struct hpu_identity *id = &hdev->id;
	u32 rev_major, rev_minor;
	int ret;

	/* A reset before this probe (FLR, power-on) may still be draining. */
	ret = hpu_hw_wait_out_of_reset(hdev);
	if (ret)
		return ret;

	ret = hpu_hw_check_identity(hdev);
	if (ret)
		return ret;

	ret = hpu_hw_reset_unquiet(hdev);
	if (ret)
		return ret;

	/* IRQ_MASK survives a soft reset: mask first, then reset. */
	hpu_hw_irq_disable(hdev);

	ret = hpu_hw_soft_reset(hdev);
	if (ret)
		return ret;

	/* Start from no pending causes and no sticky errors. */
	hpu_wr32(hdev, HPU_REG_IRQ_STATUS, HPU_IRQ_SELF_TEST | HPU_IRQ_RESET_DONE);
	hpu_wr32(hdev, HPU_REG_ERROR, HPU_ERROR_BAD_ACCESS |
		 HPU_ERROR_BAD_IRQ_VECTOR | HPU_ERROR_BAD_RESET_KEY |
		 HPU_ERROR_RESET_BUSY);

	rev_major = FIELD_GET(HPU_REVISION_MAJOR_MASK, id->revision);
	rev_minor = FIELD_GET(HPU_REVISION_MINOR_MASK, id->revision);
	drm_info(&hdev->drm, "%s rev %u.%u, HBM %llu MiB in %u stacks, %u DMA, %u TPC, %u MME, %u NIC, serial %s\n",
		 hdev->asic->name, rev_major, rev_minor, id->hbm_size >> 20,
		 id->hbm_stacks, id->num_dma, id->num_tpc, id->num_mme,
		 id->num_nic, id->serial);

	return 0;
}

/**
 * hpu_hw_fini() - quiesce the device before it is unbound
 * @hdev: the device
 *
 * Masks every interrupt cause, so the device raises nothing once the
 * driver lets go of it.
 */
void hpu_hw_fini(struct hpu_device *hdev)
{
	hpu_hw_irq_disable(hdev);
}

/**
 * hpu_hw_irq_enable() - enable the MISC interrupt causes the chip uses
 * @hdev: the device, with its interrupt handlers installed
 */
void hpu_hw_irq_enable(struct hpu_device *hdev)
{
	hpu_wr32(hdev, HPU_REG_IRQ_MASK, hdev->asic->misc_irq_causes);
}

/**
 * hpu_hw_irq_self_test() - check that an interrupt gets from device to driver
 * @hdev: the device, with its MISC handler installed and causes enabled
 *
 * Asks the device to raise MSI-X vector 0 through IRQ_TEST and waits for
 * the MISC handler to report the SELF_TEST cause. May sleep.
 *
 * Return: 0, or -EIO if no interrupt arrived in time.
 */
int hpu_hw_irq_self_test(struct hpu_device *hdev)
{
	unsigned long left;

	reinit_completion(&hdev->irq_test_done);
	hpu_wr32(hdev, HPU_REG_IRQ_TEST, HPU_VEC_MISC);

	left = wait_for_completion_timeout(&hdev->irq_test_done,
					   msecs_to_jiffies(HPU_IRQ_TEST_TIMEOUT_MS));
	if (!left) {
		drm_err(&hdev->drm, "interrupt self-test failed: no interrupt on MSI-X vector %u within %u ms (IRQ_STATUS 0x%08x, IRQ_TEST_COUNT %u, ERROR 0x%08x)\n",
			HPU_VEC_MISC, HPU_IRQ_TEST_TIMEOUT_MS,
			hpu_rd32(hdev, HPU_REG_IRQ_STATUS),
			hpu_rd32(hdev, HPU_REG_IRQ_TEST_COUNT),
			hpu_rd32(hdev, HPU_REG_ERROR));
		return -EIO;
	}

	return 0;
}

/**
 * hpu_hw_reset_count() - soft resets the device has completed
 * @hdev: the device; the caller keeps it bound (drm_dev_enter() or a
 *	driver-core callback)
 *
 * Return: the RESET_COUNT register.
 */
u32 hpu_hw_reset_count(struct hpu_device *hdev)
{
	return hpu_rd32(hdev, HPU_REG_RESET_COUNT);
}
