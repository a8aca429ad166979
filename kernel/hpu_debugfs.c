// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: debugfs: fault injection and error state, for tests only. No ABI:
 * the files exist so that tests can provoke every error path through the
 * device's fault-injection registers. Documentation/driver/errors.md
 * lists them.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "hpu_accel.h"
#include "hpu_debugfs.h"
#include "hpu_drv.h"
#include "hpu_eq.h"
#include "hpu_error_stats.h"
#include "hpu_hbm.h"
#include "hpu_reg.h"
#include "hpu_reset.h"
#include "hpu_stream.h"

/* Longest input a write accepts, e.g. "ue 0xffffffffffffffff". */
#define HPU_DEBUGFS_INPUT_MAX	64

/**
 * struct hpu_debugfs - debugfs state of one device
 * @hdev: the device.
 * @inj_lock: serialises writes to the fault-injection registers (the ECC
 *	address and control registers are written as a sequence).
 *
 * Allocated with drmm_kzalloc(). The DRM core removes the device's debugfs
 * directory in drm_dev_unregister() (from drm_dev_unplug() in the remove
 * callback), waiting for readers and writers, well before managed
 * resources are released: no file outlives this structure.
 */
struct hpu_debugfs {
	struct hpu_device *hdev;
	struct mutex inj_lock;	/* the INJ_* registers */
};

/* Copy a short, NUL-terminated, whitespace-trimmed input from user space. */
static int hpu_debugfs_input(const char __user *ubuf, size_t count,
			     char *buf, size_t size, char **out)
{
	if (!count || count >= size)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	*out = strim(buf);
	return 0;
}

/* Parse an engine mask of engine indexes the device has (DMA and compute). */
static int hpu_debugfs_engine_mask(struct hpu_device *hdev, const char *what,
				   const char *s, u32 *mask)
{
	unsigned int e;
	u32 valid = 0;

	for (e = 0; e < HPU_NUM_ENGINES; e++)
		if (hpu_stream_engine_present(hdev, e))
			valid |= BIT(e);

	if (kstrtou32(s, 0, mask)) {
		drm_notice(&hdev->drm, "debugfs %s: \"%s\" is not an engine mask\n",
			   what, s);
		return -EINVAL;
	}
	if (*mask & ~valid) {
		drm_notice(&hdev->drm, "debugfs %s: mask 0x%x names engines the device lacks (valid: 0x%x)\n",
			   what, *mask, valid);
		return -EINVAL;
	}
	return 0;
}

/* Write @val to @reg with the device bound; -ENODEV once it is gone. */
static int hpu_debugfs_inject(struct hpu_debugfs *dbg, u32 reg, u32 val)
{
	struct hpu_device *hdev = dbg->hdev;
	int idx;

	if (!drm_dev_enter(&hdev->drm, &idx))
		return -ENODEV;
	mutex_lock(&dbg->inj_lock);
	hpu_wr32(hdev, reg, val);
	mutex_unlock(&dbg->inj_lock);
	drm_dev_exit(idx);
	return 0;
}

static ssize_t hpu_debugfs_mask_write(struct file *f, const char __user *ubuf,
				      size_t count, u32 reg, const char *what)
{
	struct hpu_debugfs *dbg = file_inode(f)->i_private;
	struct hpu_device *hdev = dbg->hdev;
	char buf[HPU_DEBUGFS_INPUT_MAX], *s;
	u32 mask;
	int ret;

	ret = hpu_debugfs_input(ubuf, count, buf, sizeof(buf), &s);
	if (ret)
		return ret;
	ret = hpu_debugfs_engine_mask(hdev, what, s, &mask);
	if (ret)
		return ret;

	drm_info(&hdev->drm, "debugfs %s: engine mask 0x%x\n", what, mask);
	ret = hpu_debugfs_inject(dbg, reg, mask);
	return ret ?: count;
}

static ssize_t hpu_debugfs_hang_write(struct file *f, const char __user *ubuf,
				      size_t count, loff_t *ppos)
{
	return hpu_debugfs_mask_write(f, ubuf, count, HPU_REG_INJ_HANG,
				      "inject_hang");
}

static ssize_t hpu_debugfs_dma_fail_write(struct file *f,
					  const char __user *ubuf,
					  size_t count, loff_t *ppos)
{
	return hpu_debugfs_mask_write(f, ubuf, count, HPU_REG_INJ_DMA_FAIL,
				      "inject_dma_fail");
}

