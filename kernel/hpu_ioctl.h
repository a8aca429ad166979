/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: ioctl handlers.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_IOCTL_H__
#define __HPU_IOCTL_H__

struct drm_device;
struct drm_file;

int hpu_info_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int hpu_bo_create_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file);
int hpu_bo_userptr_ioctl(struct drm_device *drm, void *data,
			 struct drm_file *file);
int hpu_bo_mmap_offset_ioctl(struct drm_device *drm, void *data,
			     struct drm_file *file);
int hpu_vm_bind_ioctl(struct drm_device *drm, void *data,
		      struct drm_file *file);

#endif /* __HPU_IOCTL_H__ */
