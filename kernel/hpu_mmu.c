// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: device MMU.
 *
 * The page tables of every user address space live in a reserved area at
 * the start of HBM (offset 0 up to &hpu_mmu.pt_size), which the driver
 * reads and writes through the BAR4 HBM window with the window base fixed
 * at HBM offset 0. Each table is 4 KiB; a bitmap hands them out. ASIDs
 * 1..63 are handed to contexts by an IDA; ASID 0 is the kernel's and is
 * untranslated.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/bitmap.h>
#include <linux/io.h>
#include <linux/minmax.h>
#include <linux/pci.h>

#include <drm/drm_managed.h>

#include "hpu_drv.h"
#include "hpu_kunit.h"
#include "hpu_limits.h"
#include "hpu_mmu.h"
#include "hpu_reg.h"

/*
 * How long an invalidation may take before the driver gives up.  BUSY
 * lasts while an engine access translated before it is in flight (in the
 * device model, at most one in-place MME product, which takes longer on a
 * loaded host: memory-and-queues.md); a timeout quarantines memory and
 * escalates to a hard reset, so the bound is generous.
 */
#define HPU_MMU_INV_TIMEOUT_US		5000000U

/* The page-table area: at most the window, an eighth of HBM otherwise. */
#define HPU_PT_AREA_MAX			SZ_64M
#define HPU_PT_AREA_ALIGN		SZ_2M

static void hpu_mmu_release(struct drm_device *drm, void *arg)
{
	struct hpu_mmu *mmu = arg;

	/* Every context is gone by now: a table still in use is a leak. */
	drm_WARN(drm, mmu->pt_used, "%u page tables leaked\n", mmu->pt_used);
	drm_WARN(drm, !ida_is_empty(&mmu->asid_ida), "ASIDs leaked\n");
	ida_destroy(&mmu->asid_ida);
	bitmap_free(mmu->pt_map);
	mutex_destroy(&mmu->pt_lock);
	mutex_destroy(&mmu->inv_lock);
}

/**
 * hpu_mmu_hw_init() - put the MMU registers in their initial state
 * @hdev: the device, bound and not being reset by anyone else
 *
 * Points the HBM window at offset 0 (the page-table area), invalidates
 * every ASID's root and the whole TLB, and releases the fault latch. Used
 * at probe and after a hard reset.
 *
 * Return: 0, or the error of the TLB invalidation.
 */
int hpu_mmu_hw_init(struct hpu_device *hdev)
{
	unsigned int asid;
	int ret;

	hpu_wr32(hdev, HPU_REG_HBM_WIN_BASE_HI, 0);
	hpu_wr32(hdev, HPU_REG_HBM_WIN_BASE_LO, 0);
	for (asid = 0; asid < HPU_MMU_NUM_ASIDS; asid++)
		hpu_mmu_set_root(hdev, asid, 0, false);
	ret = hpu_mmu_invalidate_all(hdev);
	if (ret)
		return ret;
	hpu_wr32(hdev, HPU_REG_FAULT_INFO, HPU_FAULT_VALID);
	return 0;
}

/**
 * hpu_mmu_init() - map the HBM window and reset the MMU's state
 * @hdev: the device, identity read and soft reset done
 *
 * Maps BAR4, points the window at HBM offset 0, reserves the page-table
 * area, invalidates every ASID's root and the whole TLB and releases the
 * fault latch. The software state is freed with the DRM device (open
 * files may outlive the PCI binding). May sleep.
 *
 * Return: 0 or a negative error code, with the reason logged.
 */
