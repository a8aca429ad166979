// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: per-context device address spaces: a drm_mm of virtual addresses,
 * the device page tables behind them, and VM_BIND.
 *
 * The driver never reads tables back from the device: it keeps a
 * software copy of each tree (&struct hpu_pt). Documentation/driver/memory.md
 * has the whole picture.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/list.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>

#include "hpu_accel.h"
#include "hpu_drv.h"
#include "hpu_gem.h"
#include "hpu_hbm.h"
#include "hpu_kunit.h"
#include "hpu_limits.h"
#include "hpu_mmu.h"
#include "hpu_reg.h"
#include "hpu_reset.h"
#include "hpu_vm.h"

/* How long closing a file waits for its jobs before tearing down. */
#define HPU_VM_TEARDOWN_TIMEOUT	(30 * HZ)

/**
 * struct hpu_mapping - one VM_BIND mapping
 * @node: the virtual range, in &hpu_vm.mm.
 * @obj: the buffer object (a reference, dropped at unmap).
 * @offset: offset in @obj of the first mapped byte.
 * @leaf_level: %HPU_PT_LEVEL_HUGE (HBM) or %HPU_PT_LEVEL_4K (host: 4 KiB
 *	leaves, and 2 MiB ones where a huge page allows, hpu_vm_write_host()).
 * @readonly: the device may only read through the mapping.
 * @link: on &hpu_vm.dead_maps once the context is torn down.
 * @quar: the mapping is quarantined (hpu_reset_quarantine()): its
 *	invalidation did not complete, so the device may still use it.
 * @quar_vm: while quarantined, the context (a reference).
 * @quar_pts: while quarantined, the tables its removal left empty.
 *
 * Protected by the lock of its &struct hpu_vm; once quarantined, owned
 * by the quarantine.
 */
struct hpu_mapping {
	struct drm_mm_node node;
	struct drm_gem_object *obj;
	u64 offset;
	unsigned int leaf_level;
	bool readonly;
	struct list_head link;
	struct hpu_quar_entry quar;
	struct hpu_vm *quar_vm;
	struct list_head quar_pts;
};

VISIBLE_IF_KUNIT unsigned int hpu_vm_va_index(u64 va, unsigned int level)
{
	unsigned int shift = HPU_PAGE_SHIFT + 9 * (HPU_PT_LEVELS - 1 - level);

	return (va >> shift) & (HPU_PT_ENTRIES - 1);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_vm_va_index);

VISIBLE_IF_KUNIT u64 hpu_vm_level_page_size(unsigned int level)
{
	return 1ULL << (HPU_PAGE_SHIFT + 9 * (HPU_PT_LEVELS - 1 - level));
}
EXPORT_SYMBOL_IF_KUNIT(hpu_vm_level_page_size);

VISIBLE_IF_KUNIT struct hpu_pt *hpu_vm_pt_new(struct hpu_vm *vm, unsigned int level)
{
	unsigned int nchild = level < HPU_PT_LEVEL_4K ? HPU_PT_ENTRIES : 0;
	struct hpu_pt *pt;
	int ret;

	/* Made for the user: charged to its memory cgroup. */
	pt = kzalloc(struct_size(pt, child, nchild), GFP_KERNEL_ACCOUNT);
	if (!pt)
		return ERR_PTR(-ENOMEM);

	ret = hpu_mmu_pt_alloc(vm->hdev, vm->asid, &pt->offset);
	if (ret) {
		kfree(pt);
		return ERR_PTR(ret);
	}
	pt->level = level;
	INIT_LIST_HEAD(&pt->free_link);
	return pt;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_vm_pt_new);

static void hpu_pt_release(struct hpu_vm *vm, struct hpu_pt *pt)
{
	hpu_mmu_pt_free(vm->hdev, vm->asid, pt->offset);
	kfree(pt);
}

VISIBLE_IF_KUNIT void hpu_vm_pt_release_list(struct hpu_vm *vm, struct list_head *list)
{
	struct hpu_pt *pt, *tmp;

	list_for_each_entry_safe(pt, tmp, list, free_link)
		hpu_pt_release(vm, pt);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_vm_pt_release_list);

VISIBLE_IF_KUNIT void hpu_vm_pt_release_tree(struct hpu_vm *vm, struct hpu_pt *pt)
{
	unsigned int i;

	if (pt->level < HPU_PT_LEVEL_4K)
		for (i = 0; i < HPU_PT_ENTRIES; i++)
			if (pt->child[i])
				hpu_vm_pt_release_tree(vm, pt->child[i]);
	hpu_pt_release(vm, pt);
	/* A context may hold thousands of tables (limits.md). */
	cond_resched();
}
EXPORT_SYMBOL_IF_KUNIT(hpu_vm_pt_release_tree);

static u64 hpu_pt_tree_bytes(struct hpu_pt *pt)
{
	u64 bytes = HPU_PT_SIZE;
	unsigned int i;

	if (pt->level < HPU_PT_LEVEL_4K)
		for (i = 0; i < HPU_PT_ENTRIES; i++)
			if (pt->child[i])
				bytes += hpu_pt_tree_bytes(pt->child[i]);
	return bytes;
}

/* Add the memory of @obj to what a quarantine entry keeps. */
static void hpu_quar_add_obj(struct hpu_quar_entry *e,
			     struct drm_gem_object *obj)
{
	if (!obj)
		return;
	if (to_hpu_bo(obj)->kind == HPU_BO_HBM)
		e->hbm_bytes += obj->size;
	else
		e->host_bytes += obj->size;
}

