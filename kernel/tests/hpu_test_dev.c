// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu KUnit suites: a device without hardware, and the module.
 *
 * hpu_test_dev_create() builds a &struct hpu_device the driver's pure
 * logic runs on: its register BAR and its page-table area (the BAR4 HBM
 * window) are zeroed kernel memory, so writes land there and every
 * status register reads 0 (TLB invalidations and HBM scrubs complete at
 * once). Nothing touches a PCI device; the DRM device is never
 * registered. Every suite of the module runs when it is loaded
 * (Documentation/testing.md).
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>

#include <linux/bitmap.h>
#include <linux/cred.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "../hpu_drv.h"
#include "../hpu_hbm.h"
#include "../hpu_limits.h"
#include "../hpu_mmu.h"
#include "../hpu_queue.h"
#include "../hpu_reset.h"
#include "hpu_test.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

static void hpu_test_dev_release(void *arg)
{
	struct hpu_device *hdev = arg;
	struct hpu_hbm *hbm = hdev->hbm;
	struct hpu_mmu *mmu = hdev->mmu;

	if (hbm)
		hpu_hbm_release(&hdev->drm, hbm);
	ida_destroy(&mmu->asid_ida);
	bitmap_free(mmu->pt_map);
	mutex_destroy(&mmu->pt_lock);
	mutex_destroy(&mmu->inv_lock);
	mutex_destroy(&hdev->limits->users_lock);
	vfree((void __force *)mmu->win);
	vfree((void __force *)hdev->regs);
}

/*
 * SCRUB_COUNT of the fake device: one more at every read, so the two
 * reads around a scrub see exactly one complete. The suites run one case
 * at a time.
 */
static u32 hpu_test_scrubs;

static u32 hpu_test_scrub_count(struct hpu_device *hdev)
{
	return ++hpu_test_scrubs;
}

/**
 * hpu_test_dev_create() - a device for a test, freed when the test ends
 * @test: the test
 * @pt_count: page tables in the page-table area (the window's size)
 * @hbm_size: bytes of HBM, a multiple of 2 MiB above the page-table area,
 *	or 0 for a device without an HBM allocator
 *
 * The limits are the widest: a context may take every page table, no
 * reserve, every ASID per user. Tests narrow them.
 *
 * Return: the device; the test fails (and ends) if memory runs out.
 */
