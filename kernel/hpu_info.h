/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: the INFO ioctl.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_INFO_H__
#define __HPU_INFO_H__

#include <linux/types.h>

struct drm_device;
struct drm_file;

int hpu_info_ioctl(struct drm_device *drm, void *data, struct drm_file *file);

#endif /* __HPU_INFO_H__ */
