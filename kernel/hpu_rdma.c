// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: the RoCE v2 engine (spec version 7, part 2) as an auxiliary device.
 *
 * A device with NIC ports and the engine's register blocks gets a second
 * auxiliary device, "hpu.rdma.<id>", added and deleted by hpu_nic.c with
 * "hpu.en.<id>" (so it goes away before every reset and comes back after).
 * hpu_ib.ko binds to it and registers the ib_device. What it needs of
 * hpu.ko is exported here (namespace HPU_RDMA): the register blocks, the
 * event-queue interrupt, the doorbell pages' bus addresses, the DMA device
 * and RDMA address spaces: an ASID from the same per-user pool as compute
 * contexts, its page tables, and mappings of pinned host pages or of
 * dma-bufs (HBM of this device) at device addresses hpu.ko chooses.
 * Documentation/driver/rdma.md.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/auxiliary_bus.h>
#include <linux/dma-buf.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/pci.h>
#include <linux/slab.h>

#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>

#include "hpu_drv.h"
#include "hpu_gem.h"
#include "hpu_nic.h"
#include "hpu_rdma.h"
#include "hpu_regs.h"
#include "hpu_reset.h"
#include "hpu_vm.h"

/**
 * struct hpu_rdma_as - an RDMA address space (one per ucontext)
 * @vm: the address space: ASID, page tables, mappings. Its own lock
 *	protects the mappings; this structure is constant.
 * @hdev: the device.
 */
struct hpu_rdma_as {
	struct hpu_vm *vm;
	struct hpu_device *hdev;
};

static struct hpu_device *hpu_rdma_hdev(struct auxiliary_device *adev)
{
	return to_hpu_nic_adev(adev)->hdev;
}

/**
 * hpu_rdma_num_ports() - number of ports of the RoCE engine
 * @adev: the auxiliary device hpu_ib.ko is bound to
 *
 * The same ports as the Ethernet device's (hpu_nic_num_ports()).
 *
 * Return: the number of ports, 1 to %HPU_NIC_MAX_PORTS.
 */
unsigned int hpu_rdma_num_ports(struct auxiliary_device *adev)
{
	return to_hpu_nic_adev(adev)->num_ports;
}
EXPORT_SYMBOL_NS_GPL(hpu_rdma_num_ports, HPU_RDMA);

/**
 * hpu_rdma_ctrl_regs() - the engine's control block
 * @adev: the auxiliary device hpu_ib.ko is bound to
 *
 * Capabilities, command interface, event queue and counters (the
 * HPU_ROCE_* offsets), valid while the driver is bound to @adev.
 *
 * Return: the mapping of BAR0 + %HPU_ROCE_BASE.
 */
void __iomem *hpu_rdma_ctrl_regs(struct auxiliary_device *adev)
{
	return hpu_rdma_hdev(adev)->regs + HPU_ROCE_BASE;
}
EXPORT_SYMBOL_NS_GPL(hpu_rdma_ctrl_regs, HPU_RDMA);

/**
 * hpu_rdma_port_regs() - a port's RoCE registers
 * @adev: the auxiliary device hpu_ib.ko is bound to
 * @port: the port, below hpu_rdma_num_ports()
 *
 * Enable, GID table and counters (the HPU_ROCE_PORT_* offsets), at offset
 * %HPU_NIC_ROCE_OFFSET of the port's block; valid while bound. The
 * Ethernet registers of the block are hpu_en.ko's: not reachable here.
 *
 * Return: the mapping, or NULL for a port that does not exist.
 */
void __iomem *hpu_rdma_port_regs(struct auxiliary_device *adev,
				 unsigned int port)
{
	if (port >= hpu_rdma_num_ports(adev))
		return NULL;
	return hpu_rdma_hdev(adev)->regs + HPU_ROCE_PORT_BASE(port);
}
EXPORT_SYMBOL_NS_GPL(hpu_rdma_port_regs, HPU_RDMA);

/**
 * hpu_rdma_eq_irq() - Linux interrupt number of the engine's event queue
 * @adev: the auxiliary device hpu_ib.ko is bound to
 *
 * MSI-X vector %HPU_VEC_ROCE; the caller requests and frees it itself,
 * while bound to @adev.
 *
 * Return: the interrupt number.
 */
