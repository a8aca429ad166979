// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu_en: the rings of a port: allocation, start and stop, transmit, the
 * interrupt and the NAPI poll.
 *
 * One MSI-X vector per port. Its handler masks the port's causes and
 * schedules NAPI; the poll acknowledges the causes, handles link changes
 * and errors, cleans the transmit ring, receives up to its budget and,
 * when done, unmasks: a cause set meanwhile raises the vector again at
 * that write (hw/nic.md, "Interrupts"). Descriptors complete in order and
 * carry a DONE bit, so the poll reads no index register.
 *
 * Transmit ring handoff (&struct hpu_en_ring): ndo_start_xmit fills a slot
 * and its descriptor, then publishes the producer with a release; the poll
 * acquires it, and reads a slot only after the device set its DONE bit
 * (dma_rmb() between the two), then clears the status and publishes the
 * consumer with a release, which ndo_start_xmit acquires before it reuses
 * a slot. Stopping and waking the queue use the lockless helpers of
 * <net/netdev_queues.h>, whose full barriers close the race between a
 * full ring and a completion. The receive ring has one user, the poll.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <net/netdev_queues.h>

#include "hpu_en.h"

static_assert(sizeof(struct hpu_en_tx_desc) == HPU_NIC_DESC_SIZE);
static_assert(sizeof(struct hpu_en_rx_desc) == HPU_NIC_DESC_SIZE);
static_assert(offsetof(struct hpu_en_tx_desc, len) == HPU_NIC_TXD_LEN);
static_assert(offsetof(struct hpu_en_tx_desc, flags) == HPU_NIC_TXD_FLAGS);
static_assert(offsetof(struct hpu_en_tx_desc, status) == HPU_NIC_TXD_STATUS);
static_assert(offsetof(struct hpu_en_rx_desc, size) == HPU_NIC_RXD_SIZE);
static_assert(offsetof(struct hpu_en_rx_desc, len) == HPU_NIC_RXD_LEN);
static_assert(offsetof(struct hpu_en_rx_desc, status) == HPU_NIC_RXD_STATUS);
static_assert(offsetof(struct hpu_en_rx_desc, flags) == HPU_NIC_RXD_FLAGS);

/* The transmit queue is woken when a quarter of the ring is free. */
#define HPU_EN_TX_WAKE(ring)	((ring)->size / 4)

/* Free transmit entries as ndo_start_xmit sees them (it owns @pi). */
static u32 hpu_en_tx_free_xmit(const struct hpu_en_ring *ring)
{
	/* Pairs with the poll's release of @ci: its slots are empty. */
	return ring->size - (ring->pi - smp_load_acquire(&ring->ci));
}

/* Free transmit entries as the poll sees them (it owns @ci). */
static u32 hpu_en_tx_free_poll(const struct hpu_en_ring *ring)
{
	/* Pairs with xmit's release of @pi: its slots are filled. */
	return ring->size - (smp_load_acquire(&ring->pi) - ring->ci);
}

static u8 hpu_en_desc_code(u8 status)
{
	return FIELD_GET(HPU_NIC_DESC_CODE_MASK, status);
}

/**
 * hpu_en_rx_buf_size() - receive buffer size for an MTU
 * @mtu: the MTU
 *
 * Return: the largest frame the port accepts at @mtu (MTU + 18: addresses,
 * one VLAN tag, EtherType), at least the smallest buffer the device takes.
 */
u32 hpu_en_rx_buf_size(unsigned int mtu)
{
	return max_t(u32, mtu + HPU_NIC_FRAME_OVERHEAD, HPU_NIC_RX_BUF_MIN);
}

/* Write receive descriptor @i for the buffer its slot holds. */
static void hpu_en_rx_post(struct hpu_en_ring *ring, u32 i)
{
	struct hpu_en_rx_desc *d = (struct hpu_en_rx_desc *)ring->desc + i;

	d->addr = cpu_to_le64(ring->bufs[i].dma | HPU_ADDR_HOST);
	d->size = cpu_to_le16(ring->buf_size);
	d->len = 0;
	d->status = 0;
	d->flags = 0;
	d->rsvd = 0;
}

