// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: GEM buffer objects (HBM, shmem host buffers, pinned user pointers,
 * one &struct hpu_bo for the three), their PRIME export and import, and
 * the BO ioctls. Documentation/driver/memory.md has what each kind allows
 * and why.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/fcntl.h>
#include <linux/io.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/scatterlist.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_managed.h>
#include <drm/drm_prime.h>

#include "hpu_accel.h"
#include "hpu_drv.h"
#include "hpu_gem.h"
#include "hpu_hbm.h"
#include "hpu_kunit.h"
#include "hpu_mmu.h"
#include "hpu_vm.h"

/* Pages pinned per call, so that a fatal signal is seen in between. */
#define HPU_USERPTR_PIN_CHUNK	65536UL

static void hpu_bo_charge(struct hpu_bo *bo, struct hpu_vm *owner)
{
	u64 size = bo->base.base.size;

	if (!owner)
		return;
	bo->owner = hpu_vm_get(owner);
	if (bo->kind == HPU_BO_HBM)
		atomic64_add(size, &owner->hbm_used);
	else
		atomic64_add(size, &owner->host_used);
}

static void hpu_bo_uncharge(struct hpu_bo *bo)
{
	u64 size = bo->base.base.size;

	if (!bo->owner)
		return;
	if (bo->kind == HPU_BO_HBM)
		atomic64_sub(size, &bo->owner->hbm_used);
	else
		atomic64_sub(size, &bo->owner->host_used);
	hpu_vm_put(bo->owner);
	bo->owner = NULL;
}

/* DMA mappings that must not outlive the device's driver */

/* @bo's pages are mapped for the device's DMA now: list it. */
static void hpu_bo_dma_track(struct hpu_bo *bo)
{
	struct hpu_device *hdev = to_hpu_device(bo->base.base.dev);

	spin_lock(&hdev->dma_bos_lock);
	if (list_empty(&bo->dma_link))
		list_add_tail(&bo->dma_link, &hdev->dma_bos);
	spin_unlock(&hdev->dma_bos_lock);
}

/* @bo is being freed: off the list, before its mapping goes. */
static void hpu_bo_dma_untrack(struct hpu_bo *bo)
{
	struct hpu_device *hdev = to_hpu_device(bo->base.base.dev);

	spin_lock(&hdev->dma_bos_lock);
	list_del_init(&bo->dma_link);
	spin_unlock(&hdev->dma_bos_lock);
}

/*
 * Unmap a user pointer's pages, mapped with DMA_ATTR_SKIP_CPU_SYNC by
 * hpu_bo_create_userptr(): the CPU sync the unmap would have done first.
 */
static void hpu_bo_userptr_dma_unmap(struct hpu_bo *bo)
{
	struct device *dev = bo->base.base.dev->dev;
	enum dma_data_direction dir = bo->readonly ? DMA_TO_DEVICE :
						    DMA_BIDIRECTIONAL;

	dma_sync_sgtable_for_cpu(dev, bo->sgt, dir);
	dma_unmap_sgtable(dev, bo->sgt, dir, DMA_ATTR_SKIP_CPU_SYNC);
}

/*
 * Unmap a host buffer's own mapping for the device, if it has one, made
 * with DMA_ATTR_SKIP_CPU_SYNC by hpu_bo_host_dma_map(): the CPU sync the
 * unmap would have done first, then the unmap, and the page reference the
 * mapping held. Under the object's reservation lock. &shmem->sgt is NULL
 * afterwards, which leaves drm_gem_shmem_free() nothing to unmap.
 */
static void hpu_bo_host_dma_unmap(struct hpu_bo *bo)
{
	struct drm_gem_shmem_object *shmem = &bo->base;
	struct device *dev = shmem->base.dev->dev;

	dma_resv_assert_held(shmem->base.resv);
	if (!shmem->sgt)
		return;
	dma_sync_sgtable_for_cpu(dev, shmem->sgt, DMA_BIDIRECTIONAL);
	dma_unmap_sgtable(dev, shmem->sgt, DMA_BIDIRECTIONAL,
			  DMA_ATTR_SKIP_CPU_SYNC);
	sg_free_table(shmem->sgt);
	kfree(shmem->sgt);
	shmem->sgt = NULL;
	drm_gem_shmem_unpin_locked(shmem);
}

/*
 * Unmap what @bo has mapped for the device, the device being removed; the
 * caller holds a reference. The pages themselves stay until the buffer is
 * freed (a process may still map them); the device cannot reach them any
 * more (quiet, or cut off the bus, and never bound again with this
 * mapping).
 */
static void hpu_bo_dma_release(struct hpu_bo *bo)
{
	struct drm_gem_object *obj = &bo->base.base;
	struct drm_gem_shmem_object *shmem = &bo->base;

	if (bo->kind == HPU_BO_USERPTR) {
		hpu_bo_userptr_dma_unmap(bo);
		bo->dma_released = true;
		return;
	}

	dma_resv_lock(obj->resv, NULL);
	if (obj->import_attach && shmem->sgt) {
		/* drm_prime_gem_destroy() then only detaches. */
		dma_buf_unmap_attachment(obj->import_attach, shmem->sgt,
					 bo->readonly ? DMA_TO_DEVICE :
							DMA_BIDIRECTIONAL);
		shmem->sgt = NULL;
	} else if (!obj->import_attach) {
		hpu_bo_host_dma_unmap(bo);
	}
	bo->dma_released = true;
	dma_resv_unlock(obj->resv);
}

/**
 * hpu_gem_dma_release_all() - unmap the DMA of buffers that outlive removal
 * @hdev: the device, being removed: unplugged, its engines quiet or bus
 *	mastering off
 *
 * Buffers may outlive the driver's binding (a process keeps its file and
 * its handles, another driver its import); their DMA mappings for this
 * device must not (the DMA API requires it, and an IOMMU would keep the
 * pages reachable through the device's domain). Each listed buffer still
 * alive is unmapped now; one being freed meanwhile unmaps itself. May
 * sleep.
 */
