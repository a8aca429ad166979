/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: ioctl handlers.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_IOCTL_H__
#define __HPU_IOCTL_H__

#include <linux/types.h>

struct drm_device;
struct drm_file;
struct drm_hpu_vm_bind;

int hpu_info_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int hpu_bo_create_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file);
int hpu_bo_userptr_ioctl(struct drm_device *drm, void *data,
			 struct drm_file *file);
int hpu_bo_mmap_offset_ioctl(struct drm_device *drm, void *data,
			     struct drm_file *file);
int hpu_vm_bind_ioctl(struct drm_device *drm, void *data,
		      struct drm_file *file);

#if IS_ENABLED(CONFIG_KUNIT)
/* VM_BIND argument checks, for the KUnit suites (kernel/tests/). */
int hpu_vm_bind_map_check(struct drm_device *drm,
			  const struct drm_hpu_vm_bind *args, u64 bo_size,
			  u64 page_size, bool readonly);
int hpu_vm_bind_unmap_check(struct drm_device *drm,
			    const struct drm_hpu_vm_bind *args);
#endif

#endif /* __HPU_IOCTL_H__ */
