// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: PCI driver and DRM accel device of the HPU deep-learning
 * accelerator.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_print.h>

#include "hpu_accel.h"
#include "hpu_debugfs.h"
#include "hpu_devlink.h"
#include "hpu_drv.h"
#include "hpu_eq.h"
#include "hpu_notify.h"
#include "hpu_fw.h"
#include "hpu_gem.h"
#include "hpu_hbm.h"
#include "hpu_hw.h"
#include "hpu_hwmon.h"
#include "hpu_info.h"
#include "hpu_irq.h"
#include "hpu_job.h"
#include "hpu_limits.h"
#include "hpu_mmu.h"
#include "hpu_nic.h"
#include "hpu_queue.h"
#include "hpu_stream.h"
#include "hpu_reset.h"
#include "hpu_sysfs.h"
#include "hpu_telemetry.h"
#include "hpu_uq.h"
#include "hpu_vm.h"

static int hpu_open(struct drm_device *drm, struct drm_file *file)
{
	struct hpu_device *hdev = to_hpu_device(drm);
	struct hpu_file_priv *fpriv;
	int idx, ret = 0;

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	fpriv = kzalloc(sizeof(*fpriv), GFP_KERNEL);
	if (!fpriv) {
		ret = -ENOMEM;
		goto out;
	}

	fpriv->hdev = hdev;

	/*
	 * Every allocation first, outside the reset lock: resets take it
	 * for writing on the fence-signalling path, and reclaim may wait
	 * for fences (Documentation/driver/reset.md). All 63 ASIDs in use:
	 * -EBUSY (Documentation/driver/memory.md).
	 */
	ret = hpu_vm_create(hdev, &fpriv->vm);
	if (ret) {
		kfree(fpriv);
		goto out;
	}

	/*
	 * No reset while the context is put on the device: it belongs
	 * wholly to the generation it records. Nothing here allocates.
	 */
	hpu_reset_read_lock(hdev);
	fpriv->generation = hpu_reset_generation(hdev);
	ret = hpu_vm_activate(fpriv->vm);
	hpu_reset_read_unlock(hdev);
	if (ret) {
		hpu_vm_destroy(fpriv->vm);
		kfree(fpriv);
		goto out;
	}

	hpu_queues_init(fpriv);
	xa_init(&fpriv->uqs);
	file->driver_priv = fpriv;
	/* Last: from here on the event queue can find the file. */
	hpu_notify_file_open(fpriv, file);
out:
	drm_dev_exit(idx);
	return ret;
}

static void hpu_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct hpu_file_priv *fpriv = file->driver_priv;

	/* Normally done in release already (hpu_notify.c); idempotent. */
	hpu_notify_file_close(fpriv);
	/*
	 * The file's queues go first, user queues first of all: no job may
	 * run when the VM dies.
	 */
	hpu_uqs_file_fini(fpriv);
	hpu_queues_fini(fpriv);
	if (fpriv->vm_reachable)
		hpu_vm_destroy_reachable(fpriv->vm, "a user queue did not stop");
	else
		hpu_vm_destroy(fpriv->vm);
	kfree(file->driver_priv);
	file->driver_priv = NULL;
}

/*
 * Memory of the file's buffer objects (those it has a handle to, imported
 * ones included), split into HBM ("drm-*-hbm") and host memory
 * ("drm-*-host": shmem, user pointers, imports). HBM and pinned user
 * pages are resident from creation; shmem pages once first used.
 */
static void hpu_show_memory_stats(struct drm_printer *p, struct drm_file *file)
{
	struct drm_memory_stats hbm = {}, host = {};
	struct drm_gem_object *obj;
	int id;

	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		struct hpu_bo *bo = to_hpu_bo(obj);
		struct drm_memory_stats *s = bo->kind == HPU_BO_HBM ? &hbm : &host;

		if (drm_gem_object_is_shared_for_memory_stats(obj))
			s->shared += obj->size;
		else
			s->private += obj->size;
		if (bo->kind != HPU_BO_HOST || READ_ONCE(bo->base.pages) ||
		    obj->import_attach)
			s->resident += obj->size;
		if (!dma_resv_test_signaled(obj->resv, dma_resv_usage_rw(true)))
			s->active += obj->size;
	}
	spin_unlock(&file->table_lock);

	drm_print_memory_stats(p, &hbm, DRM_GEM_OBJECT_RESIDENT, "hbm");
	drm_print_memory_stats(p, &host, DRM_GEM_OBJECT_RESIDENT, "host");
}