static void hpu_mapping_quar_release(struct hpu_quar_entry *e)
{
	struct hpu_mapping *m = container_of(e, struct hpu_mapping, quar);
	struct hpu_vm *vm = m->quar_vm;
	struct hpu_pt *pt, *tmp;

	/*
	 * Not counted against the ASID any more: it may have passed to
	 * another context since (its count went to zero with it,
	 * hpu_mmu_asid_free()). The device-wide count goes down here.
	 */
	mutex_lock(&vm->lock);
	list_for_each_entry_safe(pt, tmp, &m->quar_pts, free_link) {
		hpu_mmu_pt_free(vm->hdev, HPU_MMU_NUM_ASIDS, pt->offset);
		kfree(pt);
	}
	mutex_unlock(&vm->lock);
	if (m->obj)
		drm_gem_object_put(m->obj);
	kfree(m);
	hpu_vm_put(vm);
}

/*
 * The invalidation after @m was removed did not complete: the device may
 * still translate through the old entries. Keep the buffer (its
 * reference), the tables on @freed and the context until a hard reset.
 * Caller holds the VM lock; @m is out of the VM's range tree.
 */
static void hpu_mapping_quarantine(struct hpu_vm *vm, struct hpu_mapping *m,
				   struct list_head *freed)
{
	struct hpu_pt *pt;

	lockdep_assert_held(&vm->lock);
	INIT_LIST_HEAD(&m->quar_pts);
	list_splice_init(freed, &m->quar_pts);
	m->quar_vm = hpu_vm_get(vm);
	m->quar.release = hpu_mapping_quar_release;
	m->quar.hbm_bytes = 0;
	m->quar.host_bytes = 0;
	list_for_each_entry(pt, &m->quar_pts, free_link)
		m->quar.hbm_bytes += HPU_PT_SIZE;
	hpu_quar_add_obj(&m->quar, m->obj);
	hpu_reset_quarantine(vm->hdev, &m->quar,
			     "a mapping after a TLB invalidation that did not complete",
			     vm->asid);
}

/* Write the leaf for @va at @leaf_level, creating tables on the way. */
VISIBLE_IF_KUNIT int hpu_vm_set_leaf(struct hpu_vm *vm, u64 va,
				     unsigned int leaf_level, u64 pte)
{
	struct hpu_device *hdev = vm->hdev;
	struct hpu_pt *pt = vm->root, *child;
	unsigned int level, idx;

	for (level = 0; level < leaf_level; level++) {
		idx = hpu_vm_va_index(va, level);
		child = pt->child[idx];
		if (!child) {
			child = hpu_vm_pt_new(vm, level + 1);
			if (IS_ERR(child))
				return PTR_ERR(child);
			pt->child[idx] = child;
			pt->used++;
			hpu_mmu_pte_write(hdev, pt->offset, idx,
					  child->offset | HPU_PTE_PRESENT);
		}
		pt = child;
	}

	idx = hpu_vm_va_index(va, leaf_level);
	/* drm_mm keeps mappings apart and empty tables are freed. */
	if (WARN_ON(leaf_level < HPU_PT_LEVEL_4K && pt->child[idx]))
		return -EBUSY;
	pt->used++;
	hpu_mmu_pte_write(hdev, pt->offset, idx, pte);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_vm_set_leaf);

/*
 * Clear the leaf for @va at @leaf_level; unlink tables left empty and put
 * them on @freed, to be released after the TLB invalidation.
 */
static void hpu_vm_clear_leaf(struct hpu_vm *vm, u64 va,
			      unsigned int leaf_level, struct list_head *freed)
{
	struct hpu_pt *path[HPU_PT_LEVELS];
	struct hpu_device *hdev = vm->hdev;
	unsigned int level, idx;

	path[0] = vm->root;
	for (level = 0; level < leaf_level; level++) {
		path[level + 1] = path[level]->child[hpu_vm_va_index(va, level)];
		if (!path[level + 1])
			return;
	}

	level = leaf_level;
	hpu_mmu_pte_write(hdev, path[level]->offset, hpu_vm_va_index(va, level), 0);
	path[level]->used--;

	while (level > 0 && !path[level]->used) {
		list_add_tail(&path[level]->free_link, freed);
		level--;
		idx = hpu_vm_va_index(va, level);
		path[level]->child[idx] = NULL;
		hpu_mmu_pte_write(hdev, path[level]->offset, idx, 0);
		path[level]->used--;
	}
}

/*
 * Whether a 2 MiB leaf maps @va, 2 MiB aligned in a host mapping (which
 * mixes them with 4 KiB leaves): its L2 entry has no table under it.
 */
static bool hpu_vm_huge_leaf_at(struct hpu_vm *vm, u64 va)
{
	struct hpu_pt *pt = vm->root;
	unsigned int level;

	for (level = 0; level < HPU_PT_LEVEL_HUGE; level++) {
		pt = pt->child[hpu_vm_va_index(va, level)];
		if (!pt)
			return false;
	}
	return !pt->child[hpu_vm_va_index(va, HPU_PT_LEVEL_HUGE)];
}

/*
 * Clear the leaves of the mapped range [@va, @va + @size): 2 MiB ones for
 * @leaf_level %HPU_PT_LEVEL_HUGE (HBM); for %HPU_PT_LEVEL_4K (host) 4 KiB
 * ones, and 2 MiB ones where hpu_vm_write_host() wrote them.
 */
