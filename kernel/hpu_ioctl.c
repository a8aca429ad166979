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
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "hpu_accel.h"
#include "hpu_drv.h"
#include "hpu_hw.h"
#include "hpu_ioctl.h"

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

/**
 * hpu_info_ioctl() - DRM_IOCTL_HPU_INFO
 * @drm: the DRM device
 * @data: the &struct drm_hpu_info copied in by the DRM core
 * @file: the DRM file
 *
 * Copies at most &drm_hpu_info.size bytes of the answer to
 * &drm_hpu_info.ptr and sets &drm_hpu_info.size to the answer's full
 * size; a size of 0 only reports the size.
 *
 * Return: 0; -EINVAL for an unknown op or non-zero flags or pad; -EFAULT
 * if the answer cannot be written; -ENODEV once the device is unplugged.
 */
int hpu_info_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct hpu_device *hdev = to_hpu_device(drm);
	struct drm_hpu_info *args = data;
	struct drm_hpu_info_device answer;
	int idx, ret = 0;

	if (args->flags || args->pad)
		return -EINVAL;
	if (args->op != DRM_HPU_INFO_DEVICE)
		return -EINVAL;

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	memset(&answer, 0, sizeof(answer));
	hpu_info_device(hdev, &answer);

	if (args->size &&
	    copy_to_user(u64_to_user_ptr(args->ptr), &answer,
			 min_t(size_t, args->size, sizeof(answer))))
		ret = -EFAULT;
	else
		args->size = sizeof(answer);

	drm_dev_exit(idx);
	return ret;
}
