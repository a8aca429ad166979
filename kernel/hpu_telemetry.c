// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: telemetry gathering: sensor registers, firmware limits and engine
 * utilisation (DMA, TPC, MME), for hwmon (hpu_hwmon.c), sysfs and INFO TELEMETRY.
 *
 * The firmware keeps the sensor registers up to date every period of its
 * thermal model (Documentation/hw/firmware-and-telemetry.md): reading a
 * sensor is a plain register read. The limits (TEMP_MAX, TEMP_CRIT,
 * POWER_CAP, HBM_TEMP_MAX) live in the firmware and are read and set
 * through the mailbox, which takes about 100 us of device time per request:
 * they are cached here and read again after every firmware boot.
 *
 * Engine utilisation comes from the device's BUSY_NS counters, which count
 * in device time whatever the firmware does. A delayed work samples them
 * every HPU_UTIL_WINDOW_MS (100 ms); the utilisation of an engine is its
 * busy time between the last two samples divided by the time between them.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/device.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/pci.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "hpu_accel.h"
#include "hpu_drv.h"
#include "hpu_fw.h"
#include "hpu_hbm.h"
#include "hpu_mbox.h"
#include "hpu_reg.h"
#include "hpu_reset.h"
#include "hpu_stream.h"
#include "hpu_telemetry.h"

static_assert(HPU_TELEMETRY_MAX_ENGINES <= DRM_HPU_MAX_ENGINES_UTIL);

/* Utilisation is reported in hundredths of a percent. */
#define HPU_UTIL_FULL		10000

/* Engine indexes with a BUSY_NS counter: 0 up to the last engine driven. */
static unsigned int hpu_telemetry_engines(struct hpu_device *hdev)
{
	return min_t(unsigned int, hpu_stream_engine_limit(hdev),
		     HPU_TELEMETRY_MAX_ENGINES);
}

/*
 * Read a 64-bit counter whose LO register latches HI: the pair is read
 * under a lock so that another reader's LO cannot re-latch HI in between.
 */
static u64 hpu_telemetry_rd64(struct hpu_telemetry *tm, u32 lo_reg,
			      u32 hi_reg)
{
	u32 lo, hi;

	spin_lock(&tm->latch_lock);
	lo = hpu_rd32(tm->hdev, lo_reg);
	hi = hpu_rd32(tm->hdev, hi_reg);
	spin_unlock(&tm->latch_lock);

	return (u64)hi << 32 | lo;
}

/* Whether a hard reset is in progress: registers read their reset values. */
static bool hpu_telemetry_in_hard_reset(struct hpu_device *hdev)
{
	return hpu_rd32(hdev, HPU_REG_STATUS) & HPU_STATUS_HARD_RESET_BUSY;
}

/* BUSY_NS of engine @e as the register pair reads now. */
static u64 hpu_telemetry_busy_raw(struct hpu_telemetry *tm, unsigned int e)
{
	return hpu_telemetry_rd64(tm, HPU_REG_BUSY_NS_LO(e),
				  HPU_REG_BUSY_NS_HI(e));
}

/*
 * Read the BUSY_NS counter of each engine (@n of them) into @busy, plus
 * what was counted before the last power-on reset (&hpu_telemetry.busy_base).
 * The counters survive hard resets but read 0 while one is in progress,
 * and start again from 0 at a power-on reset (FLR): a read lower than the
 * highest seen so far gives that instead, so that nobody sees them go
 * backwards. Return false, with @busy holding the highest values seen, if
 * a hard reset or an FLR was in progress or an FLR came in between (the
 * reads may be reset values, or anything).
 */
