// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: page-table building of a context's address space (hpu_vm.c).
 *
 * Each test checks the exact entries the device would walk: root (L0)
 * -> L1 -> L2 (2 MiB leaves, HBM) -> L3 (4 KiB leaves, host), every
 * table pointer "HBM offset of the table | PRESENT".
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <kunit/test.h>

#include <linux/list.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>

#include <drm/drm_gem.h>

#include "../hpu_drv.h"
#include "../hpu_gem.h"
#include "../hpu_hbm.h"
#include "../hpu_limits.h"
#include "../hpu_mmu.h"
#include "../hpu_vm.h"
#include "hpu_test.h"

/* The index of each level of a va, and the page size a level's entry maps. */
static void hpu_vm_test_va_index(struct kunit *test)
{
	u64 va = (3ULL << 39) | (5ULL << 30) | (7ULL << 21) | (9ULL << 12) | 0x123;
	u64 top = HPU_VA_END - 1;

	KUNIT_EXPECT_EQ(test, hpu_vm_va_index(va, 0), 3);
	KUNIT_EXPECT_EQ(test, hpu_vm_va_index(va, 1), 5);
	KUNIT_EXPECT_EQ(test, hpu_vm_va_index(va, 2), 7);
	KUNIT_EXPECT_EQ(test, hpu_vm_va_index(va, 3), 9);
	KUNIT_EXPECT_EQ(test, hpu_vm_va_index(top, 0), 255);
	KUNIT_EXPECT_EQ(test, hpu_vm_va_index(top, 1), 511);
	KUNIT_EXPECT_EQ(test, hpu_vm_va_index(top, 2), 511);
	KUNIT_EXPECT_EQ(test, hpu_vm_va_index(top, 3), 511);
	KUNIT_EXPECT_EQ(test, hpu_vm_va_index(HPU_VA_START, 0), 0);
	KUNIT_EXPECT_EQ(test, hpu_vm_va_index(HPU_VA_START, 1), 4);
	KUNIT_EXPECT_EQ(test, hpu_vm_va_index(HPU_VA_START, 2), 0);

	KUNIT_EXPECT_EQ(test, hpu_vm_level_page_size(0), 1ULL << 39);
	KUNIT_EXPECT_EQ(test, hpu_vm_level_page_size(1), (u64)SZ_1G);
	KUNIT_EXPECT_EQ(test, hpu_vm_level_page_size(HPU_PT_LEVEL_HUGE), (u64)SZ_2M);
	KUNIT_EXPECT_EQ(test, hpu_vm_level_page_size(HPU_PT_LEVEL_4K), (u64)SZ_4K);
}

/* A context with a root table, torn down when the test ends. */
struct hpu_vm_test_ctx {
	struct hpu_device *hdev;
	struct hpu_vm vm;
};

static void hpu_vm_test_ctx_release(void *arg)
{
	struct hpu_vm_test_ctx *ctx = arg;

	if (ctx->vm.root)
		hpu_vm_pt_release_tree(&ctx->vm, ctx->vm.root);
}

static struct hpu_vm *hpu_vm_test_vm(struct kunit *test, unsigned int pt_count)
{
	struct hpu_vm_test_ctx *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->hdev = hpu_test_dev_create(test, pt_count, 0);
	ctx->vm.hdev = ctx->hdev;
	ctx->vm.asid = 4;
	ctx->vm.root = hpu_vm_pt_new(&ctx->vm, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ctx->vm.root));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							hpu_vm_test_ctx_release,
							ctx), 0);
	return &ctx->vm;
}

/* The entry of @pt for @va at its level, read back from the device. */
static u64 hpu_vm_test_pte(struct hpu_vm *vm, struct hpu_pt *pt, u64 va)
{
	return hpu_test_pte_read(vm->hdev, pt->offset, hpu_vm_va_index(va, pt->level));
}

