// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: sensors (hwmon), firmware limits and DMA engine utilisation.
 *
 * The firmware keeps the sensor registers up to date every period of its
 * thermal model (Documentation/hw/firmware-and-telemetry.md): reading a
 * sensor is a plain register read. The limits (TEMP_MAX, TEMP_CRIT,
 * POWER_CAP, HBM_TEMP_MAX) live in the firmware and are read and set
 * through the mailbox, which takes about 100 us of device time per request:
 * they are cached here and read again after every firmware boot.
 *
 * While the firmware is not running (or has not updated the sensors yet
 * since it booted: SENSOR_SEQ is 0) the sensors read 0, and the mailbox
 * does not answer: hwmon reads and writes then fail with -ENODATA, the hwmon
 * ABI's "no data available" (`sensors` shows N/A), rather than returning
 * zeros that look like real values.
 *
 * Engine utilisation comes from the device's BUSY_NS counters, which count
 * in device time whatever the firmware does. A delayed work samples them
 * every HPU_UTIL_WINDOW_MS (100 ms); the utilisation of an engine is its
 * busy time between the last two samples divided by the time between them.
 *
 * Every reader that touches registers runs inside drm_dev_enter(), so
 * nothing reads the device once it is unplugged (removed, or unusable
 * after a failed hard reset): such reads fail with -ENODEV.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/device.h>
#include <linux/hwmon.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/string.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "hpu_accel.h"
#include "hpu_drv.h"
#include "hpu_fw.h"
#include "hpu_hbm.h"
#include "hpu_hwmon.h"
#include "hpu_mbox.h"
#include "hpu_reg.h"
#include "hpu_reset.h"

static_assert(HPU_HWMON_MAX_ENGINES <= DRM_HPU_MAX_ENGINES_UTIL);

/* Utilisation is reported in hundredths of a percent. */
#define HPU_UTIL_FULL		10000

static unsigned int hpu_hwmon_engines(struct hpu_device *hdev)
{
	return min_t(unsigned int, hdev->id.num_dma, HPU_HWMON_MAX_ENGINES);
}

/*
 * Read a 64-bit counter whose LO register latches HI: the pair is read
 * under a lock so that another reader's LO cannot re-latch HI in between.
 */
static u64 hpu_hwmon_rd64(struct hpu_hwmon *hw, u32 lo_reg, u32 hi_reg)
{
	u32 lo, hi;

	spin_lock(&hw->latch_lock);
	lo = hpu_rd32(hw->hdev, lo_reg);
	hi = hpu_rd32(hw->hdev, hi_reg);
	spin_unlock(&hw->latch_lock);

	return (u64)hi << 32 | lo;
}

/* Whether a hard reset is in progress: registers read their reset values. */
static bool hpu_hwmon_in_hard_reset(struct hpu_device *hdev)
{
	return hpu_rd32(hdev, HPU_REG_STATUS) & HPU_STATUS_HARD_RESET_BUSY;
}

/*
 * Read the BUSY_NS counter of each engine (@n of them) into @busy. The
 * counters only grow (they survive resets), but read 0 while a hard reset
 * is in progress: a read lower than the highest seen so far gives that
 * instead, so that nobody sees them go backwards. Return false, with @busy
 * holding the highest values seen, if a hard reset was in progress (some
 * reads may be its reset values).
 */
static bool hpu_hwmon_busy_ns(struct hpu_hwmon *hw, u64 *busy, unsigned int n)
{
	bool ok = !hpu_hwmon_in_hard_reset(hw->hdev);
	unsigned int e;

	for (e = 0; ok && e < n; e++)
		busy[e] = hpu_hwmon_rd64(hw, HPU_REG_BUSY_NS_LO(e),
					 HPU_REG_BUSY_NS_HI(e));
	/* The reset may have started meanwhile. */
	ok = ok && !hpu_hwmon_in_hard_reset(hw->hdev);

	spin_lock(&hw->util_lock);
	for (e = 0; e < n; e++) {
		if (ok && busy[e] > hw->busy_max[e])
			hw->busy_max[e] = busy[e];
		else
			busy[e] = hw->busy_max[e];
	}
	spin_unlock(&hw->util_lock);
	return ok;
}

