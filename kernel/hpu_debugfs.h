/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: debugfs: fault injection and error state, for tests only.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_DEBUGFS_H__
#define __HPU_DEBUGFS_H__

struct hpu_device;

void hpu_debugfs_init(struct hpu_device *hdev);

#endif /* __HPU_DEBUGFS_H__ */