/* A mapped receive buffer for @buf; @napi: from the poll (atomic). */
static int hpu_en_rx_buf_alloc(struct hpu_en_port *port,
			       struct hpu_en_ring *ring, struct hpu_en_buf *buf,
			       bool napi)
{
	struct device *dev = port->edev->dma_dev;
	struct sk_buff *skb;
	dma_addr_t dma;

	if (napi)
		skb = napi_alloc_skb(&port->napi, ring->buf_size);
	else
		skb = __netdev_alloc_skb_ip_align(port->ndev, ring->buf_size,
						  GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	dma = dma_map_single(dev, skb->data, ring->buf_size, DMA_FROM_DEVICE);
	if (dma_mapping_error(dev, dma)) {
		dev_kfree_skb_any(skb);
		return -ENOMEM;
	}
	buf->skb = skb;
	buf->dma = dma;
	buf->len = ring->buf_size;
	return 0;
}

/**
 * hpu_en_ring_alloc() - allocate a whole ring
 * @port: the port
 * @ring: the ring to fill in (not in use)
 * @size: entries, a power of two the device accepts
 * @buf_size: receive only: the buffer size
 * @rx: a receive ring: every slot gets a mapped buffer, every descriptor
 *	is written
 *
 * Nothing is given to the device here: hpu_en_hw_start() does that. May
 * sleep.
 *
 * Return: 0, or -ENOMEM with nothing left allocated.
 */
int hpu_en_ring_alloc(struct hpu_en_port *port, struct hpu_en_ring *ring,
		      u32 size, u32 buf_size, bool rx)
{
	struct device *dev = port->edev->dma_dev;
	u32 i;

	memset(ring, 0, sizeof(*ring));
	/* Test only (debugfs): the N-th allocation from now fails. */
	if (!atomic_dec_if_positive(&port->fail_ring_alloc))
		return -ENOMEM;
	ring->size = size;
	ring->buf_size = buf_size;
	/* Page aligned, so 64-byte aligned; zeroed, so reserved bytes are 0. */
	ring->desc = dma_alloc_coherent(dev, size * HPU_NIC_DESC_SIZE,
					&ring->desc_dma, GFP_KERNEL);
	if (!ring->desc)
		return -ENOMEM;
	ring->bufs = kvcalloc(size, sizeof(*ring->bufs), GFP_KERNEL);
	if (!ring->bufs)
		goto err;
	if (!rx)
		return 0;
	for (i = 0; i < size; i++) {
		if (hpu_en_rx_buf_alloc(port, ring, &ring->bufs[i], false))
			goto err;
		hpu_en_rx_post(ring, i);
	}
	return 0;

err:
	hpu_en_ring_free(port, ring, rx);
	return -ENOMEM;
}

/**
 * hpu_en_ring_free() - free a ring the device no longer reaches
 * @port: the port
 * @ring: the ring; may be empty (never allocated, or freed already)
 * @rx: a receive ring
 *
 * Unmaps and frees every buffer still in a slot.
 */
void hpu_en_ring_free(struct hpu_en_port *port, struct hpu_en_ring *ring,
		      bool rx)
{
	struct device *dev = port->edev->dma_dev;
	u32 i;

	if (!ring->desc)
		return;
	for (i = 0; ring->bufs && i < ring->size; i++) {
		struct hpu_en_buf *buf = &ring->bufs[i];

		if (!buf->skb)
			continue;
		dma_unmap_single(dev, buf->dma, buf->len,
				 rx ? DMA_FROM_DEVICE : DMA_TO_DEVICE);
		dev_kfree_skb_any(buf->skb);
	}
	kvfree(ring->bufs);
	dma_free_coherent(dev, ring->size * HPU_NIC_DESC_SIZE, ring->desc,
			  ring->desc_dma);
	memset(ring, 0, sizeof(*ring));
}

/*
 * CTRL with both rings @on or off. Written whole, never read back and
 * modified: CTRL holds nothing but the enable bits. Caller holds rtnl.
 */
static void hpu_en_write_ctrl(struct hpu_en_port *port, bool on)
{
	ASSERT_RTNL();
	hpu_en_wr32(port, HPU_NIC_CTRL,
		    on ? HPU_NIC_CTRL_TX_EN | HPU_NIC_CTRL_RX_EN : 0);
}

/**
 * hpu_en_rings_reset() - the driver's indices as enabling the rings sets
 *	the device's
 * @port: the port, NAPI disabled, rings stopped; every receive descriptor
 *	posted in memory, the transmit ring empty
 */
void hpu_en_rings_reset(struct hpu_en_port *port)
{
	port->tx.pi = 0;
	port->tx.ci = 0;
	port->rx.ci = 0;
	port->rx.pi = port->rx.size;
}

/**
 * hpu_en_hw_start() - give the rings to the device and start them
 * @port: the port, rings allocated and reset (hpu_en_rings_reset()),
 *	both enable bits clear
 *
 * Programs MTU, ring bases and sizes, enables both rings (which resets
 * their indices), posts every receive descriptor and unmasks the causes.
 * Caller holds rtnl and enabled NAPI first: an interrupt that finds NAPI
 * disabled leaves the causes masked for good.
 *
 * Return: 0, or -EIO if the device refused the configuration (logged); the
 * rings are then stopped (hpu_en_hw_stop(): the port may be wedged).
 */
int hpu_en_hw_start(struct hpu_en_port *port)
{
	struct hpu_en_ring *tx = &port->tx, *rx = &port->rx;
	u64 tx_base = tx->desc_dma | HPU_ADDR_HOST;
	u64 rx_base = rx->desc_dma | HPU_ADDR_HOST;
	u32 ctrl, mtu, want = HPU_NIC_CTRL_TX_EN | HPU_NIC_CTRL_RX_EN;

	hpu_en_wr32(port, HPU_NIC_MTU, port->ndev->mtu);
	hpu_en_wr32(port, HPU_NIC_TX_BASE_LO, lower_32_bits(tx_base));
	hpu_en_wr32(port, HPU_NIC_TX_BASE_HI, upper_32_bits(tx_base));
	hpu_en_wr32(port, HPU_NIC_TX_SIZE, tx->size);
	hpu_en_wr32(port, HPU_NIC_RX_BASE_LO, lower_32_bits(rx_base));
	hpu_en_wr32(port, HPU_NIC_RX_BASE_HI, upper_32_bits(rx_base));
	hpu_en_wr32(port, HPU_NIC_RX_SIZE, rx->size);
	/* What happened while stopped is of no interest. */
	hpu_en_wr32(port, HPU_NIC_IRQ_STATUS, HPU_NIC_IRQ_ALL);
	hpu_en_wr32(port, HPU_NIC_ERR_STATUS, HPU_NIC_ERR_ALL);
	hpu_en_write_ctrl(port, true);

	ctrl = hpu_en_rd32(port, HPU_NIC_CTRL);
	mtu = hpu_en_rd32(port, HPU_NIC_MTU);
	if ((ctrl & want) != want || mtu != port->ndev->mtu) {
		netdev_err(port->ndev, "the port refused its rings: CTRL 0x%08x, MTU %u (want %u), ERR_STATUS 0x%08x\n",
			   ctrl, mtu, port->ndev->mtu,
			   hpu_en_rd32(port, HPU_NIC_ERR_STATUS));
		hpu_en_hw_stop(port);
		return -EIO;
	}
	/* The descriptors are in memory: writel() orders them before this. */
	hpu_en_wr32(port, HPU_NIC_RX_PI, rx->pi);
	hpu_en_wr32(port, HPU_NIC_IRQ_MASK, HPU_NIC_IRQ_ALL);
	return 0;
}

/**
 * hpu_en_hw_stop() - stop both rings
 * @port: the port; its transmit queue and NAPI stopped by the caller
 *
 * Masks the causes, clears both enable bits and waits until CTRL reads
 * them clear: from then on the device reads and writes no descriptor or
 * buffer of the rings (hw/nic.md). A device that reads all ones is gone
 * and reaches nothing either. If the rings do not stop, the port is marked
 * wedged: its rings must never be freed or reused. Caller holds rtnl.
 *
 * Return: 0 or -ETIMEDOUT (logged).
 */
int hpu_en_hw_stop(struct hpu_en_port *port)
{
	u32 ctrl, on = HPU_NIC_CTRL_TX_EN | HPU_NIC_CTRL_RX_EN;
	int ret;

	hpu_en_wr32(port, HPU_NIC_IRQ_MASK, 0);
	hpu_en_write_ctrl(port, false);
	ret = readl_poll_timeout(port->regs + HPU_NIC_CTRL, ctrl,
				 !(ctrl & on) || ctrl == U32_MAX, 10,
				 HPU_EN_STOP_TIMEOUT_US);
	if (ret) {
		netdev_err(port->ndev, "the rings did not stop (CTRL 0x%08x): their memory stays allocated; reset the device\n",
			   ctrl);
		WRITE_ONCE(port->wedged, true);
	}
	return ret;
}

/**
 * hpu_en_tx_reclaim() - account and free what the stopped transmit ring
 * holds
 * @port: the port, its rings stopped (hpu_en_hw_stop() succeeded) and
 *	NAPI disabled
 *
 * Frames the device completed are counted as the poll would; the others
 * were never sent and count as dropped. Leaves the ring empty, every
 * status byte clear (a restart begins at slot 0 again).
 */
void hpu_en_tx_reclaim(struct hpu_en_port *port)
{
	struct hpu_en_ring *ring = &port->tx;
	struct hpu_en_napi_stats *st = &port->nstats;
	struct device *dev = port->edev->dma_dev;
	u64 ok = 0, ok_bytes = 0, dropped = 0;
	u32 mask = ring->size - 1;

	for (; ring->ci != ring->pi; ring->ci++) {
		u32 i = ring->ci & mask;
		struct hpu_en_tx_desc *d = (struct hpu_en_tx_desc *)ring->desc + i;
		struct hpu_en_buf *buf = &ring->bufs[i];
		u8 status = READ_ONCE(d->status);

		dma_unmap_single(dev, buf->dma, buf->len, DMA_TO_DEVICE);
		if ((status & HPU_NIC_DESC_DONE) &&
		    hpu_en_desc_code(status) == HPU_NIC_DESC_OK) {
			ok++;
			ok_bytes += buf->len;
		} else {
			dropped++;
		}
		WRITE_ONCE(d->status, 0);
		dev_kfree_skb_any(buf->skb);
		buf->skb = NULL;
	}
	/*
	 * The poll is stopped, so this is the only writer; BHs off so that
	 * a reader on this CPU never spins on a preempted writer (32-bit).
	 */
	local_bh_disable();
	u64_stats_update_begin(&st->syncp);
	u64_stats_add(&st->tx_packets, ok);
	u64_stats_add(&st->tx_bytes, ok_bytes);
	u64_stats_add(&st->tx_dropped, dropped);
	u64_stats_update_end(&st->syncp);
	local_bh_enable();
	netdev_tx_reset_queue(netdev_get_tx_queue(port->ndev, 0));
}

/**
 * hpu_en_rx_repost() - post every receive buffer again
 * @port: the port, its rings stopped and NAPI disabled
 *
 * Every slot holds a buffer (the poll replaces a buffer before it passes
 * one up, or keeps it), so a restart only rewrites the descriptors.
 */
void hpu_en_rx_repost(struct hpu_en_port *port)
{
	u32 i;

	for (i = 0; i < port->rx.size; i++)
		hpu_en_rx_post(&port->rx, i);
}

/**
 * hpu_en_update_carrier() - follow LINK_STATUS.UP with the carrier
 * @port: the port
 *
 * From the poll (the LINK cause) and from open. Idempotent.
 */
void hpu_en_update_carrier(struct hpu_en_port *port)
{
	u32 link = hpu_en_rd32(port, HPU_NIC_LINK_STATUS);

	if (link == U32_MAX)
		return;
	if (link & HPU_NIC_LINK_STATUS_UP) {
		if (!netif_carrier_ok(port->ndev)) {
			netif_carrier_on(port->ndev);
			netdev_info(port->ndev, "link up, %u Mb/s full duplex\n",
				    hpu_en_rd32(port, HPU_NIC_SPEED));
		}
	} else if (netif_carrier_ok(port->ndev)) {
		netif_carrier_off(port->ndev);
		netdev_info(port->ndev, "link down\n");
	}
}

/**
 * hpu_en_read_counter() - read one of the port's 64-bit counters
 * @port: the port
 * @i: the counter, HPU_NIC_CNT_*
 *
 * Any context.
 *
 * Return: its value.
 */
u64 hpu_en_read_counter(struct hpu_en_port *port, unsigned int i)
{
	unsigned long flags;
	u32 lo, hi;

	/* Reading LO latches HI: one pair at a time. */
	spin_lock_irqsave(&port->cnt_lock, flags);
	lo = hpu_en_rd32(port, HPU_NIC_CNT_LO(i));
	hi = hpu_en_rd32(port, HPU_NIC_CNT_HI(i));
	spin_unlock_irqrestore(&port->cnt_lock, flags);
	return (u64)hi << 32 | lo;
}

static void hpu_en_xmit_drop(struct hpu_en_port *port, struct sk_buff *skb)
{
	dev_kfree_skb_any(skb);
	u64_stats_update_begin(&port->xstats.syncp);
	u64_stats_inc(&port->xstats.dropped);
	u64_stats_update_end(&port->xstats.syncp);
}

/**
 * hpu_en_start_xmit() - &net_device_ops.ndo_start_xmit
 * @skb: the frame
 * @ndev: the port's netdev
 *
 * One descriptor per frame: the netdev has no scatter-gather (the port
 * computes no checksum, and the stack wants both), so frames are linear.
 * The doorbell is written once per batch (xmit_more).
 *
 * Return: NETDEV_TX_OK, or NETDEV_TX_BUSY if the ring was full.
 */
netdev_tx_t hpu_en_start_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	struct hpu_en_port *port = netdev_priv(ndev);
	struct netdev_queue *txq = netdev_get_tx_queue(ndev, 0);
	struct device *dev = port->edev->dma_dev;
	struct hpu_en_ring *ring = &port->tx;
	struct hpu_en_tx_desc *d;
	struct hpu_en_buf *buf;
	unsigned int len;
	dma_addr_t dma;
	u32 i;

	/*
	 * The queue is stopped before the ring fills; a false wake-up (the
	 * helpers allow them) finds it full. try_stop re-reads the space
	 * after its barrier, in case the poll freed a slot meanwhile.
	 */
	if (unlikely(!hpu_en_tx_free_xmit(ring)) &&
	    !netif_txq_try_stop(txq, hpu_en_tx_free_xmit(ring), 1)) {
		u64_stats_update_begin(&port->xstats.syncp);
		u64_stats_inc(&port->xstats.busy);
		u64_stats_update_end(&port->xstats.syncp);
		return NETDEV_TX_BUSY;
	}
	if (skb_linearize(skb) || skb->len > HPU_NIC_TX_BUF_MAX) {
		hpu_en_xmit_drop(port, skb);
		return NETDEV_TX_OK;
	}
	len = skb->len;
	dma = dma_map_single(dev, skb->data, len, DMA_TO_DEVICE);
	if (dma_mapping_error(dev, dma)) {
		hpu_en_xmit_drop(port, skb);
		return NETDEV_TX_OK;
	}

	i = ring->pi & (ring->size - 1);
	buf = &ring->bufs[i];
	buf->skb = skb;
	buf->dma = dma;
	buf->len = len;
	d = (struct hpu_en_tx_desc *)ring->desc + i;
	d->addr = cpu_to_le64(dma | HPU_ADDR_HOST);
	d->len = cpu_to_le16(len);
	d->flags = HPU_NIC_TXD_EOP;
	d->status = 0;
	d->rsvd = 0;
	skb_tx_timestamp(skb);
	/*
	 * Publishes the slot and the descriptor to the poll (which acquires
	 * @pi); after this it may complete and free @skb.
	 */
	smp_store_release(&ring->pi, ring->pi + 1);

	netif_txq_maybe_stop(txq, hpu_en_tx_free_xmit(ring), 1,
			     HPU_EN_TX_WAKE(ring));
	/* writel() orders the descriptor before the doorbell. */
	if (__netdev_tx_sent_queue(txq, len, netdev_xmit_more()))
		hpu_en_wr32(port, HPU_NIC_TX_PI, ring->pi);
	return NETDEV_TX_OK;
}

