/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: sysfs attributes of the PCI device.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_SYSFS_H__
#define __HPU_SYSFS_H__

struct attribute_group;

extern const struct attribute_group *hpu_dev_groups[];

#endif /* __HPU_SYSFS_H__ */
