// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: HBM allocation accounting and page retirement (hpu_hbm.c), and
 * the per-user context limit (hpu_limits.c).
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <kunit/test.h>

#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/sizes.h>

#include <drm/drm_buddy.h>

#include "../hpu_drv.h"
#include "../hpu_hbm.h"
#include "../hpu_limits.h"
#include "../hpu_mmu.h"
#include "hpu_test.h"

/* 2 MiB of page tables, 32 MiB for buffers. */
#define T_PT_COUNT	512
#define T_HBM		(34ULL * SZ_1M)
#define T_AVAIL		(32ULL * SZ_1M)

static u64 hpu_hbm_test_blocks_bytes(struct hpu_device *hdev,
				     struct list_head *blocks, u64 align)
{
	struct drm_buddy_block *block;
	u64 bytes = 0;

	list_for_each_entry(block, blocks, link) {
		u64 addr = hpu_hbm_block_addr(hdev, block);
		u64 size = hpu_hbm_block_size(hdev, block);

		/* Inside the allocator, aligned to the page size asked for. */
		if (addr < hdev->hbm->base || addr + size > hdev->id.hbm_size ||
		    !IS_ALIGNED(addr - hdev->hbm->base, align) ||
		    !IS_ALIGNED(size, align))
			return 0;
		bytes += size;
	}
	return bytes;
}

/* Bytes from the first block's start to the last one's end. */
static u64 hpu_hbm_test_span(struct hpu_device *hdev, struct list_head *blocks)
{
	struct drm_buddy_block *block;
	u64 lo = U64_MAX, hi = 0;

	list_for_each_entry(block, blocks, link) {
		u64 addr = hpu_hbm_block_addr(hdev, block);

		lo = min(lo, addr);
		hi = max(hi, addr + hpu_hbm_block_size(hdev, block));
	}
	return hi > lo ? hi - lo : 0;
}

/* What is allocated is counted; what is freed goes back, scrubbed. */
static void hpu_hbm_test_alloc_free(struct kunit *test)
{
	struct hpu_device *hdev = hpu_test_dev_create(test, T_PT_COUNT, T_HBM);
	LIST_HEAD(a);
	LIST_HEAD(b);
	struct drm_buddy_block *block;
	u64 addr, size;

	KUNIT_EXPECT_EQ(test, hdev->hbm->base, (u64)SZ_2M);
	KUNIT_EXPECT_EQ(test, hpu_hbm_total(hdev), T_AVAIL);
	KUNIT_EXPECT_EQ(test, hpu_hbm_used(hdev), 0);

	KUNIT_ASSERT_EQ(test, hpu_hbm_alloc(hdev, 6 * SZ_1M, SZ_2M, false, &a), 0);
	KUNIT_EXPECT_EQ(test, hpu_hbm_test_blocks_bytes(hdev, &a, SZ_2M),
			6ULL * SZ_1M);
	KUNIT_EXPECT_EQ(test, hpu_hbm_used(hdev), 6ULL * SZ_1M);
	KUNIT_ASSERT_EQ(test, hpu_hbm_alloc(hdev, 16 * SZ_1M, 8 * SZ_1M, false, &b), 0);
	KUNIT_EXPECT_EQ(test, hpu_hbm_test_blocks_bytes(hdev, &b, 8 * SZ_1M),
			16ULL * SZ_1M);
	KUNIT_EXPECT_EQ(test, hpu_hbm_used(hdev), 22ULL * SZ_1M);
	KUNIT_EXPECT_EQ(test, hpu_hbm_total(hdev), T_AVAIL);

	/* hpu_hbm_free() scrubs each block: the last one's range. */
	block = list_last_entry(&b, struct drm_buddy_block, link);
	addr = hpu_hbm_block_addr(hdev, block);
	size = hpu_hbm_block_size(hdev, block);
	hpu_hbm_free(hdev, &b);
	KUNIT_EXPECT_TRUE(test, list_empty(&b));
	KUNIT_EXPECT_EQ(test, hpu_hbm_used(hdev), 6ULL * SZ_1M);
	KUNIT_EXPECT_EQ(test, hpu_test_reg(hdev, HPU_REG_SCRUB_SIZE_LO),
			lower_32_bits(size));
	KUNIT_EXPECT_EQ(test, hpu_test_reg(hdev, HPU_REG_SCRUB_SIZE_HI), 0);
	KUNIT_EXPECT_EQ(test, hpu_test_reg(hdev, HPU_REG_SCRUB_ADDR_LO),
			lower_32_bits(addr));
	KUNIT_EXPECT_EQ(test, hpu_test_reg(hdev, HPU_REG_SCRUB_ADDR_HI),
			upper_32_bits(addr));
	KUNIT_EXPECT_EQ(test, hpu_test_reg(hdev, HPU_REG_SCRUB_CTRL), HPU_SCRUB_START);
	hpu_hbm_free(hdev, &a);
	KUNIT_EXPECT_EQ(test, hpu_hbm_used(hdev), 0);
	KUNIT_EXPECT_EQ(test, hdev->hbm->leaked, 0);
}