/* Clean what the device completed on the transmit ring. */
static void hpu_en_tx_clean(struct hpu_en_port *port, int budget)
{
	struct netdev_queue *txq = netdev_get_tx_queue(port->ndev, 0);
	struct hpu_en_napi_stats *st = &port->nstats;
	struct device *dev = port->edev->dma_dev;
	struct hpu_en_ring *ring = &port->tx;
	/* Pairs with xmit's release of @pi: the slots before it are filled. */
	u32 ci = ring->ci, pi = smp_load_acquire(&ring->pi);
	unsigned int pkts = 0, bytes = 0;
	u32 mask = ring->size - 1;
	u64 ok = 0, ok_bytes = 0, errors = 0, dropped = 0;

	while (ci != pi) {
		u32 i = ci & mask;
		struct hpu_en_tx_desc *d = (struct hpu_en_tx_desc *)ring->desc + i;
		struct hpu_en_buf *buf = &ring->bufs[i];
		u8 status = READ_ONCE(d->status);

		if (!(status & HPU_NIC_DESC_DONE))
			break;
		/* The slot only after DONE (the device wrote it last). */
		dma_rmb();
		dma_unmap_single(dev, buf->dma, buf->len, DMA_TO_DEVICE);
		switch (hpu_en_desc_code(status)) {
		case HPU_NIC_DESC_OK:
			ok++;
			ok_bytes += buf->len;
			break;
		case HPU_NIC_DESC_LINK_DOWN:
			dropped++;
			break;
		default:
			errors++;
			break;
		}
		pkts++;
		bytes += buf->len;
		napi_consume_skb(buf->skb, budget);
		buf->skb = NULL;
		/* No stale DONE for the slot's next frame to be taken for. */
		WRITE_ONCE(d->status, 0);
		ci++;
	}
	if (!pkts)
		return;
	/* Hands the emptied slots back to ndo_start_xmit. */
	smp_store_release(&ring->ci, ci);

	u64_stats_update_begin(&st->syncp);
	u64_stats_add(&st->tx_packets, ok);
	u64_stats_add(&st->tx_bytes, ok_bytes);
	u64_stats_add(&st->tx_errors, errors);
	u64_stats_add(&st->tx_dropped, dropped);
	u64_stats_update_end(&st->syncp);

	netif_txq_completed_wake(txq, pkts, bytes, hpu_en_tx_free_poll(ring),
				 HPU_EN_TX_WAKE(ring));
}

