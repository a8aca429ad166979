/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: error counters (INFO ERRORS, sysfs, debugfs) and the engine
 * watchdog setting.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_ERRORS_H__
#define __HPU_ERRORS_H__

struct attribute_group;
struct drm_hpu_info_errors;
struct hpu_device;

extern const struct attribute_group hpu_errors_group;

void hpu_errors_read(struct hpu_device *hdev, struct drm_hpu_info_errors *out);
void hpu_errors_hw_init(struct hpu_device *hdev);

#endif /* __HPU_ERRORS_H__ */
