/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: per-context device address spaces.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_VM_H__
#define __HPU_VM_H__

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/dma-resv.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>

#include <drm/drm_mm.h>

#include "hpu_reset.h"

struct drm_device;
struct drm_file;
struct drm_gem_object;
struct drm_hpu_vm_bind;
struct hpu_device;
struct sg_table;

/* Device virtual addresses a context may use: [HPU_VA_START, HPU_VA_END). */
#define HPU_VA_START		0x100000000ULL
#define HPU_VA_END		BIT_ULL(47)

/* Level of the tables holding 2 MiB and 4 KiB leaves. */
#define HPU_PT_LEVEL_HUGE	2
#define HPU_PT_LEVEL_4K		3

/**
 * struct hpu_pt - software copy of one page table
 * @offset: HBM offset of the table.
 * @level: 0 (root) to 3.
 * @used: entries present (pointers to tables and leaves).
 * @free_link: on the list of tables to free after an invalidation.
 * @child: levels 0 to 2: the table each entry points to, NULL for an
 *	empty entry or a 2 MiB leaf.
 *
 * Protected by the lock of the &struct hpu_vm that owns the tree.
 */
struct hpu_pt {
	u64 offset;
	unsigned int level;
	unsigned int used;
	struct list_head free_link;
	struct hpu_pt *child[];
};

/**
 * struct hpu_vm - the address space of one context (open file)
 * @hdev: the device.
 * @ref: references: the file's (dropped by hpu_vm_destroy()), one per
 *	buffer object charged to the context, and any a job takes with
 *	hpu_vm_get(). The last one frees the structure.
 * @asid: the address-space id, HPU_ASID_FIRST..HPU_ASID_LAST; constant
 *	from creation until hpu_vm_destroy(), which gives it back.
 * @resv: fences of the context's jobs. The submission code adds each
 *	job's finished fence with %DMA_RESV_USAGE_BOOKKEEP (under the resv's
 *	own lock); unmapping and teardown wait for all of them, so no job
 *	still runs when memory leaves the address space.
 * @lock: protects @mm, @root and the page-table tree below it, @dead,
 *	@dead_maps and @mappings. Taken in VM_BIND and at teardown; may be
 *	held while taking the MMU's page-table and invalidation locks, never
 *	the other way.
 * @mm: the virtual address ranges in use, one node per mapping.
 * @root: software copy of the L0 page table and everything below it.
 * @dead: the context is being torn down; no new mapping may be made.
 * @dead_maps: the mappings of a dead context (&hpu_mapping.link), until
 *	they are given back (with the context, or from the quarantine).
 * @quar: the whole context is quarantined (hpu_reset_quarantine()):
 *	torn down while the device may still reach its memory.
 * @hbm_used: HBM bytes of the buffers charged to the context.
 * @host_used: host memory bytes (shmem and user pointers) charged to it.
 * @mappings: mappings in @mm, against &hpu_ctx_limits.ctx_mappings.
 * @queues: the context's queues, against &hpu_ctx_limits.ctx_queues
 *	(hpu_queue.c).
 * @user_queues: the context's user queues, against
 *	&hpu_ctx_limits.ctx_user_queues (hpu_uq.c).
 * @jobs: the context's jobs from SUBMIT until they are freed, against
 *	&hpu_ctx_limits.ctx_jobs; each holds a reference to the VM (hpu_job.c).
 */
struct hpu_vm {
	struct hpu_device *hdev;
	struct kref ref;
	u32 asid;
	struct dma_resv resv;
	struct mutex lock;	/* protects mm, root and its tree, dead, dead_maps */
	struct drm_mm mm;
	struct hpu_pt *root;
	bool dead;
	struct list_head dead_maps;
	struct hpu_quar_entry quar;
	atomic64_t hbm_used;
	atomic64_t host_used;
	u32 mappings;
	atomic_t queues;
	atomic_t user_queues;
	atomic_t jobs;
};

int hpu_vm_create(struct hpu_device *hdev, struct hpu_vm **out);
int hpu_vm_activate(struct hpu_vm *vm);
void hpu_vm_destroy(struct hpu_vm *vm);
void hpu_vm_destroy_reachable(struct hpu_vm *vm, const char *why);
struct hpu_vm *hpu_vm_get(struct hpu_vm *vm);
void hpu_vm_put(struct hpu_vm *vm);

int hpu_vm_map(struct hpu_vm *vm, struct drm_gem_object *obj, u64 offset,
	       u64 size, u64 *va, bool fixed, bool readonly);
int hpu_vm_map_sgt(struct hpu_vm *vm, struct sg_table *sgt, u64 size,
		   u64 *va, bool readonly);
int hpu_vm_unmap(struct hpu_vm *vm, u64 va);
bool hpu_vm_range_mapped(struct hpu_vm *vm, u64 va, u64 size, bool write);

int hpu_vm_bind_ioctl(struct drm_device *drm, void *data,
		      struct drm_file *file);

#if IS_ENABLED(CONFIG_KUNIT)
/* Page-table building, for the KUnit suites (kernel/tests/). */
unsigned int hpu_vm_va_index(u64 va, unsigned int level);
u64 hpu_vm_level_page_size(unsigned int level);
struct hpu_pt *hpu_vm_pt_new(struct hpu_vm *vm, unsigned int level);
void hpu_vm_pt_release_list(struct hpu_vm *vm, struct list_head *list);
void hpu_vm_pt_release_tree(struct hpu_vm *vm, struct hpu_pt *pt);
int hpu_vm_set_leaf(struct hpu_vm *vm, u64 va, unsigned int leaf_level,
		    u64 pte);
void hpu_vm_clear_range(struct hpu_vm *vm, u64 va, u64 size,
			unsigned int leaf_level, struct list_head *freed);
int hpu_vm_write_host(struct hpu_vm *vm, struct sg_table *sgt, u64 va,
		      u64 offset, u64 size, u64 flags, u64 *done);
/* VM_BIND argument checks. */
int hpu_vm_bind_map_check(struct drm_device *drm,
			  const struct drm_hpu_vm_bind *args, u64 bo_size,
			  u64 page_size, bool readonly);
int hpu_vm_bind_unmap_check(struct drm_device *drm,
			    const struct drm_hpu_vm_bind *args);
#endif

#endif /* __HPU_VM_H__ */