static ssize_t hpu_debugfs_ecc_write(struct file *f, const char __user *ubuf,
				     size_t count, loff_t *ppos)
{
	struct hpu_debugfs *dbg = file_inode(f)->i_private;
	struct hpu_device *hdev = dbg->hdev;
	char buf[HPU_DEBUGFS_INPUT_MAX], *s, *kind;
	u32 ctrl;
	u64 addr;
	int idx, ret;

	ret = hpu_debugfs_input(ubuf, count, buf, sizeof(buf), &s);
	if (ret)
		return ret;

	kind = strsep(&s, " \t");
	if (!strcmp(kind, "ce")) {
		ctrl = HPU_INJ_ECC_CE;
	} else if (!strcmp(kind, "ue")) {
		ctrl = HPU_INJ_ECC_UE;
	} else {
		drm_notice(&hdev->drm, "debugfs inject_ecc: expected \"ce <HBM offset>\" or \"ue <HBM offset>\", got \"%s\"\n",
			   kind);
		return -EINVAL;
	}
	s = s ? skip_spaces(s) : NULL;
	if (!s || kstrtou64(s, 0, &addr)) {
		drm_notice(&hdev->drm, "debugfs inject_ecc: missing or bad HBM offset after \"%s\"\n",
			   kind);
		return -EINVAL;
	}
	if (addr >= hdev->id.hbm_size) {
		drm_notice(&hdev->drm, "debugfs inject_ecc: offset 0x%llx is beyond HBM (0x%llx bytes)\n",
			   addr, hdev->id.hbm_size);
		return -EINVAL;
	}

	if (!drm_dev_enter(&hdev->drm, &idx))
		return -ENODEV;
	drm_info(&hdev->drm, "debugfs: injecting a%s ECC error at HBM 0x%llx\n",
		 ctrl == HPU_INJ_ECC_CE ? " correctable" : "n uncorrectable",
		 addr);
	mutex_lock(&dbg->inj_lock);
	hpu_wr32(hdev, HPU_REG_INJ_ECC_ADDR_LO, lower_32_bits(addr));
	hpu_wr32(hdev, HPU_REG_INJ_ECC_ADDR_HI, upper_32_bits(addr));
	hpu_wr32(hdev, HPU_REG_INJ_ECC_CTRL, ctrl);
	mutex_unlock(&dbg->inj_lock);
	drm_dev_exit(idx);
	return count;
}

/*
 * An injection with one of two keywords: @words[i] written to @what sets
 * @reg to @vals[i], logging @msg and the word.
 */
static ssize_t hpu_debugfs_choice_write(struct file *f,
					const char __user *ubuf, size_t count,
					const char *what,
					const char *const words[2],
					const u32 vals[2], u32 reg,
					const char *msg)
{
	struct hpu_debugfs *dbg = file_inode(f)->i_private;
	struct hpu_device *hdev = dbg->hdev;
	char buf[HPU_DEBUGFS_INPUT_MAX], *s;
	unsigned int i;
	int ret;

	ret = hpu_debugfs_input(ubuf, count, buf, sizeof(buf), &s);
	if (ret)
		return ret;

	for (i = 0; i < 2; i++)
		if (!strcmp(s, words[i]))
			break;
	if (i == 2) {
		drm_notice(&hdev->drm, "debugfs %s: expected \"%s\" or \"%s\", got \"%s\"\n",
			   what, words[0], words[1], s);
		return -EINVAL;
	}

	drm_info(&hdev->drm, "debugfs: %s \"%s\"\n", msg, s);
	ret = hpu_debugfs_inject(dbg, reg, vals[i]);
	return ret ?: count;
}

static ssize_t hpu_debugfs_fw_write(struct file *f, const char __user *ubuf,
				    size_t count, loff_t *ppos)
{
	static const char *const words[2] = { "hb_stop", "fatal" };
	static const u32 vals[2] = { HPU_INJ_FW_HB_STOP, HPU_INJ_FW_FATAL };

	return hpu_debugfs_choice_write(f, ubuf, count, "inject_fw", words,
					vals, HPU_REG_INJ_FW,
					"injecting firmware fault");
}

