// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the page-table area and ASIDs of the device MMU (hpu_mmu.c).
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <kunit/test.h>

#include <linux/bitmap.h>
#include <linux/io.h>

#include "../hpu_drv.h"
#include "../hpu_limits.h"
#include "../hpu_mmu.h"
#include "hpu_test.h"

/* A table comes zeroed, at the first free slot, counted for its ASID. */
static void hpu_mmu_test_pt_alloc_zeroes_and_counts(struct kunit *test)
{
	struct hpu_device *hdev = hpu_test_dev_create(test, 8, 0);
	struct hpu_mmu *mmu = hdev->mmu;
	u64 a, b;
	unsigned int i;

	/* What a previous owner left in the area. */
	memset_io(mmu->win, 0xa5, mmu->win_size);

	KUNIT_ASSERT_EQ(test, hpu_mmu_pt_alloc(hdev, 5, &a), 0);
	KUNIT_ASSERT_EQ(test, hpu_mmu_pt_alloc(hdev, 7, &b), 0);
	KUNIT_EXPECT_EQ(test, a, 0);
	KUNIT_EXPECT_EQ(test, b, HPU_PT_SIZE);
	for (i = 0; i < HPU_PT_ENTRIES; i++) {
		KUNIT_EXPECT_EQ(test, hpu_test_pte_read(hdev, a, i), 0);
		KUNIT_EXPECT_EQ(test, hpu_test_pte_read(hdev, b, i), 0);
	}
	/* Only the two tables are touched. */
	KUNIT_EXPECT_EQ(test, hpu_test_pte_read(hdev, 2 * HPU_PT_SIZE, 0),
			0xa5a5a5a5a5a5a5a5ULL);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(hdev), 2);
	KUNIT_EXPECT_EQ(test, mmu->pt_asid[5], 1);
	KUNIT_EXPECT_EQ(test, mmu->pt_asid[7], 1);

	hpu_mmu_pt_free(hdev, 5, a);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(hdev), 1);
	KUNIT_EXPECT_EQ(test, mmu->pt_asid[5], 0);
	/* The freed slot is the next one handed out. */
	KUNIT_ASSERT_EQ(test, hpu_mmu_pt_alloc(hdev, 7, &a), 0);
	KUNIT_EXPECT_EQ(test, a, 0);
	KUNIT_EXPECT_EQ(test, mmu->pt_asid[7], 2);

	hpu_mmu_pt_free(hdev, 7, a);
	hpu_mmu_pt_free(hdev, 7, b);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(hdev), 0);
	KUNIT_EXPECT_EQ(test, mmu->pt_asid[7], 0);
	KUNIT_EXPECT_TRUE(test, bitmap_empty(mmu->pt_map, mmu->pt_count));
}

/* ctx_page_tables: the context's next table is refused with -ENOSPC. */
static void hpu_mmu_test_pt_alloc_ctx_limit(struct kunit *test)
{
	struct hpu_device *hdev = hpu_test_dev_create(test, 16, 0);
	u64 off[4], extra;
	unsigned int i;

	hdev->limits->ctx_page_tables = 3;
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, hpu_mmu_pt_alloc(hdev, 1, &off[i]), 0);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_alloc(hdev, 1, &off[3]), -ENOSPC);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(hdev), 3);
	/* Another context has its own count. */
	KUNIT_ASSERT_EQ(test, hpu_mmu_pt_alloc(hdev, 2, &extra), 0);
	/* One back, one more. */
	hpu_mmu_pt_free(hdev, 1, off[2]);
	KUNIT_ASSERT_EQ(test, hpu_mmu_pt_alloc(hdev, 1, &off[2]), 0);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_alloc(hdev, 1, &off[3]), -ENOSPC);

	for (i = 0; i < 3; i++)
		hpu_mmu_pt_free(hdev, 1, off[i]);
	hpu_mmu_pt_free(hdev, 2, extra);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(hdev), 0);
}

/* A full area refuses with -ENOMEM, and takes again once a table is back. */
static void hpu_mmu_test_pt_alloc_area_full(struct kunit *test)
{
	struct hpu_device *hdev = hpu_test_dev_create(test, 8, 0);
	u64 off[8], more;
	unsigned int i;

	for (i = 0; i < 8; i++) {
		KUNIT_ASSERT_EQ(test, hpu_mmu_pt_alloc(hdev, 1 + i % 2, &off[i]), 0);
		KUNIT_EXPECT_EQ(test, off[i], (u64)i * HPU_PT_SIZE);
	}
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_alloc(hdev, 3, &more), -ENOMEM);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(hdev), 8);
	hpu_mmu_pt_free(hdev, 2, off[5]);
	KUNIT_ASSERT_EQ(test, hpu_mmu_pt_alloc(hdev, 3, &more), 0);
	KUNIT_EXPECT_EQ(test, more, 5 * HPU_PT_SIZE);
	off[5] = more;

	for (i = 0; i < 8; i++)
		hpu_mmu_pt_free(hdev, i == 5 ? 3 : 1 + i % 2, off[i]);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(hdev), 0);
	KUNIT_EXPECT_EQ(test, hdev->mmu->pt_asid[1], 0);
	KUNIT_EXPECT_EQ(test, hdev->mmu->pt_asid[2], 0);
	KUNIT_EXPECT_EQ(test, hdev->mmu->pt_asid[3], 0);
}