void hpu_gem_dma_release_all(struct hpu_device *hdev)
{
	struct hpu_bo *bo;
	bool alive;

	for (;;) {
		spin_lock(&hdev->dma_bos_lock);
		bo = list_first_entry_or_null(&hdev->dma_bos, struct hpu_bo,
					      dma_link);
		if (!bo) {
			spin_unlock(&hdev->dma_bos_lock);
			break;
		}
		list_del_init(&bo->dma_link);
		/* Not alive: its free path unmaps it. */
		alive = kref_get_unless_zero(&bo->base.base.refcount);
		spin_unlock(&hdev->dma_bos_lock);
		if (!alive)
			continue;
		hpu_bo_dma_release(bo);
		drm_gem_object_put(&bo->base.base);
	}
}

/* Host (shmem) buffers */

static void hpu_bo_host_free(struct drm_gem_object *obj)
{
	struct hpu_bo *bo = to_hpu_bo(obj);

	hpu_bo_dma_untrack(bo);
	if (!obj->import_attach) {
		dma_resv_lock(obj->resv, NULL);
		hpu_bo_host_dma_unmap(bo);
		dma_resv_unlock(obj->resv);
	}
	hpu_bo_uncharge(bo);
	drm_gem_shmem_free(&bo->base);
}

/*
 * &vm_operations_struct.fault of a host buffer's CPU mappings, through
 * the device file or the buffer's dma-buf. drm_gem_shmem_vm_ops' fault
 * takes the page index from the address alone, which is wrong for a
 * dma-buf mapped from a non-zero offset; here it is the fault's file
 * offset minus the buffer's fake offset (both mmap paths add that).
 */
static vm_fault_t hpu_bo_host_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct drm_gem_object *obj = vma->vm_private_data;
	struct drm_gem_shmem_object *shmem = to_drm_gem_shmem_obj(obj);
	unsigned long first = drm_vma_node_start(&obj->vma_node);
	unsigned long page = vmf->pgoff - first;
	vm_fault_t ret;

	dma_resv_lock(obj->resv, NULL);
	if (vmf->pgoff < first || page >= obj->size >> PAGE_SHIFT ||
	    !shmem->pages || shmem->madv < 0)
		ret = VM_FAULT_SIGBUS;
	else
		ret = vmf_insert_pfn(vma, vmf->address,
				     page_to_pfn(shmem->pages[page]));
	dma_resv_unlock(obj->resv);

	return ret;
}

/* A mapping is copied (fork, split): it holds the pages and the object. */
static void hpu_bo_host_vm_open(struct vm_area_struct *vma)
{
	drm_gem_shmem_vm_ops.open(vma);
}

static void hpu_bo_host_vm_close(struct vm_area_struct *vma)
{
	drm_gem_shmem_vm_ops.close(vma);
}

static const struct vm_operations_struct hpu_bo_host_vm_ops = {
	.fault = hpu_bo_host_fault,
	.open = hpu_bo_host_vm_open,
	.close = hpu_bo_host_vm_close,
};

static struct dma_buf *hpu_gem_prime_export(struct drm_gem_object *obj,
					    int flags);

static const struct drm_gem_object_funcs hpu_bo_host_funcs = {
	.free = hpu_bo_host_free,
	.export = hpu_gem_prime_export,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.vm_ops = &hpu_bo_host_vm_ops,
};

/**
 * hpu_gem_create_object() - &drm_driver.gem_create_object
 * @drm: the DRM device
 * @size: size of the object
 *
 * Allocates the &struct hpu_bo around every shmem object, whether
 * created by BO_CREATE or imported from another device's dma-buf.
 *
 * Return: the object's &drm_gem_object, or an ERR_PTR().
 */
struct drm_gem_object *hpu_gem_create_object(struct drm_device *drm,
					     size_t size)
{
	struct hpu_bo *bo;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo)
		return ERR_PTR(-ENOMEM);

	bo->kind = HPU_BO_HOST;
	bo->page_size = HPU_HOST_PAGE_SIZE;
	INIT_LIST_HEAD(&bo->blocks);
	INIT_LIST_HEAD(&bo->dma_link);
	/* The device snoops host memory: user space maps it cached. */
	bo->base.map_wc = false;
	bo->base.base.funcs = &hpu_bo_host_funcs;

	return &bo->base.base;
}

/*
 * Host buffers in 2 MiB pages. The device reads and writes host memory
 * through its MMU's 4 KiB pages, but the DMA engines copy a run of
 * physically contiguous pages as one transfer: a 64 MiB copy of
 * scattered 4 KiB pages costs a transfer per page, of 2 MiB pages one
 * per 1 MiB piece of the copy. So each device mounts its own tmpfs with
 * huge=within_size (the kernel's own shmem mount follows the system's
 * shmem_enabled, "never" by default) and makes its host buffers' files
 * there; a buffer's pages then come in 2 MiB folios where it has whole
 * 2 MiB of them and memory allows, in 4 KiB pages otherwise.
 */
static bool huge_host_bo = true;
module_param(huge_host_bo, bool, 0444);
MODULE_PARM_DESC(huge_host_bo,
		 "Back host buffers with transparent huge pages where possible (default: true)");

static void hpu_gem_fini(struct drm_device *drm, void *arg)
{
	struct vfsmount *mnt = arg;

	kern_unmount(mnt);
}

/**
 * hpu_gem_init() - mount the device's tmpfs for host buffers
 * @hdev: the device
 *
 * Leaves &hpu_device.gemfs NULL (host buffers on the kernel's shmem
 * mount, in 4 KiB pages) when the kernel has no transparent huge pages,
 * the huge_host_bo parameter is off, or the mount fails: that costs
 * speed only, so probe goes on.
 */
void hpu_gem_init(struct hpu_device *hdev)
{
	char opts[] = "huge=within_size";
	struct file_system_type *type;
	struct vfsmount *mnt;

	hdev->gemfs = NULL;
	if (!IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE) || !huge_host_bo)
		return;
	type = get_fs_type("tmpfs");
	if (!type)
		return;
	mnt = vfs_kern_mount(type, SB_KERNMOUNT, type->name, opts);
	if (IS_ERR(mnt)) {
		drm_notice(&hdev->drm, "host buffers in 4 KiB pages: tmpfs mount failed (%pe)\n",
			   mnt);
		return;
	}
	if (drmm_add_action_or_reset(&hdev->drm, hpu_gem_fini, mnt)) {
		drm_notice(&hdev->drm, "host buffers in 4 KiB pages: out of memory\n");
		return;
	}
	hdev->gemfs = mnt;
}

/*
 * Moves a new host buffer's backing file to @mnt, before anything has
 * used it (no page, mapping or dma-buf yet), keeping the allocation
 * flags the shmem helper gave its mapping.
 */