/* Exactly what is free can be had, one page more cannot, nothing leaks. */
static void hpu_hbm_test_alloc_limits(struct kunit *test)
{
	struct hpu_device *hdev = hpu_test_dev_create(test, T_PT_COUNT, T_HBM);
	LIST_HEAD(all);
	LIST_HEAD(more);

	KUNIT_EXPECT_EQ(test, hpu_hbm_alloc(hdev, T_AVAIL + SZ_2M, SZ_2M, false,
					    &more), -ENOMEM);
	KUNIT_EXPECT_EQ(test, hpu_hbm_alloc(hdev, U64_MAX & ~(u64)(SZ_2M - 1),
					    SZ_2M, false, &more), -ENOMEM);
	KUNIT_EXPECT_TRUE(test, list_empty(&more));
	KUNIT_EXPECT_EQ(test, hpu_hbm_used(hdev), 0);

	KUNIT_ASSERT_EQ(test, hpu_hbm_alloc(hdev, T_AVAIL, SZ_2M, false, &all), 0);
	KUNIT_EXPECT_EQ(test, hpu_hbm_used(hdev), T_AVAIL);
	KUNIT_EXPECT_EQ(test, hpu_hbm_alloc(hdev, SZ_2M, SZ_2M, false, &more),
			-ENOMEM);
	KUNIT_EXPECT_TRUE(test, list_empty(&more));
	hpu_hbm_free(hdev, &all);
	KUNIT_EXPECT_EQ(test, hpu_hbm_used(hdev), 0);

	/* Contiguous: the blocks make one range, of exactly the size. */
	KUNIT_ASSERT_EQ(test, hpu_hbm_alloc(hdev, 12 * SZ_1M, SZ_2M, true, &all), 0);
	KUNIT_EXPECT_EQ(test, hpu_hbm_test_blocks_bytes(hdev, &all, SZ_2M),
			12ULL * SZ_1M);
	KUNIT_EXPECT_EQ(test, hpu_hbm_test_span(hdev, &all), 12ULL * SZ_1M);
	KUNIT_EXPECT_EQ(test, hpu_hbm_used(hdev), 12ULL * SZ_1M);
	hpu_hbm_free(hdev, &all);
	KUNIT_EXPECT_EQ(test, hpu_hbm_used(hdev), 0);
}

/*
 * A free page retires at once: out of the total, never handed out again;
 * a retired page again is -EALREADY; pages outside the allocator -ERANGE.
 */
