// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: sysfs attributes of the PCI device: its identity and PCIe link,
 * for tools that want them without opening the accel node, and the list
 * of every subsystem's attribute group. Documented in
 * Documentation/ABI/testing/sysfs-driver-hpu.
 *
 * The driver core creates these through &pci_driver.driver.dev_groups
 * after a successful probe and removes them, waiting for readers to
 * finish, before the remove callback runs; a show function therefore
 * always finds the device bound and its registers mapped.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/bitfield.h>
#include <linux/device.h>
#include <linux/pci.h>
#include <linux/sysfs.h>

#include "hpu_drv.h"
#include "hpu_error_stats.h"
#include "hpu_fw.h"
#include "hpu_hbm.h"
#include "hpu_hw.h"
#include "hpu_telemetry.h"
#include "hpu_limits.h"
#include "hpu_reset.h"
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

/* Current link speed and width, "16.0 GT/s x16", from Link Status. */
static ssize_t pcie_link_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	struct pci_dev *pdev = to_pci_dev(dev);
	u16 lnksta;
	int mbps;

	mbps = pcie_link_speed_mbps(pdev);
	if (mbps <= 0 ||
	    pcie_capability_read_word(pdev, PCI_EXP_LNKSTA, &lnksta))
		return -ENODATA;
	return sysfs_emit(buf, "%d.%d GT/s x%u\n", mbps / 1000,
			  mbps % 1000 / 100,
			  (unsigned int)FIELD_GET(PCI_EXP_LNKSTA_NLW, lnksta));
}
static DEVICE_ATTR_RO(pcie_link);

static struct attribute *hpu_dev_attrs[] = {
	&dev_attr_serial.attr,
	&dev_attr_uuid.attr,
	&dev_attr_chip_id.attr,
	&dev_attr_hbm_size.attr,
	&dev_attr_reset_count.attr,
	&dev_attr_pcie_link.attr,
	NULL
};

static const struct attribute_group hpu_dev_group = {
	.attrs = hpu_dev_attrs,
};

const struct attribute_group *hpu_dev_groups[] = {
	&hpu_dev_group,
	&hpu_error_stats_group,
	&hpu_fw_group,
	&hpu_hbm_group,
	&hpu_limits_group,
	&hpu_reset_group,
	&hpu_telemetry_group,
	NULL
};
