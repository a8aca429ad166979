/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: chip-independent hardware bring-up.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_HW_H__
#define __HPU_HW_H__

#include <linux/types.h>

struct hpu_device;

int hpu_hw_init(struct hpu_device *hdev);
int hpu_hw_wait_out_of_reset(struct hpu_device *hdev);
void hpu_hw_fini(struct hpu_device *hdev);
int hpu_hw_soft_reset(struct hpu_device *hdev);
int hpu_hw_irq_self_test(struct hpu_device *hdev);
void hpu_hw_irq_enable(struct hpu_device *hdev);
u32 hpu_hw_reset_count(struct hpu_device *hdev);

#endif /* __HPU_HW_H__ */
