// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the arithmetic of an HBM buffer's CPU mapping (hpu_gem.c): which
 * HBM offset a buffer offset is in a buffer of several blocks, and which
 * buffer offsets a fault maps.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <kunit/test.h>

#include <linux/list.h>
#include <linux/sizes.h>

#include <drm/drm_buddy.h>

#include "../hpu_drv.h"
#include "../hpu_gem.h"
#include "../hpu_hbm.h"
#include "hpu_test.h"

/* 2 MiB of page tables, 32 MiB for buffers. */
#define T_PT_COUNT	512
#define T_HBM		(34ULL * SZ_1M)

/*
 * Every 2 MiB of a buffer of several blocks (a 2 MiB hole first, so that
 * the buffer is not one run of HBM): the HBM offset is its block's plus
 * the offset inside the block, and the run ends at the block's end.
 */
static void hpu_gem_test_hbm_addr_blocks(struct kunit *test)
{
	struct hpu_device *hdev = hpu_test_dev_create(test, T_PT_COUNT, T_HBM);
	struct drm_buddy_block *block;
	struct hpu_bo *bo;
	LIST_HEAD(hole);
	LIST_HEAD(keep);
	u64 off = 0, len, size, addr;
	unsigned int blocks = 0;

	bo = kunit_kzalloc(test, sizeof(*bo), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bo);
	INIT_LIST_HEAD(&bo->blocks);
	/* Fragment the heap: a 2 MiB buffer kept, the 2 MiB after it freed. */
	KUNIT_ASSERT_EQ(test, hpu_hbm_alloc(hdev, SZ_2M, SZ_2M, false, &keep), 0);
	KUNIT_ASSERT_EQ(test, hpu_hbm_alloc(hdev, SZ_2M, SZ_2M, false, &hole), 0);
	hpu_hbm_free(hdev, &hole);
	KUNIT_ASSERT_EQ(test, hpu_hbm_alloc(hdev, 14 * SZ_1M, SZ_2M, false,
					    &bo->blocks), 0);

	list_for_each_entry(block, &bo->blocks, link) {
		size = hpu_hbm_block_size(hdev, block);
		for (u64 in = 0; in < size; in += SZ_2M) {
			addr = hpu_bo_hbm_addr(hdev, bo, off + in + 4096, &len);
			KUNIT_EXPECT_EQ(test, addr,
					hpu_hbm_block_addr(hdev, block) + in + 4096);
			KUNIT_EXPECT_EQ(test, len, size - in - 4096);
			/* The last byte of the 2 MiB too. */
			addr = hpu_bo_hbm_addr(hdev, bo, off + in + SZ_2M - 1, &len);
			KUNIT_EXPECT_EQ(test, addr, hpu_hbm_block_addr(hdev, block) +
					in + SZ_2M - 1);
			KUNIT_EXPECT_EQ(test, len, size - in - SZ_2M + 1);
		}
		off += size;
		blocks++;
	}
	KUNIT_EXPECT_EQ(test, off, 14ULL * SZ_1M);
	/* 14 MiB is at least 8 + 4 + 2: the walk went past its first entry. */
	KUNIT_EXPECT_GE(test, blocks, 3U);
	/* Past the end: no HBM, nothing contiguous. */
	len = 1;
	KUNIT_EXPECT_EQ(test, hpu_bo_hbm_addr(hdev, bo, 14ULL * SZ_1M, &len), 0);
	KUNIT_EXPECT_EQ(test, len, 0);

	hpu_hbm_free(hdev, &bo->blocks);
	hpu_hbm_free(hdev, &keep);
}

/* A buffer of 4 MiB pages: blocks of 4 MiB at least, each walked whole. */
static void hpu_gem_test_hbm_addr_page_size(struct kunit *test)
{
	struct hpu_device *hdev = hpu_test_dev_create(test, T_PT_COUNT, T_HBM);
	struct drm_buddy_block *block;
	struct hpu_bo *bo;
	u64 off = 0, len, size;

	bo = kunit_kzalloc(test, sizeof(*bo), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bo);
	INIT_LIST_HEAD(&bo->blocks);
	KUNIT_ASSERT_EQ(test, hpu_hbm_alloc(hdev, 12 * SZ_1M, 4 * SZ_1M, false,
					    &bo->blocks), 0);
	list_for_each_entry(block, &bo->blocks, link) {
		size = hpu_hbm_block_size(hdev, block);
		KUNIT_EXPECT_TRUE(test, IS_ALIGNED(size, 4 * SZ_1M));
		KUNIT_EXPECT_EQ(test, hpu_bo_hbm_addr(hdev, bo, off + size - 8, &len),
				hpu_hbm_block_addr(hdev, block) + size - 8);
		KUNIT_EXPECT_EQ(test, len, 8);
		off += size;
	}
	KUNIT_EXPECT_EQ(test, off, 12ULL * SZ_1M);
	hpu_hbm_free(hdev, &bo->blocks);
}

/* The 2 MiB around the fault, cut to what the mapping covers. */
static void hpu_gem_test_fault_span(struct kunit *test)
{
	u64 lo, hi;

	/* A whole mapping of a 4 MiB buffer: the faulting 2 MiB. */
	hpu_bo_hbm_fault_span(3 * SZ_1M + 4096, 0, 4 * SZ_1M, &lo, &hi);
	KUNIT_EXPECT_EQ(test, lo, (u64)SZ_2M);
	KUNIT_EXPECT_EQ(test, hi, 4ULL * SZ_1M);
	/* 8 KiB of a 2 MiB buffer: those two pages only. */
	hpu_bo_hbm_fault_span(4096, 0, 8192, &lo, &hi);
	KUNIT_EXPECT_EQ(test, lo, 0);
	KUNIT_EXPECT_EQ(test, hi, 8192);
	/* The front unmapped (vm_pgoff past the buffer's start). */
	hpu_bo_hbm_fault_span(SZ_2M + 8192, SZ_2M + 4096, 4 * SZ_1M, &lo, &hi);
	KUNIT_EXPECT_EQ(test, lo, (u64)SZ_2M + 4096);
	KUNIT_EXPECT_EQ(test, hi, 4ULL * SZ_1M);
	/* A mapping across a 2 MiB boundary: the faulting side only. */
	hpu_bo_hbm_fault_span(SZ_2M - 4096, SZ_1M, 3 * SZ_1M, &lo, &hi);
	KUNIT_EXPECT_EQ(test, lo, (u64)SZ_1M);
	KUNIT_EXPECT_EQ(test, hi, (u64)SZ_2M);
	hpu_bo_hbm_fault_span(SZ_2M, SZ_1M, 3 * SZ_1M, &lo, &hi);
	KUNIT_EXPECT_EQ(test, lo, (u64)SZ_2M);
	KUNIT_EXPECT_EQ(test, hi, 3ULL * SZ_1M);
}

static struct kunit_case hpu_gem_test_cases[] = {
	KUNIT_CASE(hpu_gem_test_hbm_addr_blocks),
	KUNIT_CASE(hpu_gem_test_hbm_addr_page_size),
	KUNIT_CASE(hpu_gem_test_fault_span),
	{}
};

static struct kunit_suite hpu_gem_test_suite = {
	.name = "hpu_gem_hbm_map",
	.test_cases = hpu_gem_test_cases,
};

kunit_test_suites(&hpu_gem_test_suite);