/*
 * pt_reserve: beyond its own reserve a context may take only what leaves
 * every other ASID its reserve. 126 tables, a reserve of 1 for each of
 * the 63 ASIDs: ASID 1 gets its reserved table plus 63 (the 62 others
 * keep one each), ASID 2 then still gets its reserved one, not two.
 */
static void hpu_mmu_test_pt_reserve(struct kunit *test)
{
	const unsigned int asids = HPU_ASID_LAST - HPU_ASID_FIRST + 1;
	struct hpu_device *hdev = hpu_test_dev_create(test, 2 * asids, 0);
	unsigned int n = 0, i;
	u64 off[128], two[2];

	hdev->limits->pt_reserve = 1;
	while (n < ARRAY_SIZE(off) && !hpu_mmu_pt_alloc(hdev, 1, &off[n]))
		n++;
	KUNIT_EXPECT_EQ(test, n, 2 * asids - (asids - 1));
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_alloc(hdev, 1, &two[0]), -ENOMEM);

	KUNIT_ASSERT_EQ(test, hpu_mmu_pt_alloc(hdev, 2, &two[0]), 0);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_alloc(hdev, 2, &two[1]), -ENOMEM);
	/* The last ASID keeps its reserve too. */
	KUNIT_ASSERT_EQ(test, hpu_mmu_pt_alloc(hdev, HPU_ASID_LAST, &two[1]), 0);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(hdev), n + 2);

	hpu_mmu_pt_free(hdev, HPU_ASID_LAST, two[1]);
	hpu_mmu_pt_free(hdev, 2, two[0]);
	for (i = 0; i < n; i++)
		hpu_mmu_pt_free(hdev, 1, off[i]);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(hdev), 0);
}

/*
 * ASIDs 1..63 are handed out, then -EBUSY; one given back is handed out
 * again with its page-table count zeroed.
 */
static void hpu_mmu_test_asid_alloc(struct kunit *test)
{
	struct hpu_device *hdev = hpu_test_dev_create(test, 8, 0);
	int asid, i;

	for (i = HPU_ASID_FIRST; i <= HPU_ASID_LAST; i++)
		KUNIT_ASSERT_EQ(test, hpu_mmu_asid_alloc(hdev), i);
	KUNIT_EXPECT_EQ(test, hpu_mmu_asid_alloc(hdev), -EBUSY);

	/* A table its last owner could not give back (kept out of use). */
	hdev->mmu->pt_asid[17] = 5;
	hpu_mmu_asid_free(hdev, 17);
	asid = hpu_mmu_asid_alloc(hdev);
	KUNIT_EXPECT_EQ(test, asid, 17);
	KUNIT_EXPECT_EQ(test, hdev->mmu->pt_asid[17], 0);
	KUNIT_EXPECT_EQ(test, hpu_mmu_asid_alloc(hdev), -EBUSY);

	for (i = HPU_ASID_FIRST; i <= HPU_ASID_LAST; i++)
		hpu_mmu_asid_free(hdev, i);
	KUNIT_EXPECT_TRUE(test, ida_is_empty(&hdev->mmu->asid_ida));
}

/* The root register: the table's address and the valid bit. */
static void hpu_mmu_test_set_root(struct kunit *test)
{
	struct hpu_device *hdev = hpu_test_dev_create(test, 8, 0);

	hpu_mmu_set_root(hdev, 9, 0x123456789000ULL, true);
	KUNIT_EXPECT_EQ(test, hpu_test_reg(hdev, HPU_REG_MMU_ROOT_HI(9)), 0x1234);
	KUNIT_EXPECT_EQ(test, hpu_test_reg(hdev, HPU_REG_MMU_ROOT_LO(9)),
			0x56789000 | HPU_MMU_ROOT_VALID);
	hpu_mmu_set_root(hdev, 9, 0x5000, false);
	KUNIT_EXPECT_EQ(test, hpu_test_reg(hdev, HPU_REG_MMU_ROOT_HI(9)), 0);
	KUNIT_EXPECT_EQ(test, hpu_test_reg(hdev, HPU_REG_MMU_ROOT_LO(9)), 0x5000);
	/* Other ASIDs untouched. */
	KUNIT_EXPECT_EQ(test, hpu_test_reg(hdev, HPU_REG_MMU_ROOT_LO(8)), 0);
	KUNIT_EXPECT_EQ(test, hpu_test_reg(hdev, HPU_REG_MMU_ROOT_LO(10)), 0);
}

static struct kunit_case hpu_mmu_test_cases[] = {
	KUNIT_CASE(hpu_mmu_test_pt_alloc_zeroes_and_counts),
	KUNIT_CASE(hpu_mmu_test_pt_alloc_ctx_limit),
	KUNIT_CASE(hpu_mmu_test_pt_alloc_area_full),
	KUNIT_CASE(hpu_mmu_test_pt_reserve),
	KUNIT_CASE(hpu_mmu_test_asid_alloc),
	KUNIT_CASE(hpu_mmu_test_set_root),
	{}
};

static struct kunit_suite hpu_mmu_test_suite = {
	.name = "hpu_mmu",
	.test_cases = hpu_mmu_test_cases,
};

kunit_test_suite(hpu_mmu_test_suite);
