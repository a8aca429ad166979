// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: HBM allocation (drm_buddy, 2 MiB chunks), scrubbing, and the
 * retirement of pages with uncorrectable ECC errors.
 *
 * Every block is scrubbed before it goes back to the allocator, and all of
 * HBM when the driver binds, so that no context sees another's data.
 * Documentation/driver/memory.md and errors.md have the whole picture.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/device.h>
#include <linux/list.h>
#include <linux/pci.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/sysfs.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "hpu_drv.h"
#include "hpu_hbm.h"
#include "hpu_kunit.h"
#include "hpu_mmu.h"
#include "hpu_reg.h"
#include "hpu_reset.h"

/* A scrub may take this long plus HPU_SCRUB_US_PER_GIB per GiB. */
#define HPU_SCRUB_TIMEOUT_US		(2 * USEC_PER_SEC)
#define HPU_SCRUB_US_PER_GIB		(1 * USEC_PER_SEC)

VISIBLE_IF_KUNIT void hpu_hbm_release(struct drm_device *drm, void *arg)
{
	struct hpu_hbm *hbm = arg;

	/*
	 * The device is gone: blocks that could not be scrubbed can go too,
	 * and so can retired pages (the next driver instance starts afresh).
	 */
	drm_buddy_free_list(&hbm->mm, &hbm->leaked_blocks, 0);
	drm_buddy_free_list(&hbm->mm, &hbm->retired_blocks, 0);
	xa_destroy(&hbm->retired);
	drm_buddy_fini(&hbm->mm);
	mutex_destroy(&hbm->lock);
	mutex_destroy(&hbm->scrub_lock);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_hbm_release);

/*
 * SCRUB_COUNT. The KUnit suites stand in for it: their device is plain
 * memory, which cannot count scrubs.
 */
VISIBLE_IF_KUNIT u32 hpu_hbm_scrub_count(struct hpu_device *hdev)
{
	KUNIT_STATIC_STUB_REDIRECT(hpu_hbm_scrub_count, hdev);
	return hpu_rd32(hdev, HPU_REG_SCRUB_COUNT);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_hbm_scrub_count);

/* Wait for SCRUB_STATUS.BUSY clear; *@status: the last value read. */
static int hpu_hbm_scrub_wait(struct hpu_device *hdev, u64 timeout_us,
			      u32 *status)
{
	u32 val;
	int ret;

	ret = hpu_poll32(hdev, HPU_REG_SCRUB_STATUS, val,
			 !(val & HPU_SCRUB_BUSY), timeout_us);
	*status = val;
	return ret;
}

/**
 * hpu_hbm_scrub() - zero a range of HBM and wait for it
 * @hdev: the device, kept bound by the caller
 * @addr: HBM offset, 2 MiB aligned
 * @size: bytes, a non-zero multiple of 2 MiB
 *
 * Every engine access completed before the call is ordered before the
 * scrub, every engine access started after it returns sees zeroes.
 * Waits for a scrub in progress first (the device refuses a start while
 * busy), and counts the scrub as done only if SCRUB_STATUS.ERROR is clear
 * and SCRUB_COUNT moved by exactly one. A scrub that times out may still
 * run, so no later one could be told from it: every later call fails
 * until a hard reset (hpu_hbm_scrub_reset()). May sleep.
 *
 * Return: 0; -EIO if the device refused the range or an earlier scrub
 * timed out; -ETIMEDOUT.
 */