/* One 2 MiB leaf: L0 -> L1 -> L2, with the leaf at the L2 index. */
static void hpu_vm_test_hbm_leaf(struct kunit *test)
{
	struct hpu_vm *vm = hpu_vm_test_vm(test, 16);
	u64 va = HPU_VA_START + 3ULL * SZ_1G + 5 * SZ_2M;
	u64 pte = 0x40000000ULL | HPU_PTE_WRITE | HPU_PTE_HUGE | HPU_PTE_PRESENT;
	struct hpu_pt *l1, *l2;
	unsigned int i;

	KUNIT_ASSERT_EQ(test, hpu_vm_set_leaf(vm, va, HPU_PT_LEVEL_HUGE, pte), 0);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(vm->hdev), 3);
	KUNIT_EXPECT_EQ(test, vm->hdev->mmu->pt_asid[4], 3);

	l1 = vm->root->child[0];
	KUNIT_ASSERT_NOT_NULL(test, l1);
	l2 = l1->child[7];
	KUNIT_ASSERT_NOT_NULL(test, l2);
	KUNIT_EXPECT_EQ(test, l1->level, 1);
	KUNIT_EXPECT_EQ(test, l2->level, 2);
	KUNIT_EXPECT_EQ(test, vm->root->used, 1);
	KUNIT_EXPECT_EQ(test, l1->used, 1);
	KUNIT_EXPECT_EQ(test, l2->used, 1);
	/* Tables are handed out in order: root, L1, L2. */
	KUNIT_EXPECT_EQ(test, vm->root->offset, 0);
	KUNIT_EXPECT_EQ(test, l1->offset, HPU_PT_SIZE);
	KUNIT_EXPECT_EQ(test, l2->offset, 2 * HPU_PT_SIZE);

	KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, vm->root->offset, 0),
			l1->offset | HPU_PTE_PRESENT);
	KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, l1->offset, 7),
			l2->offset | HPU_PTE_PRESENT);
	KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, l2->offset, 5), pte);
	KUNIT_EXPECT_NULL(test, l2->child[5]);

	/* Nothing else is present. */
	for (i = 0; i < HPU_PT_ENTRIES; i++) {
		if (i)
			KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, vm->root->offset, i), 0);
		if (i != 7)
			KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, l1->offset, i), 0);
		if (i != 5)
			KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, l2->offset, i), 0);
	}
}

/* One 4 KiB leaf: four levels, the leaf in L3. */
static void hpu_vm_test_host_leaf(struct kunit *test)
{
	struct hpu_vm *vm = hpu_vm_test_vm(test, 16);
	u64 va = (2ULL << 39) | (511ULL << 30) | (1ULL << 21) | (300ULL << 12);
	u64 pte = 0x1234567000ULL | HPU_PTE_HOST | HPU_PTE_PRESENT;
	struct hpu_pt *l1, *l2, *l3;

	KUNIT_ASSERT_EQ(test, hpu_vm_set_leaf(vm, va, HPU_PT_LEVEL_4K, pte), 0);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(vm->hdev), 4);
	l1 = vm->root->child[2];
	KUNIT_ASSERT_NOT_NULL(test, l1);
	l2 = l1->child[511];
	KUNIT_ASSERT_NOT_NULL(test, l2);
	l3 = l2->child[1];
	KUNIT_ASSERT_NOT_NULL(test, l3);
	KUNIT_EXPECT_EQ(test, l3->level, HPU_PT_LEVEL_4K);
	KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, vm->root->offset, 2),
			l1->offset | HPU_PTE_PRESENT);
	KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, l1->offset, 511),
			l2->offset | HPU_PTE_PRESENT);
	KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, l2->offset, 1),
			l3->offset | HPU_PTE_PRESENT);
	KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, l3->offset, 300), pte);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_pte(vm, l3, va + SZ_4K), 0);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_pte(vm, l3, va - SZ_4K), 0);
}

/*
 * Leaves share the tables on their path; a leaf in the next 1 GiB needs
 * one more L2 table, nothing more.
 */
