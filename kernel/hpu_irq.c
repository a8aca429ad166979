// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: MSI-X vectors and interrupt handlers.
 *
 * Vector 0 (MISC) carries the causes latched in IRQ_STATUS, vector 1 the
 * event queue (hpu_eq.c) and vectors 2 + e the completions of DMA engine e
 * (hpu_stream.c); those install their handlers with hpu_irq_request().
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/interrupt.h>
#include <linux/pci.h>

#include "hpu_asic.h"
#include "hpu_drv.h"
#include "hpu_irq.h"
#include "hpu_stream.h"
#include "hpu_reg.h"

static irqreturn_t hpu_irq_misc(int irq, void *arg)
{
	struct hpu_device *hdev = arg;
	u32 status;

	status = hpu_rd32(hdev, HPU_REG_IRQ_STATUS);
	if (status == U32_MAX)
		return IRQ_NONE;
	/*
	 * Only the causes enabled on this vector are the handler's: the
	 * others (FW_BOOT, FLASH_DONE, MBOX_DONE) belong to the code that
	 * polls for them, which clears them itself.
	 */
	status &= hdev->asic->misc_irq_causes;
	if (!status)
		return IRQ_NONE;

	/* Ack before acting, so a cause raised meanwhile is not lost. */
	hpu_wr32(hdev, HPU_REG_IRQ_STATUS, status);

	if (status & HPU_IRQ_SELF_TEST)
		complete(&hdev->irq_test_done);

	/* RESET_DONE: probe polls STATUS; nothing waits for it here yet. */

	return IRQ_HANDLED;
}

/**
 * hpu_irq_init() - allocate MSI-X vectors and install the MISC handler
 * @hdev: the device; its PCI function is enabled and a bus master
 *
 * Allocates as many MSI-X vectors as the device offers, at least one per
 * engine index (DMA, then TPC and MME) after the MISC and event queue
 * vectors, and installs the
 * handler of vector 0. The vectors are released by the PCI
 * core's managed-device teardown and the handler by devres, after the
 * driver's remove callback, in the reverse order of their set-up.
 *
 * Return: 0 or a negative error code, with the reason logged.
 */
int hpu_irq_init(struct hpu_device *hdev)
{
	struct pci_dev *pdev = hdev->pdev;
	struct device *dev = &pdev->dev;
	unsigned int want, need;
	const char *name;
	int ret;

	/* MISC, EQ and one per engine index up to the last one driven. */
	need = HPU_VEC_ENGINE(hpu_stream_engine_limit(hdev));
	want = clamp_t(u32, hdev->id.msix_vectors, need, HPU_MSIX_VECTORS);
	ret = pci_alloc_irq_vectors(pdev, need, want, PCI_IRQ_MSIX);
	if (ret < 0) {
		drm_err(&hdev->drm, "cannot allocate MSI-X vectors: %d\n", ret);
		return ret;
	}
	hdev->irq_vectors = ret;

	name = devm_kasprintf(dev, GFP_KERNEL, "%s-misc@%s", HPU_DRIVER_NAME,
			      pci_name(pdev));
	if (!name)
		return -ENOMEM;

	ret = devm_request_irq(dev, pci_irq_vector(pdev, HPU_VEC_MISC),
			       hpu_irq_misc, 0, name, hdev);
	if (ret) {
		drm_err(&hdev->drm, "cannot request the MISC interrupt: %d\n", ret);
		return ret;
	}

	return 0;
}

/**
 * hpu_irq_request() - install the handler of one MSI-X vector
 * @hdev: the device, with its vectors allocated by hpu_irq_init()
 * @vector: the vector, below &hpu_device.irq_vectors
 * @handler: the hard interrupt handler
 * @arg: its argument; must stay valid until the device is unbound
 * @what: short name of the source, for /proc/interrupts
 *
 * The handler is released by devres after the driver's remove callback.
 *
 * Return: 0 or a negative error code, with the reason logged.
 */
int hpu_irq_request(struct hpu_device *hdev, unsigned int vector,
		    irq_handler_t handler, void *arg, const char *what)
{
	struct pci_dev *pdev = hdev->pdev;
	struct device *dev = &pdev->dev;
	const char *name;
	int ret;

	if (vector >= hdev->irq_vectors) {
		drm_err(&hdev->drm, "MSI-X vector %u for %s not allocated (%d vectors)\n",
			vector, what, hdev->irq_vectors);
		return -EINVAL;
	}

	name = devm_kasprintf(dev, GFP_KERNEL, "%s-%s%u@%s", HPU_DRIVER_NAME,
			      what, vector, pci_name(pdev));
	if (!name)
		return -ENOMEM;

	ret = devm_request_irq(dev, pci_irq_vector(pdev, vector), handler, 0,
			       name, arg);
	if (ret)
		drm_err(&hdev->drm, "cannot request MSI-X vector %u (%s): %d\n",
			vector, what, ret);
	return ret;
}
