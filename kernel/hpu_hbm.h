/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: HBM allocation (drm_buddy) and scrubbing.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_HBM_H__
#define __HPU_HBM_H__

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include <drm/drm_buddy.h>

struct attribute_group;
struct drm_device;
struct hpu_device;
struct seq_file;

/* Smallest HBM page, the allocator's chunk and the scrubber's unit. */
#define HPU_HBM_PAGE_SIZE	SZ_2M
/* Largest page size a buffer may ask for. */
#define HPU_HBM_PAGE_SIZE_MAX	SZ_1G

/**
 * struct hpu_hbm - HBM allocator of one device
 * @base: HBM offset of the allocator's offset 0: the end of the
 *	page-table area. Constant after probe.
 * @size: bytes the allocator manages (HBM size minus @base). Constant
 *	after probe.
 * @lock: protects @mm, @leaked, @leaked_blocks and the retirement state
 *	(@retired, @retired_blocks, @retired_pages, @retired_pending).
 * @mm: buddy allocator over [@base, @base + @size), in 2 MiB chunks.
 *	Invariant: every free block has been scrubbed.
 * @leaked: bytes never given back because they could not be scrubbed.
 * @leaked_blocks: those blocks; freed only when the DRM device goes.
 * @scrub_lock: serialises use of the SCRUB_* registers.
 * @scrub_stuck: a scrub did not complete in time and may still run: every
 *	later scrub fails (its blocks stay out of use) until a hard reset
 *	abandons it (hpu_hbm_scrub_reset()). Protected by @scrub_lock.
 * @retired: 2 MiB pages retired after an uncorrectable ECC error, by HBM
 *	page number (HBM offset / 2 MiB): xa_mk_value(%HPU_HBM_RETIRED) once
 *	the page is out of the allocator, xa_mk_value(%HPU_HBM_RETIRE_PENDING)
 *	while a buffer still holds it (it is taken out when that buffer is
 *	freed). Kept until the DRM device is released, across resets.
 * @retired_blocks: the allocator blocks of the %HPU_HBM_RETIRED pages;
 *	never handed out again, given back only when the DRM device goes.
 * @retired_pages: pages in @retired (both states).
 * @retired_pending: of those, pages still held by a buffer.
 */
struct hpu_hbm {
	u64 base;
	u64 size;
	struct mutex lock;	/* protects mm, leaked, leaked_blocks */
	struct drm_buddy mm;
	u64 leaked;
	struct list_head leaked_blocks;
	struct mutex scrub_lock;	/* the SCRUB_* registers, scrub_stuck */
	bool scrub_stuck;
	struct xarray retired;
	struct list_head retired_blocks;
	u64 retired_pages;
	u64 retired_pending;
};

/* States of a page in &hpu_hbm.retired. */
#define HPU_HBM_RETIRED		1
#define HPU_HBM_RETIRE_PENDING	2

int hpu_hbm_init(struct hpu_device *hdev);
void hpu_hbm_fini(struct hpu_device *hdev);

int hpu_hbm_alloc(struct hpu_device *hdev, u64 size, u64 page_size,
		  bool contiguous, struct list_head *blocks);
void hpu_hbm_free(struct hpu_device *hdev, struct list_head *blocks);
u64 hpu_hbm_block_addr(struct hpu_device *hdev, struct drm_buddy_block *block);
u64 hpu_hbm_block_size(struct hpu_device *hdev, struct drm_buddy_block *block);
u64 hpu_hbm_total(struct hpu_device *hdev);
u64 hpu_hbm_used(struct hpu_device *hdev);
int hpu_hbm_scrub(struct hpu_device *hdev, u64 addr, u64 size);
void hpu_hbm_scrub_reset(struct hpu_device *hdev);
int hpu_hbm_retire(struct hpu_device *hdev, u64 addr, bool *in_use);
u64 hpu_hbm_retired_pages(struct hpu_device *hdev);
void hpu_hbm_retired_show(struct hpu_device *hdev, struct seq_file *m);
bool hpu_hbm_blocks_contain(struct hpu_device *hdev, struct list_head *blocks,
			    u64 addr);

#if IS_ENABLED(CONFIG_KUNIT)
/* For the KUnit suites (kernel/tests/). */
void hpu_hbm_release(struct drm_device *drm, void *arg);
u32 hpu_hbm_scrub_count(struct hpu_device *hdev);
#endif

/* sysfs hbm_total and hbm_used of the PCI device (hpu_sysfs.c lists the group). */
extern const struct attribute_group hpu_hbm_group;

#endif /* __HPU_HBM_H__ */
