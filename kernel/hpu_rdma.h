/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: the RoCE engine's auxiliary device, and the functions hpu.ko
 * exports (namespace HPU_RDMA) to the driver bound to it, hpu_ib.ko.
 * Documentation/driver/rdma.md has the whole picture.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_RDMA_H__
#define __HPU_RDMA_H__

#include <linux/types.h>

struct auxiliary_device;
struct device;
struct hpu_device;
struct hpu_rdma_as;
struct sg_table;

/* The auxiliary device's name: "hpu.rdma.<id>" on the auxiliary bus. */
#define HPU_RDMA_ADEV_NAME	"rdma"

/* What hpu.ko exports to the auxiliary driver. */
unsigned int hpu_rdma_num_ports(struct auxiliary_device *adev);
void __iomem *hpu_rdma_ctrl_regs(struct auxiliary_device *adev);
void __iomem *hpu_rdma_port_regs(struct auxiliary_device *adev,
				 unsigned int port);
int hpu_rdma_eq_irq(struct auxiliary_device *adev);
void hpu_rdma_reset_request(struct auxiliary_device *adev, const char *reason);
unsigned int hpu_rdma_num_db_pages(struct auxiliary_device *adev);
phys_addr_t hpu_rdma_db_page_addr(struct auxiliary_device *adev,
				  unsigned int page);
struct device *hpu_rdma_dma_device(struct auxiliary_device *adev);

int hpu_rdma_as_create(struct auxiliary_device *adev,
		       struct hpu_rdma_as **out);
u32 hpu_rdma_as_asid(struct hpu_rdma_as *as);
int hpu_rdma_as_map_sgt(struct hpu_rdma_as *as, struct sg_table *sgt,
			u64 size, bool writable, u64 *va);
int hpu_rdma_as_map_dmabuf(struct hpu_rdma_as *as, int fd, u64 offset,
			   u64 size, bool writable, u64 *map_va, u64 *va);
int hpu_rdma_as_map_user(struct hpu_rdma_as *as, u64 addr, u64 size,
			 bool writable, u64 *map_va, u64 *va);
int hpu_rdma_as_unmap(struct hpu_rdma_as *as, u64 map_va);
void hpu_rdma_as_destroy(struct hpu_rdma_as *as, bool reachable);

/* hpu.ko only (hpu_nic.c). */
bool hpu_rdma_usable(struct hpu_device *hdev);

#endif /* __HPU_RDMA_H__ */