static void hpu_vm_test_shared_tables(struct kunit *test)
{
	struct hpu_vm *vm = hpu_vm_test_vm(test, 16);
	u64 va = HPU_VA_START + SZ_1G - SZ_2M;
	u64 pte = HPU_PTE_HUGE | HPU_PTE_PRESENT;
	struct hpu_pt *l1;

	KUNIT_ASSERT_EQ(test, hpu_vm_set_leaf(vm, va - SZ_2M, HPU_PT_LEVEL_HUGE,
					      pte | 0x200000), 0);
	KUNIT_ASSERT_EQ(test, hpu_vm_set_leaf(vm, va, HPU_PT_LEVEL_HUGE,
					      pte | 0x400000), 0);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(vm->hdev), 3);
	l1 = vm->root->child[0];
	KUNIT_ASSERT_NOT_NULL(test, l1);
	KUNIT_EXPECT_EQ(test, l1->used, 1);
	KUNIT_EXPECT_EQ(test, l1->child[4]->used, 2);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_pte(vm, l1->child[4], va - SZ_2M),
			pte | 0x200000);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_pte(vm, l1->child[4], va),
			pte | 0x400000);

	/* Across the 1 GiB boundary: L2 table of index 5. */
	KUNIT_ASSERT_EQ(test, hpu_vm_set_leaf(vm, va + SZ_2M, HPU_PT_LEVEL_HUGE,
					      pte | 0x600000), 0);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(vm->hdev), 4);
	KUNIT_EXPECT_EQ(test, l1->used, 2);
	KUNIT_ASSERT_NOT_NULL(test, l1->child[5]);
	KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, l1->child[5]->offset, 0),
			pte | 0x600000);
	KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, l1->offset, 5),
			l1->child[5]->offset | HPU_PTE_PRESENT);
}

static unsigned int hpu_vm_test_list_len(struct list_head *list)
{
	struct list_head *pos;
	unsigned int n = 0;

	list_for_each(pos, list)
		n++;
	return n;
}

/*
 * Clearing leaves zeroes them; a table whose last entry goes is unlinked
 * (its parent's entry zeroed) and put on the list to free, never the
 * root; after release every count is back where it started.
 */
static void hpu_vm_test_clear_frees_empty_tables(struct kunit *test)
{
	struct hpu_vm *vm = hpu_vm_test_vm(test, 16);
	u64 va = HPU_VA_START + SZ_1G - 2 * SZ_2M;
	u64 pte = HPU_PTE_HUGE | HPU_PTE_PRESENT;
	struct hpu_pt *l1, *l2a, *l2b;
	LIST_HEAD(freed);
	unsigned int i;

	/* Four 2 MiB pages across a 1 GiB boundary: two L2 tables. */
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, hpu_vm_set_leaf(vm, va + i * SZ_2M,
						      HPU_PT_LEVEL_HUGE,
						      pte | (u64)(i + 1) * SZ_2M), 0);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(vm->hdev), 4);
	l1 = vm->root->child[0];
	l2a = l1->child[4];
	l2b = l1->child[5];

	/* The first page only: no table empties. */
	hpu_vm_clear_range(vm, va, SZ_2M, HPU_PT_LEVEL_HUGE, &freed);
	KUNIT_EXPECT_TRUE(test, list_empty(&freed));
	KUNIT_EXPECT_EQ(test, hpu_vm_test_pte(vm, l2a, va), 0);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_pte(vm, l2a, va + SZ_2M), pte | 2 * SZ_2M);
	KUNIT_EXPECT_EQ(test, l2a->used, 1);

	/* The second: its L2 table empties and is unlinked from L1. */
	hpu_vm_clear_range(vm, va + SZ_2M, SZ_2M, HPU_PT_LEVEL_HUGE, &freed);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_list_len(&freed), 1);
	KUNIT_EXPECT_PTR_EQ(test, list_first_entry(&freed, struct hpu_pt, free_link), l2a);
	KUNIT_EXPECT_NULL(test, l1->child[4]);
	KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, l1->offset, 4), 0);
	KUNIT_EXPECT_EQ(test, l1->used, 1);
	/* Still counted until released (after the invalidation). */
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(vm->hdev), 4);
	hpu_vm_pt_release_list(vm, &freed);
	INIT_LIST_HEAD(&freed);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(vm->hdev), 3);

	/* The rest: L2 and L1 go, the root stays, empty. */
	hpu_vm_clear_range(vm, va + 2 * SZ_2M, 2 * SZ_2M, HPU_PT_LEVEL_HUGE, &freed);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_list_len(&freed), 2);
	KUNIT_EXPECT_NULL(test, vm->root->child[0]);
	KUNIT_EXPECT_EQ(test, vm->root->used, 0);
	KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, vm->root->offset, 0), 0);
	KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, l2b->offset, 0), 0);
	KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, l2b->offset, 1), 0);
	hpu_vm_pt_release_list(vm, &freed);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(vm->hdev), 1);
	KUNIT_EXPECT_EQ(test, vm->hdev->mmu->pt_asid[4], 1);
}