static bool hpu_telemetry_busy_ns(struct hpu_telemetry *tm, u64 *busy,
				  unsigned int n)
{
	struct hpu_device *hdev = tm->hdev;
	bool ok;
	unsigned int e;
	u32 epoch;

	spin_lock(&tm->util_lock);
	epoch = tm->busy_epoch;
	spin_unlock(&tm->util_lock);

	ok = !hpu_telemetry_in_hard_reset(hdev) && !hpu_reset_flr_active(hdev);
	for (e = 0; ok && e < n; e++)
		busy[e] = hpu_telemetry_busy_raw(tm, e);
	/* A reset may have started meanwhile. */
	ok = ok && !hpu_telemetry_in_hard_reset(hdev) &&
	     !hpu_reset_flr_active(hdev);

	spin_lock(&tm->util_lock);
	/* Or a power-on reset come and gone: reads from either side of it. */
	ok = ok && epoch == tm->busy_epoch;
	for (e = 0; e < n; e++) {
		if (ok)
			busy[e] += tm->busy_base[e];
		if (ok && busy[e] > tm->busy_max[e])
			tm->busy_max[e] = busy[e];
		else
			busy[e] = tm->busy_max[e];
	}
	spin_unlock(&tm->util_lock);
	return ok;
}

/**
 * hpu_telemetry_sensors_ready() - whether the sensor registers hold data
 * @hdev: the device; caller is inside drm_dev_enter()
 *
 * Return: true when the firmware runs and has updated the sensors at
 * least once since it booted (until then they read 0).
 */
bool hpu_telemetry_sensors_ready(struct hpu_device *hdev)
{
	return hpu_fw_running(hdev) && hpu_rd32(hdev, HPU_REG_SENSOR_SEQ);
}

/**
 * hpu_telemetry_energy() - the ENERGY counter
 * @hdev: the device; caller is inside drm_dev_enter()
 *
 * Return: energy used since power-on, in uJ.
 */
u64 hpu_telemetry_energy(struct hpu_device *hdev)
{
	return hpu_telemetry_rd64(hdev->telemetry, HPU_REG_ENERGY_LO,
				  HPU_REG_ENERGY_HI);
}

/* Limits */

/*
 * Make @tm->limits those of the running firmware: read them through the
 * mailbox unless they were read since its last boot. Caller holds
 * &hpu_telemetry.limits_lock and is inside drm_dev_enter(). Return 0,
 * -ENODATA when the firmware is not running, or a mailbox error.
 */
static int hpu_telemetry_limits_refresh_locked(struct hpu_telemetry *tm)
{
	struct hpu_device *hdev = tm->hdev;
	struct drm_hpu_info_firmware fw;
	struct hpu_fw_limits l;
	u64 gen;
	u32 id;
	int ret;

	lockdep_assert_held(&tm->limits_lock);

	/*
	 * Both are read before the mailbox: a boot in between leaves a cache
	 * tagged with the old boot, which the next call reads again.
	 */
	gen = hpu_reset_generation(hdev);
	hpu_fw_info(hdev, &fw);
	if (tm->limits_valid && tm->limits_gen == gen &&
	    tm->limits_boots == fw.boots)
		return 0;

	tm->limits_valid = false;
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

	tm->limits = l;
	tm->limits_gen = gen;
	tm->limits_boots = fw.boots;
	tm->limits_valid = true;
	return 0;
}

/**
 * hpu_telemetry_limits_get() - the limits of the running firmware
 * @hdev: the device; caller is inside drm_dev_enter()
 * @out: Out: the limits
 *
 * Read through the mailbox once per firmware boot, then from the cache.
 * May sleep.
 *
 * Return: 0; -ENODATA when the firmware is not running; a mailbox error.
 */
int hpu_telemetry_limits_get(struct hpu_device *hdev,
			     struct hpu_fw_limits *out)
{
	struct hpu_telemetry *tm = hdev->telemetry;
	int ret;

	mutex_lock(&tm->limits_lock);
	ret = hpu_telemetry_limits_refresh_locked(tm);
	if (!ret)
		*out = tm->limits;
	mutex_unlock(&tm->limits_lock);
	return ret;
}

/**
 * hpu_telemetry_limit_set() - set a firmware limit
 * @hdev: the device; caller is inside drm_dev_enter()
 * @id: HPU_LIMIT_*
 * @val: the new value, in the limit's unit (m°C or mW)
 *
 * The range is checked here first, so the error does not depend on the
 * firmware answering BAD_ARG. May sleep.
 *
 * Return: 0; -EINVAL outside the firmware's range; -ENODATA when the
 * firmware is not running; a mailbox error.
 */
