// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu_en: debugfs fault injection into a port, for tests only (no ABI).
 *
 *   /sys/kernel/debug/hpu_en/<auxiliary device>/port<p>/
 *     link_down  0 or 1: INJ_CTRL.LINK_DOWN, the link forced down
 *     drop_tx    0 to 255: frames handed to the wire that are dropped
 *     drop_rx    0 to 255: frames arriving that are dropped
 *     swap_tx    0 or 1: the next frame is sent after the one after it
 *     fail_ring_alloc  0 to 16: N > 0 makes the N-th ring allocation from
 *                now fail with -ENOMEM (the driver's own, not INJ_CTRL)
 *
 * Reads give the register's current state (the drop counts go down as
 * frames are dropped). Root only (mode 0600, and debugfs itself).
 * Documentation/driver/nic.md.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/mutex.h>

#include "hpu_en.h"

static struct dentry *hpu_en_debugfs_root;

/* Replace the @mask bits of INJ_CTRL with @val. */
static int hpu_en_inj_update(struct hpu_en_port *port, u32 mask, u32 val)
{
	u32 inj;
	int ret = 0;

	mutex_lock(&port->inj_lock);
	inj = hpu_en_rd32(port, HPU_NIC_INJ_CTRL);
	if (inj == U32_MAX) {
		ret = -ENODEV;
	} else {
		inj = ((inj & ~mask) | (val & mask)) & HPU_NIC_INJ_DEFINED;
		hpu_en_wr32(port, HPU_NIC_INJ_CTRL, inj);
	}
	mutex_unlock(&port->inj_lock);
	return ret;
}

static int hpu_en_inj_get(struct hpu_en_port *port, u32 mask, u64 *val)
{
	u32 inj = hpu_en_rd32(port, HPU_NIC_INJ_CTRL);

	if (inj == U32_MAX)
		return -ENODEV;
	*val = (inj & mask) >> __ffs(mask);
	return 0;
}

static int hpu_en_inj_set(struct hpu_en_port *port, u32 mask, u64 val)
{
	if (val > mask >> __ffs(mask))
		return -EINVAL;
	return hpu_en_inj_update(port, mask, (u32)val << __ffs(mask));
}

#define HPU_EN_INJ_ATTR(name, mask)					\
static const u32 hpu_en_##name##_mask = (mask);				\
static int hpu_en_##name##_get(void *data, u64 *val)			\
{									\
	return hpu_en_inj_get(data, hpu_en_##name##_mask, val);		\
}									\
static int hpu_en_##name##_set(void *data, u64 val)			\
{									\
	return hpu_en_inj_set(data, hpu_en_##name##_mask, val);		\
}									\
DEFINE_DEBUGFS_ATTRIBUTE(hpu_en_##name##_fops, hpu_en_##name##_get,	\
			 hpu_en_##name##_set, "%llu\n")

HPU_EN_INJ_ATTR(link_down, HPU_NIC_INJ_LINK_DOWN);
HPU_EN_INJ_ATTR(drop_tx, HPU_NIC_INJ_DROP_TX_MASK);
HPU_EN_INJ_ATTR(drop_rx, HPU_NIC_INJ_DROP_RX_MASK);
HPU_EN_INJ_ATTR(swap_tx, HPU_NIC_INJ_SWAP_TX);

static int hpu_en_fail_ring_alloc_get(void *data, u64 *val)
{
	struct hpu_en_port *port = data;

	*val = atomic_read(&port->fail_ring_alloc);
	return 0;
}

static int hpu_en_fail_ring_alloc_set(void *data, u64 val)
{
	struct hpu_en_port *port = data;

	if (val > 16)
		return -EINVAL;
	atomic_set(&port->fail_ring_alloc, val);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(hpu_en_fail_ring_alloc_fops, hpu_en_fail_ring_alloc_get,
			 hpu_en_fail_ring_alloc_set, "%llu\n");

/** hpu_en_debugfs_init() - create /sys/kernel/debug/hpu_en at module load */
void hpu_en_debugfs_init(void)
{
	hpu_en_debugfs_root = debugfs_create_dir(HPU_EN_DRIVER_NAME, NULL);
}

/** hpu_en_debugfs_exit() - remove it at module unload */
void hpu_en_debugfs_exit(void)
{
	debugfs_remove_recursive(hpu_en_debugfs_root);
}

/**
 * hpu_en_debugfs_dev_init() - the directory of an auxiliary device
 * @edev: the device, being probed
 */
void hpu_en_debugfs_dev_init(struct hpu_en_dev *edev)
{
	edev->dbg = debugfs_create_dir(dev_name(&edev->adev->dev),
				       hpu_en_debugfs_root);
}

/**
 * hpu_en_debugfs_port_init() - a port's files
 * @port: the port, registered
 */
void hpu_en_debugfs_port_init(struct hpu_en_port *port)
{
	char name[16];

	snprintf(name, sizeof(name), "port%u", port->idx);
	port->dbg = debugfs_create_dir(name, port->edev->dbg);
	debugfs_create_file_unsafe("link_down", 0600, port->dbg, port,
				   &hpu_en_link_down_fops);
	debugfs_create_file_unsafe("drop_tx", 0600, port->dbg, port,
				   &hpu_en_drop_tx_fops);
	debugfs_create_file_unsafe("drop_rx", 0600, port->dbg, port,
				   &hpu_en_drop_rx_fops);
	debugfs_create_file_unsafe("swap_tx", 0600, port->dbg, port,
				   &hpu_en_swap_tx_fops);
	debugfs_create_file_unsafe("fail_ring_alloc", 0600, port->dbg, port,
				   &hpu_en_fail_ring_alloc_fops);
}

/**
 * hpu_en_debugfs_dev_fini() - remove the device's directory
 * @edev: the device, being removed
 *
 * Waits for reads and writes in progress (the files' operations hold a
 * debugfs reference), so no injection reaches a port once this returns.
 */
void hpu_en_debugfs_dev_fini(struct hpu_en_dev *edev)
{
	debugfs_remove_recursive(edev->dbg);
	edev->dbg = NULL;
}