/* A 4 KiB range's clear walks every page and frees its L3 table. */
static void hpu_vm_test_clear_host_range(struct kunit *test)
{
	struct hpu_vm *vm = hpu_vm_test_vm(test, 16);
	u64 va = HPU_VA_START + SZ_2M - 2 * SZ_4K;
	LIST_HEAD(freed);
	unsigned int i;

	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, hpu_vm_set_leaf(vm, va + i * SZ_4K,
						      HPU_PT_LEVEL_4K,
						      HPU_PTE_HOST | HPU_PTE_PRESENT |
						      (u64)(i + 1) * SZ_4K), 0);
	/* Root, L1, L2 and two L3 tables (the range crosses 2 MiB). */
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(vm->hdev), 5);
	KUNIT_EXPECT_EQ(test, vm->root->child[0]->child[4]->used, 2);

	hpu_vm_clear_range(vm, va, 4 * SZ_4K, HPU_PT_LEVEL_4K, &freed);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_list_len(&freed), 4);
	KUNIT_EXPECT_EQ(test, vm->root->used, 0);
	hpu_vm_pt_release_list(vm, &freed);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(vm->hdev), 1);
}

static void hpu_vm_test_sgt_free(void *arg)
{
	sg_free_table(arg);
}

/* A table of DMA segments (@n pairs of bus address and length), freed at the end. */
static struct sg_table *hpu_vm_test_sgt(struct kunit *test, const u64 *seg,
					unsigned int n)
{
	struct sg_table *sgt = kunit_kzalloc(test, sizeof(*sgt), GFP_KERNEL);
	struct scatterlist *sg;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, sgt);
	KUNIT_ASSERT_EQ(test, sg_alloc_table(sgt, n, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, hpu_vm_test_sgt_free,
							sgt), 0);
	for_each_sgtable_dma_sg(sgt, sg, i) {
		sg_dma_address(sg) = seg[2 * i];
		sg_dma_len(sg) = seg[2 * i + 1];
	}
	return sgt;
}

/* The L2 table over @va, or NULL. */
static struct hpu_pt *hpu_vm_test_l2(struct hpu_vm *vm, u64 va)
{
	struct hpu_pt *l1 = vm->root->child[hpu_vm_va_index(va, 0)];

	return l1 ? l1->child[hpu_vm_va_index(va, 1)] : NULL;
}

/* Clears [@va, @va + @size) of host leaves; every table goes but the root. */
static void hpu_vm_test_clear_all(struct kunit *test, struct hpu_vm *vm,
				  u64 va, u64 size)
{
	LIST_HEAD(freed);

	hpu_vm_clear_range(vm, va, size, HPU_PT_LEVEL_4K, &freed);
	KUNIT_EXPECT_EQ(test, vm->root->used, 0);
	hpu_vm_pt_release_list(vm, &freed);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(vm->hdev), 1);
}

/*
 * Host pages take a 2 MiB leaf where 2 MiB of them are contiguous on the
 * bus and aligned there and at their device address; 4 KiB leaves
 * elsewhere. Clearing the range finds both kinds and frees every table.
 */
