/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: the hwmon device. Documentation/driver/telemetry.md has the whole
 * picture.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_HWMON_H__
#define __HPU_HWMON_H__

struct device;
struct hpu_device;

/**
 * struct hpu_hwmon - the hwmon device of one device
 * @hdev: the device.
 * @dev: the hwmon class device, or NULL when its registration failed
 *	(INFO TELEMETRY and sysfs still work); unregistered by
 *	hpu_hwmon_fini().
 */
struct hpu_hwmon {
	struct hpu_device *hdev;
	struct device *dev;
};

int hpu_hwmon_init(struct hpu_device *hdev);
void hpu_hwmon_fini(struct hpu_device *hdev);

#endif /* __HPU_HWMON_H__ */