static int hpu_bo_host_refile(struct drm_gem_object *obj, struct vfsmount *mnt)
{
	struct file *filp;

	filp = shmem_file_setup_with_mnt(mnt, "hpu host buffer", obj->size,
					 VM_NORESERVE);
	if (IS_ERR(filp))
		return PTR_ERR(filp);
	mapping_set_gfp_mask(filp->f_mapping,
			     mapping_gfp_mask(obj->filp->f_mapping));
	fput(obj->filp);
	obj->filp = filp;
	return 0;
}

/**
 * hpu_bo_create_host() - create a host (shmem) buffer
 * @hdev: the device
 * @owner: the context charged for it
 * @size: bytes, a non-zero multiple of 4 KiB
 * @out: Out: the buffer, holding one reference
 *
 * Pages are allocated on first use (CPU fault or device mapping).
 *
 * Return: 0 or a negative error code.
 */
static int hpu_bo_create_host(struct hpu_device *hdev, struct hpu_vm *owner,
			      u64 size, struct hpu_bo **out)
{
	struct drm_gem_shmem_object *shmem;
	struct hpu_bo *bo;
	int ret;

	shmem = drm_gem_shmem_create(&hdev->drm, size);
	if (IS_ERR(shmem))
		return PTR_ERR(shmem);
	if (hdev->gemfs) {
		ret = hpu_bo_host_refile(&shmem->base, hdev->gemfs);
		if (ret) {
			drm_gem_object_put(&shmem->base);
			return ret;
		}
	}

	bo = to_hpu_bo(&shmem->base);
	hpu_bo_charge(bo, owner);
	*out = bo;
	return 0;
}

/* HBM buffers */

static void hpu_bo_hbm_free(struct drm_gem_object *obj)
{
	struct hpu_bo *bo = to_hpu_bo(obj);
	struct hpu_device *hdev = to_hpu_device(obj->dev);

	/* No mapping is left, so no engine can reach the memory any more. */
	hpu_hbm_free(hdev, &bo->blocks);
	hpu_bo_uncharge(bo);
	drm_gem_object_release(obj);
	kfree(bo);
}

static struct sg_table *hpu_bo_hbm_get_sg_table(struct drm_gem_object *obj)
{
	/* Device memory has no struct pages another device could map. */
	return ERR_PTR(-EOPNOTSUPP);
}

/*
 * hpu_bo_hbm_addr() - HBM offset of byte @off of an HBM buffer, and how
 * many bytes from there on are contiguous in HBM (to the end of its
 * block). The blocks of &hpu_bo.blocks back the buffer in list order and
 * do not change while it lives. Past the last block: 0, and @len 0.
 */
VISIBLE_IF_KUNIT u64 hpu_bo_hbm_addr(struct hpu_device *hdev, struct hpu_bo *bo,
				     u64 off, u64 *len)
{
	struct drm_buddy_block *block;
	u64 size;

	list_for_each_entry(block, &bo->blocks, link) {
		size = hpu_hbm_block_size(hdev, block);
		if (off < size) {
			*len = size - off;
			return hpu_hbm_block_addr(hdev, block) + off;
		}
		off -= size;
	}
	*len = 0;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_bo_hbm_addr);

/*
 * hpu_bo_hbm_fault_span() - the buffer offsets [@lo, @hi) a fault at
 * buffer offset @off maps: the 2 MiB around it, cut to the mapping, which
 * covers buffer offsets [@map_lo, @map_hi) (@off inside it).
 */
VISIBLE_IF_KUNIT void hpu_bo_hbm_fault_span(u64 off, u64 map_lo, u64 map_hi,
					    u64 *lo, u64 *hi)
{
	*lo = max(ALIGN_DOWN(off, SZ_2M), map_lo);
	*hi = min(ALIGN_DOWN(off, SZ_2M) + SZ_2M, map_hi);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_bo_hbm_fault_span);

/*
 * &vm_operations_struct.fault of an HBM buffer's CPU mapping: maps the
 * 2 MiB of BAR4 around the faulting page (what is left of it in the
 * mapping and the block). The mapping holds the buffer, so its HBM stays
 * allocated; once the device is unplugged, faults get SIGBUS and the
 * remove path has zapped what was mapped (hpu_gem_unmap_all()).
 */
static vm_fault_t hpu_bo_hbm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct drm_gem_object *obj = vma->vm_private_data;
	struct hpu_device *hdev = to_hpu_device(obj->dev);
	unsigned long first = drm_vma_node_start(&obj->vma_node);
	struct hpu_mmu *mmu = hdev->mmu;
	u64 off, lo, hi, hbm, len;
	unsigned long addr;
	vm_fault_t ret;
	int idx;

	if (vmf->pgoff < first ||
	    vmf->pgoff - first >= obj->size >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	if (!drm_dev_enter(obj->dev, &idx))
		return VM_FAULT_SIGBUS;
	down_read(&mmu->user_map_sem);
	ret = VM_FAULT_SIGBUS;
	if (mmu->user_map_off)
		goto out;

	/*
	 * Buffer offsets: the faulting page's, and the 2 MiB around it
	 * (HBM pages are 2 MiB at least, so one block holds them), cut to
	 * what the mapping covers.
	 */
	off = (u64)(vmf->pgoff - first) << PAGE_SHIFT;
	hbm = hpu_bo_hbm_addr(hdev, to_hpu_bo(obj), off, &len);
	if (!len)
		goto out;
	ret = vmf_insert_pfn(vma, vmf->address,
			     (mmu->bar_start + hbm) >> PAGE_SHIFT);
	if (ret & VM_FAULT_ERROR)
		goto out;
	/* The rest of the 2 MiB: best effort, the faulting page is in. */
	hpu_bo_hbm_fault_span(off, off - (vmf->address - vma->vm_start),
			      off + (vma->vm_end - vmf->address), &lo, &hi);
	hbm -= off - lo;
	addr = vmf->address - (unsigned long)(off - lo);
	for (; lo < hi; lo += PAGE_SIZE, addr += PAGE_SIZE, hbm += PAGE_SIZE) {
		if (lo == off)
			continue;
		if (vmf_insert_pfn(vma, addr, (mmu->bar_start + hbm) >> PAGE_SHIFT) &
		    VM_FAULT_ERROR)
			break;
	}
out:
	up_read(&mmu->user_map_sem);
	drm_dev_exit(idx);
	return ret;
}