/*
 * Whether the sensor registers hold data: the firmware runs and has
 * updated them at least once since it booted (until then they read 0).
 */
static bool hpu_hwmon_sensors_ready(struct hpu_device *hdev)
{
	return hpu_fw_running(hdev) && hpu_rd32(hdev, HPU_REG_SENSOR_SEQ);
}

/* Limits */

/*
 * Make @hw->limits those of the running firmware: read them through the
 * mailbox unless they were read since its last boot. Caller holds
 * &hpu_hwmon.limits_lock and is inside drm_dev_enter(). Return 0,
 * -ENODATA when the firmware is not running, or a mailbox error.
 */
static int hpu_limits_refresh_locked(struct hpu_hwmon *hw)
{
	struct hpu_device *hdev = hw->hdev;
	struct drm_hpu_info_firmware fw;
	struct hpu_limits l;
	u64 gen;
	u32 id;
	int ret;

	lockdep_assert_held(&hw->limits_lock);

	/*
	 * Both are read before the mailbox: a boot in between leaves a cache
	 * tagged with the old boot, which the next call reads again.
	 */
	gen = hpu_reset_generation(hdev);
	hpu_fw_info(hdev, &fw);
	if (hw->limits_valid && hw->limits_gen == gen &&
	    hw->limits_boots == fw.boots)
		return 0;

	hw->limits_valid = false;
	if (!hpu_fw_running(hdev))
		return -ENODATA;

	for (id = 0; id < HPU_NUM_LIMITS; id++) {
		ret = hpu_mbox_request(hdev, HPU_MBOX_GET_LIMIT, id, 0,
				       &l.value[id], NULL);
		if (!ret)
			ret = hpu_mbox_request(hdev, HPU_MBOX_GET_LIMIT_RANGE,
					       id, 0, &l.min[id], &l.max[id]);
		if (ret) {
			drm_dbg_driver(&hdev->drm, "cannot read firmware limit %u: %d\n",
				       id, ret);
			return ret == -ENODEV ? -ENODATA : ret;
		}
	}

	hw->limits = l;
	hw->limits_gen = gen;
	hw->limits_boots = fw.boots;
	hw->limits_valid = true;
	return 0;
}

/* Copy the limits of the running firmware to @out. Sleeps. */
static int hpu_limits_get(struct hpu_hwmon *hw, struct hpu_limits *out)
{
	int ret;

	mutex_lock(&hw->limits_lock);
	ret = hpu_limits_refresh_locked(hw);
	if (!ret)
		*out = hw->limits;
	mutex_unlock(&hw->limits_lock);
	return ret;
}

/*
 * Set limit @id to @val (its unit): -EINVAL outside the firmware's range
 * (checked here first, so the error does not depend on the firmware
 * answering BAD_ARG). Sleeps.
 */
static int hpu_limits_set(struct hpu_hwmon *hw, u32 id, u32 val)
{
	struct hpu_device *hdev = hw->hdev;
	u32 now;
	int ret;

	mutex_lock(&hw->limits_lock);
	ret = hpu_limits_refresh_locked(hw);
	if (ret)
		goto out;

	if (val < hw->limits.min[id] || val > hw->limits.max[id]) {
		drm_dbg_driver(&hdev->drm, "limit %u: %u is outside [%u, %u]\n",
			       id, val, hw->limits.min[id], hw->limits.max[id]);
		ret = -EINVAL;
		goto out;
	}

	ret = hpu_mbox_request(hdev, HPU_MBOX_SET_LIMIT, id, val, &now, NULL);
	if (ret) {
		/* Not knowing what the firmware has now, read it again. */
		hw->limits_valid = false;
		if (ret == -ENODEV)
			ret = -ENODATA;
		goto out;
	}
	hw->limits.value[id] = now;
	drm_info(&hdev->drm, "firmware limit %u set to %u (pid %d)\n", id, now,
		 task_pid_nr(current));
out:
	mutex_unlock(&hw->limits_lock);
	return ret;
}