int hpu_telemetry_limit_set(struct hpu_device *hdev, u32 id, u32 val)
{
	struct hpu_telemetry *tm = hdev->telemetry;
	u32 now;
	int ret;

	mutex_lock(&tm->limits_lock);
	ret = hpu_telemetry_limits_refresh_locked(tm);
	if (ret)
		goto out;

	if (val < tm->limits.min[id] || val > tm->limits.max[id]) {
		drm_dbg_driver(&hdev->drm, "limit %u: %u is outside [%u, %u]\n",
			       id, val, tm->limits.min[id], tm->limits.max[id]);
		ret = -EINVAL;
		goto out;
	}

	ret = hpu_mbox_request(hdev, HPU_MBOX_SET_LIMIT, id, val, &now, NULL);
	if (ret) {
		/* Not knowing what the firmware has now, read it again. */
		tm->limits_valid = false;
		if (ret == -ENODEV)
			ret = -ENODATA;
		goto out;
	}
	tm->limits.value[id] = now;
	drm_info(&hdev->drm, "firmware limit %u set to %u (pid %d)\n", id, now,
		 task_pid_nr(current));
out:
	mutex_unlock(&tm->limits_lock);
	return ret;
}

/* Engine utilisation */

/*
 * Take a BUSY_NS sample and derive each engine's utilisation from it. No
 * sample while a hard reset is in progress (the counters read 0 then): the
 * next one covers the time since the last good one.
 */
static void hpu_telemetry_util_sample(struct hpu_telemetry *tm)
{
	unsigned int e, n = hpu_telemetry_engines(tm->hdev);
	u64 busy[HPU_TELEMETRY_MAX_ENGINES];
	ktime_t now = ktime_get();
	u64 window, delta;

	if (!hpu_telemetry_busy_ns(tm, busy, n))
		return;

	spin_lock(&tm->util_lock);
	window = tm->sample_time ? ktime_to_ns(ktime_sub(now, tm->sample_time)) : 0;
	for (e = 0; e < n && window; e++) {
		/* hpu_telemetry_busy_ns() never goes back; belt and braces. */
		delta = busy[e] > tm->busy_ns[e] ? busy[e] - tm->busy_ns[e] : 0;
		tm->util[e] = min_t(u64, div64_u64(delta * HPU_UTIL_FULL, window),
				    HPU_UTIL_FULL);
	}
	if (window)
		tm->window_ns = window;
	memcpy(tm->busy_ns, busy, sizeof(busy[0]) * n);
	tm->sample_time = now;
	spin_unlock(&tm->util_lock);
}

static void hpu_telemetry_util_work(struct work_struct *work)
{
	struct hpu_telemetry *tm = container_of(to_delayed_work(work),
					    struct hpu_telemetry, util_work);
	int idx;

	/* Unplugged: stop sampling for good. */
	if (!drm_dev_enter(&tm->hdev->drm, &idx))
		return;
	hpu_telemetry_util_sample(tm);
	drm_dev_exit(idx);

	queue_delayed_work(system_power_efficient_wq, &tm->util_work,
			   msecs_to_jiffies(HPU_UTIL_WINDOW_MS));
}

/**
 * hpu_telemetry_reset_prepare() - the last reads before a power-on reset
 * @hdev: the device, its streams halted, before the FLR is marked active
 *
 * Reads the BUSY_NS counters once more, so that the busy time up to the
 * reset counts (hpu_telemetry_power_on_reset() goes on from it). Takes
 * spinlocks only: callable on the fence-signalling path.
 */
void hpu_telemetry_reset_prepare(struct hpu_device *hdev)
{
	struct hpu_telemetry *tm = hdev->telemetry;
	u64 busy[HPU_TELEMETRY_MAX_ENGINES];

	if (tm)
		hpu_telemetry_busy_ns(tm, busy, hpu_telemetry_engines(hdev));
}

