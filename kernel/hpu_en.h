/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu_en: Ethernet netdevs of the HPU's NIC ports, an auxiliary driver of
 * the "hpu.en" devices that hpu.ko adds. Documentation/driver/nic.md.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_EN_H__
#define __HPU_EN_H__

#include <linux/atomic.h>
#include <linux/auxiliary_bus.h>
#include <linux/io.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/u64_stats_sync.h>
#include <linux/workqueue.h>

#include "hpu_regs.h"

#define HPU_EN_DRIVER_NAME	"hpu_en"

/* Ring sizes at probe; ethtool -G changes them (powers of two). */
#define HPU_EN_TX_RING_DEFAULT	256
#define HPU_EN_RX_RING_DEFAULT	256

/* How long a ring may take to stop once its enable bit is cleared. */
#define HPU_EN_STOP_TIMEOUT_US	100000

/**
 * struct hpu_en_tx_desc - transmit descriptor (hw/nic.md)
 * @addr: buffer address, ASID 0 (bit 63: host bus address).
 * @len: bytes in the buffer.
 * @flags: %HPU_NIC_TXD_EOP.
 * @status: written by the device: %HPU_NIC_DESC_DONE and the code.
 * @rsvd: zero.
 */
struct hpu_en_tx_desc {
	__le64 addr;
	__le16 len;
	u8 flags;
	u8 status;
	__le32 rsvd;
};

/**
 * struct hpu_en_rx_desc - receive descriptor (hw/nic.md)
 * @addr: buffer address, ASID 0 (bit 63: host bus address).
 * @size: buffer size in bytes.
 * @len: written by the device: bytes of the frame.
 * @status: written by the device: %HPU_NIC_DESC_DONE and the code.
 * @flags: written by the device: %HPU_NIC_RXD_BROADCAST and so on.
 * @rsvd: zero.
 */
struct hpu_en_rx_desc {
	__le64 addr;
	__le16 size;
	__le16 len;
	u8 status;
	u8 flags;
	__le16 rsvd;
};

/**
 * struct hpu_en_buf - what a descriptor slot holds
 * @skb: the socket buffer (transmit: to free when done; receive: posted).
 * @dma: its DMA mapping.
 * @len: mapped length.
 */
struct hpu_en_buf {
	struct sk_buff *skb;
	dma_addr_t dma;
	u32 len;
};

/**
 * struct hpu_en_ring - a transmit or receive ring
 * @size: entries, a power of two from %HPU_NIC_RING_MIN to
 *	%HPU_NIC_RING_MAX.
 * @desc: the descriptors (coherent DMA memory), &struct hpu_en_tx_desc or
 *	&struct hpu_en_rx_desc.
 * @desc_dma: their bus address.
 * @bufs: one per descriptor slot.
 * @buf_size: receive only: the size of every buffer.
 * @pi: producer index, free running as the device's. Transmit: advanced
 *	by ndo_start_xmit (under the queue's xmit lock) with
 *	smp_store_release() once the slot and descriptor are written; the
 *	NAPI poll reads it with smp_load_acquire(). Receive: NAPI poll only.
 * @ci: next descriptor to clean, free running. Transmit: advanced by the
 *	NAPI poll with smp_store_release() once the slots before it are
 *	emptied; ndo_start_xmit reads it with smp_load_acquire() before it
 *	reuses a slot. Receive: NAPI poll only.
 *
 * A ring is allocated whole (descriptors, slots, and for receive every
 * buffer) before it replaces another, and only touched by the NAPI poll
 * and the xmit path while its port runs; open, stop and reconfiguration
 * (under rtnl) stop both first.
 */
struct hpu_en_ring {
	u32 size;
	void *desc;
	dma_addr_t desc_dma;
	struct hpu_en_buf *bufs;
	u32 buf_size;
	u32 pi;
	u32 ci;
};

/* ERR_STATUS bits, each counted (ethtool -S err_*). */
#define HPU_EN_NUM_ERR_BITS	6