/*
 * &drm_driver.show_fdinfo: the DRM core prints drm-driver, drm-client-id
 * and drm-pdev, inside drm_dev_enter(); Documentation/driver/telemetry.md
 * lists the keys added here.
 */
static void hpu_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct hpu_device *hdev = to_hpu_device(file->minor->dev);
	struct hpu_file_priv *fpriv = file->driver_priv;
	unsigned int e;

	/* Events and logs name contexts by it (drm-client-id is per open). */
	drm_printf(p, "hpu-asid:\t%u\n", fpriv->vm->asid);
	drm_printf(p, "hpu-page-tables:\t%u\n",
		   hpu_mmu_asid_tables(hdev, fpriv->vm->asid));
	for (e = 0; e < hdev->qm->num_engines; e++) {
		unsigned int index = hdev->qm->engines[e].index;

		drm_printf(p, "drm-engine-%s:\t%llu ns\n",
			   hpu_stream_engine_name(index),
			   (u64)atomic64_read(&fpriv->engine_ns[index]) +
			   hpu_uqs_file_busy_ns(fpriv, index));
	}
	hpu_show_memory_stats(p, file);
}

static const struct drm_ioctl_desc hpu_ioctls[] = {
	DRM_IOCTL_DEF_DRV(HPU_INFO, hpu_info_ioctl, 0),
	DRM_IOCTL_DEF_DRV(HPU_BO_CREATE, hpu_bo_create_ioctl, 0),
	DRM_IOCTL_DEF_DRV(HPU_BO_USERPTR, hpu_bo_userptr_ioctl, 0),
	DRM_IOCTL_DEF_DRV(HPU_BO_MMAP_OFFSET, hpu_bo_mmap_offset_ioctl, 0),
	DRM_IOCTL_DEF_DRV(HPU_VM_BIND, hpu_vm_bind_ioctl, 0),
	DRM_IOCTL_DEF_DRV(HPU_QUEUE_CREATE, hpu_queue_create_ioctl, 0),
	DRM_IOCTL_DEF_DRV(HPU_QUEUE_DESTROY, hpu_queue_destroy_ioctl, 0),
	DRM_IOCTL_DEF_DRV(HPU_SUBMIT, hpu_submit_ioctl, 0),
	DRM_IOCTL_DEF_DRV(HPU_EVENTS, hpu_notify_ioctl, 0),
	DRM_IOCTL_DEF_DRV(HPU_SUBMIT_ARRAY, hpu_submit_array_ioctl, 0),
	DRM_IOCTL_DEF_DRV(HPU_UQ_CREATE, hpu_uq_create_ioctl, 0),
	DRM_IOCTL_DEF_DRV(HPU_UQ_WAIT, hpu_uq_wait_ioctl, 0),
	DRM_IOCTL_DEF_DRV(HPU_UQ_FENCE, hpu_uq_fence_ioctl, 0),
};

/*
 * DRM_ACCEL_FOPS, but release stops the file's event delivery before the
 * DRM core drops its events (hpu_notify.c).
 */
static const struct file_operations hpu_fops = {
	.owner = THIS_MODULE,
	.open = accel_open,
	.release = hpu_notify_release,
	/* Stale files (opened before a hard reset) get -ENODEV. */
	.unlocked_ioctl = hpu_reset_ioctl,
	.compat_ioctl = hpu_reset_compat_ioctl,
	.poll = drm_poll,
	.read = drm_read,
	.llseek = noop_llseek,
	/* GEM objects and the doorbells of user queues. */
	.mmap = hpu_mmap,
	.fop_flags = FOP_UNSIGNED_OFFSET,
	.show_fdinfo = drm_show_fdinfo,
};

