// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu_en: ethtool operations and statistics of a port.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/ethtool.h>
#include <linux/log2.h>
#include <linux/netdevice.h>
#include <linux/netlink.h>

#include "hpu_en.h"

/* The device's counters, in HPU_NIC_CNT_* order, then LINK_CHANGES. */
static const char * const hpu_en_hw_stat_names[] = {
	"hw_tx_frames", "hw_tx_bytes", "hw_rx_frames", "hw_rx_bytes",
	"hw_rx_mcast", "hw_tx_errors", "hw_tx_drops", "hw_rx_errors",
	"hw_rx_nobuf", "hw_rx_drops", "hw_rx_filtered", "hw_inj_dropped",
	"hw_link_changes",
};

static_assert(ARRAY_SIZE(hpu_en_hw_stat_names) == HPU_NIC_NUM_COUNTERS + 1);

/* The driver's counters: &struct hpu_en_napi_stats, then the others. */
static const char * const hpu_en_sw_stat_names[] = {
	"rx_packets", "rx_bytes", "rx_errors", "rx_dropped", "rx_multicast",
	"tx_packets", "tx_bytes", "tx_errors", "tx_dropped",
	"err_bad_config", "err_bad_pi", "err_tx_desc", "err_tx_fetch",
	"err_rx_desc", "err_rx_fetch",
	"tx_xmit_dropped", "tx_busy", "tx_timeouts", "restarts",
};

#define HPU_EN_NUM_NAPI_STATS	(9 + HPU_EN_NUM_ERR_BITS)
static_assert(ARRAY_SIZE(hpu_en_sw_stat_names) == HPU_EN_NUM_NAPI_STATS + 4);
#define HPU_EN_NUM_STATS	(ARRAY_SIZE(hpu_en_hw_stat_names) + \
				 ARRAY_SIZE(hpu_en_sw_stat_names))

/* A consistent copy of the NAPI counters, in the names' order. */
static void hpu_en_napi_stats_read(struct hpu_en_port *port, u64 *v)
{
	const struct hpu_en_napi_stats *s = &port->nstats;
	unsigned int start, b;

	do {
		start = u64_stats_fetch_begin(&s->syncp);
		v[0] = u64_stats_read(&s->rx_packets);
		v[1] = u64_stats_read(&s->rx_bytes);
		v[2] = u64_stats_read(&s->rx_errors);
		v[3] = u64_stats_read(&s->rx_dropped);
		v[4] = u64_stats_read(&s->rx_multicast);
		v[5] = u64_stats_read(&s->tx_packets);
		v[6] = u64_stats_read(&s->tx_bytes);
		v[7] = u64_stats_read(&s->tx_errors);
		v[8] = u64_stats_read(&s->tx_dropped);
		for (b = 0; b < HPU_EN_NUM_ERR_BITS; b++)
			v[9 + b] = u64_stats_read(&s->err[b]);
	} while (u64_stats_fetch_retry(&s->syncp, start));
}

static void hpu_en_xmit_stats_read(struct hpu_en_port *port, u64 *dropped,
				   u64 *busy)
{
	const struct hpu_en_xmit_stats *s = &port->xstats;
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&s->syncp);
		*dropped = u64_stats_read(&s->dropped);
		*busy = u64_stats_read(&s->busy);
	} while (u64_stats_fetch_retry(&s->syncp, start));
}

/**
 * hpu_en_get_stats64() - &net_device_ops.ndo_get_stats64
 * @ndev: the port's netdev
 * @stats: filled in
 *
 * Packets, bytes and drops as the driver saw them; receive errors and
 * FIFO overflows (missed) from the device's counters, counted from when
 * the netdev was created (hpu.ko recreates it after every device reset,
 * which zeroes those counters). Any context.
 */
void hpu_en_get_stats64(struct net_device *ndev,
			struct rtnl_link_stats64 *stats)
{
	struct hpu_en_port *port = netdev_priv(ndev);
	u64 v[HPU_EN_NUM_NAPI_STATS], dropped, busy;

	hpu_en_napi_stats_read(port, v);
	hpu_en_xmit_stats_read(port, &dropped, &busy);
	stats->rx_packets = v[0];
	stats->rx_bytes = v[1];
	stats->rx_dropped = v[3];
	stats->multicast = v[4];
	stats->tx_packets = v[5];
	stats->tx_bytes = v[6];
	stats->tx_errors = v[7];
	stats->tx_dropped = v[8] + dropped;
	/* Runts and oversized frames too, which never reach a descriptor. */
	stats->rx_errors = hpu_en_read_counter(port, HPU_NIC_CNT_RX_ERRORS) -
			   port->hw_base[HPU_NIC_CNT_RX_ERRORS];
	stats->rx_missed_errors = hpu_en_read_counter(port, HPU_NIC_CNT_RX_DROPS) -
				  port->hw_base[HPU_NIC_CNT_RX_DROPS];
}