static const struct vm_operations_struct hpu_bo_hbm_vm_ops = {
	.fault = hpu_bo_hbm_fault,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

/*
 * &drm_gem_object_funcs.mmap of an HBM buffer (through the device file
 * only: the dma-buf's mmap refuses HBM, hpu_gem_dmabuf_mmap()). Shared
 * mappings only: a private one would have to copy device memory on
 * write.
 */
static int hpu_bo_hbm_mmap(struct drm_gem_object *obj,
			   struct vm_area_struct *vma)
{
	struct hpu_device *hdev = to_hpu_device(obj->dev);

	/* BO_MMAP_OFFSET refuses these; nothing past BAR4 is ever mapped */
	if (!hdev->mmu->hbm_mappable)
		return -EOPNOTSUPP;
	if (is_cow_mapping(vma->vm_flags)) {
		drm_dbg(obj->dev, "mmap: an HBM buffer maps MAP_SHARED only\n");
		return -EINVAL;
	}
	vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_page_prot = pgprot_writecombine(vm_get_page_prot(vma->vm_flags));
	vma->vm_page_prot = pgprot_decrypted(vma->vm_page_prot);
	return 0;
}

static const struct drm_gem_object_funcs hpu_bo_hbm_funcs = {
	.free = hpu_bo_hbm_free,
	.export = hpu_gem_prime_export,
	.get_sg_table = hpu_bo_hbm_get_sg_table,
	.mmap = hpu_bo_hbm_mmap,
	.vm_ops = &hpu_bo_hbm_vm_ops,
};

/**
 * hpu_gem_vma_object() - the buffer a CPU mapping of this device maps
 * @hdev: the device
 * @vma: a mapping of the calling process; its mmap lock held
 * @addr: an address inside @vma
 * @offset: Out: the buffer offset @addr maps
 *
 * Recognises the mappings of HBM and host buffers made through this
 * device's file (hpu_bo_hbm_mmap(), drm_gem_shmem's mmap with
 * hpu_bo_host_vm_ops), for a registration that cannot pin their pages
 * (they are VM_PFNMAP) and maps the buffer itself instead.
 *
 * Return: the buffer with a reference taken; ERR_PTR(-ENOENT) when @vma
 * is not such a mapping; ERR_PTR(-EOPNOTSUPP) for another device's.
 */
struct drm_gem_object *hpu_gem_vma_object(struct hpu_device *hdev,
					  struct vm_area_struct *vma,
					  unsigned long addr, u64 *offset)
{
	struct drm_gem_object *obj;
	unsigned long first;

	if (vma->vm_ops != &hpu_bo_hbm_vm_ops &&
	    vma->vm_ops != &hpu_bo_host_vm_ops)
		return ERR_PTR(-ENOENT);
	obj = vma->vm_private_data;
	if (obj->dev != &hdev->drm)
		return ERR_PTR(-EOPNOTSUPP);
	first = drm_vma_node_start(&obj->vma_node);
	*offset = ((u64)(vma->vm_pgoff - first) << PAGE_SHIFT) +
		  (addr - vma->vm_start);
	drm_gem_object_get(obj);
	return obj;
}

/**
 * hpu_gem_unmap_all() - zap every CPU mapping of the device's buffers
 * @hdev: the device, unplugged (drm_dev_unplug() returned)
 *
 * HBM buffers are mapped through BAR4, which goes away with the device:
 * no process may keep a page-table entry for it. Host buffers fault
 * their pages back in.
 */
void hpu_gem_unmap_all(struct hpu_device *hdev)
{
	unmap_mapping_range(hdev->drm.anon_inode->i_mapping, 0, 0, 1);
}

/**
 * hpu_gem_user_map_off() - take BAR4 away from processes for a while
 * @hdev: the device, about to stop decoding memory (function level reset)
 *
 * Zaps every CPU mapping of the device file; until hpu_gem_user_map_on(),
 * a fault on an HBM mapping gets SIGBUS instead of a page of a BAR that
 * does not answer (an access to it would be an Unsupported Request, fatal
 * on some platforms). May sleep.
 */
void hpu_gem_user_map_off(struct hpu_device *hdev)
{
	struct hpu_mmu *mmu = hdev->mmu;

	down_write(&mmu->user_map_sem);
	mmu->user_map_off = true;
	hpu_gem_unmap_all(hdev);
	up_write(&mmu->user_map_sem);
}

/**
 * hpu_gem_user_map_on() - let processes map BAR4 again
 * @hdev: the device, decoding memory again
 */
void hpu_gem_user_map_on(struct hpu_device *hdev)
{
	struct hpu_mmu *mmu = hdev->mmu;

	down_write(&mmu->user_map_sem);
	mmu->user_map_off = false;
	up_write(&mmu->user_map_sem);
}

/**
 * hpu_bo_create_hbm() - create an HBM buffer
 * @hdev: the device
 * @owner: the context charged for it
 * @size: bytes, a non-zero multiple of @page_size
 * @page_size: power of two from 2 MiB to 1 GiB
 * @contiguous: one physically contiguous block
 * @out: Out: the buffer, holding one reference
 *
 * The memory is zero.
 *
 * Return: 0, -ENOMEM when HBM is full (nothing is left allocated), or
 * another negative error code.
 */
static int hpu_bo_create_hbm(struct hpu_device *hdev, struct hpu_vm *owner,
			     u64 size, u64 page_size, bool contiguous,
			     struct hpu_bo **out)
{
	struct hpu_bo *bo;
	int ret;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo)
		return -ENOMEM;

	bo->kind = HPU_BO_HBM;
	bo->page_size = page_size;
	INIT_LIST_HEAD(&bo->blocks);
	INIT_LIST_HEAD(&bo->dma_link);

	ret = hpu_hbm_alloc(hdev, size, page_size, contiguous, &bo->blocks);
	if (ret) {
		kfree(bo);
		return ret;
	}

	bo->base.base.funcs = &hpu_bo_hbm_funcs;
	drm_gem_private_object_init(&hdev->drm, &bo->base.base, size);
	hpu_bo_charge(bo, owner);
	*out = bo;
	return 0;
}

/* User-pointer buffers */

static void hpu_bo_userptr_unpin(struct hpu_bo *bo, unsigned long npages)
{
	unpin_user_pages_dirty_lock(bo->pages, npages, !bo->readonly);
	atomic64_sub(bo->npages, &bo->mm->pinned_vm);
	mmdrop(bo->mm);
	kvfree(bo->pages);
}