int hpu_mmu_init(struct hpu_device *hdev)
{
	struct drm_device *drm = &hdev->drm;
	struct pci_dev *pdev = hdev->pdev;
	struct hpu_mmu *mmu;
	resource_size_t len;
	int ret;

	mmu = drmm_kzalloc(drm, sizeof(*mmu), GFP_KERNEL);
	if (!mmu)
		return -ENOMEM;

	len = pci_resource_len(pdev, HPU_BAR_HBM);
	if (!(pci_resource_flags(pdev, HPU_BAR_HBM) & IORESOURCE_MEM) ||
	    len < HPU_PT_AREA_ALIGN) {
		drm_err(drm, "BAR%d (HBM window) is missing or too small: %pa bytes\n",
			HPU_BAR_HBM, &len);
		return -ENODEV;
	}

	mmu->win_size = len;
	mmu->bar_start = pci_resource_start(pdev, HPU_BAR_HBM);
	mmu->hbm_mappable = hdev->id.spec_version >= HPU_SPEC_VERSION_HBM_BAR &&
			    len >= hdev->id.hbm_size;
	if (!mmu->hbm_mappable)
		drm_info(drm, "BAR%d (%llu MiB, spec version %u) does not cover the %llu MiB of HBM: HBM buffers are not mapped into processes\n",
			 HPU_BAR_HBM, mmu->win_size >> 20, hdev->id.spec_version,
			 hdev->id.hbm_size >> 20);

	mmu->pt_size = min3((u64)HPU_PT_AREA_MAX, mmu->win_size,
			    hdev->id.hbm_size / 8);
	mmu->pt_size = round_down(mmu->pt_size, HPU_PT_AREA_ALIGN);
	if (!mmu->pt_size) {
		drm_err(drm, "HBM of %llu bytes is too small for page tables\n",
			hdev->id.hbm_size);
		return -ENODEV;
	}

	/*
	 * The whole BAR is claimed (nothing else may map it); the kernel
	 * maps only the page-table area: BAR4 is as large as HBM from spec
	 * version 8, and user mappings of HBM buffers go through their own
	 * page tables (hpu_gem.c). When the whole BAR cannot be claimed,
	 * the page-table area is enough to run; HBM is then not mapped
	 * into processes.
	 */
	ret = pcim_request_region(pdev, HPU_BAR_HBM, HPU_DRIVER_NAME "-hbm");
	if (ret == -EBUSY && mmu->pt_size < mmu->win_size) {
		if (devm_request_mem_region(&pdev->dev, mmu->bar_start,
					    mmu->pt_size,
					    HPU_DRIVER_NAME "-hbm")) {
			drm_info(drm, "BAR%d: cannot claim all %llu MiB of it (%d), only the page tables: HBM buffers are not mapped into processes\n",
				 HPU_BAR_HBM, mmu->win_size >> 20, ret);
			mmu->hbm_mappable = false;
			ret = 0;
		}
	}
	if (ret) {
		drm_err(drm, "cannot claim BAR%d: %d\n", HPU_BAR_HBM, ret);
		return ret;
	}
	mmu->win = pcim_iomap_range(pdev, HPU_BAR_HBM, 0, mmu->pt_size);
	if (IS_ERR(mmu->win)) {
		ret = PTR_ERR(mmu->win);
		drm_err(drm, "cannot map BAR%d: %d\n", HPU_BAR_HBM, ret);
		return ret;
	}
	init_rwsem(&mmu->user_map_sem);
	/*
	 * The rest of BAR4 (HBM buffers, never the page tables) is mapped
	 * into processes write-combining: reserve that memory type, after
	 * the uncached mapping of the page-table area, whose range it must
	 * not overlap (the PAT would then make both uncached).
	 */
	if (mmu->hbm_mappable && mmu->win_size > mmu->pt_size) {
		ret = devm_arch_io_reserve_memtype_wc(&pdev->dev,
						      mmu->bar_start + mmu->pt_size,
						      mmu->win_size - mmu->pt_size);
		if (!ret)
			ret = devm_arch_phys_wc_add(&pdev->dev,
						    mmu->bar_start + mmu->pt_size,
						    mmu->win_size - mmu->pt_size);
		if (ret) {
			drm_warn(drm, "BAR%d: no write-combining for HBM mappings (%d): HBM buffers are not mapped into processes\n",
				 HPU_BAR_HBM, ret);
			mmu->hbm_mappable = false;
		}
	}
	mmu->pt_count = mmu->pt_size / HPU_PT_SIZE;

	mmu->pt_map = bitmap_zalloc(mmu->pt_count, GFP_KERNEL);
	if (!mmu->pt_map)
		return -ENOMEM;
	mutex_init(&mmu->pt_lock);
	mutex_init(&mmu->inv_lock);
	ida_init(&mmu->asid_ida);

	ret = drmm_add_action_or_reset(drm, hpu_mmu_release, mmu);
	if (ret)
		return ret;
	hdev->mmu = mmu;

	ret = hpu_mmu_hw_init(hdev);
	if (ret)
		return ret;

	drm_dbg_driver(drm, "MMU: %llu MiB of HBM for %u page tables, window %llu MiB%s\n",
		       mmu->pt_size >> 20, mmu->pt_count, mmu->win_size >> 20,
		       mmu->hbm_mappable ? ", HBM mappable" : "");
	return 0;
}

