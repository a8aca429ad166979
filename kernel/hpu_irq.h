/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: MSI-X vectors and interrupt handlers.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_IRQ_H__
#define __HPU_IRQ_H__

#include <linux/interrupt.h>

struct hpu_device;

int hpu_irq_init(struct hpu_device *hdev);
int hpu_irq_request(struct hpu_device *hdev, unsigned int vector,
		    irq_handler_t handler, void *arg, const char *what);

#endif /* __HPU_IRQ_H__ */