static void hpu_bo_userptr_free(struct drm_gem_object *obj)
{
	struct hpu_bo *bo = to_hpu_bo(obj);

	hpu_bo_dma_untrack(bo);
	if (!bo->dma_released)
		hpu_bo_userptr_dma_unmap(bo);
	sg_free_table(bo->sgt);
	kfree(bo->sgt);
	hpu_bo_userptr_unpin(bo, bo->npages);
	hpu_bo_uncharge(bo);
	drm_gem_object_release(obj);
	kfree(bo);
}

static struct sg_table *hpu_bo_userptr_get_sg_table(struct drm_gem_object *obj)
{
	struct hpu_bo *bo = to_hpu_bo(obj);

	return drm_prime_pages_to_sg(obj->dev, bo->pages, bo->npages);
}

static const struct drm_gem_object_funcs hpu_bo_userptr_funcs = {
	.free = hpu_bo_userptr_free,
	.export = hpu_gem_prime_export,
	.get_sg_table = hpu_bo_userptr_get_sg_table,
};

/* Count @npages against the caller's RLIMIT_MEMLOCK, as RDMA does. */
static int hpu_bo_userptr_account(struct hpu_device *hdev, struct hpu_bo *bo)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	s64 pinned;

	pinned = atomic64_add_return(bo->npages, &bo->mm->pinned_vm);
	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(bo->npages, &bo->mm->pinned_vm);
		drm_dbg(&hdev->drm, "userptr: %lu pages exceed RLIMIT_MEMLOCK\n",
			bo->npages);
		return -ENOMEM;
	}
	return 0;
}

/**
 * hpu_bo_create_userptr() - pin user memory into a buffer
 * @hdev: the device
 * @owner: the context charged for it
 * @addr: user address, page aligned
 * @size: bytes, a non-zero multiple of the page size
 * @readonly: the device may only read the pages
 * @out: Out: the buffer, holding one reference
 *
 * Pins the pages long term (they stay until the buffer is freed) and
 * maps them for the device's DMA. May sleep.
 *
 * Return: 0; -EFAULT if part of the range is not mapped (or not writable
 * without @readonly); -ENOMEM past RLIMIT_MEMLOCK or out of memory.
 */
static int hpu_bo_create_userptr(struct hpu_device *hdev,
				 struct hpu_vm *owner, u64 addr, u64 size,
				 bool readonly, struct hpu_bo **out)
{
	struct drm_device *drm = &hdev->drm;
	unsigned int gup_flags = FOLL_LONGTERM;
	unsigned long pinned = 0;
	enum dma_data_direction dir;
	struct hpu_bo *bo;
	int ret;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo)
		return -ENOMEM;

	bo->kind = HPU_BO_USERPTR;
	bo->page_size = HPU_HOST_PAGE_SIZE;
	bo->readonly = readonly;
	bo->npages = size >> PAGE_SHIFT;
	INIT_LIST_HEAD(&bo->blocks);
	INIT_LIST_HEAD(&bo->dma_link);

	bo->pages = kvmalloc_array(bo->npages, sizeof(*bo->pages),
				   GFP_KERNEL_ACCOUNT);
	if (!bo->pages) {
		ret = -ENOMEM;
		goto err_free_bo;
	}

	bo->mm = current->mm;
	mmgrab(bo->mm);
	ret = hpu_bo_userptr_account(hdev, bo);
	if (ret) {
		mmdrop(bo->mm);
		kvfree(bo->pages);
		goto err_free_bo;
	}

	if (!readonly)
		gup_flags |= FOLL_WRITE;

	while (pinned < bo->npages) {
		ret = pin_user_pages_fast(addr + pinned * PAGE_SIZE,
					  min(bo->npages - pinned,
					      HPU_USERPTR_PIN_CHUNK),
					  gup_flags, bo->pages + pinned);
		if (ret <= 0) {
			if (!ret)
				ret = -EFAULT;
			drm_dbg(drm, "userptr: cannot pin 0x%llx (page %lu of %lu): %d\n",
				addr, pinned, bo->npages, ret);
			goto err_unpin;
		}
		pinned += ret;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_unpin;
		}
	}

	bo->sgt = kzalloc(sizeof(*bo->sgt), GFP_KERNEL_ACCOUNT);
	if (!bo->sgt) {
		ret = -ENOMEM;
		goto err_unpin;
	}

	ret = sg_alloc_table_from_pages(bo->sgt, bo->pages, bo->npages, 0,
					size, GFP_KERNEL_ACCOUNT);
	if (ret)
		goto err_free_sgt;

	dir = readonly ? DMA_TO_DEVICE : DMA_BIDIRECTIONAL;
	/*
	 * The process may register the same pages again (overlapping user
	 * pointers are legal): the CPU syncs are done here and at unmap
	 * explicitly, so that the mapping itself skips them, which is what
	 * tells the DMA-API debug code that overlapping mappings are meant.
	 */
	ret = dma_map_sgtable(drm->dev, bo->sgt, dir, DMA_ATTR_SKIP_CPU_SYNC);
	if (!ret)
		dma_sync_sgtable_for_device(drm->dev, bo->sgt, dir);
	if (ret) {
		drm_dbg(drm, "userptr: cannot map %lu pages for DMA: %d\n",
			bo->npages, ret);
		goto err_free_table;
	}

	bo->base.base.funcs = &hpu_bo_userptr_funcs;
	drm_gem_private_object_init(drm, &bo->base.base, size);
	hpu_bo_charge(bo, owner);
	hpu_bo_dma_track(bo);
	*out = bo;
	return 0;

err_free_table:
	sg_free_table(bo->sgt);
err_free_sgt:
	kfree(bo->sgt);
err_unpin:
	hpu_bo_userptr_unpin(bo, pinned);
err_free_bo:
	kfree(bo);
	return ret;
}