/**
 * hpu_mmu_fini() - invalidate every address space before unbinding
 * @hdev: the device, already unplugged from user space
 *
 * Clears every root and the whole TLB, so nothing set up by this driver
 * instance is translated once it lets go of the device. Contexts still
 * open keep their software state until their files close; they no longer
 * touch the device.
 */
void hpu_mmu_fini(struct hpu_device *hdev)
{
	unsigned int asid;

	if (!hdev->mmu)
		return;

	for (asid = 0; asid < HPU_MMU_NUM_ASIDS; asid++)
		hpu_mmu_set_root(hdev, asid, 0, false);
	hpu_mmu_invalidate_all(hdev);
}

/**
 * hpu_mmu_asid_alloc() - allocate an address-space id for a context
 * @hdev: the device
 *
 * Return: an ASID from HPU_ASID_FIRST to HPU_ASID_LAST, -EBUSY when all
 * are taken, or -ENOMEM.
 */
int hpu_mmu_asid_alloc(struct hpu_device *hdev)
{
	int asid;

	asid = ida_alloc_range(&hdev->mmu->asid_ida, HPU_ASID_FIRST,
			       HPU_ASID_LAST, GFP_KERNEL);
	if (asid == -ENOSPC)
		return -EBUSY;
	if (asid < 0)
		return asid;
	/*
	 * The ASID's previous context gave its tables back before the ASID;
	 * any it could not (kept out of use) stay in pt_used but are not
	 * counted against the new context.
	 */
	mutex_lock(&hdev->mmu->pt_lock);
	hdev->mmu->pt_asid[asid] = 0;
	mutex_unlock(&hdev->mmu->pt_lock);
	return asid;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_mmu_asid_alloc);

/**
 * hpu_mmu_asid_free() - give an address-space id back
 * @hdev: the device
 * @asid: an ASID from hpu_mmu_asid_alloc(), whose root has been cleared
 *	and invalidated (or whose device is gone)
 */
void hpu_mmu_asid_free(struct hpu_device *hdev, u32 asid)
{
	/*
	 * Tables still quarantined stay in pt_used until released, but no
	 * longer count against the ASID (hpu_vm.c releases them without it).
	 */
	mutex_lock(&hdev->mmu->pt_lock);
	hdev->mmu->pt_asid[asid] = 0;
	mutex_unlock(&hdev->mmu->pt_lock);
	ida_free(&hdev->mmu->asid_ida, asid);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_mmu_asid_free);

/**
 * hpu_mmu_pte_write() - write one page-table entry
 * @hdev: the device, kept bound by the caller
 * @table: HBM offset of the table
 * @idx: entry index, below HPU_PT_ENTRIES
 * @pte: the entry
 */