int hpu_rdma_eq_irq(struct auxiliary_device *adev)
{
	return pci_irq_vector(hpu_rdma_hdev(adev)->pdev, HPU_VEC_ROCE);
}
EXPORT_SYMBOL_NS_GPL(hpu_rdma_eq_irq, HPU_RDMA);

/**
 * hpu_rdma_reset_request() - ask for a hard reset of the device
 * @adev: the auxiliary device hpu_ib.ko is bound to
 * @reason: for the log
 *
 * For an engine the driver can no longer command (a command that did not
 * complete): only a hard reset brings it back, and it deletes @adev first
 * (hpu_nic_reset_prepare()). Queues the reset and returns; any context.
 */
void hpu_rdma_reset_request(struct auxiliary_device *adev, const char *reason)
{
	hpu_reset_schedule(hpu_rdma_hdev(adev), HPU_RESET_HARD, reason);
}
EXPORT_SYMBOL_NS_GPL(hpu_rdma_reset_request, HPU_RDMA);

/**
 * hpu_rdma_num_db_pages() - doorbell pages of the engine
 * @adev: the auxiliary device hpu_ib.ko is bound to
 *
 * Return: the number of pages inside BAR0, at most %HPU_ROCE_DB_PAGES.
 */
unsigned int hpu_rdma_num_db_pages(struct auxiliary_device *adev)
{
	struct pci_dev *pdev = hpu_rdma_hdev(adev)->pdev;
	resource_size_t len = pci_resource_len(pdev, HPU_BAR_REGS);

	if (len <= HPU_ROCE_DB_BASE)
		return 0;
	return min_t(u64, (len - HPU_ROCE_DB_BASE) / HPU_ROCE_DB_PAGE_SIZE,
		     HPU_ROCE_DB_PAGES);
}
EXPORT_SYMBOL_NS_GPL(hpu_rdma_num_db_pages, HPU_RDMA);

/**
 * hpu_rdma_db_page_addr() - bus address of a doorbell page
 * @adev: the auxiliary device hpu_ib.ko is bound to
 * @page: the page, below hpu_rdma_num_db_pages()
 *
 * For rdma_user_mmap_io() into the one process that owns the page. The
 * page is one 4 KiB register page of BAR0: nothing else shares it.
 *
 * Return: the CPU physical address of the page.
 */
phys_addr_t hpu_rdma_db_page_addr(struct auxiliary_device *adev,
				  unsigned int page)
{
	struct pci_dev *pdev = hpu_rdma_hdev(adev)->pdev;

	return pci_resource_start(pdev, HPU_BAR_REGS) + HPU_ROCE_DB_PAGE(page);
}
EXPORT_SYMBOL_NS_GPL(hpu_rdma_db_page_addr, HPU_RDMA);

/**
 * hpu_rdma_dma_device() - the device to DMA-map RDMA memory against
 * @adev: the auxiliary device hpu_ib.ko is bound to
 *
 * The PCI function: the event ring and pinned user pages are mapped
 * against it (through the IOMMU if there is one). Also the parent of the
 * Ethernet auxiliary device, which is how hpu_ib.ko finds the netdevs.
 *
 * Return: the PCI function's &struct device.
 */
struct device *hpu_rdma_dma_device(struct auxiliary_device *adev)
{
	return &hpu_rdma_hdev(adev)->pdev->dev;
}
EXPORT_SYMBOL_NS_GPL(hpu_rdma_dma_device, HPU_RDMA);

/**
 * hpu_rdma_as_create() - create an RDMA address space
 * @adev: the auxiliary device hpu_ib.ko is bound to
 * @out: Out: the address space
 *
 * Takes an ASID from the pool compute contexts use, counted against the
 * calling user's limit of contexts (Documentation/driver/limits.md), with
 * an empty page-table root, and puts it on the device. Call from the
 * process that will own it. May sleep.
 *
 * Return: 0; -EBUSY when no ASID is free or the user has its limit;
 * -ENOMEM; -ENODEV when the device is gone; -ETIMEDOUT when the device
 * does not complete the TLB invalidation.
 */
int hpu_rdma_as_create(struct auxiliary_device *adev,
		       struct hpu_rdma_as **out)
{
	struct hpu_device *hdev = hpu_rdma_hdev(adev);
	struct hpu_rdma_as *as;
	int idx, ret;

