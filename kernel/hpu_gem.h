/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: GEM buffer objects: HBM, host (shmem) and user-pointer buffers.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_GEM_H__
#define __HPU_GEM_H__

#include <linux/list.h>
#include <linux/types.h>

#include <drm/drm_gem_shmem_helper.h>

struct dma_buf;
struct drm_file;
struct hpu_device;
struct hpu_vm;
struct mm_struct;
struct page;
struct sg_table;

/* Device page size of host and user-pointer buffers. */
#define HPU_HOST_PAGE_SIZE	SZ_4K

/**
 * enum hpu_bo_kind - where a buffer object's memory is
 * @HPU_BO_HOST: host memory from shmem, or a dma-buf imported from
 *	another device; mappable with mmap(2) through the device file.
 * @HPU_BO_HBM: device memory from the HBM allocator.
 * @HPU_BO_USERPTR: pinned pages of a user process.
 */
enum hpu_bo_kind {
	HPU_BO_HOST,
	HPU_BO_HBM,
	HPU_BO_USERPTR,
};

/**
 * struct hpu_bo - one buffer object
 * @base: the shmem GEM object; only %HPU_BO_HOST buffers use its shmem
 *	part, the others only its &drm_gem_object. Must stay first: the
 *	shmem helpers free the object with kfree(@base).
 * @kind: where the memory is.
 * @page_size: device page size: 4 KiB for host memory, the allocation's
 *	page size (2 MiB or more) for HBM. Mapping offsets, sizes and
 *	addresses are multiples of it.
 * @owner: the context charged for the buffer (a reference), or NULL for
 *	buffers imported from another device.
 * @blocks: %HPU_BO_HBM: the &drm_buddy_block list of its memory.
 * @pages: %HPU_BO_USERPTR: the pinned pages.
 * @npages: %HPU_BO_USERPTR: number of @pages.
 * @sgt: %HPU_BO_USERPTR: @pages mapped for the device's DMA.
 * @mm: %HPU_BO_USERPTR: the process whose pinned_vm the pages count
 *	against (a mmgrab() reference).
 * @readonly: the device may only read the memory: a %HPU_BO_USERPTR
 *	pinned for device reads only, or the %HPU_BO_HOST import of another
 *	HPU's read-only buffer. VM_BIND maps it only read-only, its dma-buf
 *	is mapped for other devices only DMA_TO_DEVICE.
 * @dma_link: in &hpu_device.dma_bos while the pages are mapped for the
 *	device's DMA (hpu_gem.c); under &hpu_device.dma_bos_lock.
 * @dma_released: the device was removed before the buffer was freed, and
 *	its DMA mapping went then (hpu_gem_dma_release_all()): a
 *	%HPU_BO_USERPTR's @sgt is no longer mapped. Set once, at removal,
 *	while the remover holds a reference; read by the free path after.
 *
 * The other fields are set before the object gets a handle and constant
 * until it is freed, so none needs a lock; the shmem part has its own
 * (the GEM object's reservation lock).
 */
struct hpu_bo {
	struct drm_gem_shmem_object base;
	enum hpu_bo_kind kind;
	u64 page_size;
	struct hpu_vm *owner;
	struct list_head blocks;
	struct page **pages;
	unsigned long npages;
	struct sg_table *sgt;
	struct mm_struct *mm;
	bool readonly;
	struct list_head dma_link;
	bool dma_released;
};

static inline struct hpu_bo *to_hpu_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct hpu_bo, base.base);
}

void hpu_gem_init(struct hpu_device *hdev);
struct drm_gem_object *hpu_gem_create_object(struct drm_device *drm,
					     size_t size);
struct sg_table *hpu_bo_dma_sgt(struct hpu_bo *bo);
struct drm_gem_object *hpu_gem_prime_import(struct drm_device *drm,
					    struct dma_buf *dmabuf);

int hpu_bo_create_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file);
int hpu_bo_userptr_ioctl(struct drm_device *drm, void *data,
			 struct drm_file *file);
void hpu_gem_unmap_all(struct hpu_device *hdev);
void hpu_gem_dma_release_all(struct hpu_device *hdev);
void hpu_gem_user_map_off(struct hpu_device *hdev);
void hpu_gem_user_map_on(struct hpu_device *hdev);
struct drm_gem_object *hpu_gem_vma_object(struct hpu_device *hdev,
					  struct vm_area_struct *vma,
					  unsigned long addr, u64 *offset);
int hpu_bo_mmap_offset_ioctl(struct drm_device *drm, void *data,
			     struct drm_file *file);

#if IS_ENABLED(CONFIG_KUNIT)
/* For the KUnit suites (kernel/tests/). */
u64 hpu_bo_hbm_addr(struct hpu_device *hdev, struct hpu_bo *bo, u64 off,
		    u64 *len);
void hpu_bo_hbm_fault_span(u64 off, u64 map_lo, u64 map_hi, u64 *lo, u64 *hi);
#endif

#endif /* __HPU_GEM_H__ */