void hpu_mmu_pte_write(struct hpu_device *hdev, u64 table, unsigned int idx,
		       u64 pte)
{
	writeq(pte, hdev->mmu->win + table + 8 * idx);
}

/*
 * Tables kept for the ASIDs below their reserve: what the others may not
 * take. Called with &hpu_mmu.pt_lock held.
 */
static u64 hpu_mmu_pt_kept(struct hpu_mmu *mmu, u32 reserve)
{
	u64 kept = 0;
	unsigned int asid;

	lockdep_assert_held(&mmu->pt_lock);

	for (asid = HPU_ASID_FIRST; asid <= HPU_ASID_LAST; asid++)
		if (mmu->pt_asid[asid] < reserve)
			kept += reserve - mmu->pt_asid[asid];
	return kept;
}

/**
 * hpu_mmu_pt_alloc() - allocate and zero one page table for a context
 * @hdev: the device, kept bound by the caller
 * @asid: the context's ASID, whose page-table count the table joins
 * @offset: Out: HBM offset of the table
 *
 * A context may hold &hpu_ctx_limits.ctx_page_tables tables. Below
 * &hpu_ctx_limits.pt_reserve it takes any free table; beyond, only one that
 * leaves every other ASID its reserve (Documentation/driver/limits.md).
 *
 * Return: 0; -ENOSPC when the context has its limit of tables; -ENOMEM
 * when the page-table area (less the other ASIDs' reserves) is full.
 */
int hpu_mmu_pt_alloc(struct hpu_device *hdev, u32 asid, u64 *offset)
{
	struct hpu_ctx_limits *lim = hdev->limits;
	u32 cap = READ_ONCE(lim->ctx_page_tables);
	u32 reserve = READ_ONCE(lim->pt_reserve);
	struct hpu_mmu *mmu = hdev->mmu;
	unsigned int own, i;
	unsigned long bit;

	if (WARN_ON(asid < HPU_ASID_FIRST || asid > HPU_ASID_LAST))
		return -EINVAL;

	mutex_lock(&mmu->pt_lock);
	own = mmu->pt_asid[asid];
	if (own >= cap) {
		mutex_unlock(&mmu->pt_lock);
		drm_dbg_driver(&hdev->drm, "ASID %u: limit of %u page tables reached\n",
			       asid, cap);
		return -ENOSPC;
	}
	if (own >= reserve &&
	    mmu->pt_used + hpu_mmu_pt_kept(mmu, reserve) >= mmu->pt_count) {
		mutex_unlock(&mmu->pt_lock);
		drm_dbg_driver(&hdev->drm, "ASID %u: page-table area full (%u of %u used)\n",
			       asid, mmu->pt_used, mmu->pt_count);
		return -ENOMEM;
	}
	bit = find_first_zero_bit(mmu->pt_map, mmu->pt_count);
	if (bit >= mmu->pt_count) {
		mutex_unlock(&mmu->pt_lock);
		drm_dbg_driver(&hdev->drm, "page-table area full (%u tables)\n",
			       mmu->pt_count);
		return -ENOMEM;
	}
	__set_bit(bit, mmu->pt_map);
	mmu->pt_used++;
	mmu->pt_asid[asid]++;
	mutex_unlock(&mmu->pt_lock);

	*offset = (u64)bit * HPU_PT_SIZE;
	for (i = 0; i < HPU_PT_ENTRIES; i++)
		hpu_mmu_pte_write(hdev, *offset, i, 0);

	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_mmu_pt_alloc);

/**
 * hpu_mmu_pt_free() - give a page table back
 * @hdev: the device
 * @asid: the ASID it was allocated for, or %HPU_MMU_NUM_ASIDS for a table
 *	no longer counted against one (released from the quarantine)
 * @offset: HBM offset from hpu_mmu_pt_alloc(); nothing may point at the
 *	table any more and the TLB of its ASID must have been invalidated
 *
 * Does not touch the device: a table is zeroed when it is next allocated.
 */