VISIBLE_IF_KUNIT void hpu_vm_clear_range(struct hpu_vm *vm, u64 va, u64 size,
					 unsigned int leaf_level,
					 struct list_head *freed)
{
	u64 end = va + size;
	unsigned int level;

	while (va < end) {
		level = leaf_level;
		if (level == HPU_PT_LEVEL_4K && IS_ALIGNED(va, SZ_2M) &&
		    end - va >= SZ_2M && hpu_vm_huge_leaf_at(vm, va))
			level = HPU_PT_LEVEL_HUGE;
		hpu_vm_clear_leaf(vm, va, level, freed);
		va += hpu_vm_level_page_size(level);
	}
}
EXPORT_SYMBOL_IF_KUNIT(hpu_vm_clear_range);

static int hpu_vm_write_hbm(struct hpu_vm *vm, struct hpu_bo *bo, u64 va,
			    u64 offset, u64 size, u64 flags, u64 *done)
{
	struct hpu_device *hdev = vm->hdev;
	struct drm_buddy_block *block;
	u64 addr, bsize, pos;
	int ret;

	list_for_each_entry(block, &bo->blocks, link) {
		bsize = hpu_hbm_block_size(hdev, block);
		if (offset >= bsize) {
			offset -= bsize;
			continue;
		}
		addr = hpu_hbm_block_addr(hdev, block);
		for (pos = offset; pos < bsize && *done < size;
		     pos += HPU_HBM_PAGE_SIZE) {
			ret = hpu_vm_set_leaf(vm, va + *done, HPU_PT_LEVEL_HUGE,
					      (addr + pos) | flags |
					      HPU_PTE_HUGE | HPU_PTE_PRESENT);
			if (ret)
				return ret;
			*done += HPU_HBM_PAGE_SIZE;
		}
		if (*done == size)
			return 0;
		offset = 0;
	}

	return WARN_ON(*done != size) ? -EINVAL : 0;
}

/*
 * Write the leaves of host pages: the DMA segments of @sgt from byte
 * @offset, at @va. A stretch of 2 MiB that is 2 MiB aligned both at its
 * device address and at its bus address, and contiguous on the bus (a
 * huge page, unless an IOMMU scattered it), takes one 2 MiB leaf; the
 * rest 4 KiB leaves. Fewer translations for the device's DMA engines
 * (a 1 MiB copy piece walks once, not 256 times) and fewer tables.
 *
 * Only sg_dma_address() and sg_dma_len() count (a DMA segment's address
 * already has the CPU entry's offset in it), and they must come in whole
 * 4 KiB pages: an exporter's list that does not (a page shared with
 * bytes the buffer does not own, or low bits that would read as PTE
 * flags), or that is shorter than the buffer, is refused.
 */
VISIBLE_IF_KUNIT int hpu_vm_write_host(struct hpu_vm *vm, struct sg_table *sgt,
				       u64 va, u64 offset, u64 size, u64 flags,
				       u64 *done)
{
	struct scatterlist *sg;
	dma_addr_t addr;
	unsigned int i;
	u64 len, step;
	int ret;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		addr = sg_dma_address(sg);
		len = sg_dma_len(sg);
		if (!IS_ALIGNED(addr, HPU_HOST_PAGE_SIZE) ||
		    !IS_ALIGNED(len, HPU_HOST_PAGE_SIZE)) {
			drm_dbg(&vm->hdev->drm, "VM_BIND: DMA segment %pad + 0x%llx is not in whole 4 KiB pages\n",
				&addr, len);
			return -EINVAL;
		}
		if (offset >= len) {
			offset -= len;
			continue;
		}
		addr += offset;
		len -= offset;
		offset = 0;
		while (len && *done < size) {
			if (IS_ALIGNED(va + *done, SZ_2M) &&
			    IS_ALIGNED(addr, SZ_2M) && len >= SZ_2M &&
			    size - *done >= SZ_2M) {
				ret = hpu_vm_set_leaf(vm, va + *done,
						      HPU_PT_LEVEL_HUGE,
						      addr | flags | HPU_PTE_HOST |
						      HPU_PTE_HUGE |
						      HPU_PTE_PRESENT);
				step = SZ_2M;
			} else {
				ret = hpu_vm_set_leaf(vm, va + *done,
						      HPU_PT_LEVEL_4K,
						      addr | flags | HPU_PTE_HOST |
						      HPU_PTE_PRESENT);
				step = HPU_HOST_PAGE_SIZE;
			}
			if (ret)
				return ret;
			addr += step;
			len -= step;
			*done += step;
		}
		if (*done == size)
			return 0;
	}

	drm_dbg(&vm->hdev->drm, "VM_BIND: the buffer's DMA segments end 0x%llx bytes short\n",
		size - *done);
	return -EINVAL;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_vm_write_host);

/*
 * Reserve a range, write the entries of @sgt (host pages) or of @bo's
 * HBM, and record the mapping; @obj (or NULL for a bare scatterlist) gets
 * a reference held by the mapping. See hpu_vm_map().
 */