static void hpu_vm_test_host_huge_leaves(struct kunit *test)
{
	struct hpu_vm *vm = hpu_vm_test_vm(test, 16);
	u64 va = HPU_VA_START + SZ_1G;	/* 2 MiB aligned */
	u64 flags = HPU_PTE_WRITE, done = 0, size;
	static const u64 seg[] = {
		/* 4 MiB + 8 KiB from an aligned bus address: 2 huge, 2 small. */
		0x40000000ULL, SZ_4M + 2 * SZ_4K,
		/* 8 KiB elsewhere. */
		0x80201000ULL, 2 * SZ_4K,
		/* An aligned 2 MiB at a device address that is not: 512 small. */
		0xc0000000ULL, SZ_2M,
	};
	struct sg_table *sgt = hpu_vm_test_sgt(test, seg, 3);
	struct hpu_pt *l2, *l3;
	unsigned int i;

	size = SZ_4M + 4 * SZ_4K + SZ_2M;
	KUNIT_ASSERT_EQ(test, hpu_vm_write_host(vm, sgt, va, 0, size, flags,
						&done), 0);
	KUNIT_EXPECT_EQ(test, done, size);
	l2 = hpu_vm_test_l2(vm, va);
	KUNIT_ASSERT_NOT_NULL(test, l2);
	i = hpu_vm_va_index(va, HPU_PT_LEVEL_HUGE);
	KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, l2->offset, i),
			0x40000000ULL | flags | HPU_PTE_HOST | HPU_PTE_HUGE |
			HPU_PTE_PRESENT);
	KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, l2->offset, i + 1),
			0x40200000ULL | flags | HPU_PTE_HOST | HPU_PTE_HUGE |
			HPU_PTE_PRESENT);
	KUNIT_EXPECT_NULL(test, l2->child[i]);
	KUNIT_EXPECT_NULL(test, l2->child[i + 1]);
	/* The rest in 4 KiB leaves, in order, across two L3 tables. */
	l3 = l2->child[i + 2];
	KUNIT_ASSERT_NOT_NULL(test, l3);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_pte(vm, l3, va + SZ_4M),
			0x40400000ULL | flags | HPU_PTE_HOST | HPU_PTE_PRESENT);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_pte(vm, l3, va + SZ_4M + SZ_4K),
			0x40401000ULL | flags | HPU_PTE_HOST | HPU_PTE_PRESENT);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_pte(vm, l3, va + SZ_4M + 2 * SZ_4K),
			0x80201000ULL | flags | HPU_PTE_HOST | HPU_PTE_PRESENT);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_pte(vm, l3, va + SZ_4M + 4 * SZ_4K),
			0xc0000000ULL | flags | HPU_PTE_HOST | HPU_PTE_PRESENT);
	KUNIT_EXPECT_EQ(test, l3->used, HPU_PT_ENTRIES);
	KUNIT_ASSERT_NOT_NULL(test, l2->child[i + 3]);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_pte(vm, l2->child[i + 3],
					      va + size - SZ_4K),
			0xc01ff000ULL | flags | HPU_PTE_HOST | HPU_PTE_PRESENT);
	KUNIT_EXPECT_EQ(test, l2->child[i + 3]->used, 4);
	KUNIT_EXPECT_EQ(test, l2->used, 4);
	/* Root, L1, L2 and two L3 tables. */
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(vm->hdev), 5);

	hpu_vm_test_clear_all(test, vm, va, size);
	KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, vm->root->offset,
						hpu_vm_va_index(va, 0)), 0);
}

/*
 * No 2 MiB leaf unless the mapping itself covers the 2 MiB and the bus
 * address is aligned; an offset into the list moves both sides alike.
 */