void hpu_mmu_pt_free(struct hpu_device *hdev, u32 asid, u64 offset)
{
	struct hpu_mmu *mmu = hdev->mmu;
	unsigned long bit = offset / HPU_PT_SIZE;

	mutex_lock(&mmu->pt_lock);
	WARN_ON(!__test_and_clear_bit(bit, mmu->pt_map));
	mmu->pt_used--;
	if (asid < HPU_MMU_NUM_ASIDS && mmu->pt_asid[asid])
		mmu->pt_asid[asid]--;
	mutex_unlock(&mmu->pt_lock);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_mmu_pt_free);

/**
 * hpu_mmu_pt_used() - page tables in use on the device
 * @hdev: the device
 *
 * Return: the count, every context's tables together.
 */
unsigned int hpu_mmu_pt_used(struct hpu_device *hdev)
{
	struct hpu_mmu *mmu = hdev->mmu;
	unsigned int used;

	mutex_lock(&mmu->pt_lock);
	used = mmu->pt_used;
	mutex_unlock(&mmu->pt_lock);
	return used;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_mmu_pt_used);

/**
 * hpu_mmu_asid_tables() - page tables a context holds
 * @hdev: the device
 * @asid: the context's ASID (1..63)
 *
 * Return: the tables counted against @asid, its root included (what the
 * ctx_page_tables limit bounds).
 */
unsigned int hpu_mmu_asid_tables(struct hpu_device *hdev, u32 asid)
{
	struct hpu_mmu *mmu = hdev->mmu;
	unsigned int n;

	if (asid >= HPU_MMU_NUM_ASIDS)
		return 0;
	mutex_lock(&mmu->pt_lock);
	n = mmu->pt_asid[asid];
	mutex_unlock(&mmu->pt_lock);
	return n;
}

/**
 * hpu_mmu_set_root() - program the root of an address space
 * @hdev: the device, kept bound by the caller
 * @asid: the address space
 * @table: HBM offset of its L0 table (4 KiB aligned)
 * @valid: false to make every access of @asid fault
 *
 * The caller invalidates @asid afterwards.
 */
void hpu_mmu_set_root(struct hpu_device *hdev, u32 asid, u64 table,
		      bool valid)
{
	hpu_wr32(hdev, HPU_REG_MMU_ROOT_HI(asid), upper_32_bits(table));
	hpu_wr32(hdev, HPU_REG_MMU_ROOT_LO(asid),
		 (lower_32_bits(table) & ~(HPU_PT_SIZE - 1)) |
		 (valid ? HPU_MMU_ROOT_VALID : 0));
}
EXPORT_SYMBOL_IF_KUNIT(hpu_mmu_set_root);

static int hpu_mmu_inv(struct hpu_device *hdev, u32 val)
{
	struct hpu_mmu *mmu = hdev->mmu;
	u32 status;
	int ret;

	mutex_lock(&mmu->inv_lock);
	hpu_wr32(hdev, HPU_REG_MMU_INV, val);
	ret = hpu_poll32(hdev, HPU_REG_MMU_INV_STATUS, status,
			 status == U32_MAX || !(status & HPU_MMU_INV_BUSY),
			 HPU_MMU_INV_TIMEOUT_US);
	mutex_unlock(&mmu->inv_lock);
	/*
	 * All ones: either the device is gone (surprise removal), reaches no
	 * memory any more and the removal path tears everything down (not a
	 * failed invalidation: nothing to quarantine), or it is present but
	 * in reset (Documentation/hw/registers.md, "In reset"), its write of
	 * MMU_INV dropped: a failed invalidation.
	 */
	if (status == U32_MAX) {
		if (pci_device_is_present(hdev->pdev)) {
			drm_err(&hdev->drm, "TLB invalidation 0x%08x: MMU_INV_STATUS reads all ones with the device present (in reset): not invalidated\n",
				val);
			return -EIO;
		}
		drm_dbg(&hdev->drm, "TLB invalidation 0x%08x: MMU_INV_STATUS reads all ones, the device is gone\n",
			val);
		return 0;
	}
	if (ret)
		drm_err(&hdev->drm, "TLB invalidation 0x%08x did not complete within %u us (MMU_INV_STATUS 0x%08x)\n",
			val, HPU_MMU_INV_TIMEOUT_US, status);
	return ret;
}