/**
 * hpu_telemetry_power_on_reset() - the BUSY_NS counters may have restarted
 * @hdev: the device, after a function level reset, while it is still
 *	marked active (hpu_reset_flr_active())
 * @readable: the function left reset, its registers can be read
 *
 * A power-on reset sets BUSY_NS to 0. Each engine's base becomes the
 * highest busy time seen so far less what its counter reads now (0 after
 * a reset; all of it if the reset method did nothing, as when the PCI core
 * calls reset_done after a method failed), so that later reads go on from
 * where they were: busy time neither stands still until the counters pass
 * their old values nor counts twice, and utilisation shows the next load
 * at once. Reads that began before are dropped (&hpu_telemetry.busy_epoch).
 * Takes spinlocks only.
 */
void hpu_telemetry_power_on_reset(struct hpu_device *hdev, bool readable)
{
	struct hpu_telemetry *tm = hdev->telemetry;
	u64 raw[HPU_TELEMETRY_MAX_ENGINES] = {};
	unsigned int e, n;

	if (!tm)
		return;
	n = hpu_telemetry_engines(hdev);
	for (e = 0; readable && e < n; e++)
		raw[e] = hpu_telemetry_busy_raw(tm, e);
	spin_lock(&tm->util_lock);
	for (e = 0; e < HPU_TELEMETRY_MAX_ENGINES; e++)
		tm->busy_base[e] = tm->busy_max[e] > raw[e] ?
				   tm->busy_max[e] - raw[e] : 0;
	tm->busy_epoch++;
	spin_unlock(&tm->util_lock);
}

/**
 * hpu_telemetry_engine_util() - utilisation of the engines, by engine index
 * @hdev: the device
 * @util: Out: busy share of each engine over the last window, in
 *	hundredths of a percent
 * @count: entries of @util
 *
 * Return: the number of engines written (at most @count). Callable from
 * any process context; takes a spinlock.
 */