/*
 * Pin a host buffer's pages and map them for the device, once: what
 * drm_gem_shmem_get_pages_sgt() does, but for the CPU sync. The same pages
 * may be mapped for other devices too, before or after, through the
 * buffer's dma-buf (a second HPU importing it, say); drm_gem_map_dma_buf()
 * maps those with DMA_ATTR_SKIP_CPU_SYNC, and the DMA API's debug checks
 * report a writable mapping made without the flag over an existing one
 * ("overlapping mappings aren't supported"). So this mapping skips the
 * CPU sync too, and the sync is done here (for the device) and in
 * hpu_bo_host_dma_unmap() (for the CPU): the flag is how the DMA API is
 * told that the overlap is meant. The mapping is kept in &shmem->sgt with
 * one pin of the pages, as the helper keeps its own, so that the shmem
 * helpers see what they expect; this file's free and removal paths unmap
 * it, never the helpers' (drm_gem_shmem_free() would unmap it without the
 * flag: the same effect, but not the pairing the DMA API asks for).
 */
static struct sg_table *hpu_bo_host_dma_map(struct hpu_bo *bo)
{
	struct drm_gem_shmem_object *shmem = &bo->base;
	struct device *dev = shmem->base.dev->dev;
	struct sg_table *sgt;
	int ret;

	ret = dma_resv_lock_interruptible(shmem->base.resv, NULL);
	if (ret)
		return ERR_PTR(ret);
	if (shmem->sgt) {
		sgt = shmem->sgt;
		goto out_unlock;
	}

	ret = drm_gem_shmem_pin_locked(shmem);
	if (ret)
		goto err_unlock;
	sgt = drm_gem_shmem_get_sg_table(shmem);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		goto err_unpin;
	}
	ret = dma_map_sgtable(dev, sgt, DMA_BIDIRECTIONAL,
			      DMA_ATTR_SKIP_CPU_SYNC);
	if (ret)
		goto err_free_sgt;
	dma_sync_sgtable_for_device(dev, sgt, DMA_BIDIRECTIONAL);
	shmem->sgt = sgt;
out_unlock:
	dma_resv_unlock(shmem->base.resv);
	return sgt;

err_free_sgt:
	sg_free_table(sgt);
	kfree(sgt);
err_unpin:
	drm_gem_shmem_unpin_locked(shmem);
err_unlock:
	dma_resv_unlock(shmem->base.resv);
	return ERR_PTR(ret);
}

/**
 * hpu_bo_dma_sgt() - the DMA addresses of a host or user-pointer buffer
 * @bo: a %HPU_BO_HOST or %HPU_BO_USERPTR buffer
 *
 * For a shmem buffer, pins its pages and maps them for the device on the
 * first call (they stay until the buffer is freed); takes the object's
 * reservation lock, so call it without holding another.
 *
 * Return: the sg table, DMA mapped for the device, or an ERR_PTR().
 */
struct sg_table *hpu_bo_dma_sgt(struct hpu_bo *bo)
{
	struct sg_table *sgt;

	if (bo->kind == HPU_BO_USERPTR)
		return bo->sgt;
	if (bo->kind != HPU_BO_HOST)
		return ERR_PTR(-EINVAL);
	if (bo->base.base.import_attach) {
		/* Mapped at import; unmapped only when the device was removed. */
		return bo->base.sgt ?: ERR_PTR(-ENODEV);
	}
	sgt = hpu_bo_host_dma_map(bo);
	if (!IS_ERR(sgt))
		hpu_bo_dma_track(bo);
	return sgt;
}

/* PRIME */

/*
 * &dma_buf_ops.map_dma_buf: a read-only buffer (a user pointer pinned
 * without write access) is mapped for device reads only, whoever the
 * importer is: a device that asks for more would write pages the
 * process could only read.
 */
static struct sg_table *hpu_gem_map_dma_buf(struct dma_buf_attachment *attach,
					    enum dma_data_direction dir)
{
	struct drm_gem_object *obj = attach->dmabuf->priv;

	if (to_hpu_bo(obj)->readonly && dir != DMA_TO_DEVICE) {
		drm_dbg(obj->dev, "dma-buf: %s maps a read-only buffer for writing (direction %d)\n",
			dev_name(attach->dev), dir);
		return ERR_PTR(-EACCES);
	}
	return drm_gem_map_dma_buf(attach, dir);
}

/*
 * &dma_buf_ops.mmap: mmap(2) of the dma-buf. A host buffer maps as
 * through the device file (drm_gem_prime_mmap() with the buffer's fake
 * offset, which it needs to exist: hpu_bo_host_fault() subtracts it).
 * Accel devices have no primary minor, so drm_gem_prime_mmap() must not
 * fall back to the device file's mmap for the other kinds. HBM maps
 * through the device file only: those mappings are zapped when the device
 * goes away (hpu_gem_unmap_all()), which a mapping of the dma-buf's own
 * file would escape. A user pointer's pages are mapped by their owner
 * already (another route to them could carry more rights than it had).
 */
static int hpu_gem_dmabuf_mmap(struct dma_buf *dmabuf,
			       struct vm_area_struct *vma)
{
	struct drm_gem_object *obj = dmabuf->priv;
	int ret;

	if (to_hpu_bo(obj)->kind != HPU_BO_HOST) {
		drm_dbg(obj->dev, "dma-buf: mmap of a buffer that is not host memory\n");
		return -ENODEV;
	}

	ret = drm_gem_create_mmap_offset(obj);
	if (ret)
		return ret;
	return drm_gem_prime_mmap(obj, vma);
}

/* drm_gem_prime_dmabuf_ops but for map_dma_buf and mmap. */
static const struct dma_buf_ops hpu_dmabuf_ops = {
	.cache_sgt_mapping = true,
	.attach = drm_gem_map_attach,
	.detach = drm_gem_map_detach,
	.map_dma_buf = hpu_gem_map_dma_buf,
	.unmap_dma_buf = drm_gem_unmap_dma_buf,
	.release = drm_gem_dmabuf_release,
	.mmap = hpu_gem_dmabuf_mmap,
	.vmap = drm_gem_dmabuf_vmap,
	.vunmap = drm_gem_dmabuf_vunmap,
};

/**
 * hpu_gem_prime_export() - &drm_gem_object_funcs.export of every kind
 * @obj: the buffer; never an imported one (the DRM core hands out the
 *	original dma-buf of those)
 * @flags: file flags of the dma-buf (DRM_CLOEXEC, DRM_RDWR)
 *
 * The dma-buf of a read-only buffer is a read-only file whatever
 * @flags ask for.
 *
 * Return: the dma-buf, or an ERR_PTR().
 */