static void hpu_vm_test_host_huge_limits(struct kunit *test)
{
	struct hpu_vm *vm = hpu_vm_test_vm(test, 16);
	u64 va = HPU_VA_START + SZ_1G, flags = HPU_PTE_WRITE, done;
	static const u64 aligned[] = { 0x40000000ULL, SZ_4M + 2 * SZ_4K };
	static const u64 skewed[] = { 0x40001000ULL, SZ_4M };
	struct sg_table *a = hpu_vm_test_sgt(test, aligned, 1);
	struct sg_table *b = hpu_vm_test_sgt(test, skewed, 1);
	struct hpu_pt *l2;
	unsigned int i = hpu_vm_va_index(va, HPU_PT_LEVEL_HUGE);

	/* Both aligned, but the mapping is only 1 MiB: 256 small leaves. */
	done = 0;
	KUNIT_ASSERT_EQ(test, hpu_vm_write_host(vm, a, va, 0, SZ_1M, flags,
						&done), 0);
	l2 = hpu_vm_test_l2(vm, va);
	KUNIT_ASSERT_NOT_NULL(test, l2);
	KUNIT_ASSERT_NOT_NULL(test, l2->child[i]);
	KUNIT_EXPECT_EQ(test, l2->child[i]->used, 256);
	hpu_vm_test_clear_all(test, vm, va, SZ_1M);

	/* The bus address 4 KiB off: no 2 MiB leaf anywhere. */
	done = 0;
	KUNIT_ASSERT_EQ(test, hpu_vm_write_host(vm, b, va, 0, SZ_4M, flags,
						&done), 0);
	l2 = hpu_vm_test_l2(vm, va);
	KUNIT_ASSERT_NOT_NULL(test, l2);
	KUNIT_EXPECT_NOT_NULL(test, l2->child[i]);
	KUNIT_EXPECT_NOT_NULL(test, l2->child[i + 1]);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_pte(vm, l2->child[i], va),
			0x40001000ULL | flags | HPU_PTE_HOST | HPU_PTE_PRESENT);
	hpu_vm_test_clear_all(test, vm, va, SZ_4M);

	/* From offset 2 MiB: a 2 MiB leaf at the bus's second 2 MiB, then 8 KiB. */
	done = 0;
	KUNIT_ASSERT_EQ(test, hpu_vm_write_host(vm, a, va, SZ_2M,
						SZ_2M + 2 * SZ_4K, flags,
						&done), 0);
	l2 = hpu_vm_test_l2(vm, va);
	KUNIT_ASSERT_NOT_NULL(test, l2);
	KUNIT_EXPECT_EQ(test, hpu_test_pte_read(vm->hdev, l2->offset, i),
			0x40200000ULL | flags | HPU_PTE_HOST | HPU_PTE_HUGE |
			HPU_PTE_PRESENT);
	KUNIT_ASSERT_NOT_NULL(test, l2->child[i + 1]);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_pte(vm, l2->child[i + 1], va + SZ_2M),
			0x40400000ULL | flags | HPU_PTE_HOST | HPU_PTE_PRESENT);
	hpu_vm_test_clear_all(test, vm, va, SZ_2M + 2 * SZ_4K);
}

/*
 * DMA segments not in whole 4 KiB pages, or fewer bytes than the mapping,
 * are refused; what was written before is the caller's to clear.
 */
static void hpu_vm_test_host_bad_segments(struct kunit *test)
{
	struct hpu_vm *vm = hpu_vm_test_vm(test, 16);
	u64 va = HPU_VA_START + SZ_1G, done;
	static const u64 odd_addr[] = { 0x40000000ULL, SZ_4K, 0x50000800ULL, SZ_4K };
	static const u64 odd_len[] = { 0x40000000ULL, SZ_4K + 512 };
	static const u64 short_list[] = { 0x40000000ULL, SZ_8K };

	done = 0;
	KUNIT_EXPECT_EQ(test, hpu_vm_write_host(vm, hpu_vm_test_sgt(test, odd_addr, 2),
						va, 0, SZ_8K, 0, &done), -EINVAL);
	KUNIT_EXPECT_EQ(test, done, SZ_4K);
	hpu_vm_test_clear_all(test, vm, va, done);
	done = 0;
	KUNIT_EXPECT_EQ(test, hpu_vm_write_host(vm, hpu_vm_test_sgt(test, odd_len, 1),
						va, 0, SZ_4K, 0, &done), -EINVAL);
	KUNIT_EXPECT_EQ(test, done, 0);
	done = 0;
	KUNIT_EXPECT_EQ(test, hpu_vm_write_host(vm, hpu_vm_test_sgt(test, short_list, 1),
						va, 0, SZ_16K, 0, &done), -EINVAL);
	KUNIT_EXPECT_EQ(test, done, SZ_8K);
	hpu_vm_test_clear_all(test, vm, va, done);
}

/* A table that cannot be had fails the leaf with the MMU's error. */
static void hpu_vm_test_set_leaf_out_of_tables(struct kunit *test)
{
	struct hpu_vm *vm = hpu_vm_test_vm(test, 16);
	LIST_HEAD(freed);

	vm->hdev->limits->ctx_page_tables = 3;
	KUNIT_EXPECT_EQ(test, hpu_vm_set_leaf(vm, HPU_VA_START, HPU_PT_LEVEL_4K,
					      HPU_PTE_PRESENT), -ENOSPC);
	/* The L1 and L2 tables made on the way stay linked and counted. */
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(vm->hdev), 3);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_pte(vm, vm->root->child[0]->child[4],
					      HPU_VA_START), 0);
	/* 2 MiB leaves need no L3: the same address maps. */
	KUNIT_EXPECT_EQ(test, hpu_vm_set_leaf(vm, HPU_VA_START, HPU_PT_LEVEL_HUGE,
					      HPU_PTE_HUGE | HPU_PTE_PRESENT), 0);
	hpu_vm_clear_range(vm, HPU_VA_START, SZ_2M, HPU_PT_LEVEL_HUGE, &freed);
	hpu_vm_pt_release_list(vm, &freed);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(vm->hdev), 1);
}