/*
 * Pass up the frame in slot @i's buffer, after putting a fresh buffer in
 * the slot. Without a fresh buffer the frame is dropped and the buffer
 * stays: the ring never has a hole. Return whether the frame went up.
 */
static bool hpu_en_rx_one(struct hpu_en_port *port, u32 i, u32 len)
{
	struct hpu_en_ring *ring = &port->rx;
	struct hpu_en_buf *buf = &ring->bufs[i], fresh;
	struct sk_buff *skb = buf->skb;

	if (hpu_en_rx_buf_alloc(port, ring, &fresh, true))
		return false;
	dma_unmap_single(port->edev->dma_dev, buf->dma, buf->len,
			 DMA_FROM_DEVICE);
	*buf = fresh;
	skb_put(skb, len);
	skb->protocol = eth_type_trans(skb, port->ndev);
	napi_gro_receive(&port->napi, skb);
	return true;
}

/* Receive up to @budget frames; repost their slots. */
static int hpu_en_rx_clean(struct hpu_en_port *port, int budget)
{
	struct hpu_en_napi_stats *st = &port->nstats;
	struct hpu_en_ring *ring = &port->rx;
	u64 bytes = 0, errors = 0, dropped = 0, mcast = 0;
	u32 mask = ring->size - 1;
	int done = 0, up = 0;

	while (done < budget) {
		u32 i = ring->ci & mask;
		struct hpu_en_rx_desc *d = (struct hpu_en_rx_desc *)ring->desc + i;
		u8 status = READ_ONCE(d->status);
		u32 len;

		if (!(status & HPU_NIC_DESC_DONE))
			break;
		/* The length and the frame only after DONE. */
		dma_rmb();
		len = le16_to_cpu(d->len);
		if (hpu_en_desc_code(status) != HPU_NIC_DESC_OK ||
		    len < ETH_HLEN || len > ring->buf_size) {
			errors++;
		} else if (hpu_en_rx_one(port, i, len)) {
			up++;
			bytes += len;
			if (d->flags & (HPU_NIC_RXD_BROADCAST | HPU_NIC_RXD_MULTICAST))
				mcast++;
		} else {
			dropped++;
		}
		hpu_en_rx_post(ring, i);
		ring->ci++;
		done++;
	}
	if (!done)
		return 0;

	/* Every slot is posted again: the producer is a ring ahead. */
	ring->pi = ring->ci + ring->size;
	hpu_en_wr32(port, HPU_NIC_RX_PI, ring->pi);

	u64_stats_update_begin(&st->syncp);
	u64_stats_add(&st->rx_packets, up);
	u64_stats_add(&st->rx_bytes, bytes);
	u64_stats_add(&st->rx_errors, errors);
	u64_stats_add(&st->rx_dropped, dropped);
	u64_stats_add(&st->rx_multicast, mcast);
	u64_stats_update_end(&st->syncp);
	return done;
}

