/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: the event queue: errors the device reports (MMU faults, bad and
 * privileged packets).
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_EQ_H__
#define __HPU_EQ_H__

#include <linux/atomic.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include "hpu_regs.h"

struct hpu_device;

/* Entries of the event queue ring. */
#define HPU_EQ_ENTRIES		256

/**
 * struct hpu_eqe - an event queue entry (32 bytes)
 * @id: HPU_EVENT_*.
 * @severity: HPU_EVENT_SEV_*.
 * @engine: engine that raised the event.
 * @asid: address space involved.
 * @reserved: zero.
 * @timestamp: device time in nanoseconds.
 * @addr: MMU_FAULT: faulting address; BAD_PACKET, PRIV: command buffer.
 * @info: MMU_FAULT: FAULT_INFO layout; BAD_PACKET, PRIV: packet offset.
 * @reserved2: zero.
 */
struct hpu_eqe {
	__le16 id;
	u8 severity;
	u8 engine;
	__le16 asid;
	__le16 reserved;
	__le64 timestamp;
	__le64 addr;
	__le32 info;
	__le32 reserved2;
} __packed;

static_assert(sizeof(struct hpu_eqe) == HPU_EQE_SIZE);

/**
 * struct hpu_eq - the event queue of one device
 * @hdev: the device.
 * @ring: the ring (@HPU_EQ_ENTRIES entries, coherent DMA, device-managed).
 * @ring_dma: bus address of @ring.
 * @lock: protects @enabled, @ci and @dropped; taken in hard interrupt
 *	context, so elsewhere with interrupts off.
 * @enabled: the ring is programmed and enabled.
 * @ci: entries consumed (free running, mirrors EQ_CI).
 * @dropped: last EQ_DROPPED value reported.
 * @mmu_faults: MMU_FAULT events since probe.
 * @bad_packets: BAD_PACKET events since probe.
 * @priv_packets: PRIV events since probe.
 * @unknown: events with an id this driver does not know.
 *
 * Allocated with drmm_kzalloc(): lives as long as the DRM device.
 */
struct hpu_eq {
	struct hpu_device *hdev;
	struct hpu_eqe *ring;
	dma_addr_t ring_dma;
	/* protects enabled, ci, dropped; irq-safe */
	spinlock_t lock;
	bool enabled;
	u32 ci;
	u32 dropped;
	atomic64_t mmu_faults;
	atomic64_t bad_packets;
	atomic64_t priv_packets;
	atomic64_t unknown;
};

int hpu_eq_init(struct hpu_device *hdev);
void hpu_eq_fini(struct hpu_device *hdev);

#endif /* __HPU_EQ_H__ */
