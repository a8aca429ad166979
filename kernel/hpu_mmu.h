/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: device MMU: the HBM window, page-table pages, address-space ids,
 * root registers, TLB invalidation and the fault latch.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_MMU_H__
#define __HPU_MMU_H__

#include <linux/idr.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/types.h>

#include "hpu_regs.h"

struct hpu_device;

/* First and last ASID handed to contexts; ASID 0 is the kernel's. */
#define HPU_ASID_FIRST		1
#define HPU_ASID_LAST		(HPU_MMU_NUM_ASIDS - 1)

/* Size of one page table in HBM. */
#define HPU_PT_SIZE		SZ_4K

/* The first register map whose BAR4 covers all of HBM. */
#define HPU_SPEC_VERSION_HBM_BAR	8

/**
 * struct hpu_mmu - device MMU state of one device
 * @win: mapping of the BAR4 HBM window; the window base is HBM offset 0,
 *	so the page-table area is reachable through it. Valid while the
 *	device is bound: use only inside drm_dev_enter()/drm_dev_exit() or
 *	from probe and remove.
 * @win_size: bytes of BAR4 (the whole window; only @pt_size of it is
 *	mapped at @win).
 * @bar_start: bus address of BAR4 as the CPU reaches it (for mappings of
 *	HBM buffers into processes). Constant after probe.
 * @hbm_mappable: BAR4 covers all of HBM (spec version 8), so HBM buffers
 *	can be mapped into processes at @bar_start + their HBM offset.
 *	Constant after probe.
 * @user_map_sem: protects @user_map_off; held for reading while a
 *	fault maps BAR4 pages into a process (hpu_gem.c).
 * @user_map_off: BAR4 is not to be mapped into processes (a function level
 *	reset runs: the device decodes no memory); faults get SIGBUS.
 * @pt_size: bytes at the start of HBM reserved for page tables, a
 *	multiple of 2 MiB, at most @win_size. Constant after probe.
 * @pt_count: page tables in the reserved area (@pt_size / 4 KiB).
 * @pt_lock: protects @pt_map, @pt_used and @pt_asid.
 * @pt_map: one bit per page table of the reserved area, set while in use.
 * @pt_used: page tables in use.
 * @pt_asid: page tables in use per ASID (the context's root included),
 *	against &hpu_ctx_limits.ctx_page_tables and &hpu_ctx_limits.pt_reserve;
 *	set to zero when the ASID is handed to a new context and when it is
 *	given back (tables of a quarantined mapping are released without
 *	their ASID, so they never lower the count of its next owner).
 * @asid_ida: allocated ASIDs (HPU_ASID_FIRST..HPU_ASID_LAST); the IDA
 *	has its own lock.
 * @inv_lock: serialises MMU_INV writes with the wait for their
 *	completion, so that an invalidation is never reported done before
 *	it is.
 */
struct hpu_mmu {
	void __iomem *win;
	u64 win_size;
	resource_size_t bar_start;
	bool hbm_mappable;
	struct rw_semaphore user_map_sem;
	bool user_map_off;
	u64 pt_size;
	unsigned int pt_count;
	struct mutex pt_lock;	/* protects pt_map, pt_used, pt_asid */
	unsigned long *pt_map;
	unsigned int pt_used;
	unsigned int pt_asid[HPU_MMU_NUM_ASIDS];
	struct ida asid_ida;
	struct mutex inv_lock;	/* MMU_INV and its wait */
};

/**
 * struct hpu_mmu_fault - a fault latched by the device MMU
 * @asid: address space of the faulting access.
 * @va: faulting address.
 * @write: the access was a write.
 * @cause: HPU_FAULT_NOT_PRESENT, _PROT, _BAD_PTE or _RANGE.
 * @engine: engine that made the access.
 */
struct hpu_mmu_fault {
	u32 asid;
	u64 va;
	bool write;
	u8 cause;
	u8 engine;
};

int hpu_mmu_init(struct hpu_device *hdev);
void hpu_mmu_fini(struct hpu_device *hdev);

int hpu_mmu_asid_alloc(struct hpu_device *hdev);
void hpu_mmu_asid_free(struct hpu_device *hdev, u32 asid);

int hpu_mmu_pt_alloc(struct hpu_device *hdev, u32 asid, u64 *offset);
void hpu_mmu_pt_free(struct hpu_device *hdev, u32 asid, u64 offset);
unsigned int hpu_mmu_pt_used(struct hpu_device *hdev);
unsigned int hpu_mmu_asid_tables(struct hpu_device *hdev, u32 asid);
void hpu_mmu_pte_write(struct hpu_device *hdev, u64 table, unsigned int idx,
		       u64 pte);

void hpu_mmu_set_root(struct hpu_device *hdev, u32 asid, u64 table,
		      bool valid);
int hpu_mmu_invalidate(struct hpu_device *hdev, u32 asid);
int hpu_mmu_invalidate_all(struct hpu_device *hdev);

int hpu_mmu_hw_init(struct hpu_device *hdev);
bool hpu_mmu_fault_ack(struct hpu_device *hdev, struct hpu_mmu_fault *fault);
const char *hpu_mmu_fault_cause_name(u8 cause);

#endif /* __HPU_MMU_H__ */