/*
 * An injection with a single keyword: @word written to @what sets @reg to
 * @val, logging @msg.
 */
static ssize_t hpu_debugfs_word_write(struct file *f, const char __user *ubuf,
				      size_t count, const char *what,
				      const char *word, const char *msg,
				      u32 reg, u32 val)
{
	struct hpu_debugfs *dbg = file_inode(f)->i_private;
	struct hpu_device *hdev = dbg->hdev;
	char buf[HPU_DEBUGFS_INPUT_MAX], *s;
	int ret;

	ret = hpu_debugfs_input(ubuf, count, buf, sizeof(buf), &s);
	if (ret)
		return ret;

	if (strcmp(s, word)) {
		drm_notice(&hdev->drm, "debugfs %s: expected \"%s\", got \"%s\"\n",
			   what, word, s);
		return -EINVAL;
	}

	drm_info(&hdev->drm, "debugfs: %s\n", msg);
	ret = hpu_debugfs_inject(dbg, reg, val);
	return ret ?: count;
}

static ssize_t hpu_debugfs_flash_write(struct file *f,
				       const char __user *ubuf, size_t count,
				       loff_t *ppos)
{
	return hpu_debugfs_word_write(f, ubuf, count, "inject_flash", "corrupt",
				      "injecting flash image corruption",
				      HPU_REG_INJ_FLASH, HPU_INJ_FLASH_CORRUPT);
}

static ssize_t hpu_debugfs_mmu_inv_write(struct file *f,
					 const char __user *ubuf, size_t count,
					 loff_t *ppos)
{
	return hpu_debugfs_word_write(f, ubuf, count, "inject_mmu_inv", "stuck",
				      "TLB invalidations stop completing until a hard reset",
				      HPU_REG_INJ_MMU_INV, HPU_INJ_MMU_INV_STUCK);
}

static ssize_t hpu_debugfs_roce_cmd_write(struct file *f,
					  const char __user *ubuf, size_t count,
					  loff_t *ppos)
{
	return hpu_debugfs_word_write(f, ubuf, count, "inject_roce_cmd", "stuck",
				      "RoCE engine commands stop completing until a hard reset",
				      HPU_REG_INJ_ROCE_CMD, HPU_INJ_ROCE_CMD_STUCK);
}

static ssize_t hpu_debugfs_quiesce_write(struct file *f,
					 const char __user *ubuf, size_t count,
					 loff_t *ppos)
{
	static const char *const words[2] = { "streams", "hard_reset" };
	static const u32 vals[2] = { HPU_INJ_QUIESCE_STREAMS,
				     HPU_INJ_QUIESCE_HARD_RESET };

	return hpu_debugfs_choice_write(f, ubuf, count, "inject_quiesce",
					words, vals, HPU_REG_INJ_QUIESCE,
					"injecting, until a function reset,");
}

