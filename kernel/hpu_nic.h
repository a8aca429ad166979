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

#include <linux/auxiliary_bus.h>
#include <linux/types.h>

struct device;
struct hpu_device;

/* The auxiliary device's name: "hpu.en.<id>" on the auxiliary bus. */
#define HPU_NIC_ADEV_NAME	"en"

/**
 * enum hpu_nic_adev_kind - the auxiliary devices of the NIC ports
 * @HPU_NIC_ADEV_EN: "hpu.en.<id>", the Ethernet netdevs (hpu_en.ko).
 * @HPU_NIC_ADEV_RDMA: "hpu.rdma.<id>", the RoCE engine (hpu_ib.ko).
 * @HPU_NIC_ADEV_KINDS: how many.
 */
enum hpu_nic_adev_kind {
	HPU_NIC_ADEV_EN,
	HPU_NIC_ADEV_RDMA,
	HPU_NIC_ADEV_KINDS,
};

/**
 * struct hpu_nic_adev - the auxiliary device of the NIC ports
 * @adev: the auxiliary device; its release frees this structure.
 * @hdev: the HPU. The auxiliary device is deleted before the HPU is
 *	unbound, so its driver never sees @hdev after that.
 * @num_ports: ports with a register block and an interrupt, from
 *	&hpu_nic.num_ports.
 * @kind: which of the two devices it is.
 *
 * Allocated for each addition (a deleted auxiliary device is not added
 * again) and constant in between; the exported functions read it without
 * a lock.
 */
struct hpu_nic_adev {
	struct auxiliary_device adev;
	struct hpu_device *hdev;
	unsigned int num_ports;
	enum hpu_nic_adev_kind kind;
};

static inline struct hpu_nic_adev *to_hpu_nic_adev(struct auxiliary_device *adev)
{
	return container_of(adev, struct hpu_nic_adev, adev);
}

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