static int hpu_vm_map_range(struct hpu_vm *vm, struct drm_gem_object *obj,
			    struct sg_table *sgt, u64 offset, u64 size,
			    u64 align, u64 *va, bool fixed, bool readonly)
{
	struct hpu_device *hdev = vm->hdev;
	struct hpu_mapping *m;
	u64 flags = readonly ? 0 : HPU_PTE_WRITE;
	u64 done = 0;
	LIST_HEAD(freed);
	int ret;

	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return -ENOMEM;
	m->offset = offset;
	m->leaf_level = sgt ? HPU_PT_LEVEL_4K : HPU_PT_LEVEL_HUGE;
	m->readonly = readonly;

	mutex_lock(&vm->lock);
	if (vm->dead) {
		ret = -ENODEV;
		goto err_unlock;
	}
	if (vm->mappings >= READ_ONCE(hdev->limits->ctx_mappings)) {
		drm_dbg(&hdev->drm, "VM_BIND: limit of %u mappings reached\n",
			vm->mappings);
		ret = -ENOSPC;
		goto err_unlock;
	}

	if (fixed) {
		m->node.start = *va;
		m->node.size = size;
		ret = drm_mm_reserve_node(&vm->mm, &m->node);
		if (ret) {
			drm_dbg(&hdev->drm, "VM_BIND: 0x%llx+0x%llx overlaps a mapping\n",
				*va, size);
			ret = -EBUSY;
			goto err_unlock;
		}
	} else {
		ret = drm_mm_insert_node_in_range(&vm->mm, &m->node, size,
						  align, 0,
						  HPU_VA_START, HPU_VA_END,
						  DRM_MM_INSERT_BEST);
		if (ret) {
			drm_dbg(&hdev->drm, "VM_BIND: no free range of 0x%llx bytes\n",
				size);
			ret = -ENOSPC;
			goto err_unlock;
		}
	}

	if (!sgt)
		ret = hpu_vm_write_hbm(vm, to_hpu_bo(obj), m->node.start,
				       offset, size, flags, &done);
	else
		ret = hpu_vm_write_host(vm, sgt, m->node.start, offset, size,
					flags, &done);
	if (ret) {
		drm_dbg(&hdev->drm, "VM_BIND: cannot write page tables: %d\n",
			ret);
		goto err_clear;
	}

	if (obj)
		drm_gem_object_get(obj);
	m->obj = obj;
	*va = m->node.start;
	vm->mappings++;
	mutex_unlock(&vm->lock);
	return 0;

err_clear:
	hpu_vm_clear_range(vm, m->node.start, done, m->leaf_level, &freed);
	drm_mm_remove_node(&m->node);
	if (hpu_mmu_invalidate(hdev, vm->asid)) {
		/* The partial entries named the buffer: keep it too. */
		if (obj)
			drm_gem_object_get(obj);
		m->obj = obj;
		hpu_mapping_quarantine(vm, m, &freed);
		mutex_unlock(&vm->lock);
		/* A bare scatterlist's pages stay with the caller: -EIO. */
		return obj ? ret : -EIO;
	}
	hpu_vm_pt_release_list(vm, &freed);
err_unlock:
	mutex_unlock(&vm->lock);
	kfree(m);
	return ret;
}

/**
 * hpu_vm_map() - map a range of a buffer object into a context
 * @vm: the context's address space
 * @obj: the buffer object; the mapping takes its own reference
 * @offset: first byte of @obj to map, a multiple of its page size
 * @size: bytes to map, a non-zero multiple of its page size, with
 *	@offset + @size inside @obj
 * @va: In: with @fixed, the address to map at (aligned to the page
 *	size, inside the context's range). Out: the address mapped at.
 * @fixed: map at @va rather than choose an address
 * @readonly: the device may only read
 *
 * The caller has checked alignment and ranges. An address chosen by the
 * driver is aligned to the buffer's page size, and to 2 MiB for 2 MiB or
 * more of host memory from a 2 MiB aligned offset. No invalidation is
 * needed: the range had no valid entries. May sleep; the caller keeps the
 * device bound.
 *
 * Return: 0; -EBUSY if a @fixed range overlaps a mapping; -ENOSPC if no
 * free range is large enough, or the context has its limit of mappings
 * or of page tables (&struct hpu_ctx_limits); -ENOMEM when memory or the
 * page-table area runs out (nothing is left mapped); -ENODEV for a
 * context being torn down; -EINVAL for host pages whose DMA segments are
 * not whole 4 KiB pages or do not cover the range (an imported buffer).
 */
int hpu_vm_map(struct hpu_vm *vm, struct drm_gem_object *obj, u64 offset,
	       u64 size, u64 *va, bool fixed, bool readonly)
{
	struct hpu_bo *bo = to_hpu_bo(obj);
	struct sg_table *sgt = NULL;

	/* Pin and DMA map host pages before taking the VM lock. */
	if (bo->kind != HPU_BO_HBM) {
		sgt = hpu_bo_dma_sgt(bo);
		if (IS_ERR(sgt)) {
			drm_dbg(&vm->hdev->drm, "VM_BIND: cannot pin the buffer's pages: %ld\n",
				PTR_ERR(sgt));
			return PTR_ERR(sgt);
		}
	}
	/*
	 * Host memory of 2 MiB or more, from a 2 MiB aligned offset, at a
	 * 2 MiB aligned address, so that its huge pages can take 2 MiB
	 * leaves (hpu_vm_write_host()).
	 */
	return hpu_vm_map_range(vm, obj, sgt, offset, size,
				sgt && size >= SZ_2M && IS_ALIGNED(offset, SZ_2M) ?
				SZ_2M : bo->page_size, va, fixed, readonly);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_vm_map);