	if (!drm_dev_enter(&hdev->drm, &idx))
		return -ENODEV;
	as = kzalloc(sizeof(*as), GFP_KERNEL_ACCOUNT);
	if (!as) {
		ret = -ENOMEM;
		goto out;
	}
	as->hdev = hdev;
	ret = hpu_vm_create(hdev, &as->vm);
	if (ret) {
		kfree(as);
		goto out;
	}
	hpu_reset_read_lock(hdev);
	ret = hpu_vm_activate(as->vm);
	hpu_reset_read_unlock(hdev);
	if (ret) {
		hpu_vm_destroy(as->vm);
		kfree(as);
		goto out;
	}
	*out = as;
out:
	drm_dev_exit(idx);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(hpu_rdma_as_create, HPU_RDMA);

/**
 * hpu_rdma_as_asid() - the ASID of an RDMA address space
 * @as: the address space
 *
 * Return: the ASID, for the engine's object images.
 */
u32 hpu_rdma_as_asid(struct hpu_rdma_as *as)
{
	return as->vm->asid;
}
EXPORT_SYMBOL_NS_GPL(hpu_rdma_as_asid, HPU_RDMA);

/**
 * hpu_rdma_as_map_sgt() - map pinned host pages
 * @as: the address space
 * @sgt: the pages (pinned by hpu_ib.ko), DMA-mapped against
 *	hpu_rdma_dma_device(); the caller keeps them pinned until
 *	hpu_rdma_as_unmap() returned 0
 * @size: bytes to map from the first page, a multiple of 4 KiB
 * @writable: the device may write the pages
 * @va: Out: the device address of the first page
 *
 * Counts against the context's limit of mappings. May sleep.
 *
 * Return: 0; -EINVAL for a bad size; -ENOSPC at the limit of mappings or
 * page tables; -ENOMEM; -ENODEV when the device is gone; -EIO after a
 * failure that may have left the device able to reach the pages (never
 * release them then).
 */
int hpu_rdma_as_map_sgt(struct hpu_rdma_as *as, struct sg_table *sgt,
			u64 size, bool writable, u64 *va)
{
	int idx, ret;

	if (!size || !IS_ALIGNED(size, HPU_HOST_PAGE_SIZE))
		return -EINVAL;
	if (!drm_dev_enter(&as->hdev->drm, &idx))
		return -ENODEV;
	ret = hpu_vm_map_sgt(as->vm, sgt, size, va, !writable);
	drm_dev_exit(idx);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(hpu_rdma_as_map_sgt, HPU_RDMA);

/*
 * Map [@offset, @offset + @size) of a buffer of this device as it is (HBM
 * through HBM page-table entries), whole device pages of it; the mapping
 * takes its own reference to @obj. Inside drm_dev_enter().
 */
static int hpu_rdma_map_obj(struct hpu_rdma_as *as, struct drm_gem_object *obj,
			    u64 offset, u64 size, bool writable, u64 *map_va,
			    u64 *va)
{
	struct hpu_bo *bo = to_hpu_bo(obj);
	u64 start, end;
	int ret;

	if (!size || offset >= obj->size || size > obj->size - offset)
		return -EINVAL;
	if (writable && bo->readonly)
		return -EACCES;
	start = ALIGN_DOWN(offset, bo->page_size);
	end = ALIGN(offset + size, bo->page_size);
	ret = hpu_vm_map(as->vm, obj, start, end - start, map_va, false,
			 !writable);
	if (!ret)
		*va = *map_va + (offset - start);
	return ret;
}

/**
 * hpu_rdma_as_map_dmabuf() - map a range of a dma-buf
 * @as: the address space
 * @fd: the dma-buf's file descriptor, in the calling process
 * @offset: first byte of the range in the dma-buf
 * @size: bytes of the range, not zero
 * @writable: the device may write the range
 * @map_va: Out: start of the mapping, for hpu_rdma_as_unmap()
 * @va: Out: the device address of byte @offset
 *
 * A buffer of this device (HBM or host) is mapped as it is, HBM through
 * HBM page-table entries: the engine reaches it without crossing PCIe.
 * Any other dma-buf is imported as a host buffer (hpu_gem_prime_import()).
 * The mapping covers whole device pages of the buffer (2 MiB for HBM) and
 * keeps a reference to it until it is unmapped. May sleep.
 *
 * Return: 0; -EBADF for a file that is not a dma-buf; -EINVAL for a
 * range outside the buffer; -EACCES for a writable mapping of a
 * read-only buffer; the errors of hpu_rdma_as_map_sgt().
 */
int hpu_rdma_as_map_dmabuf(struct hpu_rdma_as *as, int fd, u64 offset,
			   u64 size, bool writable, u64 *map_va, u64 *va)
{
	struct hpu_device *hdev = as->hdev;
	struct drm_gem_object *obj;
	struct dma_buf *dmabuf;
	int idx, ret;

	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf))
		return -EBADF;
	if (!drm_dev_enter(&hdev->drm, &idx)) {
		ret = -ENODEV;
		goto out_put_buf;
	}
	obj = hpu_gem_prime_import(&hdev->drm, dmabuf);
	if (IS_ERR(obj)) {
		ret = PTR_ERR(obj);
		goto out_exit;
	}
	ret = hpu_rdma_map_obj(as, obj, offset, size, writable, map_va, va);
	drm_gem_object_put(obj);
out_exit:
	drm_dev_exit(idx);
out_put_buf:
	dma_buf_put(dmabuf);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(hpu_rdma_as_map_dmabuf, HPU_RDMA);

/*
 * [@addr, @addr + @size) lies in the mapping of @obj that @vma starts, as
 * that mapping is now: madvise() (libibverbs' MADV_DONTFORK, for one) and
 * mprotect() split one mmap(2) into several VMAs, each then a mapping of
 * the next part of the same object. Every part must allow reading, and
 * writing when @writable. Under the mmap lock.
 */
static int hpu_rdma_user_range_ok(struct drm_gem_object *obj,
				  struct vm_area_struct *vma, u64 addr,
				  u64 size, bool writable)
{
	const struct vm_operations_struct *ops = vma->vm_ops;
	struct vm_area_struct *next;
	u64 end = addr + size;

	for (;;) {
		if (!(vma->vm_flags & VM_READ) ||
		    (writable && !(vma->vm_flags & VM_WRITE)))
			return -EACCES;
		if (end <= vma->vm_end)
			return 0;
		next = find_vma(vma->vm_mm, vma->vm_end);
		if (!next || next->vm_start != vma->vm_end ||
		    next->vm_ops != ops || next->vm_private_data != obj ||
		    next->vm_pgoff != vma->vm_pgoff + vma_pages(vma))
			return -EINVAL;
		vma = next;
	}
}

/**
 * hpu_rdma_as_map_user() - map a range of the caller's mapping of a buffer
 * @as: the address space
 * @addr: start of the range in the calling process
 * @size: bytes of the range, not zero
 * @writable: the device may write the range
 * @map_va: Out: start of the mapping, for hpu_rdma_as_unmap()
 * @va: Out: the device address of @addr
 *
 * For a range the process mapped from a buffer of this device through
 * the device file (an HBM buffer through BAR4, or a host buffer): such
 * mappings are VM_PFNMAP, so their pages cannot be pinned as user memory
 * is; the buffer itself is mapped instead, as hpu_rdma_as_map_dmabuf()
 * does, HBM through HBM page-table entries. The mapping holds the buffer
 * (not the process's mapping of it) until it is unmapped. May sleep.
 *
 * Return: 0; -ENOENT when @addr is not in such a mapping (the caller
 * pins user memory then); -EINVAL for a range that leaves the mapping (a
 * mapping split by madvise() or mprotect() still counts as one) or the
 * buffer; -EACCES for a range of a mapping without read access, or a
 * writable range of a read-only mapping;
 * -EOPNOTSUPP for a mapping of another device's buffer; the errors of
 * hpu_rdma_as_map_sgt().
 */
int hpu_rdma_as_map_user(struct hpu_rdma_as *as, u64 addr, u64 size,
			 bool writable, u64 *map_va, u64 *va)
{
	struct hpu_device *hdev = as->hdev;
	struct mm_struct *mm = current->mm;
	struct drm_gem_object *obj;
	struct vm_area_struct *vma;
	u64 offset;
	int idx, ret;

	if (!size || addr + size < addr)
		return -EINVAL;
	if (mmap_read_lock_killable(mm))
		return -EINTR;
	vma = vma_lookup(mm, addr);
	if (!vma) {
		mmap_read_unlock(mm);
		return -ENOENT;
	}
	obj = hpu_gem_vma_object(hdev, vma, addr, &offset);
	if (IS_ERR(obj)) {
		mmap_read_unlock(mm);
		return PTR_ERR(obj);
	}
	ret = hpu_rdma_user_range_ok(obj, vma, addr, size, writable);
	if (ret)
		drm_dbg(&hdev->drm, "RDMA: %#llx + %#llx of a buffer mapping [%#lx, %#lx) (flags %#lx, %s) refused: %d\n",
			addr, size, vma->vm_start, vma->vm_end,
			(unsigned long)vma->vm_flags,
			writable ? "writable" : "read-only", ret);
	mmap_read_unlock(mm);
	if (ret)
		goto out_put;
	if (!drm_dev_enter(&hdev->drm, &idx)) {
		ret = -ENODEV;
		goto out_put;
	}
	ret = hpu_rdma_map_obj(as, obj, offset, size, writable, map_va, va);
	if (ret)
		drm_dbg(&hdev->drm, "RDMA: %#llx + %#llx, buffer offset %#llx of %zu bytes: map failed: %d\n",
			addr, size, offset, obj->size, ret);
	drm_dev_exit(idx);
out_put:
	drm_gem_object_put(obj);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(hpu_rdma_as_map_user, HPU_RDMA);

/**
 * hpu_rdma_as_unmap() - remove a mapping
 * @as: the address space
 * @map_va: the start of the mapping
 *
 * Clears the entries and invalidates the ASID's TLB entries: when this
 * returns 0 the device no longer reaches the memory. The caller has made
 * sure no engine object uses the range any more (its DESTROY command
 * completed). May sleep.
 *
 * Return: 0; -ENOENT if no mapping starts at @map_va; -EIO when the
 * invalidation did not complete: the device may still reach pinned pages
 * of hpu_rdma_as_map_sgt(), which must then stay pinned for good.
 */
int hpu_rdma_as_unmap(struct hpu_rdma_as *as, u64 map_va)
{
	return hpu_vm_unmap(as->vm, map_va);
}
EXPORT_SYMBOL_NS_GPL(hpu_rdma_as_unmap, HPU_RDMA);

/**
 * hpu_rdma_as_destroy() - release an RDMA address space
 * @as: the address space; every hpu_rdma_as_map_sgt() mapping removed
 * @reachable: an engine object of the ASID could not be destroyed (its
 *	DESTROY command did not complete): the engine may still use it
 *
 * Normally every engine object of the ASID is destroyed first, so the
 * engine reads and writes nothing of it any more. Disables the ASID's
 * root, invalidates it and gives the tables, the mappings and the ASID
 * back. With @reachable, or when the invalidation fails, all of it is
 * quarantined instead until a hard reset proves the device no longer
 * reaches it. May sleep.
 */
void hpu_rdma_as_destroy(struct hpu_rdma_as *as, bool reachable)
{
	hpu_vm_destroy_reachable(as->vm, reachable ?
				 "an RDMA address space with an object the engine did not destroy" :
				 NULL);
	kfree(as);
}
EXPORT_SYMBOL_NS_GPL(hpu_rdma_as_destroy, HPU_RDMA);

/**
 * hpu_rdma_usable() - does the device get the RDMA auxiliary device
 * @hdev: the device, identity read, interrupts allocated
 *
 * Spec version 7 or later with NIC ports, BAR0 large enough for the
 * control block and at least one doorbell page, and the event queue's
 * MSI-X vector allocated. Whether the engine is really there hpu_ib.ko
 * reads from its capability registers.
 *
 * Return: true if it does.
 */
bool hpu_rdma_usable(struct hpu_device *hdev)
{
	resource_size_t len = pci_resource_len(hdev->pdev, HPU_BAR_REGS);

	if (hdev->id.spec_version < 7 || !hdev->id.num_nic)
		return false;
	if (len < HPU_ROCE_DB_BASE + HPU_ROCE_DB_PAGE_SIZE ||
	    hdev->irq_vectors <= HPU_VEC_ROCE) {
		drm_info(&hdev->drm, "no RDMA device: BAR0 %pa bytes, %d MSI-X vectors\n",
			 &len, hdev->irq_vectors);
		return false;
	}
	return true;
}