static void hpu_en_get_drvinfo(struct net_device *ndev,
			       struct ethtool_drvinfo *info)
{
	struct hpu_en_port *port = netdev_priv(ndev);

	strscpy(info->driver, HPU_EN_DRIVER_NAME, sizeof(info->driver));
	strscpy(info->bus_info, dev_name(port->edev->dma_dev),
		sizeof(info->bus_info));
}

static int hpu_en_get_link_ksettings(struct net_device *ndev,
				     struct ethtool_link_ksettings *cmd)
{
	struct hpu_en_port *port = netdev_priv(ndev);

	cmd->base.port = PORT_OTHER;
	cmd->base.autoneg = AUTONEG_DISABLE;
	if (netif_carrier_ok(ndev)) {
		cmd->base.speed = hpu_en_rd32(port, HPU_NIC_SPEED);
		cmd->base.duplex = DUPLEX_FULL;
	} else {
		cmd->base.speed = SPEED_UNKNOWN;
		cmd->base.duplex = DUPLEX_UNKNOWN;
	}
	return 0;
}

static void hpu_en_get_ringparam(struct net_device *ndev,
				 struct ethtool_ringparam *ring,
				 struct kernel_ethtool_ringparam *kring,
				 struct netlink_ext_ack *extack)
{
	struct hpu_en_port *port = netdev_priv(ndev);

	ring->rx_max_pending = HPU_NIC_RING_MAX;
	ring->tx_max_pending = HPU_NIC_RING_MAX;
	ring->rx_pending = port->rx_size;
	ring->tx_pending = port->tx_size;
}

static bool hpu_en_ring_size_ok(u32 n)
{
	return n >= HPU_NIC_RING_MIN && n <= HPU_NIC_RING_MAX &&
	       is_power_of_2(n);
}

static int hpu_en_set_ringparam(struct net_device *ndev,
				struct ethtool_ringparam *ring,
				struct kernel_ethtool_ringparam *kring,
				struct netlink_ext_ack *extack)
{
	struct hpu_en_port *port = netdev_priv(ndev);
	int ret;

	/* The core checked the maximums (and that there are no mini rings). */
	if (!hpu_en_ring_size_ok(ring->tx_pending) ||
	    !hpu_en_ring_size_ok(ring->rx_pending)) {
		NL_SET_ERR_MSG_FMT_MOD(extack,
				       "ring sizes are powers of two from %u to %u",
				       HPU_NIC_RING_MIN, HPU_NIC_RING_MAX);
		return -EINVAL;
	}
	if (ring->tx_pending == port->tx_size &&
	    ring->rx_pending == port->rx_size)
		return 0;
	ret = hpu_en_reconfigure(port, ring->tx_pending, ring->rx_pending,
				 ndev->mtu);
	if (ret == -ENOMEM)
		NL_SET_ERR_MSG_MOD(extack, "no memory for new rings; the old ones run on");
	return ret;
}

static int hpu_en_get_sset_count(struct net_device *ndev, int sset)
{
	return sset == ETH_SS_STATS ? HPU_EN_NUM_STATS : -EOPNOTSUPP;
}

static void hpu_en_get_strings(struct net_device *ndev, u32 sset, u8 *data)
{
	unsigned int i;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < ARRAY_SIZE(hpu_en_hw_stat_names); i++)
		ethtool_puts(&data, hpu_en_hw_stat_names[i]);
	for (i = 0; i < ARRAY_SIZE(hpu_en_sw_stat_names); i++)
		ethtool_puts(&data, hpu_en_sw_stat_names[i]);
}

static void hpu_en_get_ethtool_stats(struct net_device *ndev,
				     struct ethtool_stats *stats, u64 *data)
{
	struct hpu_en_port *port = netdev_priv(ndev);
	unsigned int i;
	u64 dropped, busy;

	/* The device's own, since its last reset. */
	for (i = 0; i < HPU_NIC_NUM_COUNTERS; i++)
		*data++ = hpu_en_read_counter(port, i);
	*data++ = hpu_en_rd32(port, HPU_NIC_LINK_CHANGES);

	hpu_en_napi_stats_read(port, data);
	data += HPU_EN_NUM_NAPI_STATS;
	hpu_en_xmit_stats_read(port, &dropped, &busy);
	*data++ = dropped;
	*data++ = busy;
	*data++ = atomic64_read(&port->tx_timeouts);
	*data++ = atomic64_read(&port->restarts);
}

const struct ethtool_ops hpu_en_ethtool_ops = {
	.get_drvinfo = hpu_en_get_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_link_ksettings = hpu_en_get_link_ksettings,
	.get_ringparam = hpu_en_get_ringparam,
	.set_ringparam = hpu_en_set_ringparam,
	.get_sset_count = hpu_en_get_sset_count,
	.get_strings = hpu_en_get_strings,
	.get_ethtool_stats = hpu_en_get_ethtool_stats,
	.get_ts_info = ethtool_op_get_ts_info,
};