/**
 * hpu_vm_map_sgt() - map pages of a DMA-mapped scatterlist into a context
 * @vm: the address space
 * @sgt: host pages, DMA-mapped against the PCI function; they stay the
 *	caller's, who keeps them until hpu_vm_unmap() returned 0
 * @size: bytes to map from the first page, a non-zero multiple of 4 KiB
 *	within @sgt
 * @va: Out: the device address chosen (4 KiB aligned)
 * @readonly: the device may only read
 *
 * For memory the driver pins itself (the RDMA driver's user pages). May
 * sleep; the caller keeps the device bound.
 *
 * Return: 0; -ENOSPC, -ENOMEM, -ENODEV as hpu_vm_map(); -EIO when a
 * failure left entries the device may still use (the caller must then
 * never release the pages).
 */
int hpu_vm_map_sgt(struct hpu_vm *vm, struct sg_table *sgt, u64 size,
		   u64 *va, bool readonly)
{
	return hpu_vm_map_range(vm, NULL, sgt, 0, size, HPU_HOST_PAGE_SIZE, va,
				false, readonly);
}

/**
 * hpu_vm_wait_jobs() - wait for every job of a context to finish
 * @vm: the context's address space
 *
 * Waits, interruptibly and without a time limit, until every job fence
 * in &hpu_vm.resv has signalled. A job may run for up to an hour, or
 * until the device is removed, so the caller must NOT be inside
 * drm_dev_enter(): device removal waits for every such section to end
 * before it fails the jobs this waits for. May sleep.
 *
 * Return: 0, or -ERESTARTSYS if a signal interrupted the wait.
 */
static int hpu_vm_wait_jobs(struct hpu_vm *vm)
{
	long wait;

	wait = dma_resv_wait_timeout(&vm->resv, DMA_RESV_USAGE_BOOKKEEP, true,
				     MAX_SCHEDULE_TIMEOUT);
	return wait < 0 ? wait : 0;
}

/**
 * hpu_vm_range_mapped() - whether a range of a context is mapped
 * @vm: the context's address space
 * @va: start of the range
 * @size: bytes, not 0
 * @write: every byte must also be writable by the device
 *
 * A snapshot: the caller's answer may be out of date as soon as the lock
 * is dropped (a later unmap makes the device fault, in this context only).
 *
 * Return: true if mappings cover every byte of [@va, @va + @size).
 */
bool hpu_vm_range_mapped(struct hpu_vm *vm, u64 va, u64 size, bool write)
{
	struct drm_mm_node *node;
	u64 next = va, end;
	bool ok = false;

	if (check_add_overflow(va, size, &end) || !size ||
	    va < HPU_VA_START || end > HPU_VA_END)
		return false;
	mutex_lock(&vm->lock);
	drm_mm_for_each_node_in_range(node, &vm->mm, va, end) {
		struct hpu_mapping *m = container_of(node, struct hpu_mapping,
						     node);

		if (node->start > next || (write && m->readonly))
			break;
		next = node->start + node->size;
		if (next >= end) {
			ok = true;
			break;
		}
	}
	mutex_unlock(&vm->lock);
	return ok;
}

/**
 * hpu_vm_unmap() - remove the mapping that starts at an address
 * @vm: the context's address space
 * @va: start of the mapping
 *
 * Clears the entries, invalidates the context's TLB entries, frees tables
 * left empty and drops the mapping's reference to its buffer object. The
 * caller has waited for the context's jobs with hpu_vm_wait_jobs(),
 * outside drm_dev_enter(). May sleep; the caller keeps the device bound.
 *
 * Return: 0; -ENOENT if no mapping starts at @va; -EIO for a mapping of
 * hpu_vm_map_sgt() whose invalidation did not complete (its pages must
 * stay pinned: the device may still reach them).
 */
int hpu_vm_unmap(struct hpu_vm *vm, u64 va)
{
	struct hpu_device *hdev = vm->hdev;
	struct hpu_mapping *m = NULL;
	struct drm_mm_node *node;
	LIST_HEAD(freed);

	mutex_lock(&vm->lock);
	drm_mm_for_each_node_in_range(node, &vm->mm, va, va + 1) {
		if (node->start == va) {
			m = container_of(node, struct hpu_mapping, node);
			break;
		}
	}
	if (!m) {
		mutex_unlock(&vm->lock);
		drm_dbg(&hdev->drm, "VM_BIND: no mapping starts at 0x%llx\n", va);
		return -ENOENT;
	}

	hpu_vm_clear_range(vm, m->node.start, m->node.size, m->leaf_level,
			   &freed);
	drm_mm_remove_node(&m->node);
	vm->mappings--;
	if (hpu_mmu_invalidate(hdev, vm->asid)) {
		/*
		 * The range is free in the context, but the device may still
		 * reach the buffer: it stays out of use until a hard reset.
		 */
		hpu_mapping_quarantine(vm, m, &freed);
		mutex_unlock(&vm->lock);
		/* A bare scatterlist's pages must stay pinned. */
		return m->obj ? 0 : -EIO;
	}
	hpu_vm_pt_release_list(vm, &freed);
	mutex_unlock(&vm->lock);

	if (m->obj)
		drm_gem_object_put(m->obj);
	kfree(m);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_vm_unmap);

/*
 * A context's 32 sync objects keep their values when its ASID is given
 * back (Documentation/hw/memory-and-queues.md): clear them before the
 * ASID's next context can run a job, so that it neither reads the last
 * one's values nor has its own WAITs pass early. The previous context's
 * streams are stopped (its queues went before its address space), and a
 * soft reset, which also clears them, cannot run meanwhile: the caller of
 * hpu_vm_activate() holds the reset lock.
 */
