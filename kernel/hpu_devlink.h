/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: devlink instance of the PCI device: info (versions), flash update
 * and the "fw" and "memory" health reporters.
 * Documentation/driver/firmware.md has the whole picture.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_DEVLINK_H__
#define __HPU_DEVLINK_H__

#include <linux/types.h>

struct hpu_device;

/**
 * struct hpu_devlink_fw_snapshot - the firmware's state when it failed
 * @reason: what detected the failure, a string constant.
 * @cpu_status: CPU_STATUS.
 * @fw_error: FW_ERROR.
 * @hb_req: the last heartbeat request the driver sent (0: none).
 * @hb_ack: HB_ACK.
 * @fw_version: FW_VERSION of the failed firmware.
 * @heartbeat_losses: heartbeats lost since probe, this one included.
 */
struct hpu_devlink_fw_snapshot {
	const char *reason;
	u32 cpu_status;
	u32 fw_error;
	u32 hb_req;
	u32 hb_ack;
	u32 fw_version;
	u64 heartbeat_losses;
};

int hpu_devlink_init(struct hpu_device *hdev);
void hpu_devlink_fini(struct hpu_device *hdev);

void hpu_devlink_fw_snapshot(struct hpu_device *hdev, const char *reason,
			     struct hpu_devlink_fw_snapshot *snap);
void hpu_devlink_fw_report(struct hpu_device *hdev,
			   const struct hpu_devlink_fw_snapshot *snap);
void hpu_devlink_ecc_report(struct hpu_device *hdev, u64 addr);

#endif /* __HPU_DEVLINK_H__ */
