/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * HPU firmware: loading, the boot handshake with the device's boot ROM and
 * the flash (Documentation/hw/firmware-and-telemetry.md).
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_FW_H__
#define __HPU_FW_H__

#include <linux/types.h>

struct attribute_group;
struct hpu_device;
struct drm_hpu_info_firmware;

/* Longest string hpu_fw_version_str() writes, NUL included ("255.255.255"). */
#define HPU_FW_VERSION_STR_LEN	12

int hpu_fw_init(struct hpu_device *hdev);
void hpu_fw_fini(struct hpu_device *hdev);

/*
 * Boot the firmware (flash image first, then the image file) after probe or
 * a hard reset; on failure the device is marked unusable. Sleeps.
 */
int hpu_fw_boot(struct hpu_device *hdev);

/*
 * The same for the hard reset path, which holds the firmware lock
 * (hpu_fw_lock()) across the HARD_RESET write and the boot, so that no
 * flash write or other boot sequence runs in between.
 */
void hpu_fw_lock(struct hpu_device *hdev);
void hpu_fw_unlock(struct hpu_device *hdev);
int hpu_fw_boot_locked(struct hpu_device *hdev);

/* True while the firmware runs (CPU_STATUS RUNNING). */
bool hpu_fw_running(struct hpu_device *hdev);

/*
 * Write an image to the device's flash (FLASH_CMD WRITE) and wait for the
 * outcome. Returns 0; -EACCES when the device refused it (*@refusal holds
 * the FLASH_ERROR code); -EFBIG when it exceeds 1 MiB; -ETIMEDOUT; -EBUSY
 * while an earlier write that timed out is still in progress; -ENOMEM;
 * -EIO. Sleeps (up to about two seconds).
 */
int hpu_fw_flash(struct hpu_device *hdev, const u8 *data, size_t size,
		 u32 *refusal);

/* Fill the INFO_FIRMWARE answer. */
void hpu_fw_info(struct hpu_device *hdev, struct drm_hpu_info_firmware *out);

/* Human-readable name of a BOOT_ERROR / FLASH_ERROR refusal code. */
const char *hpu_fw_refusal_name(u32 code);

/* What a refusal code means and what to do about it, for messages. */
const char *hpu_fw_refusal_what(u32 code);
const char *hpu_fw_refusal_todo(u32 code);

/* "major.minor.patch", or "none" for 0; returns @buf. */
char *hpu_fw_version_str(u32 version, char *buf, size_t len);

/* sysfs attributes fw_* of the PCI device (hpu_sysfs.c lists the group). */
extern const struct attribute_group hpu_fw_group;

#endif /* __HPU_FW_H__ */