static void hpu_hbm_test_retire_free_page(struct kunit *test)
{
	struct hpu_device *hdev = hpu_test_dev_create(test, T_PT_COUNT, T_HBM);
	u64 page = hdev->hbm->base + 5 * SZ_2M;
	bool in_use = true;
	LIST_HEAD(all);
	LIST_HEAD(more);

	KUNIT_EXPECT_EQ(test, hpu_hbm_retire(hdev, page + 0x1234, &in_use), 0);
	KUNIT_EXPECT_FALSE(test, in_use);
	KUNIT_EXPECT_EQ(test, hpu_hbm_retired_pages(hdev), 1);
	KUNIT_EXPECT_EQ(test, hpu_hbm_total(hdev), T_AVAIL - SZ_2M);
	KUNIT_EXPECT_EQ(test, hpu_hbm_used(hdev), 0);
	KUNIT_EXPECT_EQ(test, hpu_hbm_retire(hdev, page, &in_use), -EALREADY);
	KUNIT_EXPECT_FALSE(test, in_use);

	KUNIT_EXPECT_EQ(test, hpu_hbm_retire(hdev, 0, &in_use), -ERANGE);
	KUNIT_EXPECT_EQ(test, hpu_hbm_retire(hdev, hdev->hbm->base - 1, &in_use),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, hpu_hbm_retire(hdev, T_HBM, &in_use), -ERANGE);
	KUNIT_EXPECT_EQ(test, hpu_hbm_retire(hdev, U64_MAX, &in_use), -ERANGE);
	KUNIT_EXPECT_EQ(test, hpu_hbm_retired_pages(hdev), 1);

	/* All the rest, and not one page more; the retired one is not in it. */
	KUNIT_ASSERT_EQ(test, hpu_hbm_alloc(hdev, T_AVAIL - SZ_2M, SZ_2M, false,
					    &all), 0);
	KUNIT_EXPECT_FALSE(test, hpu_hbm_blocks_contain(hdev, &all, page));
	KUNIT_EXPECT_TRUE(test, hpu_hbm_blocks_contain(hdev, &all, page - 1));
	KUNIT_EXPECT_TRUE(test, hpu_hbm_blocks_contain(hdev, &all, page + SZ_2M));
	KUNIT_EXPECT_EQ(test, hpu_hbm_alloc(hdev, SZ_2M, SZ_2M, false, &more),
			-ENOMEM);
	KUNIT_EXPECT_EQ(test, hpu_hbm_used(hdev), T_AVAIL - SZ_2M);
	hpu_hbm_free(hdev, &all);
	KUNIT_EXPECT_EQ(test, hpu_hbm_used(hdev), 0);
}

/*
 * A page a buffer holds is retired when the buffer is freed: until then
 * it is pending (in_use), counted as retired and in neither total nor
 * used; afterwards it is out of the allocator.
 */
static void hpu_hbm_test_retire_page_in_use(struct kunit *test)
{
	struct hpu_device *hdev = hpu_test_dev_create(test, T_PT_COUNT, T_HBM);
	struct drm_buddy_block *block;
	bool in_use = false;
	LIST_HEAD(buf);
	LIST_HEAD(all);
	u64 page;

	KUNIT_ASSERT_EQ(test, hpu_hbm_alloc(hdev, 4 * SZ_1M, SZ_2M, true, &buf), 0);
	block = list_first_entry(&buf, struct drm_buddy_block, link);
	page = hpu_hbm_block_addr(hdev, block) + SZ_2M;

	KUNIT_EXPECT_EQ(test, hpu_hbm_retire(hdev, page, &in_use), 0);
	KUNIT_EXPECT_TRUE(test, in_use);
	KUNIT_EXPECT_EQ(test, hdev->hbm->retired_pending, 1);
	KUNIT_EXPECT_EQ(test, hpu_hbm_retired_pages(hdev), 1);
	KUNIT_EXPECT_EQ(test, hpu_hbm_total(hdev), T_AVAIL - SZ_2M);
	KUNIT_EXPECT_EQ(test, hpu_hbm_used(hdev), 2ULL * SZ_1M);
	in_use = false;
	KUNIT_EXPECT_EQ(test, hpu_hbm_retire(hdev, page, &in_use), -EALREADY);
	KUNIT_EXPECT_TRUE(test, in_use);

	hpu_hbm_free(hdev, &buf);
	KUNIT_EXPECT_EQ(test, hdev->hbm->retired_pending, 0);
	KUNIT_EXPECT_EQ(test, hpu_hbm_retired_pages(hdev), 1);
	KUNIT_EXPECT_EQ(test, hpu_hbm_used(hdev), 0);
	KUNIT_EXPECT_EQ(test, hpu_hbm_retire(hdev, page, &in_use), -EALREADY);
	KUNIT_EXPECT_FALSE(test, in_use);

	KUNIT_ASSERT_EQ(test, hpu_hbm_alloc(hdev, T_AVAIL - SZ_2M, SZ_2M, false,
					    &all), 0);
	KUNIT_EXPECT_FALSE(test, hpu_hbm_blocks_contain(hdev, &all, page));
	hpu_hbm_free(hdev, &all);
	KUNIT_EXPECT_EQ(test, hpu_hbm_used(hdev), 0);
}

/*
 * user_contexts: an ordinary user gets that many contexts and then
 * -EBUSY, taking no ASID; another user and root are not held back;
 * giving one back lets the next in.
 */