static void hpu_vm_clear_sobs(struct hpu_device *hdev, u32 asid)
{
	unsigned int i;

	for (i = 0; i < HPU_SOBS_PER_ASID; i++)
		hpu_wr32(hdev, HPU_REG_SOB(HPU_SOBS_PER_ASID * asid + i), 0);
}

/**
 * hpu_vm_create() - create the address space of a new context
 * @hdev: the device, kept bound by the caller
 * @out: Out: the address space, holding the file's reference
 *
 * Allocates the structure, an ASID and an empty (zeroed) root table, and
 * counts the context against its user's limit (hpu_limits_asid_get()).
 * The device does not use it until hpu_vm_activate(). Everything that
 * allocates memory is here, so that it runs outside the reset lock. May
 * sleep.
 *
 * Return: 0; -EBUSY when all 63 ASIDs are taken or the caller's user has
 * its limit of contexts; -ENOMEM.
 */
int hpu_vm_create(struct hpu_device *hdev, struct hpu_vm **out)
{
	struct hpu_vm *vm;
	int ret;

	vm = kzalloc(sizeof(*vm), GFP_KERNEL_ACCOUNT);
	if (!vm)
		return -ENOMEM;

	vm->hdev = hdev;
	kref_init(&vm->ref);
	mutex_init(&vm->lock);
	dma_resv_init(&vm->resv);
	drm_mm_init(&vm->mm, HPU_VA_START, HPU_VA_END - HPU_VA_START);
	INIT_LIST_HEAD(&vm->dead_maps);
	atomic64_set(&vm->hbm_used, 0);
	atomic64_set(&vm->host_used, 0);

	ret = hpu_limits_asid_get(hdev);
	if (ret < 0) {
		drm_dbg(&hdev->drm, "no free address-space id: %d\n", ret);
		goto err_free;
	}
	vm->asid = ret;

	vm->root = hpu_vm_pt_new(vm, 0);
	if (IS_ERR(vm->root)) {
		ret = PTR_ERR(vm->root);
		goto err_asid;
	}

	*out = vm;
	return 0;

err_asid:
	hpu_limits_asid_put(hdev, vm->asid);
err_free:
	drm_mm_takedown(&vm->mm);
	dma_resv_fini(&vm->resv);
	mutex_destroy(&vm->lock);
	kfree(vm);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_vm_create);

/**
 * hpu_vm_activate() - put a new address space on the device
 * @vm: from hpu_vm_create()
 *
 * Clears the ASID's sync objects (a previous owner's values must not
 * reach the new context), programs the ASID's root and invalidates the
 * ASID. Does not allocate: the caller holds the reset lock for reading
 * (hpu_reset_read_lock()).
 * On failure the caller destroys @vm with hpu_vm_destroy(). May sleep.
 *
 * Return: 0, or -ETIMEDOUT if the device does not complete the
 * invalidation.
 */
int hpu_vm_activate(struct hpu_vm *vm)
{
	lockdep_assert_held_read(&vm->hdev->reset->sem);

	hpu_vm_clear_sobs(vm->hdev, vm->asid);
	hpu_mmu_set_root(vm->hdev, vm->asid, vm->root->offset, true);
	return hpu_mmu_invalidate(vm->hdev, vm->asid);
}

static void hpu_vm_release(struct kref *ref)
{
	struct hpu_vm *vm = container_of(ref, struct hpu_vm, ref);

	dma_resv_fini(&vm->resv);
	mutex_destroy(&vm->lock);
	kfree(vm);
}

/**
 * hpu_vm_get() - take a reference to an address space
 * @vm: the address space
 *
 * Return: @vm.
 */
struct hpu_vm *hpu_vm_get(struct hpu_vm *vm)
{
	kref_get(&vm->ref);
	return vm;
}

/**
 * hpu_vm_put() - drop a reference to an address space
 * @vm: the address space, or NULL
 */
void hpu_vm_put(struct hpu_vm *vm)
{
	if (vm)
		kref_put(&vm->ref, hpu_vm_release);
}

/*
 * Give back what a dead context holds on the device: its page tables, its
 * ASID and its mappings' buffer references (&hpu_vm.dead_maps).
 */
static void hpu_vm_free_dead(struct hpu_vm *vm)
{
	struct hpu_mapping *m, *tmp;
	LIST_HEAD(mappings);

	mutex_lock(&vm->lock);
	if (vm->root)
		hpu_vm_pt_release_tree(vm, vm->root);
	vm->root = NULL;
	list_splice_init(&vm->dead_maps, &mappings);
	mutex_unlock(&vm->lock);

	hpu_limits_asid_put(vm->hdev, vm->asid);

	/* Up to limit_ctx_mappings (65536 by default) of them. */
	list_for_each_entry_safe(m, tmp, &mappings, link) {
		drm_gem_object_put(m->obj);
		kfree(m);
		cond_resched();
	}
}

static void hpu_vm_quar_release(struct hpu_quar_entry *e)
{
	struct hpu_vm *vm = container_of(e, struct hpu_vm, quar);

	hpu_vm_free_dead(vm);
	hpu_vm_put(vm);
}