struct hpu_device *hpu_test_dev_create(struct kunit *test,
				       unsigned int pt_count, u64 hbm_size)
{
	struct hpu_device *hdev;
	struct hpu_ctx_limits *lim;
	struct hpu_reset *reset;
	struct hpu_mmu *mmu;
	struct hpu_hbm *hbm;
	void *regs, *win;

	hdev = kunit_kzalloc(test, sizeof(*hdev), GFP_KERNEL);
	mmu = kunit_kzalloc(test, sizeof(*mmu), GFP_KERNEL);
	lim = kunit_kzalloc(test, sizeof(*lim), GFP_KERNEL);
	reset = kunit_kzalloc(test, sizeof(*reset), GFP_KERNEL);
	hbm = kunit_kzalloc(test, sizeof(*hbm), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, hdev);
	KUNIT_ASSERT_NOT_NULL(test, mmu);
	KUNIT_ASSERT_NOT_NULL(test, lim);
	KUNIT_ASSERT_NOT_NULL(test, reset);
	KUNIT_ASSERT_NOT_NULL(test, hbm);

	regs = vzalloc(HPU_BAR_REGS_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, regs);
	win = vzalloc((size_t)pt_count * HPU_PT_SIZE);
	if (!win)
		vfree(regs);
	KUNIT_ASSERT_NOT_NULL(test, win);
	mmu->pt_map = bitmap_zalloc(pt_count, GFP_KERNEL);
	if (!mmu->pt_map) {
		vfree(win);
		vfree(regs);
	}
	KUNIT_ASSERT_NOT_NULL(test, mmu->pt_map);

	/* Plain memory standing in for the BARs, as the driver's MMIO. */
	hdev->regs = (void __iomem __force *)regs;
	mmu->win = (void __iomem __force *)win;
	mmu->win_size = (u64)pt_count * HPU_PT_SIZE;
	mmu->pt_size = mmu->win_size;
	mmu->pt_count = pt_count;
	mutex_init(&mmu->pt_lock);
	mutex_init(&mmu->inv_lock);
	ida_init(&mmu->asid_ida);
	hdev->mmu = mmu;

	mutex_init(&lim->users_lock);
	lim->ctx_page_tables = pt_count;
	lim->pt_reserve = 0;
	lim->ctx_mappings = 65536;
	lim->ctx_queues = HPU_MAX_QUEUES;
	lim->ctx_jobs = 1024;
	lim->user_contexts = HPU_ASID_LAST - HPU_ASID_FIRST + 1;
	lim->unprivileged_contexts = HPU_ASID_LAST - HPU_ASID_FIRST + 1;
	lim->user_timeout_ms = 60000;
	hdev->limits = lim;

	init_rwsem(&reset->sem);
	reset->hdev = hdev;
	hdev->reset = reset;

	hdev->id.hbm_size = hbm_size;
	if (hbm_size) {
		hbm->base = mmu->pt_size;
		hbm->size = hbm_size - hbm->base;
		mutex_init(&hbm->lock);
		mutex_init(&hbm->scrub_lock);
		INIT_LIST_HEAD(&hbm->leaked_blocks);
		INIT_LIST_HEAD(&hbm->retired_blocks);
		xa_init(&hbm->retired);
		if (drm_buddy_init(&hbm->mm, hbm->size, HPU_HBM_PAGE_SIZE)) {
			xa_destroy(&hbm->retired);
			hbm = NULL;
		}
		hdev->hbm = hbm;
	}

	/* Every scrub completes at once, and SCRUB_COUNT moves by one. */
	kunit_activate_static_stub(test, hpu_hbm_scrub_count,
				   hpu_test_scrub_count);

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							hpu_test_dev_release,
							hdev), 0);
	KUNIT_ASSERT_TRUE(test, !hbm_size || hdev->hbm);
	return hdev;
}

/**
 * hpu_test_reg() - what the driver last wrote to a register
 * @hdev: a device of hpu_test_dev_create()
 * @reg: the register's BAR0 offset
 *
 * Return: the value.
 */
u32 hpu_test_reg(struct hpu_device *hdev, u32 reg)
{
	return readl(hdev->regs + reg);
}

/**
 * hpu_test_pte_read() - read one page-table entry back
 * @hdev: a device of hpu_test_dev_create()
 * @table: HBM offset of the table
 * @idx: entry index, below HPU_PT_ENTRIES
 *
 * Return: the entry as the device would see it.
 */
u64 hpu_test_pte_read(struct hpu_device *hdev, u64 table, unsigned int idx)
{
	return readq(hdev->mmu->win + table + 8 * idx);
}

/**
 * hpu_test_as_user() - act as an unprivileged user
 * @test: the test
 * @uid: the effective user id to take
 *
 * The test's task takes @uid as its effective user id and drops every
 * capability (CAP_SYS_ADMIN included) until hpu_test_as_self().
 *
 * Return: the task's own credentials, for hpu_test_as_self().
 */
const struct cred *hpu_test_as_user(struct kunit *test, kuid_t uid)
{
	const struct cred *old;
	struct cred *new;

	new = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, new);
	new->euid = uid;
	new->fsuid = uid;
	cap_clear(new->cap_effective);
	cap_clear(new->cap_permitted);
	old = override_creds(new);
	/* override_creds() took its own reference. */
	put_cred(new);
	return old;
}

/**
 * hpu_test_as_self() - undo hpu_test_as_user()
 * @old: what hpu_test_as_user() returned
 */
void hpu_test_as_self(const struct cred *old)
{
	revert_creds(old);
}

MODULE_DESCRIPTION("KUnit suites of the HPU accel driver");
MODULE_LICENSE("GPL");
