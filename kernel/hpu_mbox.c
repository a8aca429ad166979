// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: the mailbox to the running firmware: one request at a time, each
 * tagged and polled for its answer (Documentation/hw/firmware-and-telemetry.md).
 * hwmon, telemetry and devlink ask the firmware through it; the hard reset
 * holds its lock (hpu_fw_lock()) so that no request spans a reset.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/device.h>
#include <linux/iopoll.h>
#include <linux/mutex.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "hpu_drv.h"
#include "hpu_fw.h"
#include "hpu_mbox.h"
#include "hpu_reg.h"

/* The firmware answers within 100 us (device time). */
#define HPU_MBOX_TIMEOUT_MS		50
#define HPU_MBOX_TIMEOUT_US		(HPU_MBOX_TIMEOUT_MS * USEC_PER_MSEC)

/**
 * hpu_mbox_init() - set up the mailbox state
 * @hdev: the device
 *
 * Return: 0 or -ENOMEM.
 */
int hpu_mbox_init(struct hpu_device *hdev)
{
	struct hpu_mbox *mbox;
	int ret;

	mbox = drmm_kzalloc(&hdev->drm, sizeof(*mbox), GFP_KERNEL);
	if (!mbox)
		return -ENOMEM;
	ret = drmm_mutex_init(&hdev->drm, &mbox->lock);
	if (ret)
		return ret;
	hdev->mbox = mbox;
	return 0;
}

/**
 * hpu_mbox_lock() - keep mailbox requests out
 * @hdev: the device
 *
 * For the hard reset and boot (hpu_fw_lock()), with &hpu_fw.lock held.
 * May sleep.
 */
void hpu_mbox_lock(struct hpu_device *hdev)
{
	mutex_lock(&hdev->mbox->lock);
}

/**
 * hpu_mbox_unlock() - let mailbox requests in again
 * @hdev: the device
 */
void hpu_mbox_unlock(struct hpu_device *hdev)
{
	mutex_unlock(&hdev->mbox->lock);
}

/**
 * hpu_mbox_request() - one request to the firmware's mailbox
 * @hdev: the device
 * @opcode: HPU_MBOX_* request
 * @arg0: MBOX_ARG0
 * @arg1: MBOX_ARG1
 * @resp0: MBOX_RESP0 of the answer, or NULL
 * @resp1: MBOX_RESP1 of the answer, or NULL
 *
 * Requests are serialised per device; each waits for its answer (tag
 * matched) for at most 50 ms. A hard reset and the boot after it hold the
 * mailbox lock (hpu_fw_lock()): a request issued meanwhile waits for them
 * and goes to the firmware that runs afterwards, if any. Takes
 * &hpu_mbox.lock, never &hpu_fw.lock. May sleep; not from atomic
 * context.
 *
 * Return: 0 (answer OK); -EINVAL (BAD_ARG); -EOPNOTSUPP (BAD_OPCODE); -EIO
 * (another result); -ETIMEDOUT (no answer); -ENODEV if the firmware does
 * not run or the device is gone.
 */
int hpu_mbox_request(struct hpu_device *hdev, u32 opcode, u32 arg0, u32 arg1,
		     u32 *resp0, u32 *resp1)
{
	struct hpu_mbox *mbox = hdev->mbox;
	u32 status, tag, result;
	int idx, ret;

	if (!mbox || !drm_dev_enter(&hdev->drm, &idx))
		return -ENODEV;

	mutex_lock(&mbox->lock);
	if (!hpu_fw_running(hdev)) {
		ret = -ENODEV;
		goto out;
	}

	/* An earlier request that timed out may still be pending. */
	ret = hpu_poll32(hdev, HPU_REG_MBOX_STATUS, status,
			 !(status & HPU_MBOX_BUSY), HPU_MBOX_TIMEOUT_US);
	if (ret) {
		dev_warn_ratelimited(hdev->drm.dev, "firmware mailbox busy for %u ms (MBOX_STATUS 0x%08x)\n",
				     HPU_MBOX_TIMEOUT_MS,
				     status);
		goto out;
	}

	/* Tag 0 is what the registers hold after a reset: never use it. */
	mbox->tag = mbox->tag + 1 ? mbox->tag + 1 : 1;
	tag = mbox->tag;
	hpu_wr32(hdev, HPU_REG_MBOX_ARG0, arg0);
	hpu_wr32(hdev, HPU_REG_MBOX_ARG1, arg1);
	hpu_wr32(hdev, HPU_REG_MBOX_CMD, (opcode & HPU_MBOX_OPCODE_MASK) |
		 tag << HPU_MBOX_TAG_SHIFT);

	ret = hpu_poll32(hdev, HPU_REG_MBOX_STATUS, status,
			 (status & (HPU_MBOX_BUSY | HPU_MBOX_DONE)) ==
			 HPU_MBOX_DONE && status >> HPU_MBOX_TAG_SHIFT == tag,
			 HPU_MBOX_TIMEOUT_US);
	if (ret) {
		dev_warn_ratelimited(hdev->drm.dev, "firmware mailbox request %u (tag %u) not answered within %u ms (MBOX_STATUS 0x%08x, CPU_STATUS %u)\n",
				     opcode, tag,
				     HPU_MBOX_TIMEOUT_MS,
				     status,
				     hpu_rd32(hdev, HPU_REG_CPU_STATUS));
		goto out;
	}

	/* Clear the interrupt cause; the driver polls. */
	hpu_wr32(hdev, HPU_REG_IRQ_STATUS, HPU_IRQ_MBOX_DONE);
	result = (status & HPU_MBOX_RESULT_MASK) >> HPU_MBOX_RESULT_SHIFT;
	switch (result) {
	case HPU_MBOX_OK:
		if (resp0)
			*resp0 = hpu_rd32(hdev, HPU_REG_MBOX_RESP0);
		if (resp1)
			*resp1 = hpu_rd32(hdev, HPU_REG_MBOX_RESP1);
		ret = 0;
		break;
	case HPU_MBOX_BAD_OPCODE:
		ret = -EOPNOTSUPP;
		break;
	case HPU_MBOX_BAD_ARG:
		ret = -EINVAL;
		break;
	default:
		ret = -EIO;
		break;
	}
out:
	mutex_unlock(&mbox->lock);
	drm_dev_exit(idx);
	return ret;
}