/**
 * hpu_vm_destroy() - tear down a context's address space
 * @vm: the address space; the file's queues are already gone
 *
 * Waits for the context's jobs (their fences in &hpu_vm.resv), disables
 * the ASID's root and invalidates it, frees every page table, gives the
 * ASID back and drops the mappings' buffer references and the file's
 * reference to @vm. If the jobs do not finish within 30 s, or the
 * invalidation does not complete, the device may still reach the
 * context's memory: all of it (tables, ASID, buffers) is quarantined
 * instead (hpu_reset_quarantine()) until a hard reset. If the device is
 * already unplugged only the software state goes (its streams are shut
 * down). May sleep.
 */
void hpu_vm_destroy(struct hpu_vm *vm)
{
	hpu_vm_destroy_reachable(vm, NULL);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_vm_destroy);

/**
 * hpu_vm_destroy_reachable() - tear down an address space the device may use
 * @vm: the address space
 * @why: NULL, or why the device may still reach the memory (an RDMA object
 *	whose DESTROY command did not complete): the address space is then
 *	quarantined whatever the invalidation says
 *
 * As hpu_vm_destroy(). May sleep.
 */
void hpu_vm_destroy_reachable(struct hpu_vm *vm, const char *why)
{
	struct hpu_device *hdev = vm->hdev;
	struct drm_mm_node *node, *next;
	struct hpu_mapping *m;
	bool entered;
	long wait;
	int idx;

	wait = dma_resv_wait_timeout(&vm->resv, DMA_RESV_USAGE_BOOKKEEP, false,
				     HPU_VM_TEARDOWN_TIMEOUT);

	mutex_lock(&vm->lock);
	vm->dead = true;

	/*
	 * Stay entered until the context is quarantined, if it must be:
	 * removal (drm_dev_unplug(), then hpu_reset_quarantine_fini()) then
	 * finds the entry and releases it, instead of missing one added
	 * after it looked.
	 */
	entered = drm_dev_enter(&hdev->drm, &idx);
	if (!entered) {
		why = NULL;	/* unplugged: nothing reaches anything */
	} else {
		hpu_mmu_set_root(hdev, vm->asid, 0, false);
		if (hpu_mmu_invalidate(hdev, vm->asid))
			why = "the address space after a failed TLB invalidation";
		else if (wait <= 0)
			why = "the address space, its jobs still running at teardown";
	}

	drm_mm_for_each_node_safe(node, next, &vm->mm) {
		m = container_of(node, struct hpu_mapping, node);
		drm_mm_remove_node(node);
		list_add_tail(&m->link, &vm->dead_maps);
		cond_resched();
	}
	drm_mm_takedown(&vm->mm);

	if (why) {
		/* The file's reference goes to the quarantine. */
		vm->quar.release = hpu_vm_quar_release;
		vm->quar.hbm_bytes = vm->root ? hpu_pt_tree_bytes(vm->root) : 0;
		vm->quar.host_bytes = 0;
		list_for_each_entry(m, &vm->dead_maps, link)
			hpu_quar_add_obj(&vm->quar, m->obj);
		mutex_unlock(&vm->lock);
		hpu_reset_quarantine(hdev, &vm->quar, why, vm->asid);
		drm_dev_exit(idx);
		return;
	}
	mutex_unlock(&vm->lock);
	if (entered)
		drm_dev_exit(idx);

	hpu_vm_free_dead(vm);
	hpu_vm_put(vm);
}

/* ioctls */

/**
 * hpu_vm_bind_map_check() - check a MAP request against its buffer
 * @drm: the DRM device, for the debug log
 * @args: the request; its flags and (without FIXED) va already checked
 * @bo_size: bytes of the buffer object
 * @page_size: the buffer's page size, a power of two
 * @readonly: the buffer may only be mapped read-only
 *
 * Return: 0; -EINVAL for a zero size, an offset, size or FIXED address
 * not a multiple of @page_size, a range outside the buffer, or a
 * read-only buffer mapped writable; -ERANGE for a FIXED range outside the
 * context's [HPU_VA_START, HPU_VA_END).
 */
VISIBLE_IF_KUNIT int hpu_vm_bind_map_check(struct drm_device *drm,
					   const struct drm_hpu_vm_bind *args,
					   u64 bo_size, u64 page_size,
					   bool readonly)
{
	bool fixed = args->flags & DRM_HPU_VM_FIXED;

	if (!args->size) {
		drm_dbg(drm, "VM_BIND: size is zero\n");
		return -EINVAL;
	}
	if (!IS_ALIGNED(args->bo_offset | args->size, page_size)) {
		drm_dbg(drm, "VM_BIND: offset 0x%llx or size 0x%llx is not a multiple of the buffer's page size 0x%llx\n",
			args->bo_offset, args->size, page_size);
		return -EINVAL;
	}
	if (args->bo_offset >= bo_size ||
	    args->size > bo_size - args->bo_offset) {
		drm_dbg(drm, "VM_BIND: 0x%llx+0x%llx is outside the buffer's 0x%llx bytes\n",
			args->bo_offset, args->size, bo_size);
		return -EINVAL;
	}
	if (fixed && !IS_ALIGNED(args->va, page_size)) {
		drm_dbg(drm, "VM_BIND: va 0x%llx is not a multiple of the buffer's page size 0x%llx\n",
			args->va, page_size);
		return -EINVAL;
	}
	if (fixed && (args->va < HPU_VA_START || args->va >= HPU_VA_END ||
		      args->size > HPU_VA_END - args->va)) {
		drm_dbg(drm, "VM_BIND: 0x%llx+0x%llx is outside the context's range 0x%llx-0x%llx\n",
			args->va, args->size, HPU_VA_START, HPU_VA_END);
		return -ERANGE;
	}
	if (readonly && !(args->flags & DRM_HPU_VM_READONLY)) {
		drm_dbg(drm, "VM_BIND: read-only buffer needs DRM_HPU_VM_READONLY\n");
		return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_vm_bind_map_check);

static int hpu_vm_bind_map(struct drm_device *drm, struct hpu_vm *vm,
			   struct drm_file *file, struct drm_hpu_vm_bind *args)
{
	bool fixed = args->flags & DRM_HPU_VM_FIXED;
	struct drm_gem_object *obj;
	struct hpu_bo *bo;
	u64 va = args->va;
	int ret;

	if (args->flags & ~(DRM_HPU_VM_READONLY | DRM_HPU_VM_FIXED)) {
		drm_dbg(drm, "VM_BIND: unknown flags 0x%x\n", args->flags);
		return -EINVAL;
	}
	if (!fixed && args->va) {
		drm_dbg(drm, "VM_BIND: va must be zero without FIXED\n");
		return -EINVAL;
	}

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj) {
		drm_dbg(drm, "VM_BIND: no buffer with handle %u\n",
			args->handle);
		return -ENOENT;
	}
	bo = to_hpu_bo(obj);

	ret = hpu_vm_bind_map_check(drm, args, obj->size, bo->page_size,
				    bo->readonly);
	if (ret)
		goto out;

	ret = hpu_vm_map(vm, obj, args->bo_offset, args->size, &va, fixed,
			 args->flags & DRM_HPU_VM_READONLY);
	if (!ret)
		args->va = va;
out:
	drm_gem_object_put(obj);
	return ret;
}

