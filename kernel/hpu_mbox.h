/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: the mailbox to the running firmware
 * (Documentation/hw/firmware-and-telemetry.md).
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_MBOX_H__
#define __HPU_MBOX_H__

#include <linux/mutex.h>
#include <linux/types.h>

struct hpu_device;

/**
 * struct hpu_mbox - the firmware mailbox of one device
 * @lock: one request at a time; also held by the hard reset and boot
 *	(hpu_fw_lock()), so that a request never spans a reset. Taken after
 *	&hpu_fw.lock; nothing is taken under it.
 * @tag: tag of the last request; under @lock.
 */
struct hpu_mbox {
	/* one request at a time; taken after hpu_fw.lock */
	struct mutex lock;
	u16 tag;
};

int hpu_mbox_init(struct hpu_device *hdev);
void hpu_mbox_lock(struct hpu_device *hdev);
void hpu_mbox_unlock(struct hpu_device *hdev);

int hpu_mbox_request(struct hpu_device *hdev, u32 opcode, u32 arg0, u32 arg1,
		     u32 *resp0, u32 *resp1);

#endif /* __HPU_MBOX_H__ */