static const struct drm_driver hpu_drm_driver = {
	.driver_features = DRIVER_COMPUTE_ACCEL | DRIVER_GEM |
			   DRIVER_SYNCOBJ | DRIVER_SYNCOBJ_TIMELINE,

	.open = hpu_open,
	.postclose = hpu_postclose,

	.gem_create_object = hpu_gem_create_object,
	.gem_prime_import = hpu_gem_prime_import,
	.gem_prime_import_sg_table = drm_gem_shmem_prime_import_sg_table,

	.ioctls = hpu_ioctls,
	.num_ioctls = ARRAY_SIZE(hpu_ioctls),
	.fops = &hpu_fops,
	.show_fdinfo = hpu_show_fdinfo,

	.name = HPU_DRIVER_NAME,
	.desc = HPU_DRIVER_DESC,
	.major = HPU_DRIVER_MAJOR,
	.minor = HPU_DRIVER_MINOR,
	.patchlevel = HPU_DRIVER_PATCH,
};

static int hpu_pci_init(struct hpu_device *hdev)
{
	struct pci_dev *pdev = hdev->pdev;
	resource_size_t bar_len;
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret) {
		drm_err(&hdev->drm, "cannot enable the PCI function: %d\n", ret);
		return ret;
	}

	/*
	 * Page-table entries carry 52-bit host bus addresses: without this
	 * the DMA API assumes 32 bits and bounces through swiotlb.
	 */
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(52));
	if (ret) {
		drm_err(&hdev->drm, "cannot set a 52-bit DMA mask: %d\n", ret);
		return ret;
	}
	/*
	 * The device MMU maps every page of a DMA segment on its own, so a
	 * segment may be as long as the DMA API can make it (the default
	 * limit, 64 KiB, is for devices with scatter-gather descriptors).
	 */
	dma_set_max_seg_size(&pdev->dev, UINT_MAX);

	bar_len = pci_resource_len(pdev, HPU_BAR_REGS);
	if (bar_len < HPU_REG_ID_BLOCK_END) {
		drm_err(&hdev->drm, "BAR%d is too small: %pa bytes\n",
			HPU_BAR_REGS, &bar_len);
		return -ENODEV;
	}

	hdev->regs = pcim_iomap_region(pdev, HPU_BAR_REGS, HPU_DRIVER_NAME);
	if (IS_ERR(hdev->regs)) {
		ret = PTR_ERR(hdev->regs);
		drm_err(&hdev->drm, "cannot map BAR%d: %d\n", HPU_BAR_REGS, ret);
		return ret;
	}

	return 0;
}

/*
 * Probe, in order, and what undoes each step (at removal, and on a probe
 * failure from the step after it on):
 *
 *   step                          undone by
 *   devm_drm_dev_alloc()          devres (the drm_device lives on while
 *                                 a file is open)
 *   hpu_pci_init()                devres (BAR mapping, PCI function)
 *   hpu_hw_init()                 - (it leaves the device soft reset)
 *   pci_set_master()              devres
 *   hpu_reset_init()              drmm; see (1)
 *   hpu_nic_init()                drmm
 *   hpu_fw_init(), hpu_fw_boot()  hpu_fw_fini(): a flash write finishes
 *   hpu_mmu_init()                hpu_mmu_fini(): every root invalid
 *   hpu_limits_init()             drmm
 *   hpu_hbm_init()                hpu_hbm_fini()
 *   hpu_irq_init()                devres
 *   hpu_hw_irq_enable()           hpu_hw_fini(): every MISC cause masked
 *   hpu_hw_irq_self_test()        -
 *   hpu_eq_init()                 hpu_eq_fini()
 *   hpu_eq_wdt_program()          -
 *   hpu_streams_init(), self-test hpu_streams_fini(); see (2)
 *   hpu_telemetry_init()          hpu_telemetry_fini()
 *   hpu_hwmon_init()              hpu_hwmon_fini()
 *   hpu_devlink_init()            hpu_devlink_fini()
 *   drm_dev_register()            drm_dev_unplug(); see (2)
 *   hpu_debugfs_init()            the DRM core, with the minor
 *   hpu_reset_start()             hpu_reset_fini(); see (1)
 *   hpu_nic_start()               hpu_nic_fini(); see (3)
 *
 * The undo runs in the reverse order, with two exceptions:
 * (1) hpu_reset_fini() stops resets and the heartbeat before anything is
 *     torn down, on a probe failure too (a reset may be scheduled from
 *     the event queue on), and hpu_reset_quarantine_fini() releases what
 *     a reset kept once the streams are down, before HBM goes;
 * (2) hpu_streams_fini() fails the jobs still on the streams before
 *     drm_dev_unplug(), which then never waits behind a job
 *     (Documentation/driver/reset.md);
 * (3) hpu_nic_fini() runs right after hpu_reset_fini() (a reset adds the
 *     NIC auxiliary device back), so the netdevs go before anything they
 *     use. hpu_nic_start() is last and cannot fail the probe.
 */