int hpu_hbm_scrub(struct hpu_device *hdev, u64 addr, u64 size)
{
	struct hpu_hbm *hbm = hdev->hbm;
	u64 timeout_us, idle_us, wait_us;
	const char *what;
	u32 status, count;
	int ret;

	timeout_us = HPU_SCRUB_TIMEOUT_US +
		     HPU_SCRUB_US_PER_GIB * DIV_ROUND_UP_ULL(size, SZ_1G);
	/* A scrub left running (by an earlier driver instance) may be any size. */
	idle_us = HPU_SCRUB_TIMEOUT_US +
		  HPU_SCRUB_US_PER_GIB * DIV_ROUND_UP_ULL(hdev->id.hbm_size, SZ_1G);

	mutex_lock(&hbm->scrub_lock);
	if (hbm->scrub_stuck) {
		mutex_unlock(&hbm->scrub_lock);
		drm_err_ratelimited(&hdev->drm, "HBM scrub of 0x%llx+0x%llx not started: an earlier scrub timed out (until a hard reset)\n",
				    addr, size);
		return -EIO;
	}
	/* A start while BUSY is refused: wait for the scrub in progress. */
	what = "found the scrubber still busy";
	wait_us = idle_us;
	ret = hpu_hbm_scrub_wait(hdev, wait_us, &status);
	if (ret)
		goto stuck;
	count = hpu_hbm_scrub_count(hdev);
	hpu_wr32(hdev, HPU_REG_SCRUB_ADDR_HI, upper_32_bits(addr));
	hpu_wr32(hdev, HPU_REG_SCRUB_ADDR_LO, lower_32_bits(addr));
	hpu_wr32(hdev, HPU_REG_SCRUB_SIZE_HI, upper_32_bits(size));
	hpu_wr32(hdev, HPU_REG_SCRUB_SIZE_LO, lower_32_bits(size));
	hpu_wr32(hdev, HPU_REG_SCRUB_CTRL, HPU_SCRUB_START);
	what = "did not complete";
	wait_us = timeout_us;
	ret = hpu_hbm_scrub_wait(hdev, wait_us, &status);
	if (ret)
		goto stuck;
	/* Done only if this start was accepted and exactly one scrub ended. */
	count = hpu_hbm_scrub_count(hdev) - count;
	mutex_unlock(&hbm->scrub_lock);

	if ((status & HPU_SCRUB_ERROR) || count != 1) {
		drm_err(&hdev->drm, "HBM scrub of 0x%llx+0x%llx refused (SCRUB_STATUS 0x%08x, %u scrubs completed)\n",
			addr, size, status, count);
		return -EIO;
	}
	return 0;

stuck:
	/* It may still run: no later start could be told from it. */
	hbm->scrub_stuck = true;
	mutex_unlock(&hbm->scrub_lock);
	drm_err(&hdev->drm, "HBM scrub of 0x%llx+0x%llx %s within %llu us (SCRUB_STATUS 0x%08x): no scrub until a hard reset\n",
		addr, size, what, wait_us, status);
	return ret;
}

/**
 * hpu_hbm_scrub_reset() - scrubs may start again after a hard reset
 * @hdev: the device, just hard reset (the reset abandoned any scrub)
 */
void hpu_hbm_scrub_reset(struct hpu_device *hdev)
{
	struct hpu_hbm *hbm = hdev->hbm;

	mutex_lock(&hbm->scrub_lock);
	hbm->scrub_stuck = false;
	mutex_unlock(&hbm->scrub_lock);
}

/**
 * hpu_hbm_init() - set up the HBM allocator
 * @hdev: the device, with the MMU initialised (it reserves the page-table
 *	area at the start of HBM)
 *
 * Scrubs the whole of HBM, then hands everything after the page-table
 * area to a buddy allocator. The allocator lives as long as the DRM
 * device, since buffers of open files may outlive the PCI binding. May
 * sleep.
 *
 * Return: 0 or a negative error code, with the reason logged.
 */
int hpu_hbm_init(struct hpu_device *hdev)
{
	struct drm_device *drm = &hdev->drm;
	struct hpu_hbm *hbm;
	int ret;

	hbm = drmm_kzalloc(drm, sizeof(*hbm), GFP_KERNEL);
	if (!hbm)
		return -ENOMEM;

	hbm->base = hdev->mmu->pt_size;
	if (hdev->id.hbm_size <= hbm->base ||
	    !IS_ALIGNED(hdev->id.hbm_size, HPU_HBM_PAGE_SIZE)) {
		drm_err(drm, "unusable HBM size %llu\n", hdev->id.hbm_size);
		return -ENODEV;
	}
	hbm->size = hdev->id.hbm_size - hbm->base;
	mutex_init(&hbm->lock);
	mutex_init(&hbm->scrub_lock);
	INIT_LIST_HEAD(&hbm->leaked_blocks);
	INIT_LIST_HEAD(&hbm->retired_blocks);
	xa_init(&hbm->retired);
	hdev->hbm = hbm;

	ret = hpu_hbm_scrub(hdev, 0, hdev->id.hbm_size);
	if (ret)
		return ret;

	ret = drm_buddy_init(&hbm->mm, hbm->size, HPU_HBM_PAGE_SIZE);
	if (ret) {
		drm_err(drm, "cannot set up the HBM allocator: %d\n", ret);
		return ret;
	}

	ret = drmm_add_action_or_reset(drm, hpu_hbm_release, hbm);
	if (ret)
		return ret;

	drm_dbg_driver(drm, "HBM: %llu MiB for buffers at 0x%llx\n",
		       hbm->size >> 20, hbm->base);
	return 0;
}