/**
 * struct hpu_en_napi_stats - counters written by the NAPI poll
 * @syncp: 64-bit consistency on 32-bit machines.
 * @rx_packets: frames passed up.
 * @rx_bytes: their bytes (the whole frame, as the device counts them).
 * @rx_errors: descriptors completed with an error or a bad length.
 * @rx_dropped: frames dropped for want of a replacement buffer.
 * @rx_multicast: multicast and broadcast frames passed up.
 * @tx_packets: frames the device completed OK.
 * @tx_bytes: their bytes.
 * @tx_errors: frames completed BAD_DESC, BAD_LEN or BUS_ERROR.
 * @tx_dropped: frames completed LINK_DOWN, or never sent because the
 *	rings were stopped (close, reconfiguration, restart).
 * @err: ERR_STATUS bits seen, one counter per bit.
 *
 * One writer at a time: the NAPI poll, or the rtnl path that stopped it.
 */
struct hpu_en_napi_stats {
	struct u64_stats_sync syncp;
	u64_stats_t rx_packets;
	u64_stats_t rx_bytes;
	u64_stats_t rx_errors;
	u64_stats_t rx_dropped;
	u64_stats_t rx_multicast;
	u64_stats_t tx_packets;
	u64_stats_t tx_bytes;
	u64_stats_t tx_errors;
	u64_stats_t tx_dropped;
	u64_stats_t err[HPU_EN_NUM_ERR_BITS];
};

/**
 * struct hpu_en_xmit_stats - counters written by ndo_start_xmit
 * @syncp: 64-bit consistency on 32-bit machines.
 * @dropped: frames dropped before the ring (linearisation or mapping
 *	failed).
 * @busy: the ring was full (NETDEV_TX_BUSY).
 *
 * Written under the transmit queue's xmit lock.
 */
struct hpu_en_xmit_stats {
	struct u64_stats_sync syncp;
	u64_stats_t dropped;
	u64_stats_t busy;
};

struct hpu_en_dev;

/**
 * struct hpu_en_port - one NIC port, one netdev (its private data)
 * @ndev: the netdev.
 * @edev: the auxiliary device's state.
 * @regs: the port's register block (hpu_nic_port_regs()).
 * @idx: the port number.
 * @irq: Linux interrupt number of its vector, requested while it runs.
 * @irq_name: the name in /proc/interrupts.
 * @napi: its NAPI context: cleans both rings and handles the causes.
 * @tx: the transmit ring, while running.
 * @rx: the receive ring, while running.
 * @tx_size: transmit ring entries to use at the next start (ethtool -G).
 *	Under rtnl.
 * @rx_size: receive ring entries likewise. Under rtnl.
 * @running: the rings are allocated and the port is started. Under rtnl.
 * @wedged: a ring did not stop: its memory is kept (the device may still
 *	reach it) and the port stays down until the device is reset. Written
 *	under rtnl (WRITE_ONCE()); the transmit watchdog reads it with
 *	READ_ONCE().
 * @cnt_lock: a counter's LO/HI register pair is read under it (reading LO
 *	latches HI).
 * @inj_lock: serialises read-modify-writes of INJ_CTRL (debugfs).
 * @restart_work: restarts the rings after a transmit timeout or a ring
 *	the device stopped; takes rtnl.
 * @xstats: counters of ndo_start_xmit.
 * @nstats: counters of the NAPI poll.
 * @restarts: ring restarts (transmit timeouts, stopped rings). Atomic:
 *	a plain u64 could tear on a 32-bit machine, and it has no writer
 *	that a u64_stats_sync would fit (rtnl, no per-CPU writer).
 * @tx_timeouts: transmit timeouts, written by the watchdog timer. Atomic
 *	as @restarts.
 * @hw_base: the device's counters when the netdev was created; the
 *	netdev's statistics count from there. Constant after probe.
 * @fail_ring_alloc: test only (debugfs): when N > 0, the N-th ring
 *	allocation from now fails with -ENOMEM, as if memory ran out.
 * @dbg: the port's debugfs directory.
 *
 * Open, stop, MTU and ring changes and the restart work run under rtnl;
 * they stop NAPI and the transmit queue before they touch @tx or @rx.
 * CTRL is written only there (under rtnl), never read-modify-written:
 * the device clears its enable bits by itself, and PROMISC lives apart,
 * in RX_FILTER, written by set_rx_mode alone.
 */