static int hpu_probe(struct pci_dev *pdev, const struct pci_device_id *ent)
{
	struct hpu_device *hdev;
	int ret;

	hdev = devm_drm_dev_alloc(&pdev->dev, &hpu_drm_driver,
				  struct hpu_device, drm);
	if (IS_ERR(hdev))
		return PTR_ERR(hdev);

	hdev->pdev = pdev;
	init_completion(&hdev->irq_test_done);
	spin_lock_init(&hdev->dma_bos_lock);
	INIT_LIST_HEAD(&hdev->dma_bos);
	pci_set_drvdata(pdev, hdev);

	ret = hpu_pci_init(hdev);
	if (ret)
		return ret;

	/* Resets the function first if the device was left running. */
	ret = hpu_hw_init(hdev);
	if (ret)
		return ret;

	/* Only now, the device quiet: MSI-X messages are its memory writes. */
	pci_set_master(pdev);

	ret = hpu_reset_init(hdev);
	if (ret)
		return ret;

	/* Before the event queue: its resets call the NIC hooks. */
	ret = hpu_nic_init(hdev);
	if (ret)
		return ret;

	/*
	 * Before HBM is used (the boot ROM trains it). A firmware that does
	 * not boot leaves the device bound but unusable
	 * (Documentation/driver/firmware.md).
	 */
	ret = hpu_fw_init(hdev);
	if (ret)
		return ret;
	hpu_fw_boot(hdev);

	ret = hpu_mmu_init(hdev);
	if (ret)
		goto err_fw;

	/* After the MMU: the page-table limits depend on its area. */
	ret = hpu_limits_init(hdev);
	if (ret)
		goto err_mmu;

	hpu_gem_init(hdev);

	ret = hpu_hbm_init(hdev);
	if (ret)
		goto err_mmu;

	ret = hpu_irq_init(hdev);
	if (ret)
		goto err_hbm;

	hpu_hw_irq_enable(hdev);

	ret = hpu_hw_irq_self_test(hdev);
	if (ret)
		goto err_irq;

	ret = hpu_eq_init(hdev);
	if (ret)
		goto err_irq;

	hpu_eq_wdt_program(hdev);

	ret = hpu_streams_init(hdev);
	if (ret)
		goto err_streams;

	if (!hpu_reset_unusable(hdev)) {
		ret = hpu_streams_self_test(hdev);
		if (ret)
			goto err_streams;
	}

	/* After the firmware state: telemetry asks whether it runs. */
	ret = hpu_telemetry_init(hdev);
	if (ret)
		goto err_streams;

	ret = hpu_hwmon_init(hdev);
	if (ret)
		goto err_telemetry;

	ret = hpu_devlink_init(hdev);
	if (ret)
		goto err_hwmon;

	ret = drm_dev_register(&hdev->drm, 0);
	if (ret) {
		drm_err(&hdev->drm, "cannot register the accel device: %d\n", ret);
		goto err_devlink;
	}

	/* No firmware: unplugged at once, as after a failed hard reset. */
	if (hpu_reset_unusable(hdev)) {
		drm_dev_unplug(&hdev->drm);
		return 0;
	}

	hpu_debugfs_init(hdev);
	hpu_reset_start(hdev);
	/* The netdevs: hpu_en.ko, if loaded, probes them right here. */
	hpu_nic_start(hdev);
	return 0;

err_devlink:
	hpu_devlink_fini(hdev);
err_hwmon:
	hpu_hwmon_fini(hdev);
err_telemetry:
	hpu_telemetry_fini(hdev);
err_streams:
	hpu_reset_fini(hdev);
	hpu_streams_fini(hdev);
	/* As at removal: a device left running is reset before it goes. */
	hpu_reset_quarantine_fini(hdev);
	hpu_eq_fini(hdev);
err_irq:
	hpu_hw_fini(hdev);
err_hbm:
	hpu_hbm_fini(hdev);
err_mmu:
	hpu_mmu_fini(hdev);
err_fw:
	hpu_fw_fini(hdev);
	return ret;
}