/**
 * hpu_vm_bind_unmap_check() - check an UNMAP request
 * @drm: the DRM device, for the debug log
 * @args: the request
 *
 * Return: 0; -EINVAL for non-zero flags, handle, bo_offset or size, or a
 * va that is not 4 KiB aligned; -ERANGE for a va outside the context's
 * range.
 */
VISIBLE_IF_KUNIT int hpu_vm_bind_unmap_check(struct drm_device *drm,
					     const struct drm_hpu_vm_bind *args)
{
	if (args->flags || args->handle || args->bo_offset || args->size) {
		drm_dbg(drm, "VM_BIND: UNMAP needs zero flags, handle, bo_offset and size\n");
		return -EINVAL;
	}
	if (!IS_ALIGNED(args->va, HPU_HOST_PAGE_SIZE)) {
		drm_dbg(drm, "VM_BIND: UNMAP va 0x%llx is not page aligned\n",
			args->va);
		return -EINVAL;
	}
	if (args->va < HPU_VA_START || args->va >= HPU_VA_END) {
		drm_dbg(drm, "VM_BIND: UNMAP va 0x%llx is outside the context's range\n",
			args->va);
		return -ERANGE;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_vm_bind_unmap_check);

/**
 * hpu_vm_bind_ioctl() - DRM_IOCTL_HPU_VM_BIND
 * @drm: the DRM device
 * @data: the &struct drm_hpu_vm_bind copied in by the DRM core
 * @file: the DRM file
 *
 * Maps a range of a buffer object into the calling context's address
 * space, or removes the mapping that starts at an address. UNMAP first
 * waits for the context's jobs.
 *
 * Return: 0; -EINVAL for an unknown op or flags, non-zero pad (or, for
 * UNMAP, handle, bo_offset, size or flags), a zero size, an offset, size
 * or address not a multiple of the buffer's page size, a range outside
 * the buffer, va non-zero without FIXED, or a read-only buffer (user
 * pointer, or another HPU's read-only buffer imported) mapped writable;
 * -ERANGE for a FIXED or UNMAP address outside the context's range;
 * -ENOENT for an unknown handle or no mapping at the UNMAP address;
 * -EBUSY for a FIXED range that overlaps a mapping; -ENOSPC when no
 * free range is large enough or the context has its limit of mappings
 * or page tables; -ENOMEM (also: the page-table area, less the other
 * ASIDs' reserves, is full); -ERESTARTSYS when a signal interrupts
 * UNMAP's wait; -ENODEV once the device is unplugged.
 */
int hpu_vm_bind_ioctl(struct drm_device *drm, void *data,
		      struct drm_file *file)
{
	struct hpu_file_priv *fpriv = file->driver_priv;
	struct drm_hpu_vm_bind *args = data;
	int idx, ret;

	if (args->pad) {
		drm_dbg(drm, "VM_BIND: pad is not zero\n");
		return -EINVAL;
	}
	if (args->op != DRM_HPU_VM_MAP && args->op != DRM_HPU_VM_UNMAP) {
		drm_dbg(drm, "VM_BIND: unknown op %u\n", args->op);
		return -EINVAL;
	}

	if (args->op == DRM_HPU_VM_UNMAP) {
		ret = hpu_vm_bind_unmap_check(drm, args);
		if (ret)
			return ret;
		/*
		 * Before drm_dev_enter(): a job may run for an hour, and
		 * device removal waits for every drm_dev_enter() section to
		 * end before it fails the jobs (Documentation/driver/reset.md).
		 */
		ret = hpu_vm_wait_jobs(fpriv->vm);
		if (ret)
			return ret;
	}

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	if (args->op == DRM_HPU_VM_MAP)
		ret = hpu_vm_bind_map(drm, fpriv->vm, file, args);
	else
		ret = hpu_vm_unmap(fpriv->vm, args->va);

	drm_dev_exit(idx);
	return ret;
}