/* The injections in force (INJ_QUIESCE), in hex. */
static ssize_t hpu_debugfs_quiesce_read(struct file *f, char __user *ubuf,
					size_t count, loff_t *ppos)
{
	struct hpu_debugfs *dbg = file_inode(f)->i_private;
	struct hpu_device *hdev = dbg->hdev;
	char buf[16];
	int idx, len;
	u32 val;

	if (!drm_dev_enter(&hdev->drm, &idx))
		return -ENODEV;
	val = hpu_rd32(hdev, HPU_REG_INJ_QUIESCE);
	drm_dev_exit(idx);
	len = scnprintf(buf, sizeof(buf), "0x%x\n", val);
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

/*
 * "hold": the event queue's interrupt handler leaves the ring alone, as if
 * its interrupts came late; "release": handle what is there and go on.
 */
static ssize_t hpu_debugfs_eq_hold_write(struct file *f,
					 const char __user *ubuf, size_t count,
					 loff_t *ppos)
{
	struct hpu_debugfs *dbg = file_inode(f)->i_private;
	struct hpu_device *hdev = dbg->hdev;
	char buf[HPU_DEBUGFS_INPUT_MAX], *s;
	bool hold;
	int ret, idx;

	ret = hpu_debugfs_input(ubuf, count, buf, sizeof(buf), &s);
	if (ret)
		return ret;
	if (!strcmp(s, "hold")) {
		hold = true;
	} else if (!strcmp(s, "release")) {
		hold = false;
	} else {
		drm_notice(&hdev->drm, "debugfs inject_eq_hold: \"%s\" is neither hold nor release\n",
			   s);
		return -EINVAL;
	}
	if (!drm_dev_enter(&hdev->drm, &idx))
		return -ENODEV;
	hpu_eq_hold(hdev, hold);
	drm_dev_exit(idx);
	return count;
}

static int hpu_debugfs_quarantine_show(struct seq_file *m, void *unused)
{
	struct hpu_debugfs *dbg = m->private;

	hpu_reset_quarantine_show(dbg->hdev, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(hpu_debugfs_quarantine);

/*
 * One line per stream of every engine: "<engine> <stream> pushed <n> pi <n>
 * direct <n>": the jobs put on the stream since probe, its ring's producer
 * index, and of those jobs the ones the SUBMIT ioctls put there directly
 * (without the scheduler). The first two change under the stream's lock
 * with the doorbell write, so a test that sees pushed grow knows its job
 * is on the ring (tests/vm).
 */
static int hpu_debugfs_streams_show(struct seq_file *m, void *unused)
{
	struct hpu_debugfs *dbg = m->private;
	struct hpu_qm *qm = dbg->hdev->qm;
	unsigned int e, s;

	for (e = 0; e < qm->num_engines; e++) {
		for (s = 0; s < HPU_QM_STREAMS; s++) {
			struct hpu_stream *stream = &qm->engines[e].streams[s];
			unsigned long flags;
			u64 seq;
			u32 pi;

			spin_lock_irqsave(&stream->lock, flags);
			seq = stream->seq;
			pi = stream->pi;
			spin_unlock_irqrestore(&stream->lock, flags);
			seq_printf(m, "%s %u pushed %llu pi %u direct %lld\n",
				   hpu_stream_engine_name(qm->engines[e].index),
				   s, seq, pi,
				   atomic64_read(&stream->direct_submitted));
		}
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(hpu_debugfs_streams);

static int hpu_debugfs_errors_show(struct seq_file *m, void *unused)
{
	struct hpu_debugfs *dbg = m->private;
	struct hpu_device *hdev = dbg->hdev;
	struct hpu_reset_stats *rs = &hdev->reset->stats;
	struct drm_hpu_info_errors c;
	struct hpu_eq *eq = hdev->eq;

	hpu_error_stats_read(hdev, &c);
	seq_printf(m, "mmu_faults %llu\n", c.mmu_faults);
	seq_printf(m, "bad_packets %llu\n", c.bad_packets);
	seq_printf(m, "priv_violations %llu\n", c.priv_violations);
	seq_printf(m, "engine_hangs %llu\n", c.engine_hangs);
	seq_printf(m, "dma_bus_errors %llu\n", c.dma_bus_errors);
	seq_printf(m, "ecc_correctable %llu\n", c.ecc_correctable);
	seq_printf(m, "ecc_uncorrectable %llu\n", c.ecc_uncorrectable);
	seq_printf(m, "retired_pages %llu\n", c.retired_pages);
	seq_printf(m, "job_timeouts %llu\n", c.job_timeouts);
	seq_printf(m, "heartbeat_losses %llu\n", c.heartbeat_losses);
	seq_printf(m, "fw_fatal %llu\n", c.fw_fatal);
	seq_printf(m, "thermal_events %llu\n", c.thermal_events);
	seq_printf(m, "power_events %llu\n", c.power_events);
	seq_printf(m, "soft_resets %llu\n", c.soft_resets);
	seq_printf(m, "hard_resets %llu\n", c.hard_resets);
	seq_printf(m, "reset_generation %llu\n", c.reset_generation);
	/* Not in INFO ERRORS: */
	seq_printf(m, "failed_resets %lld\n", atomic64_read(&rs->failed_resets));
	seq_printf(m, "hung_jobs %lld\n", atomic64_read(&rs->hung_jobs));
	seq_printf(m, "resubmitted_jobs %lld\n",
		   atomic64_read(&rs->resubmitted));
	seq_printf(m, "heartbeat_events %lld\n",
		   atomic64_read(&eq->heartbeats));
	seq_printf(m, "reset_done_events %lld\n",
		   atomic64_read(&eq->resets_done));
	seq_printf(m, "bad_launch_events %lld\n",
		   atomic64_read(&eq->bad_launches));
	seq_printf(m, "tpc_illegal_events %lld\n",
		   atomic64_read(&eq->tpc_illegal));
	seq_printf(m, "tpc_assert_events %lld\n",
		   atomic64_read(&eq->tpc_asserts));
	seq_printf(m, "unknown_events %lld\n", atomic64_read(&eq->unknown));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(hpu_debugfs_errors);

static int hpu_debugfs_retired_show(struct seq_file *m, void *unused)
{
	struct hpu_debugfs *dbg = m->private;

	hpu_hbm_retired_show(dbg->hdev, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(hpu_debugfs_retired);

static const struct file_operations hpu_debugfs_hang_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = hpu_debugfs_hang_write,
	.llseek = noop_llseek,
};

static const struct file_operations hpu_debugfs_dma_fail_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = hpu_debugfs_dma_fail_write,
	.llseek = noop_llseek,
};

static const struct file_operations hpu_debugfs_ecc_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = hpu_debugfs_ecc_write,
	.llseek = noop_llseek,
};

static const struct file_operations hpu_debugfs_fw_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = hpu_debugfs_fw_write,
	.llseek = noop_llseek,
};

static const struct file_operations hpu_debugfs_flash_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = hpu_debugfs_flash_write,
	.llseek = noop_llseek,
};

static const struct file_operations hpu_debugfs_mmu_inv_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = hpu_debugfs_mmu_inv_write,
	.llseek = noop_llseek,
};

static const struct file_operations hpu_debugfs_roce_cmd_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = hpu_debugfs_roce_cmd_write,
	.llseek = noop_llseek,
};

static const struct file_operations hpu_debugfs_eq_hold_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = hpu_debugfs_eq_hold_write,
	.llseek = noop_llseek,
};

