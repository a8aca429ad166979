// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: the INFO ioctl: device, memory, error, telemetry and firmware
 * answers.
 *
 * Every handler runs inside drm_dev_enter()/drm_dev_exit(), so it never
 * touches a device that has been unplugged; it then fails with -ENODEV.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/nospec.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "hpu_accel.h"
#include "hpu_drv.h"
#include "hpu_error_stats.h"
#include "hpu_fw.h"
#include "hpu_hbm.h"
#include "hpu_hw.h"
#include "hpu_stream.h"
#include "hpu_telemetry.h"
#include "hpu_uq.h"
#include "hpu_info.h"
#include "hpu_mmu.h"
#include "hpu_vm.h"

static_assert(sizeof(((struct drm_hpu_info_device *)0)->serial) >
	      HPU_SERIAL_LEN);
static_assert(sizeof(((struct drm_hpu_info_device *)0)->uuid) ==
	      sizeof(uuid_t));

union hpu_info_answer {
	struct drm_hpu_info_device device;
	struct drm_hpu_info_memory memory;
	struct drm_hpu_info_errors errors;
	struct drm_hpu_info_telemetry telemetry;
	struct drm_hpu_info_firmware firmware;
	struct drm_hpu_info_uq uq;
};

static void hpu_info_device(struct hpu_device *hdev,
			    struct hpu_file_priv *fpriv,
			    union hpu_info_answer *answer)
{
	struct drm_hpu_info_device *out = &answer->device;
	const struct hpu_identity *id = &hdev->id;
	struct pci_dev *pdev = hdev->pdev;
	unsigned int c;

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
	for (c = 0; c < HPU_ENGINE_CLASSES; c++)
		out->class_engines[c] = hdev->qm->class_count[c];
	if (hdev->mmu->hbm_mappable)
		out->caps |= DRM_HPU_CAP_HBM_MMAP;
	if (hpu_uqs_supported(hdev))
		out->caps |= DRM_HPU_CAP_USER_QUEUES;
}

static void hpu_info_memory(struct hpu_device *hdev,
			    struct hpu_file_priv *fpriv,
			    union hpu_info_answer *answer)
{
	struct drm_hpu_info_memory *out = &answer->memory;
	struct hpu_vm *vm = fpriv->vm;

	out->hbm_total = hpu_hbm_total(hdev);
	out->hbm_used = hpu_hbm_used(hdev);
	out->hbm_ctx_used = atomic64_read(&vm->hbm_used);
	out->host_ctx_used = atomic64_read(&vm->host_used);
	out->va_start = HPU_VA_START;
	out->va_end = HPU_VA_END;
	out->asid = vm->asid;
	out->num_sobs = HPU_SOBS_PER_ASID;
}

static void hpu_info_errors(struct hpu_device *hdev,
			    struct hpu_file_priv *fpriv,
			    union hpu_info_answer *out)
{
	hpu_error_stats_read(hdev, &out->errors);
}

static void hpu_info_telemetry(struct hpu_device *hdev,
			       struct hpu_file_priv *fpriv,
			       union hpu_info_answer *out)
{
	hpu_telemetry_read(hdev, &out->telemetry);
}

static void hpu_info_firmware(struct hpu_device *hdev,
			      struct hpu_file_priv *fpriv,
			      union hpu_info_answer *out)
{
	hpu_fw_info(hdev, &out->firmware);
}

static void hpu_info_uq(struct hpu_device *hdev, struct hpu_file_priv *fpriv,
			union hpu_info_answer *out)
{
	hpu_uq_info(hdev, fpriv, &out->uq);
}

/* One entry per &drm_hpu_info.op: the answer's size and who fills it. */
static const struct hpu_info_op {
	size_t size;
	void (*fill)(struct hpu_device *hdev, struct hpu_file_priv *fpriv,
		     union hpu_info_answer *out);
} hpu_info_ops[] = {
	[DRM_HPU_INFO_DEVICE] = {
		sizeof(struct drm_hpu_info_device), hpu_info_device },
	[DRM_HPU_INFO_MEMORY] = {
		sizeof(struct drm_hpu_info_memory), hpu_info_memory },
	[DRM_HPU_INFO_ERRORS] = {
		sizeof(struct drm_hpu_info_errors), hpu_info_errors },
	[DRM_HPU_INFO_TELEMETRY] = {
		sizeof(struct drm_hpu_info_telemetry), hpu_info_telemetry },
	[DRM_HPU_INFO_FIRMWARE] = {
		sizeof(struct drm_hpu_info_firmware), hpu_info_firmware },
	[DRM_HPU_INFO_USER_QUEUES] = {
		sizeof(struct drm_hpu_info_uq), hpu_info_uq },
};

/**
 * hpu_info_ioctl() - DRM_IOCTL_HPU_INFO
 * @drm: the DRM device
 * @data: the &struct drm_hpu_info copied in by the DRM core
 * @file: the DRM file
 *
 * Copies at most &drm_hpu_info.size bytes of the answer to
 * &drm_hpu_info.ptr and sets &drm_hpu_info.size to the answer's full
 * size; a size of 0 only reports the size. DRM_HPU_INFO_ERRORS returns
 * the device's error and reset counters (hpu_error_stats_read()),
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
	const struct hpu_info_op *op;
	union hpu_info_answer answer;
	int idx, ret = 0;

	if (args->flags || args->pad)
		return -EINVAL;

	if (args->op >= ARRAY_SIZE(hpu_info_ops)) {
		drm_dbg(drm, "INFO: unknown op %u\n", args->op);
		return -EINVAL;
	}
	op = &hpu_info_ops[array_index_nospec(args->op,
					      ARRAY_SIZE(hpu_info_ops))];

	if (args->op == DRM_HPU_INFO_USER_QUEUES && !hpu_uqs_supported(hdev)) {
		drm_dbg(drm, "INFO: the device has no user queues\n");
		return -EOPNOTSUPP;
	}

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;

	memset(&answer, 0, sizeof(answer));
	op->fill(hdev, fpriv, &answer);

	if (args->size &&
	    copy_to_user(u64_to_user_ptr(args->ptr), &answer,
			 min_t(size_t, args->size, op->size)))
		ret = -EFAULT;
	else
		args->size = op->size;

	drm_dev_exit(idx);
	return ret;
}
