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

#include <linux/bitfield.h>
#include <linux/capability.h>
#include <linux/device.h>
#include <linux/mutex.h>
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

/* Telemetry: Documentation/driver/telemetry.md */

static ssize_t hpu_clock_show(struct device *dev, char *buf, u32 reg)
{
	u32 mhz;
	int ret;

	ret = hpu_telemetry_clock(dev_to_hpu(dev), reg, &mhz);
	if (ret)
		return ret;
	return sysfs_emit(buf, "%u\n", mhz);
}

static ssize_t clk_core_mhz_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return hpu_clock_show(dev, buf, HPU_REG_CLK_CUR_MHZ);
}
static DEVICE_ATTR_RO(clk_core_mhz);

static ssize_t clk_core_max_mhz_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	return hpu_clock_show(dev, buf, HPU_REG_CLK_MAX_MHZ);
}
static DEVICE_ATTR_RO(clk_core_max_mhz);

static ssize_t clk_hbm_mhz_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return hpu_clock_show(dev, buf, HPU_REG_CLK_HBM_MHZ);
}
static DEVICE_ATTR_RO(clk_hbm_mhz);

/*
 * "unusable" after a failed hard reset or firmware boot (until the device
 * is unbound), "in reset" while a reset runs or is scheduled, else
 * "operational". A snapshot: the state may change as soon as it is read.
 */
static ssize_t status_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct hpu_device *hdev = dev_to_hpu(dev);
	struct hpu_reset *r = hdev->reset;
	const char *state = "operational";

	if (hpu_reset_unusable(hdev))
		state = "unusable";
	else if (mutex_is_locked(&r->lock) || READ_ONCE(r->pending))
		state = "in reset";
	return sysfs_emit(buf, "%s\n", state);
}
static DEVICE_ATTR_RO(status);

static ssize_t hbm_total_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", hpu_hbm_total(dev_to_hpu(dev)));
}
static DEVICE_ATTR_RO(hbm_total);

static ssize_t hbm_used_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", hpu_hbm_used(dev_to_hpu(dev)));
}
static DEVICE_ATTR_RO(hbm_used);

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

/* "dma0 12.34 dma1 0.00 ...": utilisation of each DMA engine, percent. */
static ssize_t engine_util_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	u32 util[HPU_TELEMETRY_MAX_ENGINES];
	int e, n, len = 0;

	n = hpu_telemetry_engine_util(dev_to_hpu(dev), util, ARRAY_SIZE(util));
	for (e = 0; e < n; e++)
		len += sysfs_emit_at(buf, len, "%sdma%d %u.%02u", e ? " " : "",
				     e, util[e] / 100, util[e] % 100);
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}
static DEVICE_ATTR_RO(engine_util);

/*
 * Operator reset: "soft" or "hard" (a trailing newline is fine). Named
 * hpu_reset: the PCI core's own "reset" (function level reset) is in the
 * same directory. Returns
 * once the reset is over: the byte count when it succeeded, -EBUSY while
 * another reset runs, -EIO when it failed, -ENODEV when the device is
 * unusable; each failure is explained in the kernel log.
 */
static ssize_t hpu_reset_store(struct device *dev,
			       struct device_attribute *attr, const char *buf,
			       size_t count)
{
	struct hpu_device *hdev = dev_to_hpu(dev);
	enum hpu_reset_kind kind;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (sysfs_streq(buf, "soft"))
		kind = HPU_RESET_SOFT;
	else if (sysfs_streq(buf, "hard"))
		kind = HPU_RESET_HARD;
	else
		return -EINVAL;

	drm_info(&hdev->drm, "%s reset requested by the operator (pid %d)\n",
		 buf[0] == 's' ? "soft" : "hard", task_pid_nr(current));
	ret = hpu_reset_now(hdev, kind, "requested by the operator");
	switch (ret) {
	case 0:
		return count;
	case -EBUSY:
		drm_warn(&hdev->drm, "operator reset refused: another reset is in progress\n");
		break;
	case -ENODEV:
		drm_err(&hdev->drm, "operator reset refused: the device is unusable or going away\n");
		break;
	default:
		drm_err(&hdev->drm, "operator reset failed: %d\n", ret);
		break;
	}
	return ret;
}
static DEVICE_ATTR_WO(hpu_reset);

static struct attribute *hpu_dev_attrs[] = {
	&dev_attr_serial.attr,
	&dev_attr_uuid.attr,
	&dev_attr_chip_id.attr,
	&dev_attr_hbm_size.attr,
	&dev_attr_reset_count.attr,
	&dev_attr_hpu_reset.attr,
	&dev_attr_clk_core_mhz.attr,
	&dev_attr_clk_core_max_mhz.attr,
	&dev_attr_clk_hbm_mhz.attr,
	&dev_attr_status.attr,
	&dev_attr_hbm_total.attr,
	&dev_attr_hbm_used.attr,
	&dev_attr_pcie_link.attr,
	&dev_attr_engine_util.attr,
	NULL
};

static const struct attribute_group hpu_dev_group = {
	.attrs = hpu_dev_attrs,
};

const struct attribute_group *hpu_dev_groups[] = {
	&hpu_dev_group,
	&hpu_error_stats_group,
	&hpu_fw_group,
	&hpu_limits_group,
	NULL
};