static const struct file_operations hpu_debugfs_quiesce_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = hpu_debugfs_quiesce_read,
	.write = hpu_debugfs_quiesce_write,
	.llseek = default_llseek,
};

/**
 * hpu_debugfs_init() - create the device's debugfs files
 * @hdev: the device, registered
 *
 * Called after drm_dev_register(). Failures are not fatal: debugfs is for
 * tests only. The DRM core removes the files when the device is
 * unregistered.
 */
void hpu_debugfs_init(struct hpu_device *hdev)
{
	struct drm_device *drm = &hdev->drm;
	struct dentry *root = drm->debugfs_root;
	struct hpu_debugfs *dbg;

	if (IS_ERR_OR_NULL(root))
		return;

	dbg = drmm_kzalloc(drm, sizeof(*dbg), GFP_KERNEL);
	if (!dbg)
		return;
	dbg->hdev = hdev;
	if (drmm_mutex_init(drm, &dbg->inj_lock))
		return;

	debugfs_create_file("inject_hang", 0200, root, dbg,
			    &hpu_debugfs_hang_fops);
	debugfs_create_file("inject_dma_fail", 0200, root, dbg,
			    &hpu_debugfs_dma_fail_fops);
	debugfs_create_file("inject_ecc", 0200, root, dbg,
			    &hpu_debugfs_ecc_fops);
	debugfs_create_file("inject_fw", 0200, root, dbg,
			    &hpu_debugfs_fw_fops);
	debugfs_create_file("inject_flash", 0200, root, dbg,
			    &hpu_debugfs_flash_fops);
	debugfs_create_file("inject_mmu_inv", 0200, root, dbg,
			    &hpu_debugfs_mmu_inv_fops);
	debugfs_create_file("inject_roce_cmd", 0200, root, dbg,
			    &hpu_debugfs_roce_cmd_fops);
	debugfs_create_file("inject_eq_hold", 0200, root, dbg,
			    &hpu_debugfs_eq_hold_fops);
	debugfs_create_file("inject_quiesce", 0600, root, dbg,
			    &hpu_debugfs_quiesce_fops);
	debugfs_create_file("quarantine", 0444, root, dbg,
			    &hpu_debugfs_quarantine_fops);
	debugfs_create_file("errors", 0444, root, dbg,
			    &hpu_debugfs_errors_fops);
	debugfs_create_file("retired_pages", 0444, root, dbg,
			    &hpu_debugfs_retired_fops);
	debugfs_create_file("streams", 0444, root, dbg,
			    &hpu_debugfs_streams_fops);
}
