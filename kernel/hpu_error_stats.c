// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: the error and reset counters (INFO ERRORS, sysfs, devlink, debugfs).
 *
 * The counters live where the errors are seen: the event queue
 * (&struct hpu_eq), the HBM allocator (retired pages) and the reset code
 * (&struct hpu_reset_stats). hpu_error_stats_read() gathers them into the
 * &struct drm_hpu_info_errors that INFO ERRORS returns; the sysfs
 * attributes below and debugfs show the same numbers. Every counter is
 * an atomic or read under its owner's lock, and counts since probe.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/device.h>
#include <linux/pci.h>
#include <linux/sysfs.h>

#include "hpu_accel.h"
#include "hpu_drv.h"
#include "hpu_eq.h"
#include "hpu_error_stats.h"
#include "hpu_hbm.h"
#include "hpu_reset.h"

/**
 * hpu_error_stats_read() - the error and reset counters of a device
 * @hdev: the device, probed
 * @out: the counters; every field is written
 *
 * May sleep (the HBM allocator's lock).
 */
void hpu_error_stats_read(struct hpu_device *hdev, struct drm_hpu_info_errors *out)
{
	struct hpu_reset_stats *rs = &hdev->reset->stats;
	struct hpu_eq *eq = hdev->eq;

	memset(out, 0, sizeof(*out));
	out->mmu_faults = atomic64_read(&eq->mmu_faults);
	out->bad_packets = atomic64_read(&eq->bad_packets);
	out->priv_violations = atomic64_read(&eq->priv_packets);
	out->engine_hangs = atomic64_read(&eq->engine_hangs);
	out->dma_bus_errors = atomic64_read(&eq->dma_bus_errors);
	out->ecc_correctable = atomic64_read(&eq->ecc_ce);
	out->ecc_uncorrectable = atomic64_read(&eq->ecc_ue);
	out->retired_pages = hpu_hbm_retired_pages(hdev);
	out->fw_fatal = atomic64_read(&eq->fw_fatal);
	out->thermal_events = atomic64_read(&eq->thermal);
	out->power_events = atomic64_read(&eq->power);

	out->job_timeouts = atomic64_read(&rs->job_timeouts);
	out->heartbeat_losses = atomic64_read(&rs->heartbeat_losses);
	out->soft_resets = atomic64_read(&rs->soft_resets);
	out->hard_resets = atomic64_read(&rs->hard_resets);
	out->reset_generation = hpu_reset_generation(hdev);
}

/* Every field of &struct drm_hpu_info_errors is a __u64 counter. */
static_assert(sizeof(struct drm_hpu_info_errors) % sizeof(u64) == 0);

static ssize_t hpu_error_stats_show(struct device *dev,
				    struct device_attribute *attr, char *buf);

/*
 * One attribute per field of &struct drm_hpu_info_errors, in the order of
 * its fields, with the field's name: the index of an attribute in this
 * array is the index of its counter in the structure.
 */
static struct device_attribute hpu_error_stats_dev_attrs[] = {
	__ATTR(mmu_faults, 0444, hpu_error_stats_show, NULL),
	__ATTR(bad_packets, 0444, hpu_error_stats_show, NULL),
	__ATTR(priv_violations, 0444, hpu_error_stats_show, NULL),
	__ATTR(engine_hangs, 0444, hpu_error_stats_show, NULL),
	__ATTR(dma_bus_errors, 0444, hpu_error_stats_show, NULL),
	__ATTR(ecc_correctable, 0444, hpu_error_stats_show, NULL),
	__ATTR(ecc_uncorrectable, 0444, hpu_error_stats_show, NULL),
	__ATTR(retired_pages, 0444, hpu_error_stats_show, NULL),
	__ATTR(job_timeouts, 0444, hpu_error_stats_show, NULL),
	__ATTR(heartbeat_losses, 0444, hpu_error_stats_show, NULL),
	__ATTR(fw_fatal, 0444, hpu_error_stats_show, NULL),
	__ATTR(thermal_events, 0444, hpu_error_stats_show, NULL),
	__ATTR(power_events, 0444, hpu_error_stats_show, NULL),
	__ATTR(soft_resets, 0444, hpu_error_stats_show, NULL),
	__ATTR(hard_resets, 0444, hpu_error_stats_show, NULL),
	__ATTR(reset_generation, 0444, hpu_error_stats_show, NULL),
};

static_assert(ARRAY_SIZE(hpu_error_stats_dev_attrs) ==
	      sizeof(struct drm_hpu_info_errors) / sizeof(u64));

/*
 * The driver core removes these attributes, waiting for readers, before
 * the remove callback runs: the device is always bound here.
 */
static ssize_t hpu_error_stats_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	struct hpu_device *hdev = pci_get_drvdata(to_pci_dev(dev));
	struct drm_hpu_info_errors counters;
	const u64 *fields = (const u64 *)&counters;

	hpu_error_stats_read(hdev, &counters);
	return sysfs_emit(buf, "%llu\n", fields[attr - hpu_error_stats_dev_attrs]);
}

static struct attribute *hpu_error_stats_attrs[] = {
	&hpu_error_stats_dev_attrs[0].attr,
	&hpu_error_stats_dev_attrs[1].attr,
	&hpu_error_stats_dev_attrs[2].attr,
	&hpu_error_stats_dev_attrs[3].attr,
	&hpu_error_stats_dev_attrs[4].attr,
	&hpu_error_stats_dev_attrs[5].attr,
	&hpu_error_stats_dev_attrs[6].attr,
	&hpu_error_stats_dev_attrs[7].attr,
	&hpu_error_stats_dev_attrs[8].attr,
	&hpu_error_stats_dev_attrs[9].attr,
	&hpu_error_stats_dev_attrs[10].attr,
	&hpu_error_stats_dev_attrs[11].attr,
	&hpu_error_stats_dev_attrs[12].attr,
	&hpu_error_stats_dev_attrs[13].attr,
	&hpu_error_stats_dev_attrs[14].attr,
	&hpu_error_stats_dev_attrs[15].attr,
	NULL
};

/* Error counters, in the PCI device's directory (hpu_sysfs.c). */
const struct attribute_group hpu_error_stats_group = {
	.attrs = hpu_error_stats_attrs,
};
