/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: telemetry gathering: sensors, firmware limits and engine
 * utilisation.
 * Documentation/driver/telemetry.md has the whole picture.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_TELEMETRY_H__
#define __HPU_TELEMETRY_H__

#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "hpu_regs.h"

struct attribute_group;
struct drm_hpu_info_telemetry;
struct hpu_device;

/*
 * Engine indexes whose BUSY_NS counters the device has: the DMA engines
 * (spec version 4), TPC and MME (spec version 6).
 */
#define HPU_TELEMETRY_MAX_ENGINES	HPU_NUM_ENGINES

/* Period of the utilisation sampler, the window of engine utilisation. */
#define HPU_UTIL_WINDOW_MS	100

/**
 * struct hpu_fw_limits - firmware limits, as last read through the mailbox
 * @value: current value of each limit (HPU_LIMIT_*), m°C or mW.
 * @min: lowest value the firmware accepts for it.
 * @max: highest value the firmware accepts for it.
 */
struct hpu_fw_limits {
	u32 value[HPU_NUM_LIMITS];
	u32 min[HPU_NUM_LIMITS];
	u32 max[HPU_NUM_LIMITS];
};

/**
 * struct hpu_telemetry - telemetry state of one device
 * @hdev: the device.
 * @limits_lock: serialises mailbox use for limits and protects @limits,
 *	@limits_valid, @limits_gen and @limits_boots. Sleeps.
 * @limits: cached limits: the mailbox takes about 100 us of device time,
 *	so they are read once per firmware boot (and updated by writes).
 * @limits_valid: @limits holds what the running firmware reported.
 * @limits_gen: reset generation when @limits was read; a hard reset
 *	reboots the firmware with its default limits.
 * @limits_boots: firmware boots (INFO FIRMWARE) when @limits was read.
 * @latch_lock: makes each LO/HI read of a latched 64-bit register pair
 *	(ENERGY, BUSY_NS) atomic against the others: reading LO latches HI.
 *	Never taken in interrupt context; nothing else is taken under it.
 * @util_work: samples BUSY_NS every %HPU_UTIL_WINDOW_MS.
 * @util_lock: protects @busy_ns, @busy_max, @busy_base, @busy_epoch,
 *	@sample_time, @util and @window_ns. Spinlock (the sampler and
 *	readers never sleep under it).
 * @busy_ns: busy time of each engine at the last sample.
 * @busy_max: highest busy time (@busy_base + BUSY_NS) of each engine read
 *	so far (outside resets): what is reported instead of a lower read.
 * @busy_base: what each engine's busy time adds BUSY_NS to: set at a
 *	power-on reset (FLR), which restarts the counters from 0.
 * @busy_epoch: power-on resets seen; a read across one is dropped.
 * @sample_time: CLOCK_MONOTONIC time of the last sample (0: none yet).
 * @util: busy share of each engine between the last two samples, in
 *	hundredths of a percent.
 * @window_ns: time between the last two samples (0: fewer than two).
 */
struct hpu_telemetry {
	struct hpu_device *hdev;
	/* mailbox use for limits; protects limits* */
	struct mutex limits_lock;
	struct hpu_fw_limits limits;
	bool limits_valid;
	u64 limits_gen;
	u32 limits_boots;
	/* LO/HI pairs of latched counters */
	spinlock_t latch_lock;
	struct delayed_work util_work;
	/*
	 * protects busy_ns, busy_max, busy_base, busy_epoch, sample_time,
	 * util, window_ns
	 */
	spinlock_t util_lock;
	u64 busy_ns[HPU_TELEMETRY_MAX_ENGINES];
	u64 busy_max[HPU_TELEMETRY_MAX_ENGINES];
	u64 busy_base[HPU_TELEMETRY_MAX_ENGINES];
	u32 busy_epoch;
	ktime_t sample_time;
	u32 util[HPU_TELEMETRY_MAX_ENGINES];
	u64 window_ns;
};

int hpu_telemetry_init(struct hpu_device *hdev);
void hpu_telemetry_fini(struct hpu_device *hdev);
void hpu_telemetry_reset_prepare(struct hpu_device *hdev);
void hpu_telemetry_power_on_reset(struct hpu_device *hdev, bool readable);

void hpu_telemetry_read(struct hpu_device *hdev,
			struct drm_hpu_info_telemetry *out);

bool hpu_telemetry_sensors_ready(struct hpu_device *hdev);
u64 hpu_telemetry_energy(struct hpu_device *hdev);
int hpu_telemetry_limits_get(struct hpu_device *hdev,
			     struct hpu_fw_limits *out);
int hpu_telemetry_limit_set(struct hpu_device *hdev, u32 id, u32 val);

/* sysfs clk_* and engine_util of the PCI device (hpu_sysfs.c lists the group). */
extern const struct attribute_group hpu_telemetry_group;

#endif /* __HPU_TELEMETRY_H__ */