/* An HBM buffer object of @size bytes, freed when the test ends. */
struct hpu_vm_test_bo {
	struct hpu_device *hdev;
	struct hpu_bo bo;
};

static void hpu_vm_test_bo_release(void *arg)
{
	struct hpu_vm_test_bo *t = arg;

	hpu_hbm_free(t->hdev, &t->bo.blocks);
}

static struct hpu_bo *hpu_vm_test_hbm_bo(struct kunit *test,
					 struct hpu_device *hdev, u64 size)
{
	struct hpu_vm_test_bo *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->hdev = hdev;
	t->bo.kind = HPU_BO_HBM;
	t->bo.page_size = HPU_HBM_PAGE_SIZE;
	INIT_LIST_HEAD(&t->bo.blocks);
	/* The test's reference: the object is never freed through GEM. */
	kref_init(&t->bo.base.base.refcount);
	t->bo.base.base.size = size;
	KUNIT_ASSERT_EQ(test, hpu_hbm_alloc(hdev, size, HPU_HBM_PAGE_SIZE,
					    true, &t->bo.blocks), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							hpu_vm_test_bo_release,
							t), 0);
	return &t->bo;
}

static u64 hpu_vm_test_bo_addr(struct hpu_device *hdev, struct hpu_bo *bo)
{
	return hpu_hbm_block_addr(hdev, list_first_entry(&bo->blocks,
							 struct drm_buddy_block,
							 link));
}

/* The leaf of @va in the tree of @vm, 0 when a table is missing. */
static u64 hpu_vm_test_walk(struct hpu_vm *vm, u64 va, unsigned int leaf)
{
	struct hpu_pt *pt = vm->root;
	unsigned int level;

	for (level = 0; level < leaf; level++) {
		pt = pt->child[hpu_vm_va_index(va, level)];
		if (!pt)
			return 0;
	}
	return hpu_vm_test_pte(vm, pt, va);
}

/*
 * VM_BIND end to end on an HBM buffer: hpu_vm_map() places the range,
 * writes one HUGE leaf per 2 MiB with the buffer's HBM addresses from
 * the offset on, takes a reference; unmap clears it, frees the tables
 * and drops the reference; teardown gives everything back.
 */