static struct dma_buf *hpu_gem_prime_export(struct drm_gem_object *obj,
					    int flags)
{
	struct dma_buf_export_info exp_info = {
		.exp_name = KBUILD_MODNAME,
		.owner = THIS_MODULE,
		.ops = &hpu_dmabuf_ops,
		.size = obj->size,
		.flags = flags,
		.priv = obj,
		.resv = obj->resv,
	};

	if (to_hpu_bo(obj)->readonly)
		exp_info.flags = (flags & ~O_ACCMODE) | O_RDONLY;
	return drm_gem_dmabuf_export(obj->dev, &exp_info);
}

/*
 * Import another HPU's read-only buffer: attached DMA_TO_DEVICE (the
 * exporter refuses anything else) and marked read-only, so that VM_BIND
 * maps it only with DRM_HPU_VM_READONLY (no WRITE bit in the device's
 * page tables). drm_gem_prime_import_dev() but for the direction.
 */
static struct drm_gem_object *
hpu_gem_prime_import_readonly(struct drm_device *drm, struct dma_buf *dmabuf)
{
	struct dma_buf_attachment *attach;
	struct drm_gem_object *obj;
	struct sg_table *sgt;
	int ret;

	attach = dma_buf_attach(dmabuf, drm->dev);
	if (IS_ERR(attach))
		return ERR_CAST(attach);
	get_dma_buf(dmabuf);

	sgt = dma_buf_map_attachment_unlocked(attach, DMA_TO_DEVICE);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		goto err_detach;
	}

	obj = drm_gem_shmem_prime_import_sg_table(drm, attach, sgt);
	if (IS_ERR(obj)) {
		ret = PTR_ERR(obj);
		goto err_unmap;
	}

	obj->import_attach = attach;
	obj->resv = dmabuf->resv;
	to_hpu_bo(obj)->readonly = true;
	return obj;

err_unmap:
	dma_buf_unmap_attachment_unlocked(attach, sgt, DMA_TO_DEVICE);
err_detach:
	dma_buf_detach(dmabuf, attach);
	dma_buf_put(dmabuf);
	return ERR_PTR(ret);
}

/**
 * hpu_gem_prime_import() - &drm_driver.gem_prime_import
 * @drm: the importing device
 * @dmabuf: the dma-buf
 *
 * A dma-buf of this device gives its own object back; a read-only buffer
 * of another HPU is imported read-only; anything else as a host buffer
 * by drm_gem_prime_import().
 *
 * Return: the object, holding a reference, or an ERR_PTR().
 */
struct drm_gem_object *hpu_gem_prime_import(struct drm_device *drm,
					    struct dma_buf *dmabuf)
{
	struct drm_gem_object *obj = dmabuf->priv;

	if (dmabuf->ops == &hpu_dmabuf_ops && obj->dev == drm) {
		/* As drm_gem_prime_import_dev() does for its own dma-bufs. */
		drm_gem_object_get(obj);
		return obj;
	}
	if (dmabuf->ops == &hpu_dmabuf_ops && to_hpu_bo(obj)->readonly)
		obj = hpu_gem_prime_import_readonly(drm, dmabuf);
	else
		obj = drm_gem_prime_import(drm, dmabuf);
	/* The attachment is mapped for the device until the object goes. */
	if (!IS_ERR(obj) && obj->import_attach)
		hpu_bo_dma_track(to_hpu_bo(obj));
	return obj;
}

/* ioctls */

/**
 * hpu_bo_create_ioctl() - DRM_IOCTL_HPU_BO_CREATE
 * @drm: the DRM device
 * @data: the &struct drm_hpu_bo_create copied in by the DRM core
 * @file: the DRM file
 *
 * Creates an HBM or host buffer charged to the calling context and
 * returns a handle to it and its size rounded up to its page size.
 *
 * Return: 0; -EINVAL for unknown flags, not exactly one of HBM and HOST,
 * CONTIGUOUS or a page size on a host buffer, a page size that is not a
 * power of two from 2 MiB to 1 GiB, a zero size or one that overflows
 * when rounded up; -ENOMEM when HBM (or memory) is exhausted, with
 * nothing allocated; -ENODEV once the device is unplugged.
 */
int hpu_bo_create_ioctl(struct drm_device *drm, void *data,
			struct drm_file *file)
{
	struct hpu_device *hdev = to_hpu_device(drm);
	struct hpu_file_priv *fpriv = file->driver_priv;
	struct drm_hpu_bo_create *args = data;
	u32 kind = args->flags & (DRM_HPU_BO_HBM | DRM_HPU_BO_HOST);
	u64 page_size, size;
	struct hpu_bo *bo;
	u32 handle;
	int idx, ret;

	if (args->flags & ~(DRM_HPU_BO_HBM | DRM_HPU_BO_HOST |
			    DRM_HPU_BO_CONTIGUOUS)) {
		drm_dbg(drm, "BO_CREATE: unknown flags 0x%x\n", args->flags);
		return -EINVAL;
	}
	if (kind != DRM_HPU_BO_HBM && kind != DRM_HPU_BO_HOST) {
		drm_dbg(drm, "BO_CREATE: flags 0x%x must have exactly one of HBM and HOST\n",
			args->flags);
		return -EINVAL;
	}
	if (!args->size) {
		drm_dbg(drm, "BO_CREATE: size is zero\n");
		return -EINVAL;
	}

	if (kind == DRM_HPU_BO_HOST) {
		if (args->flags & DRM_HPU_BO_CONTIGUOUS) {
			drm_dbg(drm, "BO_CREATE: CONTIGUOUS is for HBM buffers only\n");
			return -EINVAL;
		}
		if (args->page_size) {
			drm_dbg(drm, "BO_CREATE: page_size must be zero for a host buffer\n");
			return -EINVAL;
		}
		page_size = PAGE_SIZE;
	} else {
		page_size = args->page_size ?: HPU_HBM_PAGE_SIZE;
		if (!is_power_of_2(page_size) ||
		    page_size < HPU_HBM_PAGE_SIZE ||
		    page_size > HPU_HBM_PAGE_SIZE_MAX) {
			drm_dbg(drm, "BO_CREATE: page_size 0x%llx is not a power of two from 2 MiB to 1 GiB\n",
				args->page_size);
			return -EINVAL;
		}
	}

	if (args->size > U64_MAX - (page_size - 1)) {
		drm_dbg(drm, "BO_CREATE: size 0x%llx overflows when rounded up\n",
			args->size);
		return -EINVAL;
	}
	size = round_up(args->size, page_size);