/**
 * hpu_hbm_fini() - report HBM that could not be scrubbed
 * @hdev: the device, being unbound
 *
 * The allocator itself stays until the DRM device is released: buffers of
 * files still open give their blocks back to it.
 */
void hpu_hbm_fini(struct hpu_device *hdev)
{
	struct hpu_hbm *hbm = hdev->hbm;

	if (!hbm)
		return;

	mutex_lock(&hbm->lock);
	if (hbm->leaked)
		drm_warn(&hdev->drm, "%llu bytes of HBM were never scrubbed and stayed out of use\n",
			 hbm->leaked);
	mutex_unlock(&hbm->lock);
}

/**
 * hpu_hbm_alloc() - allocate HBM
 * @hdev: the device
 * @size: bytes, a non-zero multiple of @page_size
 * @page_size: a power of two from 2 MiB to 1 GiB: every block is a
 *	multiple of it and aligned to it (relative to the allocator's start,
 *	which is 2 MiB aligned in HBM)
 * @contiguous: one physically contiguous block
 * @blocks: Out: list the &drm_buddy_block entries are added to
 *
 * The memory is zero (scrubbed).
 *
 * Return: 0, or -ENOMEM when there is not enough free HBM (nothing is
 * allocated then).
 */
int hpu_hbm_alloc(struct hpu_device *hdev, u64 size, u64 page_size,
		  bool contiguous, struct list_head *blocks)
{
	struct hpu_hbm *hbm = hdev->hbm;
	unsigned long flags = 0;
	int ret;

	if (size > hbm->size)
		return -ENOMEM;
	if (contiguous)
		flags |= DRM_BUDDY_CONTIGUOUS_ALLOCATION;

	mutex_lock(&hbm->lock);
	ret = drm_buddy_alloc_blocks(&hbm->mm, 0, hbm->size, size, page_size,
				     blocks, flags);
	mutex_unlock(&hbm->lock);

	/* The buddy says -ENOSPC when full, -EINVAL when it cannot ever fit. */
	if (ret == -ENOSPC || ret == -EINVAL)
		ret = -ENOMEM;
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_hbm_alloc);

/*
 * Take the free page at allocator offset @off out of use; hbm->lock held.
 * Return: 0; -ENOSPC if a buffer holds it; -ENOMEM.
 */
static int hpu_hbm_take_page_locked(struct hpu_hbm *hbm, u64 off)
{
	LIST_HEAD(blocks);
	int ret;

	lockdep_assert_held(&hbm->lock);

	/* An exact range: the buddy splits free blocks down to this page. */
	ret = drm_buddy_alloc_blocks(&hbm->mm, off, off + HPU_HBM_PAGE_SIZE,
				     HPU_HBM_PAGE_SIZE, HPU_HBM_PAGE_SIZE,
				     &blocks, 0);
	if (ret)
		return ret == -ENOMEM ? -ENOMEM : -ENOSPC;
	list_splice_tail(&blocks, &hbm->retired_blocks);
	return 0;
}

/* Retire the pending pages that are free now; hbm->lock held. */
static void hpu_hbm_retire_pending_locked(struct hpu_hbm *hbm)
{
	unsigned long index;
	void *entry;

	lockdep_assert_held(&hbm->lock);

	xa_for_each(&hbm->retired, index, entry) {
		if (xa_to_value(entry) != HPU_HBM_RETIRE_PENDING)
			continue;
		if (hpu_hbm_take_page_locked(hbm, (u64)index * HPU_HBM_PAGE_SIZE -
					     hbm->base))
			continue;
		/* Replacing an entry allocates nothing: this cannot fail. */
		xa_store(&hbm->retired, index, xa_mk_value(HPU_HBM_RETIRED),
			 GFP_KERNEL);
		hbm->retired_pending--;
	}
}

