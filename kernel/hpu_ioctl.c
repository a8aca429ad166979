// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: ioctl handlers.
 *
 * Every handler runs inside drm_dev_enter()/drm_dev_exit(), so it never
 * touches a device that has been unplugged; it then fails with -ENODEV.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>

#include "hpu_accel.h"
#include "hpu_drv.h"
#include "hpu_errors.h"
#include "hpu_fw.h"
#include "hpu_gem.h"
#include "hpu_hbm.h"
#include "hpu_hw.h"
#include "hpu_hwmon.h"
#include "hpu_ioctl.h"
#include "hpu_kunit.h"
#include "hpu_vm.h"

static_assert(sizeof(((struct drm_hpu_info_device *)0)->serial) >
	      HPU_SERIAL_LEN);
static_assert(sizeof(((struct drm_hpu_info_device *)0)->uuid) ==
	      sizeof(uuid_t));

static void hpu_info_device(struct hpu_device *hdev,
			    struct drm_hpu_info_device *out)
{
	const struct hpu_identity *id = &hdev->id;
	struct pci_dev *pdev = hdev->pdev;

	out->chip_id = id->chip_id;
	out->revision = id->revision;
	out->hbm_size = id->hbm_size;
	out->pci_domain = pci_domain_nr(pdev->bus);
	out->pci_bus = pdev->bus->number;
	out->pci_dev = PCI_SLOT(pdev->devfn);
	out->pci_func = PCI_FUNC(pdev->devfn);
	out->hbm_stacks = id->hbm_stacks;
	out->num_dma = id->num_dma;
	out->num_tpc = id->num_tpc;
	out->num_mme = id->num_mme;
	out->num_nic = id->num_nic;
	out->spec_version = id->spec_version;
	strscpy(out->serial, id->serial, sizeof(out->serial));
	memcpy(out->uuid, id->uuid.b, sizeof(out->uuid));
	out->driver_major = HPU_DRIVER_MAJOR;
	out->driver_minor = HPU_DRIVER_MINOR;
	out->driver_patch = HPU_DRIVER_PATCH;
	out->msix_vectors = id->msix_vectors;
	out->reset_count = hpu_hw_reset_count(hdev);
}

static void hpu_info_memory(struct hpu_device *hdev, struct hpu_vm *vm,
			    struct drm_hpu_info_memory *out)
{
	out->hbm_total = hpu_hbm_total(hdev);
	out->hbm_used = hpu_hbm_used(hdev);
	out->hbm_ctx_used = atomic64_read(&vm->hbm_used);
	out->host_ctx_used = atomic64_read(&vm->host_used);
	out->va_start = HPU_VA_START;
	out->va_end = HPU_VA_END;
	out->asid = vm->asid;
	out->num_sobs = HPU_SOBS_PER_ASID;
}

/**
 * hpu_info_ioctl() - DRM_IOCTL_HPU_INFO
 * @drm: the DRM device
 * @data: the &struct drm_hpu_info copied in by the DRM core
 * @file: the DRM file
 *
 * Copies at most &drm_hpu_info.size bytes of the answer to
 * &drm_hpu_info.ptr and sets &drm_hpu_info.size to the answer's full
 * size; a size of 0 only reports the size. DRM_HPU_INFO_ERRORS returns
 * the device's error and reset counters (hpu_errors_read()),
 * DRM_HPU_INFO_TELEMETRY sensors, limits and utilisation
 * (hpu_telemetry_read(); may wait ~100 us per mailbox request).
 *
 * Return: 0; -EINVAL for an unknown op or non-zero flags or pad; -EFAULT
 * if the answer cannot be written; -ENODEV once the device is unplugged.
 */
int hpu_info_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct hpu_device *hdev = to_hpu_device(drm);
	struct hpu_file_priv *fpriv = file->driver_priv;
	struct drm_hpu_info *args = data;
	union {
		struct drm_hpu_info_device device;
		struct drm_hpu_info_memory memory;
		struct drm_hpu_info_errors errors;
		struct drm_hpu_info_telemetry telemetry;
		struct drm_hpu_info_firmware firmware;
	} answer;
	size_t answer_size;
	int idx, ret = 0;

	if (args->flags || args->pad)
		return -EINVAL;

	switch (args->op) {
	case DRM_HPU_INFO_DEVICE:
		answer_size = sizeof(answer.device);
		break;
	case DRM_HPU_INFO_MEMORY:
		answer_size = sizeof(answer.memory);
		break;
	case DRM_HPU_INFO_ERRORS:
		answer_size = sizeof(answer.errors);
		break;
	case DRM_HPU_INFO_TELEMETRY:
		answer_size = sizeof(answer.telemetry);
		break;
	case DRM_HPU_INFO_FIRMWARE:
		answer_size = sizeof(answer.firmware);
		break;
	default:
		drm_dbg(drm, "INFO: unknown op %u\n", args->op);
		return -EINVAL;
	}

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	memset(&answer, 0, sizeof(answer));
	if (args->op == DRM_HPU_INFO_DEVICE)
		hpu_info_device(hdev, &answer.device);
	else if (args->op == DRM_HPU_INFO_MEMORY)
		hpu_info_memory(hdev, fpriv->vm, &answer.memory);
	else if (args->op == DRM_HPU_INFO_TELEMETRY)
		hpu_telemetry_read(hdev, &answer.telemetry);
	else if (args->op == DRM_HPU_INFO_FIRMWARE)
		hpu_fw_info(hdev, &answer.firmware);
	else
		hpu_errors_read(hdev, &answer.errors);

	if (args->size &&
	    copy_to_user(u64_to_user_ptr(args->ptr), &answer,
			 min_t(size_t, args->size, answer_size)))
		ret = -EFAULT;
	else
		args->size = answer_size;

	drm_dev_exit(idx);
	return ret;
}

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
 * Return: 0; -EINVAL for a non-zero pad or a buffer that is not a host
 * buffer (HBM and user-pointer buffers cannot be mapped); -ENOENT for an
 * unknown handle; -ENODEV once the device is unplugged.
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

	if (to_hpu_bo(obj)->kind != HPU_BO_HOST) {
		drm_dbg(drm, "BO_MMAP_OFFSET: handle %u is not a host buffer\n",
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