/*
 * The reverse of hpu_probe(), with its two exceptions. Open files keep the
 * drm_device (and so struct hpu_device) alive until their last close; the
 * rest (interrupts, vectors, mapping) is released by devres.
 */
static void hpu_remove(struct pci_dev *pdev)
{
	struct hpu_device *hdev = pci_get_drvdata(pdev);

	hpu_reset_fini(hdev);
	hpu_nic_fini(hdev);
	hpu_devlink_fini(hdev);
	hpu_hwmon_fini(hdev);
	hpu_telemetry_fini(hdev);
	hpu_streams_fini(hdev);
	/* A failed hard reset or firmware boot unplugged it already. */
	if (!drm_dev_is_unplugged(&hdev->drm))
		drm_dev_unplug(&hdev->drm);
	/* BAR4 goes with the device: no process keeps a mapping of it. */
	hpu_gem_unmap_all(hdev);
	/* Quiet or cut off the bus now: what was kept can go. */
	hpu_reset_quarantine_fini(hdev);
	/* No DMA mapping of the device outlives its driver. */
	hpu_gem_dma_release_all(hdev);
	hpu_eq_fini(hdev);
	hpu_hw_fini(hdev);
	hpu_hbm_fini(hdev);
	hpu_mmu_fini(hdev);
	hpu_fw_fini(hdev);
}

/*
 * A function level reset while bound (sysfs reset, pci_reset_function())
 * is a power-on reset of the device: halt the streams before it, recover
 * as from a hard reset after it (Documentation/driver/reset.md). The
 * driver's own resets at probe and removal run outside hpu_reset_init() ..
 * hpu_reset_fini(), where these do nothing.
 */
static void hpu_pci_reset_prepare(struct pci_dev *pdev)
{
	struct hpu_device *hdev = pci_get_drvdata(pdev);

	if (hdev && hdev->reset)
		hpu_reset_flr_prepare(hdev);
}

static void hpu_pci_reset_done(struct pci_dev *pdev)
{
	struct hpu_device *hdev = pci_get_drvdata(pdev);

	if (hdev && hdev->reset)
		hpu_reset_flr_done(hdev);
}

static const struct pci_error_handlers hpu_pci_err_handlers = {
	.reset_prepare = hpu_pci_reset_prepare,
	.reset_done = hpu_pci_reset_done,
};

static const struct pci_device_id hpu_pci_ids[] = {
	{ PCI_DEVICE(HPU_PCI_VENDOR_ID, HPU_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, hpu_pci_ids);

static struct pci_driver hpu_pci_driver = {
	.name = HPU_DRIVER_NAME,
	.id_table = hpu_pci_ids,
	.probe = hpu_probe,
	.remove = hpu_remove,
	.err_handler = &hpu_pci_err_handlers,
	.dev_groups = hpu_dev_groups,
};
module_pci_driver(hpu_pci_driver);

MODULE_DESCRIPTION(HPU_DRIVER_DESC);
MODULE_AUTHOR("The hpu authors");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
MODULE_VERSION(HPU_DRIVER_VERSION);