/**
 * hpu_mmu_invalidate() - invalidate the TLB entries of one address space
 * @hdev: the device, kept bound by the caller
 * @asid: the address space
 *
 * Returns once the device reports the invalidation complete, so no later
 * engine access uses a translation cached before the call. A status that
 * reads all ones counts as complete only if the device is gone (surprise
 * removal: it translates nothing); a device present that reads all ones
 * is in reset and dropped the request. May sleep.
 *
 * Return: 0, -ETIMEDOUT or -EIO (logged).
 */
int hpu_mmu_invalidate(struct hpu_device *hdev, u32 asid)
{
	return hpu_mmu_inv(hdev, asid & HPU_MMU_INV_ASID_MASK);
}

/**
 * hpu_mmu_invalidate_all() - invalidate the TLB entries of every ASID
 * @hdev: the device, kept bound by the caller
 *
 * Return: 0, -ETIMEDOUT or -EIO (logged).
 */
int hpu_mmu_invalidate_all(struct hpu_device *hdev)
{
	return hpu_mmu_inv(hdev, HPU_MMU_INV_ALL);
}

/**
 * hpu_mmu_fault_cause_name() - printable name of a fault cause
 * @cause: the cause field of FAULT_INFO
 *
 * Return: a constant string.
 */
const char *hpu_mmu_fault_cause_name(u8 cause)
{
	switch (cause) {
	case HPU_FAULT_NOT_PRESENT:
		return "not present";
	case HPU_FAULT_PROT:
		return "write to read-only page";
	case HPU_FAULT_BAD_PTE:
		return "bad page-table entry";
	case HPU_FAULT_RANGE:
		return "address out of range";
	default:
		return "unknown cause";
	}
}

/**
 * hpu_mmu_fault_ack() - read, log and release the fault latch
 * @hdev: the device, kept bound by the caller
 * @fault: Out: the latched fault, if any
 *
 * The device latches the first fault until the driver releases it; the
 * event queue carries every fault. Call this from the MMU_FAULT event
 * handler so that the latch always shows the newest fault. Does not sleep.
 *
 * Return: true if a fault was latched (and is now released).
 */
bool hpu_mmu_fault_ack(struct hpu_device *hdev, struct hpu_mmu_fault *fault)
{
	u32 info;

	info = hpu_rd32(hdev, HPU_REG_FAULT_INFO);
	if (!(info & HPU_FAULT_VALID) || info == U32_MAX)
		return false;

	fault->asid = hpu_rd32(hdev, HPU_REG_FAULT_ASID);
	fault->va = (u64)hpu_rd32(hdev, HPU_REG_FAULT_VA_HI) << 32 |
		    hpu_rd32(hdev, HPU_REG_FAULT_VA_LO);
	fault->write = info & HPU_FAULT_WRITE;
	fault->cause = FIELD_GET(HPU_FAULT_CAUSE_MASK, info);
	fault->engine = FIELD_GET(HPU_FAULT_ENGINE_MASK, info);

	hpu_wr32(hdev, HPU_REG_FAULT_INFO, HPU_FAULT_VALID);

	drm_dbg_driver(&hdev->drm, "MMU fault: ASID %u, %s at 0x%llx by engine %u: %s\n",
		       fault->asid, fault->write ? "write" : "read", fault->va,
		       fault->engine, hpu_mmu_fault_cause_name(fault->cause));
	return true;
}
