// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: sysfs attributes of the PCI device, for tools that want the
 * identity without opening the accel node. Documented in
 * Documentation/ABI/testing/sysfs-driver-hpu.
 *
 * The driver core creates these through &pci_driver.driver.dev_groups
 * after a successful probe and removes them, waiting for readers to
 * finish, before the remove callback runs; a show function therefore
 * always finds the device bound and its registers mapped.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/device.h>
#include <linux/pci.h>
#include <linux/sysfs.h>

#include "hpu_drv.h"
#include "hpu_hw.h"
#include "hpu_sysfs.h"

static struct hpu_device *dev_to_hpu(struct device *dev)
{
	return pci_get_drvdata(to_pci_dev(dev));
}

static ssize_t serial_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n", dev_to_hpu(dev)->id.serial);
}
static DEVICE_ATTR_RO(serial);

static ssize_t uuid_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%pUb\n", &dev_to_hpu(dev)->id.uuid);
}
static DEVICE_ATTR_RO(uuid);

static ssize_t chip_id_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u\n", dev_to_hpu(dev)->id.chip_id);
}
static DEVICE_ATTR_RO(chip_id);

static ssize_t hbm_size_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%llu\n", dev_to_hpu(dev)->id.hbm_size);
}
static DEVICE_ATTR_RO(hbm_size);

static ssize_t reset_count_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", hpu_hw_reset_count(dev_to_hpu(dev)));
}
static DEVICE_ATTR_RO(reset_count);

static struct attribute *hpu_dev_attrs[] = {
	&dev_attr_serial.attr,
	&dev_attr_uuid.attr,
	&dev_attr_chip_id.attr,
	&dev_attr_hbm_size.attr,
	&dev_attr_reset_count.attr,
	NULL
};

static const struct attribute_group hpu_dev_group = {
	.attrs = hpu_dev_attrs,
};

const struct attribute_group *hpu_dev_groups[] = {
	&hpu_dev_group,
	NULL
};