static void hpu_vm_test_map_unmap_hbm(struct kunit *test)
{
	struct hpu_device *hdev = hpu_test_dev_create(test, 512, 64 * SZ_1M);
	struct hpu_bo *bo = hpu_vm_test_hbm_bo(test, hdev, 8 * SZ_1M);
	struct drm_gem_object *obj = &bo->base.base;
	u64 addr = hpu_vm_test_bo_addr(hdev, bo);
	u64 rw = HPU_PTE_WRITE | HPU_PTE_HUGE | HPU_PTE_PRESENT;
	u64 va = 0, fixed = HPU_VA_START + 7ULL * SZ_1G;
	struct hpu_vm *vm;

	KUNIT_ASSERT_EQ(test, hpu_vm_create(hdev, &vm), 0);
	KUNIT_EXPECT_EQ(test, vm->asid, HPU_ASID_FIRST);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(hdev), 1);

	/* 4 MiB from offset 2 MiB, at an address of the driver's choice. */
	KUNIT_ASSERT_EQ(test, hpu_vm_map(vm, obj, SZ_2M, 2 * SZ_2M, &va, false,
					 false), 0);
	KUNIT_EXPECT_GE(test, va, HPU_VA_START);
	KUNIT_EXPECT_LE(test, va + 2 * SZ_2M, HPU_VA_END);
	KUNIT_EXPECT_TRUE(test, IS_ALIGNED(va, SZ_2M));
	KUNIT_EXPECT_EQ(test, hpu_vm_test_walk(vm, va, HPU_PT_LEVEL_HUGE),
			(addr + SZ_2M) | rw);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_walk(vm, va + SZ_2M, HPU_PT_LEVEL_HUGE),
			(addr + 2 * SZ_2M) | rw);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_walk(vm, va + 2 * SZ_2M, HPU_PT_LEVEL_HUGE), 0);
	KUNIT_EXPECT_EQ(test, kref_read(&obj->refcount), 2);
	KUNIT_EXPECT_EQ(test, vm->mappings, 1);

	/* Read-only, FIXED: no WRITE bit. */
	KUNIT_ASSERT_EQ(test, hpu_vm_map(vm, obj, 0, SZ_2M, &fixed, true, true), 0);
	KUNIT_EXPECT_EQ(test, fixed, HPU_VA_START + 7ULL * SZ_1G);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_walk(vm, fixed, HPU_PT_LEVEL_HUGE),
			addr | HPU_PTE_HUGE | HPU_PTE_PRESENT);
	KUNIT_EXPECT_EQ(test, kref_read(&obj->refcount), 3);

	/* Overlap of a FIXED range: -EBUSY, nothing changes. */
	KUNIT_EXPECT_EQ(test, hpu_vm_map(vm, obj, 0, 2 * SZ_2M, &fixed, true,
					 false), -EBUSY);
	KUNIT_EXPECT_EQ(test, kref_read(&obj->refcount), 3);

	/* The mapping limit: -ENOSPC. */
	hdev->limits->ctx_mappings = 2;
	va = 0;
	KUNIT_EXPECT_EQ(test, hpu_vm_map(vm, obj, 0, SZ_2M, &va, false, false),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, vm->mappings, 2);

	/* Unmap: entries cleared, tables freed, reference dropped. */
	KUNIT_EXPECT_EQ(test, hpu_vm_unmap(vm, fixed + SZ_4K), -ENOENT);
	KUNIT_ASSERT_EQ(test, hpu_vm_unmap(vm, fixed), 0);
	KUNIT_EXPECT_EQ(test, hpu_vm_test_walk(vm, fixed, HPU_PT_LEVEL_HUGE), 0);
	KUNIT_EXPECT_EQ(test, kref_read(&obj->refcount), 2);
	KUNIT_EXPECT_EQ(test, hpu_vm_unmap(vm, fixed), -ENOENT);
	KUNIT_EXPECT_EQ(test, vm->mappings, 1);
	/* The other mapping's tables are all that is left besides the root. */
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(hdev), 3);

	/* Teardown with a mapping left: tables, ASID, reference given back. */
	hpu_vm_destroy(vm);
	KUNIT_EXPECT_EQ(test, hpu_mmu_pt_used(hdev), 0);
	KUNIT_EXPECT_EQ(test, kref_read(&obj->refcount), 1);
	KUNIT_EXPECT_TRUE(test, ida_is_empty(&hdev->mmu->asid_ida));
	/* The root was disabled and the ASID invalidated. */
	KUNIT_EXPECT_EQ(test, hpu_test_reg(hdev, HPU_REG_MMU_ROOT_LO(HPU_ASID_FIRST)) &
			HPU_MMU_ROOT_VALID, 0);
	KUNIT_EXPECT_EQ(test, hpu_test_reg(hdev, HPU_REG_MMU_INV), HPU_ASID_FIRST);
}

static struct kunit_case hpu_vm_test_cases[] = {
	KUNIT_CASE(hpu_vm_test_va_index),
	KUNIT_CASE(hpu_vm_test_hbm_leaf),
	KUNIT_CASE(hpu_vm_test_host_leaf),
	KUNIT_CASE(hpu_vm_test_shared_tables),
	KUNIT_CASE(hpu_vm_test_clear_frees_empty_tables),
	KUNIT_CASE(hpu_vm_test_clear_host_range),
	KUNIT_CASE(hpu_vm_test_host_huge_leaves),
	KUNIT_CASE(hpu_vm_test_host_huge_limits),
	KUNIT_CASE(hpu_vm_test_host_bad_segments),
	KUNIT_CASE(hpu_vm_test_set_leaf_out_of_tables),
	KUNIT_CASE(hpu_vm_test_map_unmap_hbm),
	{}
};

static struct kunit_suite hpu_vm_test_suite = {
	.name = "hpu_vm_pt",
	.test_cases = hpu_vm_test_cases,
};

kunit_test_suite(hpu_vm_test_suite);