/* hwmon */

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
	struct hpu_limits l;
	u32 alarm;
	int ret;

	switch (attr) {
	case hwmon_temp_input:
		*val = (s32)hpu_rd32(hdev, HPU_REG_TEMP(channel));
		return 0;
	case hwmon_temp_max:
	case hwmon_temp_crit:
		ret = hpu_limits_get(hw, &l);
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
	struct hpu_limits l;
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
		ret = hpu_limits_get(hw, &l);
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

	if (!hpu_hwmon_sensors_ready(hdev)) {
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
		*val = hpu_hwmon_rd64(hw, HPU_REG_ENERGY_LO, HPU_REG_ENERGY_HI);
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
	if (!ret && !hpu_hwmon_sensors_ready(hdev))
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
	ret = hpu_limits_set(hdev->hwmon, id, limit);
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

/* Engine utilisation */

/*
 * Take a BUSY_NS sample and derive each engine's utilisation from it. No
 * sample while a hard reset is in progress (the counters read 0 then): the
 * next one covers the time since the last good one.
 */
static void hpu_util_sample(struct hpu_hwmon *hw)
{
	unsigned int e, n = hpu_hwmon_engines(hw->hdev);
	u64 busy[HPU_HWMON_MAX_ENGINES];
	ktime_t now = ktime_get();
	u64 window, delta;

	if (!hpu_hwmon_busy_ns(hw, busy, n))
		return;

	spin_lock(&hw->util_lock);
	window = hw->sample_time ? ktime_to_ns(ktime_sub(now, hw->sample_time)) : 0;
	for (e = 0; e < n && window; e++) {
		/* hpu_hwmon_busy_ns() never goes back; belt and braces. */
		delta = busy[e] > hw->busy_ns[e] ? busy[e] - hw->busy_ns[e] : 0;
		hw->util[e] = min_t(u64, div64_u64(delta * HPU_UTIL_FULL, window),
				    HPU_UTIL_FULL);
	}
	if (window)
		hw->window_ns = window;
	memcpy(hw->busy_ns, busy, sizeof(busy[0]) * n);
	hw->sample_time = now;
	spin_unlock(&hw->util_lock);
}

static void hpu_util_work(struct work_struct *work)
{
	struct hpu_hwmon *hw = container_of(to_delayed_work(work),
					    struct hpu_hwmon, util_work);
	int idx;

	/* Unplugged: stop sampling for good. */
	if (!drm_dev_enter(&hw->hdev->drm, &idx))
		return;
	hpu_util_sample(hw);
	drm_dev_exit(idx);

	queue_delayed_work(system_power_efficient_wq, &hw->util_work,
			   msecs_to_jiffies(HPU_UTIL_WINDOW_MS));
}

/**
 * hpu_telemetry_engine_util() - utilisation of the DMA engines
 * @hdev: the device
 * @util: Out: busy share of each engine over the last window, in
 *	hundredths of a percent
 * @count: entries of @util
 *
 * Return: the number of engines written (at most @count). Callable from
 * any process context; takes a spinlock.
 */
int hpu_telemetry_engine_util(struct hpu_device *hdev, u32 *util,
			      unsigned int count)
{
	struct hpu_hwmon *hw = hdev->hwmon;
	unsigned int n = min(hpu_hwmon_engines(hdev), count);

	spin_lock(&hw->util_lock);
	memcpy(util, hw->util, sizeof(util[0]) * n);
	spin_unlock(&hw->util_lock);
	return n;
}

/**
 * hpu_telemetry_clock() - read a clock register of the sensor block
 * @hdev: the device
 * @reg: HPU_REG_CLK_CUR_MHZ, HPU_REG_CLK_MAX_MHZ or HPU_REG_CLK_HBM_MHZ
 * @val: Out: the clock in MHz
 *
 * Return: 0; -ENODATA while the firmware is not running; -ENODEV once the
 * device is unplugged.
 */
int hpu_telemetry_clock(struct hpu_device *hdev, u32 reg, u32 *val)
{
	int idx, ret = 0;

	if (!drm_dev_enter(&hdev->drm, &idx))
		return -ENODEV;
	if (hpu_hwmon_sensors_ready(hdev))
		*val = hpu_rd32(hdev, reg);
	if (!hpu_hwmon_sensors_ready(hdev))
		ret = -ENODATA;
	drm_dev_exit(idx);
	return ret;
}

/* The sensor fields of INFO TELEMETRY, from the sensor registers. */
static void hpu_telemetry_sensors(struct hpu_hwmon *hw,
				  struct drm_hpu_info_telemetry *out)
{
	struct hpu_device *hdev = hw->hdev;
	u32 bits;

	out->energy_uj = hpu_hwmon_rd64(hw, HPU_REG_ENERGY_LO, HPU_REG_ENERGY_HI);
	out->temp_die_mc = hpu_rd32(hdev, HPU_REG_TEMP(HPU_TEMP_DIE));
	out->temp_hbm_mc = hpu_rd32(hdev, HPU_REG_TEMP(HPU_TEMP_HBM));
	out->temp_board_mc = hpu_rd32(hdev, HPU_REG_TEMP(HPU_TEMP_BOARD));
	out->power_mw = hpu_rd32(hdev, HPU_REG_POWER_MW);
	out->volt_core_mv = hpu_rd32(hdev, HPU_REG_VOLT_CORE_MV);
	out->volt_hbm_mv = hpu_rd32(hdev, HPU_REG_VOLT_HBM_MV);
	out->clk_core_mhz = hpu_rd32(hdev, HPU_REG_CLK_CUR_MHZ);
	out->clk_core_max_mhz = hpu_rd32(hdev, HPU_REG_CLK_MAX_MHZ);
	out->clk_hbm_mhz = hpu_rd32(hdev, HPU_REG_CLK_HBM_MHZ);
	bits = hpu_rd32(hdev, HPU_REG_THROTTLE);
	out->throttle =
		(bits & HPU_THROTTLE_THERMAL ? DRM_HPU_THROTTLE_THERMAL : 0) |
		(bits & HPU_THROTTLE_POWER ? DRM_HPU_THROTTLE_POWER : 0);
	bits = hpu_rd32(hdev, HPU_REG_ALARM);
	out->alarms =
		(bits & HPU_ALARM_TEMP_MAX ? DRM_HPU_ALARM_TEMP_MAX : 0) |
		(bits & HPU_ALARM_TEMP_CRIT ? DRM_HPU_ALARM_TEMP_CRIT : 0) |
		(bits & HPU_ALARM_POWER_CAP ? DRM_HPU_ALARM_POWER_CAP : 0) |
		(bits & HPU_ALARM_HBM_TEMP_MAX ? DRM_HPU_ALARM_HBM_TEMP_MAX : 0);
}

static void hpu_telemetry_sensors_clear(struct drm_hpu_info_telemetry *out)
{
	out->energy_uj = 0;
	out->temp_die_mc = 0;
	out->temp_hbm_mc = 0;
	out->temp_board_mc = 0;
	out->power_mw = 0;
	out->volt_core_mv = 0;
	out->volt_hbm_mv = 0;
	out->clk_core_mhz = 0;
	out->clk_core_max_mhz = 0;
	out->clk_hbm_mhz = 0;
	out->throttle = 0;
	out->alarms = 0;
}

/**
 * hpu_telemetry_read() - the answer to INFO TELEMETRY
 * @hdev: the device; caller is inside drm_dev_enter()
 * @out: Out: zeroed by the caller, filled here
 *
 * Sensors, clocks and limits are left zero while the firmware is not
 * running (and the limits also when the mailbox fails); utilisation, busy
 * time and HBM use are always filled. May sleep (mailbox, HBM allocator).
 */
void hpu_telemetry_read(struct hpu_device *hdev,
			struct drm_hpu_info_telemetry *out)
{
	struct hpu_hwmon *hw = hdev->hwmon;
	unsigned int n = hpu_hwmon_engines(hdev);
	struct hpu_limits l;

	out->timestamp_ns = ktime_get_ns();
	out->hbm_total = hpu_hbm_total(hdev);
	out->hbm_used = hpu_hbm_used(hdev);

	out->num_engines = hpu_telemetry_engine_util(hdev, out->engine_util,
						     ARRAY_SIZE(out->engine_util));
	spin_lock(&hw->util_lock);
	out->util_window_ms = div_u64(hw->window_ns ?: HPU_UTIL_WINDOW_MS * NSEC_PER_MSEC,
				      NSEC_PER_MSEC);
	spin_unlock(&hw->util_lock);
	/* During a hard reset: the last values read before it. */
	hpu_hwmon_busy_ns(hw, out->engine_busy_ns, n);

	if (!hpu_hwmon_sensors_ready(hdev))
		return;

	hpu_telemetry_sensors(hw, out);
	/* The firmware may have stopped meanwhile (a hard reset): 0 reads. */
	if (!hpu_hwmon_sensors_ready(hdev)) {
		hpu_telemetry_sensors_clear(out);
		return;
	}

	if (hpu_limits_get(hw, &l))
		return;
	out->temp_max_mc = l.value[HPU_LIMIT_TEMP_MAX];
	out->temp_crit_mc = l.value[HPU_LIMIT_TEMP_CRIT];
	out->hbm_temp_max_mc = l.value[HPU_LIMIT_HBM_TEMP_MAX];
	out->power_cap_mw = l.value[HPU_LIMIT_POWER_CAP];
	out->power_cap_max_mw = l.max[HPU_LIMIT_POWER_CAP];
}

/**
 * hpu_hwmon_init() - set up telemetry and register the hwmon device
 * @hdev: the device, at probe, with its firmware state set up
 *
 * Registers the hwmon device ("hpu", a child of the PCI device) until
 * hpu_hwmon_fini(). A failure to register it is logged and otherwise
 * ignored: INFO TELEMETRY and the sysfs attributes do not need it. Starts
 * the utilisation sampler.
 *
 * Return: 0 or -ENOMEM.
 */
int hpu_hwmon_init(struct hpu_device *hdev)
{
	struct hpu_hwmon *hw;
	struct device *dev;
	int ret;

	hw = drmm_kzalloc(&hdev->drm, sizeof(*hw), GFP_KERNEL);
	if (!hw)
		return -ENOMEM;

	hw->hdev = hdev;
	ret = drmm_mutex_init(&hdev->drm, &hw->limits_lock);
	if (ret)
		return ret;
	spin_lock_init(&hw->latch_lock);
	spin_lock_init(&hw->util_lock);
	INIT_DELAYED_WORK(&hw->util_work, hpu_util_work);
	hdev->hwmon = hw;

	dev = hwmon_device_register_with_info(&hdev->pdev->dev, "hpu", hdev,
					      &hpu_hwmon_chip_info, NULL);
	if (IS_ERR(dev))
		drm_warn(&hdev->drm, "cannot register the hwmon device: %ld\n",
			 PTR_ERR(dev));
	else
		hw->dev = dev;

	hpu_util_sample(hw);
	queue_delayed_work(system_power_efficient_wq, &hw->util_work,
			   msecs_to_jiffies(HPU_UTIL_WINDOW_MS));
	return 0;
}

/**
 * hpu_hwmon_fini() - unregister the hwmon device, stop the sampler
 * @hdev: the device, at remove or on a probe failure, before what the
 *	hwmon callbacks use (firmware, mailbox, registers) goes away
 *
 * Waits for the hwmon callbacks in progress; none runs afterwards. May
 * sleep.
 */
void hpu_hwmon_fini(struct hpu_device *hdev)
{
	struct hpu_hwmon *hw = hdev->hwmon;

	if (!hw)
		return;
	if (hw->dev) {
		hwmon_device_unregister(hw->dev);
		hw->dev = NULL;
	}
	cancel_delayed_work_sync(&hw->util_work);
}