/* The ERROR cause: count, log, and restart a ring the device stopped. */
static void hpu_en_handle_error(struct hpu_en_port *port)
{
	struct hpu_en_napi_stats *st = &port->nstats;
	u32 err = hpu_en_rd32(port, HPU_NIC_ERR_STATUS) & HPU_NIC_ERR_ALL;
	unsigned int b;

	if (!err)
		return;
	hpu_en_wr32(port, HPU_NIC_ERR_STATUS, err);
	u64_stats_update_begin(&st->syncp);
	for (b = 0; b < HPU_EN_NUM_ERR_BITS; b++)
		if (err & BIT(b))
			u64_stats_inc(&st->err[b]);
	u64_stats_update_end(&st->syncp);

	if (net_ratelimit())
		netdev_warn(port->ndev, "port error: ERR_STATUS 0x%08x\n", err);
	if (err & (HPU_NIC_ERR_TX_FETCH | HPU_NIC_ERR_RX_FETCH))
		schedule_work(&port->restart_work);
}

/**
 * hpu_en_irq() - the port's hard interrupt handler
 * @irq: the Linux interrupt number
 * @data: the port
 *
 * Masks every cause and leaves the rest to NAPI.
 *
 * Return: IRQ_HANDLED.
 */
irqreturn_t hpu_en_irq(int irq, void *data)
{
	struct hpu_en_port *port = data;

	hpu_en_wr32(port, HPU_NIC_IRQ_MASK, 0);
	napi_schedule_irqoff(&port->napi);
	return IRQ_HANDLED;
}