	if (kind == DRM_HPU_BO_HBM && size > hdev->hbm->size) {
		drm_dbg(drm, "BO_CREATE: 0x%llx bytes exceed the device's 0x%llx bytes of HBM\n",
			size, hdev->hbm->size);
		return -ENOMEM;
	}
	if (kind == DRM_HPU_BO_HOST && size >> PAGE_SHIFT > totalram_pages()) {
		drm_dbg(drm, "BO_CREATE: 0x%llx bytes exceed system memory\n",
			size);
		return -ENOMEM;
	}

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	if (kind == DRM_HPU_BO_HBM)
		ret = hpu_bo_create_hbm(hdev, fpriv->vm, size, page_size,
					args->flags & DRM_HPU_BO_CONTIGUOUS,
					&bo);
	else
		ret = hpu_bo_create_host(hdev, fpriv->vm, size, &bo);
	if (ret) {
		drm_dbg(drm, "BO_CREATE: cannot allocate 0x%llx bytes of %s: %d\n",
			size, kind == DRM_HPU_BO_HBM ? "HBM" : "host memory",
			ret);
		goto out;
	}

	ret = drm_gem_handle_create(file, &bo->base.base, &handle);
	drm_gem_object_put(&bo->base.base);
	if (ret)
		goto out;

	args->size = size;
	args->handle = handle;
out:
	drm_dev_exit(idx);
	return ret;
}

/**
 * hpu_bo_userptr_ioctl() - DRM_IOCTL_HPU_BO_USERPTR
 * @drm: the DRM device
 * @data: the &struct drm_hpu_bo_userptr copied in by the DRM core
 * @file: the DRM file
 *
 * Pins the caller's pages at &drm_hpu_bo_userptr.addr into a buffer
 * object charged to the calling context.
 *
 * Return: 0; -EINVAL for unknown flags, a zero size, an address or size
 * not a multiple of 4 KiB, or a range that wraps; -EFAULT for a range
 * outside the user address space or not entirely mapped (or not
 * writable, without READONLY); -ENOMEM past RLIMIT_MEMLOCK or system
 * memory; -ENODEV once the device is unplugged.
 */
int hpu_bo_userptr_ioctl(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct hpu_device *hdev = to_hpu_device(drm);
	struct hpu_file_priv *fpriv = file->driver_priv;
	struct drm_hpu_bo_userptr *args = data;
	struct hpu_bo *bo;
	u32 handle;
	int idx, ret;

	if (args->flags & ~DRM_HPU_USERPTR_READONLY) {
		drm_dbg(drm, "BO_USERPTR: unknown flags 0x%x\n", args->flags);
		return -EINVAL;
	}
	if (!args->size) {
		drm_dbg(drm, "BO_USERPTR: size is zero\n");
		return -EINVAL;
	}
	if (!PAGE_ALIGNED(args->addr) || !PAGE_ALIGNED(args->size)) {
		drm_dbg(drm, "BO_USERPTR: address 0x%llx or size 0x%llx is not page aligned\n",
			args->addr, args->size);
		return -EINVAL;
	}
	if (args->addr + args->size < args->addr) {
		drm_dbg(drm, "BO_USERPTR: 0x%llx+0x%llx wraps around\n",
			args->addr, args->size);
		return -EINVAL;
	}
	if (!access_ok(u64_to_user_ptr(args->addr), args->size)) {
		drm_dbg(drm, "BO_USERPTR: 0x%llx+0x%llx is outside the user address space\n",
			args->addr, args->size);
		return -EFAULT;
	}
	if (args->size >> PAGE_SHIFT > totalram_pages()) {
		drm_dbg(drm, "BO_USERPTR: 0x%llx bytes exceed system memory\n",
			args->size);
		return -ENOMEM;
	}

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	ret = hpu_bo_create_userptr(hdev, fpriv->vm, args->addr, args->size,
				    args->flags & DRM_HPU_USERPTR_READONLY,
				    &bo);
	if (ret)
		goto out;

	ret = drm_gem_handle_create(file, &bo->base.base, &handle);
	drm_gem_object_put(&bo->base.base);
	if (ret)
		goto out;

	args->handle = handle;
out:
	drm_dev_exit(idx);
	return ret;
}

/**
 * hpu_bo_mmap_offset_ioctl() - DRM_IOCTL_HPU_BO_MMAP_OFFSET
 * @drm: the DRM device
 * @data: the &struct drm_hpu_bo_mmap_offset copied in by the DRM core
 * @file: the DRM file
 *
 * Return: 0; -EINVAL for a non-zero pad or a user-pointer buffer;
 * -EOPNOTSUPP for an HBM buffer on a device whose BAR4 does not cover HBM
 * (before spec version 8); -ENOENT for an unknown handle; -ENODEV once the
 * device is unplugged.
 */
int hpu_bo_mmap_offset_ioctl(struct drm_device *drm, void *data,
			     struct drm_file *file)
{
	struct drm_hpu_bo_mmap_offset *args = data;
	struct drm_gem_object *obj;
	int idx, ret;

	if (args->pad) {
		drm_dbg(drm, "BO_MMAP_OFFSET: pad is not zero\n");
		return -EINVAL;
	}

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj) {
		drm_dbg(drm, "BO_MMAP_OFFSET: no buffer with handle %u\n",
			args->handle);
		return -ENOENT;
	}

	if (!drm_dev_enter(drm, &idx)) {
		ret = -ENODEV;
		goto out_put;
	}

	switch (to_hpu_bo(obj)->kind) {
	case HPU_BO_HOST:
		break;
	case HPU_BO_HBM:
		if (to_hpu_device(drm)->mmu->hbm_mappable)
			break;
		drm_dbg(drm, "BO_MMAP_OFFSET: handle %u is HBM, which this device's BAR4 does not cover\n",
			args->handle);
		ret = -EOPNOTSUPP;
		goto out;
	default:
		drm_dbg(drm, "BO_MMAP_OFFSET: handle %u is a user-pointer buffer (map the memory itself)\n",
			args->handle);
		ret = -EINVAL;
		goto out;
	}

	ret = drm_gem_create_mmap_offset(obj);
	if (ret)
		goto out;
	args->offset = drm_vma_node_offset_addr(&obj->vma_node);
out:
	drm_dev_exit(idx);
out_put:
	drm_gem_object_put(obj);
	return ret;
}
