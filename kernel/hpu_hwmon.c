// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: the hwmon device: sensors, temperature limits and the power cap
 * as the hwmon ABI shows them; what it reports is gathered by
 * hpu_telemetry.c.
 *
 * While the firmware is not running (or has not updated the sensors yet
 * since it booted: SENSOR_SEQ is 0) the sensors read 0, and the mailbox
 * does not answer: hwmon reads and writes then fail with -ENODATA, the hwmon
 * ABI's "no data available" (`sensors` shows N/A), rather than returning
 * zeros that look like real values.
 *
 * Every reader that touches registers runs inside drm_dev_enter(), so
 * nothing reads the device once it is unplugged (removed, or unusable
 * after a failed hard reset): such reads fail with -ENODEV.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/device.h>
#include <linux/hwmon.h>
#include <linux/math.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "hpu_drv.h"
#include "hpu_hwmon.h"
#include "hpu_reg.h"
#include "hpu_telemetry.h"

static const char * const hpu_hwmon_temp_labels[] = {
	[HPU_TEMP_DIE] = "die",
	[HPU_TEMP_HBM] = "hbm",
	[HPU_TEMP_BOARD] = "board",
};

static const char * const hpu_hwmon_in_labels[] = {
	"vddc core",
	"vdd hbm",
};

static const struct hwmon_channel_info * const hpu_hwmon_info[] = {
	HWMON_CHANNEL_INFO(temp,
			   HWMON_T_INPUT | HWMON_T_LABEL | HWMON_T_MAX |
			   HWMON_T_CRIT | HWMON_T_MAX_ALARM |
			   HWMON_T_CRIT_ALARM,
			   HWMON_T_INPUT | HWMON_T_LABEL | HWMON_T_MAX |
			   HWMON_T_MAX_ALARM,
			   HWMON_T_INPUT | HWMON_T_LABEL),
	HWMON_CHANNEL_INFO(power,
			   HWMON_P_INPUT | HWMON_P_CAP |
			   HWMON_P_CAP_MAX | HWMON_P_CAP_MIN |
			   HWMON_P_CAP_ALARM),
	HWMON_CHANNEL_INFO(energy, HWMON_E_INPUT),
	HWMON_CHANNEL_INFO(in,
			   HWMON_I_INPUT | HWMON_I_LABEL,
			   HWMON_I_INPUT | HWMON_I_LABEL),
	NULL
};

static umode_t hpu_hwmon_is_visible(const void *data,
				    enum hwmon_sensor_types type, u32 attr,
				    int channel)
{
	/* Only the limits user space may change are writable (by root). */
	if ((type == hwmon_temp && attr == hwmon_temp_max) ||
	    (type == hwmon_power && attr == hwmon_power_cap))
		return 0644;
	return 0444;
}

/* The limit behind temp<channel + 1>_max. */
static u32 hpu_hwmon_temp_max_limit(int channel)
{
	return channel == HPU_TEMP_DIE ? HPU_LIMIT_TEMP_MAX :
					 HPU_LIMIT_HBM_TEMP_MAX;
}