static void hpu_limits_test_user_contexts(struct kunit *test)
{
	struct hpu_device *hdev = hpu_test_dev_create(test, 8, 0);
	int a[3], other, root, again;
	const struct cred *self;

	hdev->limits->user_contexts = 2;
	self = hpu_test_as_user(test, KUIDT_INIT(1000));
	a[0] = hpu_limits_asid_get(hdev);
	a[1] = hpu_limits_asid_get(hdev);
	a[2] = hpu_limits_asid_get(hdev);
	hpu_test_as_self(self);
	self = hpu_test_as_user(test, KUIDT_INIT(1001));
	other = hpu_limits_asid_get(hdev);
	hpu_test_as_self(self);
	root = hpu_limits_asid_get(hdev);

	KUNIT_EXPECT_EQ(test, a[0], 1);
	KUNIT_EXPECT_EQ(test, a[1], 2);
	KUNIT_EXPECT_EQ(test, a[2], -EBUSY);
	KUNIT_EXPECT_EQ(test, other, 3);
	KUNIT_EXPECT_EQ(test, root, 4);
	KUNIT_EXPECT_EQ(test, bitmap_weight(hdev->limits->counted, HPU_MMU_NUM_ASIDS), 3);

	if (a[0] > 0)
		hpu_limits_asid_put(hdev, a[0]);
	self = hpu_test_as_user(test, KUIDT_INIT(1000));
	again = hpu_limits_asid_get(hdev);
	a[2] = hpu_limits_asid_get(hdev);
	hpu_test_as_self(self);
	KUNIT_EXPECT_EQ(test, again, 1);
	KUNIT_EXPECT_EQ(test, a[2], -EBUSY);

	if (again > 0)
		hpu_limits_asid_put(hdev, again);
	if (a[1] > 0)
		hpu_limits_asid_put(hdev, a[1]);
	if (other > 0)
		hpu_limits_asid_put(hdev, other);
	if (root > 0)
		hpu_limits_asid_put(hdev, root);
	KUNIT_EXPECT_TRUE(test, bitmap_empty(hdev->limits->counted, HPU_MMU_NUM_ASIDS));
	KUNIT_EXPECT_TRUE(test, ida_is_empty(&hdev->mmu->asid_ida));
}

/* Root's contexts are not counted: all 63 ASIDs, then -EBUSY. */
static void hpu_limits_test_root_uncounted(struct kunit *test)
{
	struct hpu_device *hdev = hpu_test_dev_create(test, 8, 0);
	int i;

	hdev->limits->user_contexts = 1;
	for (i = HPU_ASID_FIRST; i <= HPU_ASID_LAST; i++)
		KUNIT_ASSERT_EQ(test, hpu_limits_asid_get(hdev), i);
	KUNIT_EXPECT_EQ(test, hpu_limits_asid_get(hdev), -EBUSY);
	KUNIT_EXPECT_TRUE(test, bitmap_empty(hdev->limits->counted, HPU_MMU_NUM_ASIDS));
	for (i = HPU_ASID_FIRST; i <= HPU_ASID_LAST; i++)
		hpu_limits_asid_put(hdev, i);
	KUNIT_EXPECT_TRUE(test, ida_is_empty(&hdev->mmu->asid_ida));
}

static struct kunit_case hpu_hbm_test_cases[] = {
	KUNIT_CASE(hpu_hbm_test_alloc_free),
	KUNIT_CASE(hpu_hbm_test_alloc_limits),
	KUNIT_CASE(hpu_hbm_test_retire_free_page),
	KUNIT_CASE(hpu_hbm_test_retire_page_in_use),
	{}
};

static struct kunit_suite hpu_hbm_test_suite = {
	.name = "hpu_hbm",
	.test_cases = hpu_hbm_test_cases,
};

static struct kunit_case hpu_limits_test_cases[] = {
	KUNIT_CASE(hpu_limits_test_user_contexts),
	KUNIT_CASE(hpu_limits_test_root_uncounted),
	{}
};

static struct kunit_suite hpu_limits_test_suite = {
	.name = "hpu_limits",
	.test_cases = hpu_limits_test_cases,
};

kunit_test_suites(&hpu_hbm_test_suite, &hpu_limits_test_suite);
