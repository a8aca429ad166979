/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: error and reset notifications to user space as DRM events.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_NOTIFY_H__
#define __HPU_NOTIFY_H__

#include <linux/types.h>

#include "hpu_regs.h"

struct drm_device;
struct drm_file;
struct file;
struct hpu_device;
struct hpu_file_priv;
struct inode;

/**
 * struct hpu_notify - per-device state of event delivery
 * @files: the open file of each ASID, NULL when the ASID is free. A file
 *	is entered at the end of open and removed when its last reference
 *	is released, before the DRM core drops its events and long before
 *	its ASID can be reused. Protected by &drm_device.event_lock.
 *
 * Allocated with drmm_kzalloc(): lives as long as the DRM device.
 */
struct hpu_notify {
	struct hpu_file_priv *files[HPU_MMU_NUM_ASIDS];
};

int hpu_notify_init(struct hpu_device *hdev);
void hpu_notify_file_open(struct hpu_file_priv *fpriv, struct drm_file *file);
void hpu_notify_file_close(struct hpu_file_priv *fpriv);
int hpu_notify_release(struct inode *inode, struct file *filp);

void hpu_notify_job_error(struct hpu_file_priv *fpriv, u32 kind, u32 engine,
			  u32 queue_id, int err, u64 seq, u64 address);
void hpu_notify_asid_error(struct hpu_device *hdev, u32 asid, u32 kind,
			   u32 engine, u32 queue_id, int err, u64 seq,
			   u64 address, u32 info);
void hpu_notify_reset(struct hpu_device *hdev, bool hard, u64 gen);

int hpu_notify_ioctl(struct drm_device *drm, void *data,
		     struct drm_file *file);

#endif /* __HPU_NOTIFY_H__ */