/**
 * hpu_hbm_retire() - retire a 2 MiB HBM page for good
 * @hdev: the device
 * @addr: HBM offset in the page (rounded down to 2 MiB)
 * @in_use: Out: a buffer still holds the page (it is retired when the
 *	buffer is freed)
 *
 * From now on the allocator never hands the page out again, until the
 * DRM device is released. May sleep.
 *
 * Return: 0 for a newly retired page; -EALREADY if it was retired
 * already (@in_use is still set); -ERANGE for a page outside the
 * allocator (the page-table area, or beyond HBM); -ENOMEM if memory to
 * record it ran out (not retired), or to take it out of the allocator
 * (then it is pending as if a buffer held it, and taken out at the next
 * free: until then a new buffer may get it).
 */
int hpu_hbm_retire(struct hpu_device *hdev, u64 addr, bool *in_use)
{
	struct hpu_hbm *hbm = hdev->hbm;
	unsigned long index;
	void *entry;
	int ret;

	*in_use = false;
	addr = ALIGN_DOWN(addr, HPU_HBM_PAGE_SIZE);
	if (addr < hbm->base || addr - hbm->base >= hbm->size)
		return -ERANGE;
	index = addr / HPU_HBM_PAGE_SIZE;

	mutex_lock(&hbm->lock);
	entry = xa_load(&hbm->retired, index);
	if (entry) {
		*in_use = xa_to_value(entry) == HPU_HBM_RETIRE_PENDING;
		ret = -EALREADY;
		goto out;
	}

	/* Record it first: once the page is taken, nothing may fail. */
	ret = xa_insert(&hbm->retired, index,
			xa_mk_value(HPU_HBM_RETIRE_PENDING), GFP_KERNEL);
	if (ret)
		goto out;
	hbm->retired_pages++;
	ret = hpu_hbm_take_page_locked(hbm, addr - hbm->base);
	if (!ret) {
		xa_store(&hbm->retired, index, xa_mk_value(HPU_HBM_RETIRED),
			 GFP_KERNEL);
	} else {
		hbm->retired_pending++;
		*in_use = ret == -ENOSPC;
		ret = ret == -ENOSPC ? 0 : ret;
	}
out:
	mutex_unlock(&hbm->lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_hbm_retire);

/**
 * hpu_hbm_retired_pages() - 2 MiB pages retired since the driver bound
 * @hdev: the device
 *
 * Return: pages retired, including those a buffer still holds.
 */
u64 hpu_hbm_retired_pages(struct hpu_device *hdev)
{
	struct hpu_hbm *hbm = hdev->hbm;
	u64 pages;

	mutex_lock(&hbm->lock);
	pages = hbm->retired_pages;
	mutex_unlock(&hbm->lock);
	return pages;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_hbm_retired_pages);

/**
 * hpu_hbm_retired_show() - list the retired pages (debugfs)
 * @hdev: the device
 * @m: where to print one line per page: HBM offset and state
 */
void hpu_hbm_retired_show(struct hpu_device *hdev, struct seq_file *m)
{
	struct hpu_hbm *hbm = hdev->hbm;
	unsigned long index;
	void *entry;

	mutex_lock(&hbm->lock);
	xa_for_each(&hbm->retired, index, entry)
		seq_printf(m, "0x%llx %s\n", (u64)index * HPU_HBM_PAGE_SIZE,
			   xa_to_value(entry) == HPU_HBM_RETIRED ?
			   "retired" : "pending");
	mutex_unlock(&hbm->lock);
}

/**
 * hpu_hbm_blocks_contain() - whether allocated blocks hold an HBM offset
 * @hdev: the device
 * @blocks: &drm_buddy_block list of a buffer, constant while it lives
 * @addr: HBM offset
 *
 * Return: true if one of @blocks covers @addr.
 */
bool hpu_hbm_blocks_contain(struct hpu_device *hdev, struct list_head *blocks,
			    u64 addr)
{
	struct drm_buddy_block *block;
	u64 start;

	list_for_each_entry(block, blocks, link) {
		start = hpu_hbm_block_addr(hdev, block);
		if (addr >= start &&
		    addr - start < hpu_hbm_block_size(hdev, block))
			return true;
	}
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_hbm_blocks_contain);

/**
 * hpu_hbm_free() - scrub HBM and give it back
 * @hdev: the device
 * @blocks: blocks from hpu_hbm_alloc(); the list is emptied. No engine
 *	may access them any more (their mappings are gone and invalidated).
 *
 * A block that cannot be scrubbed stays allocated (on
 * &hpu_hbm.leaked_blocks, counted in &hpu_hbm.leaked) until the DRM device
 * is released, rather than reach another context with old data. Once
 * the device is unplugged, blocks go back unscrubbed: nothing can
 * allocate them again, and the next driver instance scrubs all of HBM.
 * May sleep.
 */
void hpu_hbm_free(struct hpu_device *hdev, struct list_head *blocks)
{
	struct hpu_hbm *hbm = hdev->hbm;
	struct drm_buddy_block *block, *tmp;
	LIST_HEAD(leak);
	int idx;

	if (list_empty(blocks))
		return;

	/* A reset would cut a scrub short: keep resets out meanwhile. */
	hpu_reset_read_lock(hdev);
	if (drm_dev_enter(&hdev->drm, &idx)) {
		list_for_each_entry_safe(block, tmp, blocks, link) {
			if (hpu_hbm_scrub(hdev, hpu_hbm_block_addr(hdev, block),
					  hpu_hbm_block_size(hdev, block)))
				list_move(&block->link, &leak);
		}
		drm_dev_exit(idx);
	}
	hpu_reset_read_unlock(hdev);

	mutex_lock(&hbm->lock);
	drm_buddy_free_list(&hbm->mm, blocks, 0);
	/* Before anyone can allocate them: retire the poisoned pages. */
	if (hbm->retired_pending)
		hpu_hbm_retire_pending_locked(hbm);
	list_for_each_entry(block, &leak, link)
		hbm->leaked += hpu_hbm_block_size(hdev, block);
	list_splice_tail(&leak, &hbm->leaked_blocks);
	mutex_unlock(&hbm->lock);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_hbm_free);

/**
 * hpu_hbm_block_addr() - HBM offset of an allocated block
 * @hdev: the device
 * @block: the block
 *
 * Return: the block's HBM physical offset.
 */
u64 hpu_hbm_block_addr(struct hpu_device *hdev, struct drm_buddy_block *block)
{
	return hdev->hbm->base + drm_buddy_block_offset(block);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_hbm_block_addr);

/**
 * hpu_hbm_block_size() - size of an allocated block
 * @hdev: the device
 * @block: the block
 *
 * Return: the block's size in bytes.
 */
u64 hpu_hbm_block_size(struct hpu_device *hdev, struct drm_buddy_block *block)
{
	return drm_buddy_block_size(&hdev->hbm->mm, block);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_hbm_block_size);

/**
 * hpu_hbm_total() - HBM bytes the allocator can hand out
 * @hdev: the device
 *
 * Return: the allocator's size less the retired pages (pending ones too:
 * they are never handed out again either).
 */
u64 hpu_hbm_total(struct hpu_device *hdev)
{
	struct hpu_hbm *hbm = hdev->hbm;
	u64 total;

	mutex_lock(&hbm->lock);
	total = hbm->size - hbm->retired_pages * HPU_HBM_PAGE_SIZE;
	mutex_unlock(&hbm->lock);
	return total;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_hbm_total);

/**
 * hpu_hbm_used() - HBM bytes allocated by all contexts
 * @hdev: the device
 *
 * Return: bytes allocated, including any that could not be scrubbed but
 * not retired pages, even those a buffer still holds (they count in
 * neither hpu_hbm_total() nor this, so that used <= total).
 */
u64 hpu_hbm_used(struct hpu_device *hdev)
{
	struct hpu_hbm *hbm = hdev->hbm;
	u64 used;

	mutex_lock(&hbm->lock);
	used = hbm->size - hbm->mm.avail -
	       hbm->retired_pages * HPU_HBM_PAGE_SIZE;
	mutex_unlock(&hbm->lock);
	return used;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_hbm_used);

/* sysfs */

static ssize_t hbm_total_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", hpu_hbm_total(pci_get_drvdata(to_pci_dev(dev))));
}
static DEVICE_ATTR_RO(hbm_total);

static ssize_t hbm_used_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", hpu_hbm_used(pci_get_drvdata(to_pci_dev(dev))));
}
static DEVICE_ATTR_RO(hbm_used);

static struct attribute *hpu_hbm_attrs[] = {
	&dev_attr_hbm_total.attr,
	&dev_attr_hbm_used.attr,
	NULL
};

/* HBM use, in the PCI device's directory (hpu_sysfs.c). */
const struct attribute_group hpu_hbm_group = {
	.attrs = hpu_hbm_attrs,
};