struct hpu_en_port {
	struct net_device *ndev;
	struct hpu_en_dev *edev;
	void __iomem *regs;
	unsigned int idx;
	int irq;
	char irq_name[32];
	struct napi_struct napi;
	struct hpu_en_ring tx;
	struct hpu_en_ring rx;
	u32 tx_size;
	u32 rx_size;
	bool running;
	bool wedged;
	/* counter LO/HI pairs */
	spinlock_t cnt_lock;
	/* INJ_CTRL read-modify-write */
	struct mutex inj_lock;
	struct work_struct restart_work;
	struct hpu_en_xmit_stats xstats;
	struct hpu_en_napi_stats nstats;
	atomic64_t restarts;
	atomic64_t tx_timeouts;
	u64 hw_base[HPU_NIC_NUM_COUNTERS];
	atomic_t fail_ring_alloc;
	struct dentry *dbg;
};

/**
 * struct hpu_en_dev - state of one auxiliary device (one HPU)
 * @adev: the auxiliary device.
 * @dma_dev: the device to DMA-map against (the PCI function).
 * @num_ports: ports, and netdevs in @ports.
 * @dbg: the debugfs directory of the device.
 * @ports: the netdevs, NULL for a port not set up.
 */
struct hpu_en_dev {
	struct auxiliary_device *adev;
	struct device *dma_dev;
	unsigned int num_ports;
	struct dentry *dbg;
	struct net_device *ports[HPU_NIC_MAX_PORTS];
};

static inline u32 hpu_en_rd32(struct hpu_en_port *port, u32 reg)
{
	return readl(port->regs + reg);
}

static inline void hpu_en_wr32(struct hpu_en_port *port, u32 reg, u32 val)
{
	writel(val, port->regs + reg);
}

/* hpu_en_main.c */
int hpu_en_reconfigure(struct hpu_en_port *port, u32 tx_size, u32 rx_size,
		       unsigned int mtu);

/* hpu_en_txrx.c */
u32 hpu_en_rx_buf_size(unsigned int mtu);
int hpu_en_ring_alloc(struct hpu_en_port *port, struct hpu_en_ring *ring,
		      u32 size, u32 buf_size, bool rx);
void hpu_en_ring_free(struct hpu_en_port *port, struct hpu_en_ring *ring,
		      bool rx);
void hpu_en_rings_reset(struct hpu_en_port *port);
int hpu_en_hw_start(struct hpu_en_port *port);
int hpu_en_hw_stop(struct hpu_en_port *port);
void hpu_en_tx_reclaim(struct hpu_en_port *port);
void hpu_en_rx_repost(struct hpu_en_port *port);
void hpu_en_update_carrier(struct hpu_en_port *port);
u64 hpu_en_read_counter(struct hpu_en_port *port, unsigned int i);
netdev_tx_t hpu_en_start_xmit(struct sk_buff *skb, struct net_device *ndev);
irqreturn_t hpu_en_irq(int irq, void *data);
int hpu_en_poll(struct napi_struct *napi, int budget);

/* hpu_en_ethtool.c */
extern const struct ethtool_ops hpu_en_ethtool_ops;
void hpu_en_get_stats64(struct net_device *ndev,
			struct rtnl_link_stats64 *stats);

/* hpu_en_debugfs.c */
void hpu_en_debugfs_init(void);
void hpu_en_debugfs_exit(void);
void hpu_en_debugfs_dev_init(struct hpu_en_dev *edev);
void hpu_en_debugfs_port_init(struct hpu_en_port *port);
void hpu_en_debugfs_dev_fini(struct hpu_en_dev *edev);

#endif /* __HPU_EN_H__ */