static int hpu_hwmon_read_temp(struct hpu_hwmon *hw, u32 attr, int channel,
			       long *val)
{
	struct hpu_device *hdev = hw->hdev;
	struct hpu_fw_limits l;
	u32 alarm;
	int ret;

	switch (attr) {
	case hwmon_temp_input:
		*val = (s32)hpu_rd32(hdev, HPU_REG_TEMP(channel));
		return 0;
	case hwmon_temp_max:
	case hwmon_temp_crit:
		ret = hpu_telemetry_limits_get(hw->hdev, &l);
		if (ret)
			return ret;
		*val = l.value[attr == hwmon_temp_crit ? HPU_LIMIT_TEMP_CRIT :
				hpu_hwmon_temp_max_limit(channel)];
		return 0;
	case hwmon_temp_max_alarm:
		alarm = channel == HPU_TEMP_DIE ? HPU_ALARM_TEMP_MAX :
						  HPU_ALARM_HBM_TEMP_MAX;
		*val = !!(hpu_rd32(hdev, HPU_REG_ALARM) & alarm);
		return 0;
	case hwmon_temp_crit_alarm:
		*val = !!(hpu_rd32(hdev, HPU_REG_ALARM) & HPU_ALARM_TEMP_CRIT);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static int hpu_hwmon_read_power(struct hpu_hwmon *hw, u32 attr, long *val)
{
	struct hpu_device *hdev = hw->hdev;
	struct hpu_fw_limits l;
	int ret;

	switch (attr) {
	case hwmon_power_input:
		*val = (long)hpu_rd32(hdev, HPU_REG_POWER_MW) * 1000;
		return 0;
	case hwmon_power_cap_alarm:
		*val = !!(hpu_rd32(hdev, HPU_REG_ALARM) & HPU_ALARM_POWER_CAP);
		return 0;
	case hwmon_power_cap:
	case hwmon_power_cap_max:
	case hwmon_power_cap_min:
		ret = hpu_telemetry_limits_get(hw->hdev, &l);
		if (ret)
			return ret;
		if (attr == hwmon_power_cap)
			*val = l.value[HPU_LIMIT_POWER_CAP];
		else if (attr == hwmon_power_cap_max)
			*val = l.max[HPU_LIMIT_POWER_CAP];
		else
			*val = l.min[HPU_LIMIT_POWER_CAP];
		*val *= 1000;	/* mW to uW */
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static int hpu_hwmon_read(struct device *dev, enum hwmon_sensor_types type,
			  u32 attr, int channel, long *val)
{
	struct hpu_device *hdev = dev_get_drvdata(dev);
	struct hpu_hwmon *hw = hdev->hwmon;
	int idx, ret;

	if (!drm_dev_enter(&hdev->drm, &idx))
		return -ENODEV;

	if (!hpu_telemetry_sensors_ready(hdev)) {
		ret = -ENODATA;
		goto out;
	}

	switch (type) {
	case hwmon_temp:
		ret = hpu_hwmon_read_temp(hw, attr, channel, val);
		break;
	case hwmon_power:
		ret = hpu_hwmon_read_power(hw, attr, val);
		break;
	case hwmon_energy:
		*val = hpu_telemetry_energy(hdev);
		ret = 0;
		break;
	case hwmon_in:
		*val = hpu_rd32(hdev, channel ? HPU_REG_VOLT_HBM_MV :
					       HPU_REG_VOLT_CORE_MV);
		ret = 0;
		break;
	default:
		ret = -EOPNOTSUPP;
		break;
	}
	/* The firmware may have stopped meanwhile (a hard reset): a 0 read. */
	if (!ret && !hpu_telemetry_sensors_ready(hdev))
		ret = -ENODATA;
out:
	drm_dev_exit(idx);
	return ret;
}

static int hpu_hwmon_read_string(struct device *dev,
				 enum hwmon_sensor_types type, u32 attr,
				 int channel, const char **str)
{
	switch (type) {
	case hwmon_temp:
		*str = hpu_hwmon_temp_labels[channel];
		return 0;
	case hwmon_in:
		*str = hpu_hwmon_in_labels[channel];
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static int hpu_hwmon_write(struct device *dev, enum hwmon_sensor_types type,
			   u32 attr, int channel, long val)
{
	struct hpu_device *hdev = dev_get_drvdata(dev);
	unsigned long limit;
	int idx, ret;
	u32 id;

	/*
	 * The limits are u32 (m°C, mW): anything that does not fit is out of
	 * every firmware range. Checked before any arithmetic, which would
	 * overflow on values near LONG_MAX.
	 */
	if (val < 0)
		return -EINVAL;
	limit = val;

	if (type == hwmon_temp && attr == hwmon_temp_max) {
		id = hpu_hwmon_temp_max_limit(channel);
	} else if (type == hwmon_power && attr == hwmon_power_cap) {
		id = HPU_LIMIT_POWER_CAP;
		/* uW to mW; unsigned: no overflow for any long. */
		limit = DIV_ROUND_CLOSEST(limit, 1000UL);
	} else {
		return -EOPNOTSUPP;
	}
	if (limit > U32_MAX)
		return -EINVAL;

	if (!drm_dev_enter(&hdev->drm, &idx))
		return -ENODEV;
	ret = hpu_telemetry_limit_set(hdev, id, limit);
	drm_dev_exit(idx);
	return ret;
}

static const struct hwmon_ops hpu_hwmon_ops = {
	.is_visible = hpu_hwmon_is_visible,
	.read = hpu_hwmon_read,
	.read_string = hpu_hwmon_read_string,
	.write = hpu_hwmon_write,
};

static const struct hwmon_chip_info hpu_hwmon_chip_info = {
	.ops = &hpu_hwmon_ops,
	.info = hpu_hwmon_info,
};

/**
 * hpu_hwmon_init() - register the hwmon device
 * @hdev: the device, at probe, after hpu_telemetry_init()
 *
 * Registers the hwmon device ("hpu", a child of the PCI device) until
 * hpu_hwmon_fini(). A failure to register it is logged and otherwise
 * ignored: INFO TELEMETRY and the sysfs attributes do not need it.
 *
 * Return: 0 or -ENOMEM.
 */
int hpu_hwmon_init(struct hpu_device *hdev)
{
	struct hpu_hwmon *hw;
	struct device *dev;

	hw = drmm_kzalloc(&hdev->drm, sizeof(*hw), GFP_KERNEL);
	if (!hw)
		return -ENOMEM;

	hw->hdev = hdev;
	hdev->hwmon = hw;

	dev = hwmon_device_register_with_info(&hdev->pdev->dev, "hpu", hdev,
					      &hpu_hwmon_chip_info, NULL);
	if (IS_ERR(dev))
		drm_warn(&hdev->drm, "cannot register the hwmon device: %ld\n",
			 PTR_ERR(dev));
	else
		hw->dev = dev;
	return 0;
}

/**
 * hpu_hwmon_fini() - unregister the hwmon device
 * @hdev: the device, at remove or on a probe failure, before what the
 *	hwmon callbacks use (firmware, mailbox, registers) goes away
 *
 * Waits for the hwmon callbacks in progress; none runs afterwards. May
 * sleep.
 */
void hpu_hwmon_fini(struct hpu_device *hdev)
{
	struct hpu_hwmon *hw = hdev->hwmon;

	if (!hw || !hw->dev)
		return;
	hwmon_device_unregister(hw->dev);
	hw->dev = NULL;
}
