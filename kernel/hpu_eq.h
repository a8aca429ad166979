/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: the event queue: errors and notifications the device reports.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_EQ_H__
#define __HPU_EQ_H__

#include <linux/atomic.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "hpu_regs.h"

struct hpu_device;

/* Entries of the event queue ring. */
#define HPU_EQ_ENTRIES		256
/* Uncorrectable ECC errors waiting for the retirement work. */
#define HPU_EQ_UE_BACKLOG	16

/**
 * struct hpu_eqe - an event queue entry (32 bytes)
 * @id: HPU_EVENT_*.
 * @severity: HPU_EVENT_SEV_*.
 * @engine: engine that raised the event.
 * @asid: address space involved.
 * @reserved: zero.
 * @timestamp: device time in nanoseconds.
 * @addr: MMU_FAULT: faulting address; BAD_PACKET, PRIV, ENGINE_HANG:
 *	command buffer; DMA_BUS_ERROR: host bus address; ECC_CE, ECC_UE:
 *	HBM offset; others 0.
 * @info: MMU_FAULT: FAULT_INFO layout; BAD_PACKET, PRIV: packet offset;
 *	ENGINE_HANG, DMA_BUS_ERROR: [7:0] stream; ECC: syndrome; THERMAL:
 *	millidegrees C; POWER: milliwatts; FW_FATAL: error code;
 *	HEARTBEAT: sequence number; RESET_DONE: 1 soft, 2 hard.
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
 * @lock: protects @enabled, @held, @ci, @dropped and the @ue_* backlog; taken
 *	in hard interrupt context, so elsewhere with interrupts off.
 * @enabled: the ring is programmed and enabled.
 * @held: the interrupt handler leaves the ring alone (hpu_eq_hold(), for
 *	tests).
 * @ci: entries consumed (free running, mirrors EQ_CI).
 * @dropped: last EQ_DROPPED value reported.
 * @mmu_faults: MMU_FAULT events since probe.
 * @bad_packets: BAD_PACKET events since probe.
 * @priv_packets: PRIV events since probe.
 * @engine_hangs: ENGINE_HANG events.
 * @dma_bus_errors: DMA_BUS_ERROR events.
 * @ecc_ce: ECC_CE events.
 * @ecc_ue: ECC_UE events.
 * @thermal: THERMAL events.
 * @power: POWER events.
 * @fw_fatal: FW_FATAL events.
 * @heartbeats: HEARTBEAT events.
 * @resets_done: RESET_DONE events.
 * @bad_launches: BAD_LAUNCH events (spec version 6).
 * @tpc_illegal: TPC_ILLEGAL events.
 * @tpc_asserts: TPC_ASSERT events.
 * @unknown: events with an id this driver does not know.
 * @ue_work: retires the pages of @ue_addr and tells their holders
 *	(hpu_hbm_retire() sleeps, so it cannot run in the handler).
 * @ue_addr: HBM offsets of uncorrectable errors not handled yet.
 * @ue_head: next slot @ue_work reads (free running).
 * @ue_tail: next slot the handler writes (free running).
 * @ue_lost: errors that found the backlog full (not retired).
 *
 * Allocated with drmm_kzalloc(): lives as long as the DRM device.
 */
struct hpu_eq {
	struct hpu_device *hdev;
	struct hpu_eqe *ring;
	dma_addr_t ring_dma;
	/* protects enabled, held, ci, dropped; irq-safe */
	spinlock_t lock;
	bool enabled;
	bool held;
	u32 ci;
	u32 dropped;
	atomic64_t mmu_faults;
	atomic64_t bad_packets;
	atomic64_t priv_packets;
	atomic64_t engine_hangs;
	atomic64_t dma_bus_errors;
	atomic64_t ecc_ce;
	atomic64_t ecc_ue;
	atomic64_t thermal;
	atomic64_t power;
	atomic64_t fw_fatal;
	atomic64_t heartbeats;
	atomic64_t resets_done;
	atomic64_t bad_launches;
	atomic64_t tpc_illegal;
	atomic64_t tpc_asserts;
	atomic64_t unknown;
	struct work_struct ue_work;
	u64 ue_addr[HPU_EQ_UE_BACKLOG];
	u32 ue_head;
	u32 ue_tail;
	u64 ue_lost;
};

int hpu_eq_init(struct hpu_device *hdev);
void hpu_eq_fini(struct hpu_device *hdev);
void hpu_eq_wdt_program(struct hpu_device *hdev);
void hpu_eq_hw_restart(struct hpu_device *hdev);
void hpu_eq_sync(struct hpu_device *hdev);
void hpu_eq_hold(struct hpu_device *hdev, bool hold);

#endif /* __HPU_EQ_H__ */
