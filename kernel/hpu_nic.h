/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: the NIC ports' auxiliary device, and the few functions hpu.ko
 * exports (namespace HPU_NIC) to the driver bound to it, hpu_en.ko.
 * Documentation/driver/nic.md has the whole picture.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_NIC_H__
#define __HPU_NIC_H__

#include <linux/types.h>

struct auxiliary_device;
struct device;
struct hpu_device;

/* The auxiliary device's name: "hpu.en.<id>" on the auxiliary bus. */
#define HPU_NIC_ADEV_NAME	"en"

/* What hpu.ko exports to the auxiliary driver. */
unsigned int hpu_nic_num_ports(struct auxiliary_device *adev);
void __iomem *hpu_nic_port_regs(struct auxiliary_device *adev,
				unsigned int port);
int hpu_nic_port_irq(struct auxiliary_device *adev, unsigned int port);
struct device *hpu_nic_dma_device(struct auxiliary_device *adev);

/* hpu.ko only: probe, removal and resets (hpu_drv.c, hpu_reset.c). */
int hpu_nic_init(struct hpu_device *hdev);
void hpu_nic_start(struct hpu_device *hdev);
void hpu_nic_fini(struct hpu_device *hdev);
void hpu_nic_reset_prepare(struct hpu_device *hdev);
void hpu_nic_reset_done(struct hpu_device *hdev, bool usable);

#endif /* __HPU_NIC_H__ */