/**
 * hpu_en_poll() - the port's NAPI poll
 * @napi: the port's NAPI context
 * @budget: frames it may receive (0: netpoll, transmit only)
 *
 * Return: frames received, at most @budget.
 */
int hpu_en_poll(struct napi_struct *napi, int budget)
{
	struct hpu_en_port *port = container_of(napi, struct hpu_en_port, napi);
	u32 causes;
	int done;

	if (!budget) {
		/* netpoll: transmit only; the causes are the next poll's. */
		hpu_en_tx_clean(port, 0);
		return 0;
	}
	causes = hpu_en_rd32(port, HPU_NIC_IRQ_STATUS);
	if (causes == U32_MAX) {
		/* The device is gone: leave it masked. */
		napi_complete(napi);
		return 0;
	}
	/* Acknowledged before the work: a cause set later is seen again. */
	if (causes)
		hpu_en_wr32(port, HPU_NIC_IRQ_STATUS, causes);
	if (causes & HPU_NIC_IRQ_LINK)
		hpu_en_update_carrier(port);
	if (causes & HPU_NIC_IRQ_ERROR)
		hpu_en_handle_error(port);

	hpu_en_tx_clean(port, budget);
	done = hpu_en_rx_clean(port, budget);
	if (done < budget && napi_complete_done(napi, done))
		hpu_en_wr32(port, HPU_NIC_IRQ_MASK, HPU_NIC_IRQ_ALL);
	return done;
}
