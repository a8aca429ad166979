/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: the error and reset counters (INFO ERRORS, sysfs, devlink,
 * debugfs).
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_ERROR_STATS_H__
#define __HPU_ERROR_STATS_H__

struct attribute_group;
struct drm_hpu_info_errors;
struct hpu_device;

extern const struct attribute_group hpu_error_stats_group;

void hpu_error_stats_read(struct hpu_device *hdev, struct drm_hpu_info_errors *out);

#endif /* __HPU_ERROR_STATS_H__ */