static int hpu_telemetry_engine_util(struct hpu_device *hdev, u32 *util,
				     unsigned int count)
{
	struct hpu_telemetry *tm = hdev->telemetry;
	unsigned int n = min(hpu_telemetry_engines(hdev), count);

	spin_lock(&tm->util_lock);
	memcpy(util, tm->util, sizeof(util[0]) * n);
	spin_unlock(&tm->util_lock);
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
static int hpu_telemetry_clock(struct hpu_device *hdev, u32 reg, u32 *val)
{
	int idx, ret = 0;

	if (!drm_dev_enter(&hdev->drm, &idx))
		return -ENODEV;
	if (hpu_telemetry_sensors_ready(hdev))
		*val = hpu_rd32(hdev, reg);
	if (!hpu_telemetry_sensors_ready(hdev))
		ret = -ENODATA;
	drm_dev_exit(idx);
	return ret;
}

/* The sensor fields of INFO TELEMETRY, from the sensor registers. */
static void hpu_telemetry_sensors(struct hpu_telemetry *tm,
				  struct drm_hpu_info_telemetry *out)
{
	struct hpu_device *hdev = tm->hdev;
	u32 bits;

	out->energy_uj = hpu_telemetry_rd64(tm, HPU_REG_ENERGY_LO, HPU_REG_ENERGY_HI);
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
	struct hpu_telemetry *tm = hdev->telemetry;
	unsigned int n = hpu_telemetry_engines(hdev);
	struct hpu_fw_limits l;

	out->timestamp_ns = ktime_get_ns();
	out->hbm_total = hpu_hbm_total(hdev);
	out->hbm_used = hpu_hbm_used(hdev);

	out->num_engines = hpu_telemetry_engine_util(hdev, out->engine_util,
						     ARRAY_SIZE(out->engine_util));
	spin_lock(&tm->util_lock);
	out->util_window_ms = div_u64(tm->window_ns ?: HPU_UTIL_WINDOW_MS * NSEC_PER_MSEC,
				      NSEC_PER_MSEC);
	spin_unlock(&tm->util_lock);
	/* During a hard reset: the last values read before it. */
	hpu_telemetry_busy_ns(tm, out->engine_busy_ns, n);

	if (!hpu_telemetry_sensors_ready(hdev))
		return;

	hpu_telemetry_sensors(tm, out);
	/* The firmware may have stopped meanwhile (a hard reset): 0 reads. */
	if (!hpu_telemetry_sensors_ready(hdev)) {
		hpu_telemetry_sensors_clear(out);
		return;
	}

	if (hpu_telemetry_limits_get(hdev, &l))
		return;
	out->temp_max_mc = l.value[HPU_LIMIT_TEMP_MAX];
	out->temp_crit_mc = l.value[HPU_LIMIT_TEMP_CRIT];
	out->hbm_temp_max_mc = l.value[HPU_LIMIT_HBM_TEMP_MAX];
	out->power_cap_mw = l.value[HPU_LIMIT_POWER_CAP];
	out->power_cap_max_mw = l.max[HPU_LIMIT_POWER_CAP];
}

/* sysfs */

static ssize_t hpu_clock_show(struct device *dev, char *buf, u32 reg)
{
	u32 mhz;
	int ret;

	ret = hpu_telemetry_clock(pci_get_drvdata(to_pci_dev(dev)), reg, &mhz);
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
 * "dma0 12.34 dma1 0.00 ... tpc 0.00 mme0 0.00 mme1 0.00": utilisation of
 * each engine the device has, percent.
 */
static ssize_t engine_util_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct hpu_device *hdev = pci_get_drvdata(to_pci_dev(dev));
	u32 util[HPU_TELEMETRY_MAX_ENGINES];
	int e, n, len = 0;

	n = hpu_telemetry_engine_util(hdev, util, ARRAY_SIZE(util));
	for (e = 0; e < n; e++) {
		if (!hpu_stream_engine_present(hdev, e))
			continue;
		len += sysfs_emit_at(buf, len, "%s%s %u.%02u", len ? " " : "",
				     hpu_stream_engine_name(e),
				     util[e] / 100, util[e] % 100);
	}
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}
static DEVICE_ATTR_RO(engine_util);

static struct attribute *hpu_telemetry_attrs[] = {
	&dev_attr_clk_core_mhz.attr,
	&dev_attr_clk_core_max_mhz.attr,
	&dev_attr_clk_hbm_mhz.attr,
	&dev_attr_engine_util.attr,
	NULL
};

/* Clocks and utilisation, in the PCI device's directory (hpu_sysfs.c). */
const struct attribute_group hpu_telemetry_group = {
	.attrs = hpu_telemetry_attrs,
};

/**
 * hpu_telemetry_init() - set up telemetry, start the utilisation sampler
 * @hdev: the device, at probe, with its firmware state set up
 *
 * Return: 0 or -ENOMEM.
 */
int hpu_telemetry_init(struct hpu_device *hdev)
{
	struct hpu_telemetry *tm;
	int ret;

	tm = drmm_kzalloc(&hdev->drm, sizeof(*tm), GFP_KERNEL);
	if (!tm)
		return -ENOMEM;

	tm->hdev = hdev;
	ret = drmm_mutex_init(&hdev->drm, &tm->limits_lock);
	if (ret)
		return ret;
	spin_lock_init(&tm->latch_lock);
	spin_lock_init(&tm->util_lock);
	INIT_DELAYED_WORK(&tm->util_work, hpu_telemetry_util_work);
	hdev->telemetry = tm;

	hpu_telemetry_util_sample(tm);
	queue_delayed_work(system_power_efficient_wq, &tm->util_work,
			   msecs_to_jiffies(HPU_UTIL_WINDOW_MS));
	return 0;
}

/**
 * hpu_telemetry_fini() - stop the utilisation sampler
 * @hdev: the device, at remove or on a probe failure, after
 *	hpu_hwmon_fini()
 *
 * May sleep.
 */
void hpu_telemetry_fini(struct hpu_device *hdev)
{
	struct hpu_telemetry *tm = hdev->telemetry;

	if (!tm)
		return;
	cancel_delayed_work_sync(&tm->util_work);
}
